"""The peek at shipper JSON maps: which values it reads the log text of, and which it leaves to the decoder."""

from __future__ import annotations

import orjson

from logsig.decode.peek import Peeker

FLUENT_BIT = {"@timestamp": 1746361380.123, "stream": "stdout", "_p": "F", "log": "INFO ok\n",
              "kubernetes": {"pod_name": "vllm-0", "namespace_name": "inference", "labels": {"app": "vllm"}}}


def peek(values: list[bytes], max_bytes: int = 1 << 20) -> dict[int, bytes]:
    """What a fresh peeker reads of ``values`` (all of them asked for)."""
    return Peeker().peek(values, range(len(values)), max_bytes, b"\n".join(values))


class TestPeeker:
    def test_reads_the_log_text_of_a_fluent_bit_map(self) -> None:
        """The text of ``log``, its trailing newline removed, for the record asked about."""
        assert {0: b"INFO ok"} == peek([orjson.dumps(FLUENT_BIT)])

    def test_leaves_maps_whose_keys_change_the_outcome(self) -> None:
        """A level, a partial tag, an error body, an OTLP batch or a non-string log are left to the decoder."""
        values = [orjson.dumps({**FLUENT_BIT, **extra}) for extra in (
            {"level": "error"}, {"_p": "P"}, {"object": "error"}, {"resourceLogs": []}, {"log": 3}, {"log": "a\nb"})]
        assert {} == peek(values)

    def test_leaves_what_orjson_would_reject(self) -> None:
        """Broken JSON, bytes that are not UTF-8 and numbers that overflow a double are left out; others are read."""
        good = orjson.dumps(FLUENT_BIT)
        values = [good[:-1], good.replace(b"vllm-0", b"vllm-\xff"), good.replace(b"1746361380.123", b"1e400"),
                  good.replace(b"1746361380.123", b"1" * 400), good.replace(b"1746361380.123", b"1e99"), good]
        assert [4, 5] == sorted(peek(values))

    def test_leaves_values_longer_than_the_bound(self) -> None:
        """A value over ``max_bytes`` (or 16 KiB, a possible Docker part) is left out."""
        values = [orjson.dumps({**FLUENT_BIT, "log": "x" * 2000}), orjson.dumps({**FLUENT_BIT, "log": "x" * 17000})]
        assert ({0: b"x" * 2000}, {}) == (peek(values), peek(values, max_bytes=1500))
