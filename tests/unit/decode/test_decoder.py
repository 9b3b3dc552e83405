"""decode_record: format detection, failures with bounded reasons, truncation."""

from __future__ import annotations

import msgpack
import orjson
import pytest

from logsig.decode import DecodeSettings, decode_record
from logsig.decode.result import DecodeResult
from logsig.records import FAILURE_REASONS, Origin, RawRecord

ORIGIN = Origin(topic="logs", partition=0, offset=7, timestamp_ms=1_746_361_381_000)
SETTINGS = DecodeSettings()
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 50.00 MiB."


def decode(value: bytes | None, settings: DecodeSettings = SETTINGS) -> DecodeResult:
    """Decode one value as a record of topic ``logs``."""
    return decode_record(RawRecord(value=value, origin=ORIGIN), settings)


def reason(value: bytes | None, settings: DecodeSettings = SETTINGS) -> str | None:
    """The failure reason for ``value``, or None when it decoded."""
    failure = decode(value, settings).failure
    return failure.reason if failure else None


def messages(value: bytes, settings: DecodeSettings = SETTINGS) -> list[str]:
    """The messages ``value`` decodes to."""
    return [event.message for event in decode(value, settings).events]


class TestFailures:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            (None, "empty_value"),
            (b"", "empty_value"),
            (b"\xff\xfe\x00garbage", "not_utf8"),
            (b'{"log": "unterminated', "invalid_json"),
            (b'{"kubernetes": {"pod_name": "p"}, "stream": "stdout"}', "no_message_field"),
            (b"[1, 2, 3]", "json_not_object"),
            (b"\x82\xa3log", "invalid_msgpack"),
            (b'{"resourceLogs": {"not": "a list"}}', "invalid_otlp"),
        ],
    )
    def test_undecodable_values_fail_with_their_reason(self, value: bytes, expected: str) -> None:
        """Each kind of garbage is a failure with the reason naming it."""
        assert expected == reason(value)

    def test_a_blank_line_of_a_file_is_no_failure_and_no_event(self) -> None:
        """An empty line read from a file decodes to nothing; the same empty value from Kafka is empty_value."""
        line = decode_record(RawRecord(value=b"", origin=Origin(file="f.log", line_number=3)), SETTINGS)
        assert (DecodeResult(), "empty_value") == (line, reason(b""))

    def test_failure_keeps_the_original_record(self) -> None:
        """The failure carries the record unchanged, for the dead-letter topic."""
        record = RawRecord(value=b'{"log": ', origin=ORIGIN, key=b"k", headers=(("h", b"v"),))
        failure = decode_record(record, SETTINGS).failure
        assert record == (failure.record if failure else None)

    def test_every_reason_is_a_known_reason(self) -> None:
        """The reasons used above are all in the bounded set."""
        assert set() == {"empty_value", "not_utf8", "invalid_json"} - set(FAILURE_REASONS)

    def test_a_shipper_map_without_text_fails_but_app_json_is_kept_whole(self) -> None:
        """A bare application JSON line with no text key is matched as it stands."""
        value = b'{"error":"Request failed during generation: Server error: CUDA out of memory"}'
        assert [value.decode()] == messages(value)

    def test_an_api_error_body_is_kept_whole(self) -> None:
        """An OpenAI-style error body keeps its "object": "error", bare or inside a shipper's log."""
        value = b'{"object":"error","message":"The model `x` does not exist.","type":"NotFoundError","code":404}'
        shipped = orjson.dumps({"log": value.decode(), "stream": "stdout"})
        assert [value.decode(), value.decode()] == messages(value) + messages(shipped)


class TestTextDetection:
    @pytest.mark.parametrize(
        "line",
        [
            "[2025-09-28 17:07:10 TP0] Load weight end. type=GptOssForCausalLM",
            "{'host': '0.0.0.0', 'port': 80}",
            "{rank0} watchdog timeout",
            '"unbalanced quote at the start',
            "plain line",
            "12345",
        ],
    )
    def test_lines_that_only_look_like_json_decode_as_text(self, line: str) -> None:
        """SGLang brackets, Python dict reprs and other non-JSON text stay text."""
        assert [line] == messages(line.encode())

    def test_json_string_value_is_unquoted(self) -> None:
        """An OTel ``raw`` string body (JSON-quoted) decodes to its text."""
        assert [OOM] == messages(orjson.dumps(OOM))

    def test_trailing_newline_and_carriage_return_are_removed(self) -> None:
        """rsyslog's trailing newline and vLLM's trailing carriage return are not text."""
        assert [OOM] == messages(OOM.encode() + b"\r\n")

    def test_ndjson_value_gives_one_event_per_map(self) -> None:
        """Several JSON maps separated by newlines decode to several events, in order."""
        value = b'{"message": "first"}\n{"message": "second"}\n'
        assert ["first", "second"] == messages(value)

    def test_leading_whitespace_before_json_is_allowed(self) -> None:
        """A JSON map after spaces or a byte-order mark is still a map."""
        assert ["x", "y"] == messages(b'  {"log": "x"}') + messages(b'\xef\xbb\xbf{"log": "y"}')

    def test_msgpack_map_is_a_fluent_bit_record(self) -> None:
        """A msgpack map decodes like the same map in JSON."""
        value = msgpack.packb({"@timestamp": 1.7e9, "log": OOM, "kubernetes": {"pod_name": "p"}})
        assert [OOM] == messages(value)

    def test_msgpack_event_time_is_read(self) -> None:
        """Fluent Bit's EventTime extension (seconds, nanoseconds) is the record time."""
        event_time = msgpack.ExtType(0, (1746361380).to_bytes(4, "big") + (5 * 10**8).to_bytes(4, "big"))
        value = msgpack.packb({"@timestamp": event_time, "log": OOM, "kubernetes": {"pod_name": "p"}})
        stamp = decode(value).events[0].timestamp
        assert "2025-05-04T12:23:00.500000+00:00" == (stamp.isoformat() if stamp else None)

    def test_ansi_colour_codes_are_removed(self) -> None:
        """Colour escapes around the vLLM process prefix do not reach the matcher."""
        value = b"\x1b[1;36m(EngineCore_DP0 pid=279)\x1b[0;0m INFO 12-02 15:47:51 [core.py:93] ok"
        assert ["(EngineCore_DP0 pid=279) INFO 12-02 15:47:51 [core.py:93] ok"] == messages(value)


class TestFields:
    def test_level_is_read_from_the_line_header(self) -> None:
        """A vLLM header's level is the event's level."""
        value = b"(VllmWorker rank=2 pid=504) ERROR 05-04 12:23:00 [core.py:1] boom"
        assert "error" == decode(value).events[0].level

    def test_kafka_timestamp_is_the_fallback_time(self) -> None:
        """A value with no time of its own takes the Kafka record timestamp."""
        event = decode(b"no time here").events[0]
        assert "2025-05-04T12:23:01+00:00" == (event.timestamp.isoformat() if event.timestamp else "")

    def test_cri_partial_tag_marks_a_fragment(self) -> None:
        """A CRI ``P`` line is a fragment for the assembler to join."""
        event = decode(b"2025-05-04T12:23:07.000000101Z stdout P first part").events[0]
        assert (True, "first part", "stdout") == (event.partial, event.message, event.source.stream)

    def test_docker_16k_part_without_newline_is_a_fragment(self) -> None:
        """A 16 KiB Docker json-file ``log`` without its newline is one part of a split line."""
        part = {"log": "x" * 16384, "stream": "stdout", "time": "2025-05-04T12:23:00Z"}
        whole = {**part, "log": "short line without newline"}
        assert [True, False] == [decode(orjson.dumps(v)).events[0].partial for v in (part, whole)]

    def test_app_json_inside_the_log_field_is_unwrapped(self) -> None:
        """A TGI JSON line inside Fluent Bit's ``log`` gives the TGI message and level."""
        tgi = '{"level":"ERROR","fields":{"message":"Method Prefill encountered an error."}}'
        value = orjson.dumps({"log": tgi, "stream": "stdout", "_p": "F"})
        event = decode(value).events[0]
        assert ("Method Prefill encountered an error.", "error") == (event.message, event.level)


class TestTruncation:
    def test_long_text_is_cut_for_matching_and_flagged(self) -> None:
        """Text past ``max_record_bytes`` is cut, and both the event and the result say so."""
        settings = DecodeSettings(max_record_bytes=1024)
        result = decode(b"x" * 5000, settings)
        assert (1024, True, True) == (
            len(result.events[0].message),
            result.events[0].truncated,
            result.truncated,
        )

    def test_cut_keeps_whole_utf8_characters(self) -> None:
        """Truncation never splits a multi-byte character."""
        settings = DecodeSettings(max_record_bytes=1024)
        message = decode(("é" * 2000).encode(), settings).events[0].message
        assert "é" * 255 + "\n" + "é" * 256 == message

    def test_failure_at_the_end_of_an_overlong_line_is_kept(self) -> None:
        """A line over ``max_record_bytes`` (2 MiB against 1 MiB) keeps its tail, where the failure is."""
        event = decode(b"x" * (2 * 1024 * 1024) + b" " + OOM.encode()).events[0]
        assert (True, True) == (event.message.endswith(OOM), len(event.message.encode()) <= 1024 * 1024)

    def test_long_json_envelope_is_parsed_then_cut(self) -> None:
        """An oversized shipper map still decodes; only its text is cut."""
        settings = DecodeSettings(max_record_bytes=1024)
        value = orjson.dumps({"log": "y" * 4000, "kubernetes": {"pod_name": "p"}})
        event = decode(value, settings).events[0]
        assert ("p", 1024, True) == (event.source.pod, len(event.message), event.truncated)


class TestBombs:
    def test_ndjson_past_the_event_bound_matches_the_first_events_and_dead_letters_the_record(self) -> None:
        """1,000 NDJSON lines against a bound of 100: 100 events, and the record is a ``too_many_events`` failure."""
        value = b"\n".join(orjson.dumps({"log": f"line {i}"}) for i in range(1000))
        result = decode(value, DecodeSettings(max_events_per_record=100))
        assert (100, "too_many_events") == (len(result.events), result.failure.reason if result.failure else None)

    def test_otlp_batch_past_the_event_bound_is_cut(self) -> None:
        """An OTLP/JSON batch of 5 log records against a bound of 3 gives 3 events and a failure."""
        logs = [{"body": {"stringValue": f"m{i}"}} for i in range(5)]
        value = orjson.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": logs}]}]})
        result = decode(value, DecodeSettings(max_events_per_record=3))
        assert (["m0", "m1", "m2"], "too_many_events") == (
            [e.message for e in result.events], result.failure.reason if result.failure else None)

    def test_value_past_the_decompressed_bound_is_not_decoded(self) -> None:
        """A value over ``max_value_bytes`` after decompression is a ``too_large`` failure with no events."""
        value = b"\n".join(orjson.dumps({"log": OOM}) for _ in range(100))
        result = decode(value, DecodeSettings(max_value_bytes=1024))
        assert (0, "too_large") == (len(result.events), result.failure.reason if result.failure else None)

    def test_ndjson_within_the_bound_is_no_failure(self) -> None:
        """Exactly ``max_events_per_record`` lines decode whole, with no failure."""
        value = b"\n".join(orjson.dumps({"log": f"line {i}"}) for i in range(100)) + b"\n"
        result = decode(value, DecodeSettings(max_events_per_record=100))
        assert (100, None) == (len(result.events), result.failure)


class TestRepairedText:
    """Text lines with bytes that are not UTF-8."""

    OOM = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (file caf\xe9.bin)"

    def test_a_few_bad_bytes_are_replaced_and_flagged(self) -> None:
        """A line with one Latin-1 byte decodes with U+FFFD in its place, flagged repaired, not dead-lettered."""
        result = decode(self.OOM)
        assert (None, True, ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (file caf\ufffd.bin)"],
                [True]) == (result.failure, result.repaired, [e.message for e in result.events],
                            [e.repaired for e in result.events])

    @pytest.mark.parametrize("value", [b"\xff\xfe\x00\x81 not text", b"x" + bytes(range(0x80, 0xC0)) + b" some ascii",
                                       b"ab\xff\xfe\xfd"])
    def test_values_that_are_not_text_stay_dead_letters(self, value: bytes) -> None:
        """A NUL byte, or more than one character in ten replaced, is still a not_utf8 failure."""
        result = decode(value)
        assert ("not_utf8", (), False) == (result.failure.reason if result.failure else None, result.events,
                                           result.repaired)

    def test_valid_text_is_not_flagged(self) -> None:
        """A valid UTF-8 line is not marked repaired."""
        assert (False, [False]) == (decode("café".encode()).repaired, [e.repaired for e in decode("café".encode()).events])


class TestLenientJson:
    """JSON that orjson refuses but RFC 8259 allows (a shipper cutting a string inside an emoji)."""

    @pytest.mark.parametrize(("value", "message"), [
        (b'{"log": "\\ud83d RuntimeError: CUDA error"}', "\ufffd RuntimeError: CUDA error"),
        (b'{"log": "RuntimeError: CUDA error \\ude00"}', "RuntimeError: CUDA error \ufffd"),
    ])
    def test_lone_surrogate_escape_is_repaired(self, value: bytes, message: str) -> None:
        """A lone surrogate escape becomes U+FFFD; the record decodes, flagged repaired."""
        result = decode(value)
        assert (None, [message], True, [True]) == (result.failure, [e.message for e in result.events],
                                                   result.repaired, [e.repaired for e in result.events])

    def test_surrogate_pair_is_kept(self) -> None:
        """A whole surrogate pair is the character it encodes, not a repair."""
        result = decode(b'{"log": "ok \\ud83d\\ude00"}')
        assert (["ok \U0001f600"], False) == ([e.message for e in result.events], result.repaired)

    def test_number_beyond_a_double_in_another_field(self) -> None:
        """``1e999`` in an unrelated field does not make the record a dead letter."""
        result = decode(b'{"n": 1e999, "log": "torch.OutOfMemoryError: CUDA out of memory."}')
        assert (None, ["torch.OutOfMemoryError: CUDA out of memory."]) == (result.failure,
                                                                          [e.message for e in result.events])
