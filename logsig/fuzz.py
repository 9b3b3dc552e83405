"""Generated hostile records for fuzzing the decode stage and the daemon (``bench/fuzz_decode.py``,
``tests/integration/test_fault_fuzz.py``). Pure and deterministic for a seed; no I/O.

Kinds (:data:`KINDS`), drawn in turn: random bytes, invalid UTF-8 inside text, shipper envelopes
(Fluent Bit, Vector, Docker, OTLP/JSON, msgpack) cut at a random byte, envelopes nested in their own
``log`` field up to eight deep, NDJSON with a broken line, huge keys and many headers around a valid
line, empty values, and compression bombs (values that expand past ``decode.max_value_bytes`` or
``decode.max_events_per_record``; produced with gzip they are small on the wire).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

import msgpack
import orjson

OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB"
KINDS = ("random_bytes", "invalid_utf8", "truncated_envelope", "nested_envelope", "broken_ndjson",
         "huge_key", "many_headers", "empty", "bomb_bytes", "bomb_events")


@dataclass(frozen=True, slots=True)
class FuzzRecord:
    """One generated record: ``kind`` (one of :data:`KINDS`), value, key and headers."""

    kind: str
    value: bytes
    key: bytes | None = None
    headers: tuple[tuple[str, bytes], ...] = ()


def _envelope(rng: random.Random, text: str) -> bytes:
    choice = rng.randrange(5)
    if choice == 0:
        return orjson.dumps({"@timestamp": 1.7e9, "log": text, "stream": "stderr",
                             "kubernetes": {"pod_name": "vllm-0", "namespace_name": "ml"}})
    if choice == 1:
        return orjson.dumps({"message": text, "timestamp": "2026-01-01T00:00:00Z",
                             "kubernetes": {"pod_name": "vllm-1", "pod_namespace": "ml"}})
    if choice == 2:
        return orjson.dumps({"log": text + "\n", "stream": "stdout", "time": "2026-01-01T00:00:00.1Z"})
    if choice == 3:
        body = {"body": {"stringValue": text}, "severityNumber": 17}
        return orjson.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": [body]}]}]})
    packed: bytes = msgpack.packb({"log": text, "stream": "stderr"})
    return packed


def _value(rng: random.Random, kind: str, bomb_bytes: int, bomb_events: int) -> bytes:
    if kind == "random_bytes":
        return rng.randbytes(rng.randrange(1, 512))
    if kind == "invalid_utf8":
        return f"{OOM} ".encode() + bytes([0xC3, 0x28, 0xFF]) + rng.randbytes(8)
    if kind == "truncated_envelope":
        full = _envelope(rng, OOM)
        return full[: rng.randrange(1, len(full))]
    if kind == "nested_envelope":
        value = OOM
        for _ in range(rng.randrange(1, 9)):
            value = _envelope(rng, value).decode("utf-8", "replace")
        return value.encode()
    if kind == "broken_ndjson":
        lines = [_envelope(rng, OOM) for _ in range(3)] + [b'{"log": "cut']
        return b"\n".join(lines)
    if kind in ("huge_key", "many_headers"):
        return _envelope(rng, OOM)
    if kind == "empty":
        return b""
    if kind == "bomb_bytes":
        return b"x" * bomb_bytes
    return b"\n".join([orjson.dumps({"log": OOM})] * bomb_events)


def fuzz_records(count: int, seed: int = 0, bomb_bytes: int = 17 * 1024 * 1024, bomb_events: int = 10_001,
                 bombs: bool = True, key_bytes: tuple[int, int] = (256 * 1024, 512 * 1024),
                 headers: int = 100) -> Iterator[FuzzRecord]:
    """``count`` records cycling through :data:`KINDS` (bombs left out unless ``bombs``), drawn from
    ``seed``; ``huge_key`` records get a key of ``key_bytes`` (low, high) bytes, ``many_headers``
    records ``headers`` headers of 1 KiB."""
    rng = random.Random(seed)
    kinds = KINDS if bombs else KINDS[:-2]
    for i in range(count):
        kind = kinds[i % len(kinds)]
        key = b"k" * rng.randrange(*key_bytes) if kind == "huge_key" else None
        extra = tuple((f"h{j}", b"v" * 1024) for j in range(headers)) if kind == "many_headers" else ()
        yield FuzzRecord(kind, _value(rng, kind, bomb_bytes, bomb_events), key, extra)
