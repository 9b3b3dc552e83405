"""Property-based tests: nothing a producer can write makes the decode stage raise."""

from __future__ import annotations

import msgpack
import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logsig.assemble import Assembler
from logsig.decode import DecodeSettings, decode_record
from logsig.records import FAILURE_REASONS, Origin, RawRecord

SETTINGS = DecodeSettings(max_record_bytes=1024)
ORIGIN = Origin(topic="logs", partition=0, offset=0, timestamp_ms=1_746_361_381_000)
FAST = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "log",
                    "message",
                    "kubernetes",
                    "@timestamp",
                    "stream",
                    "_p",
                    "body",
                    "resourceLogs",
                    "scopeLogs",
                    "logRecords",
                    "fields",
                    "level",
                    "time",
                    "pod_name",
                    "attributes",
                    "key",
                    "value",
                    "stringValue",
                ]
            )
            | st.text(),
            children,
            max_size=5,
        )
    ),
    max_leaves=20,
)
any_values = st.dictionaries(
    st.sampled_from(["stringValue", "kvlistValue", "arrayValue", "bytesValue", "intValue"]),
    json_values,
    max_size=2,
)
key_values = st.lists(st.fixed_dictionaries({"key": st.text(max_size=20), "value": any_values}))
log_records = st.fixed_dictionaries(
    {},
    optional={
        "body": any_values | json_values,
        "attributes": key_values | json_values,
        "timeUnixNano": st.integers(-(2**63), 2**63 - 1) | st.text(max_size=25),
        "severityNumber": json_values,
        "severityText": json_values,
    },
)
otlp_batches = st.fixed_dictionaries(
    {
        "resourceLogs": st.lists(
            st.fixed_dictionaries(
                {
                    "resource": st.fixed_dictionaries({"attributes": key_values | json_values}),
                    "scopeLogs": st.lists(
                        st.fixed_dictionaries({"logRecords": st.lists(log_records, max_size=3)}),
                        max_size=2,
                    ),
                }
            ),
            max_size=2,
        )
    }
)
prefixes = st.sampled_from([b"", b"{", b'{"', b"[", b'"', b"\x0a", b"\x85", b"\xde", b"\xef\xbb\xbf"])


def check(value: bytes | None) -> None:
    """Decoding ``value`` returns events or a known failure, never both, never raising.

    ``decode_error`` (the guard against decoder bugs) must not be needed either.
    """
    result = decode_record(RawRecord(value=value, origin=ORIGIN), SETTINGS)
    if result.failure is not None:
        reason = result.failure.reason
        assert (True, (), False) == (
            reason in FAILURE_REASONS,
            result.events,
            reason == "decode_error",
        ), result.failure.detail
    for event in result.events:
        assert len(event.message.encode("utf-8", "surrogatepass")) <= 1024


class TestNeverRaises:
    @FAST
    @given(st.binary(max_size=2048))
    def test_arbitrary_bytes(self, value: bytes) -> None:
        """Random bytes decode or fail with a known reason."""
        check(value)

    @FAST
    @given(prefixes, st.binary(max_size=512))
    def test_bytes_after_format_lead_bytes(self, lead: bytes, value: bytes) -> None:
        """Random bytes after a JSON, msgpack, protobuf or BOM lead byte."""
        check(lead + value)

    @FAST
    @given(json_values)
    def test_arbitrary_json(self, value: object) -> None:
        """Any JSON document, including odd shapes of the known envelopes."""
        check(orjson.dumps(value))

    @FAST
    @given(otlp_batches)
    def test_otlp_shaped_json(self, batch: dict[str, object]) -> None:
        """OTLP/JSON batches with arbitrary values where strings or lists belong."""
        check(orjson.dumps(batch))

    @FAST
    @given(json_values)
    def test_arbitrary_msgpack(self, value: object) -> None:
        """Any msgpack document."""
        check(msgpack.packb(value))

    @FAST
    @given(st.text(max_size=300))
    def test_arbitrary_text_lines(self, value: str) -> None:
        """Any text, as a line or JSON-quoted."""
        check(value.encode("utf-8", "surrogatepass"))
        check(orjson.dumps(value))

    @FAST
    @given(st.lists(st.binary(max_size=200), max_size=30), st.booleans())
    def test_assembler_accepts_whatever_decodes(self, values: list[bytes], enabled: bool) -> None:
        """Any sequence of decoded records can be fed, flushed, and leaves no state behind."""
        decode_settings = DecodeSettings.model_validate({"multiline": {"enabled": enabled}})
        assembler = Assembler(decode_settings)
        for offset, value in enumerate(values):
            origin = Origin(topic="logs", partition=offset % 2, offset=offset)
            for event in decode_record(RawRecord(value, origin), decode_settings).events:
                assembler.feed(event, float(offset))
        assembler.flush_idle(float(len(values)))
        assembler.flush_all()
        assert {} == assembler.held_offsets()
