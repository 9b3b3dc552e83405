"""OpenTelemetry Collector records: OTLP/JSON batches, protobuf batches, raw bodies."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from logsig.decode import DecodeSettings, decode_record
from logsig.decode import otlp_proto as proto
from logsig.decode.result import DecodeResult
from logsig.records import Origin, RawRecord

ORIGIN = Origin(topic="otlp_logs", partition=0, offset=0, timestamp_ms=1_746_361_381_000)
LINE = "(EngineCore_DP0 pid=279) ERROR 12-02 15:47:51 [core.py:93] EngineCore failed to start."


def kv(key: str, value: Any) -> dict[str, Any]:
    """An OTLP/JSON ``KeyValue`` with a string value."""
    return {"key": key, "value": {"stringValue": value}}


def batch(records: list[dict[str, Any]], resource: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A one-resource OTLP/JSON batch."""
    return {"resourceLogs": [{"resource": {"attributes": resource or []}, "scopeLogs": [{"logRecords": records}]}]}


def decode(value: bytes, envelope: str = "auto") -> DecodeResult:
    """Decode ``value`` with the given envelope."""
    return decode_record(RawRecord(value, ORIGIN), DecodeSettings.model_validate({"envelope": envelope}))


class TestOtlpJson:
    def test_kvlist_body_gives_its_log_text(self) -> None:
        """A map body (Fluent Bit's OTLP output) yields its ``log`` entry."""
        body = {"kvlistValue": {"values": [kv("log", LINE), kv("stream", "stdout")]}}
        assert [LINE] == [e.message for e in decode(orjson.dumps(batch([{"body": body}]))).events]

    def test_record_attributes_fill_a_missing_resource(self) -> None:
        """Loki-style record attributes (Alloy ``otelcol.receiver.loki``) name the pod."""
        record = {"body": {"stringValue": LINE}, "attributes": [kv("namespace", "ml"), kv("pod", "vllm-0")]}
        source = decode(orjson.dumps(batch([record]))).events[0].source
        assert ("ml", "vllm-0") == (source.namespace, source.pod)

    def test_resource_attributes_win_over_record_attributes(self) -> None:
        """The resource's ``k8s.pod.name`` is kept when a record says otherwise."""
        record = {"body": {"stringValue": LINE}, "attributes": [kv("k8s.pod.name", "other")]}
        event = decode(orjson.dumps(batch([record], [kv("k8s.pod.name", "vllm-0")]))).events[0]
        assert "vllm-0" == event.source.pod

    def test_records_without_body_are_skipped(self) -> None:
        """A log record with no body gives no event; the others are kept."""
        records = [{"timeUnixNano": "1"}, {"body": {"stringValue": LINE}}]
        assert [LINE] == [e.message for e in decode(orjson.dumps(batch(records))).events]

    def test_empty_batch_is_not_a_failure(self) -> None:
        """A batch with no log records decodes to no events and no failure."""
        result = decode(b'{"resourceLogs": []}')
        assert ((), None) == (result.events, result.failure)

    @pytest.mark.parametrize(
        "value",
        [
            b'{"resourceLogs": "x"}',
            b'{"resourceLogs": [1]}',
            b'{"resourceLogs": [{"scopeLogs": [{"logRecords": 5}]}]}',
            b'{"resourceLogs": [{"resource": {"attributes": {"k": 1}}}]}',
        ],
    )
    def test_misshapen_batches_are_invalid_otlp(self, value: bytes) -> None:
        """A batch that is not shaped like OTLP is an ``invalid_otlp`` failure."""
        failure = decode(value).failure
        assert "invalid_otlp" == (failure.reason if failure else None)

    def test_fixed_otlp_json_rejects_other_json(self) -> None:
        """Under ``otlp_json`` a JSON array is ``invalid_otlp``."""
        failure = decode(b"[1]", "otlp_json").failure
        assert "invalid_otlp" == (failure.reason if failure else None)


class TestOtlpRaw:
    def test_quoted_cri_line_is_unquoted_and_unwrapped(self) -> None:
        """A raw body holding a whole CRI line gives the application line and the stream."""
        value = orjson.dumps("2025-05-04T12:23:00.123456789Z stderr F " + LINE)
        event = decode(value, "otlp_raw").events[0]
        assert (LINE, "stderr") == (event.message, event.source.stream)

    def test_bytes_body_is_taken_as_it_is(self) -> None:
        """A bytes body arrives unquoted and is decoded as a line."""
        assert [LINE] == [e.message for e in decode(LINE.encode(), "otlp_raw").events]


@pytest.mark.skipif(not proto.AVAILABLE, reason="opentelemetry-proto is not installed")
class TestOtlpProto:
    def test_text_starting_with_newline_is_not_a_batch(self) -> None:
        """A text value that starts with a newline byte is decoded as text."""
        assert ["\nline after a newline"] == [e.message for e in decode(b"\nline after a newline").events]

    def test_fixed_proto_rejects_garbage(self) -> None:
        """Under ``otlp_proto`` bytes that do not parse are ``invalid_otlp``."""
        failure = decode(b"\x0a\xff\xff\xff", "otlp_proto").failure
        assert "invalid_otlp" == (failure.reason if failure else None)

    def test_batch_with_implausible_times_and_no_text_is_not_detected(self) -> None:
        """A parsable message without string bodies or plausible times is not taken for OTLP."""
        from google.protobuf import json_format

        request = json_format.ParseDict(
            {"resourceLogs": [{"scopeLogs": [{"logRecords": [{"timeUnixNano": "5", "body": {"intValue": "3"}}]}]}]},
            proto.ExportLogsServiceRequest(),
        )
        assert False is proto.looks_like_batch(request.SerializeToString())
