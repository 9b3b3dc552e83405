"""OpenTelemetry Collector ``kafka`` exporter records: ``otlp_json`` and ``raw``.

Sources: opentelemetry-proto ``docs/specification.md`` (JSON Protobuf Encoding: lowerCamelCase
keys, 64-bit integers as decimal strings or numbers, ``AnyValue`` one-of keys) and
opentelemetry-collector-contrib ``exporter/kafkaexporter`` (``otlp_*``: one Kafka message holds
a whole batch, possibly of many pods; ``raw``: only the body, a string body JSON-quoted).

Each log record of a batch becomes one event. Its Source comes from the resource attributes
(``k8s.pod.name``, ``k8s.namespace.name``, ``k8s.container.name``, ``k8s.node.name``,
``k8s.cluster.name``), then the log-record attributes; the stream from ``log.iostream``.
"""

from __future__ import annotations

import base64
import binascii
from datetime import datetime
from typing import Any

import orjson

from logsig.decode.envelopes import Context, build_event, find_text, refine_app_json
from logsig.decode.kubernetes import otel_source
from logsig.decode.result import DecodeResult, failed, succeeded
from logsig.decode.text import clean_line, normalise_level, parse_time, severity_level, split_cri
from logsig.records import LogEvent


class OtlpError(ValueError):
    """An OTLP batch that does not have the documented shape."""


def any_value(value: object) -> object:
    """The Python value of an OTLP/JSON ``AnyValue`` (None when empty or unknown)."""
    if type(value) is not dict:
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "kvlistValue" in value:
        return attributes((value["kvlistValue"] or {}).get("values"))
    if "arrayValue" in value:
        return [any_value(item) for item in (value["arrayValue"] or {}).get("values") or ()]
    if "bytesValue" in value:
        return _bytes_text(value["bytesValue"])
    for key in ("intValue", "doubleValue", "boolValue"):
        if key in value:
            return value[key]
    return None


def _bytes_text(encoded: object) -> str | None:
    """A base64 ``bytesValue`` as UTF-8 text (invalid bytes replaced)."""
    try:
        return base64.b64decode(str(encoded)).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return None


def attributes(items: object) -> dict[str, object]:
    """An OTLP ``[{"key": ..., "value": AnyValue}]`` list as a dict."""
    if not items:
        return {}
    if type(items) is not list:
        raise OtlpError("attributes is not a list")
    found: dict[str, object] = {}
    for item in items:
        if type(item) is dict and type(item.get("key")) is str:
            found[item["key"]] = any_value(item.get("value"))
    return found


def body_text(body: object) -> str | None:
    """The log text of a body value: a string, a map's log text, or other values as JSON."""
    if type(body) is str:
        return body
    if body is None:
        return None
    if type(body) is dict:
        text = find_text(body)
        if text is not None:
            return text
    return orjson.dumps(body).decode()


def otlp_json_events(batch: dict[str, Any], ctx: Context) -> DecodeResult:
    """Every log record of an OTLP/JSON ``LogsData`` batch as an event, in batch order.

    A batch that does not have the documented shape is an ``invalid_otlp`` failure; an empty
    batch is a success with no events.
    """
    try:
        events = tuple(_batch_events(batch, ctx))
    except (OtlpError, AttributeError, TypeError) as error:
        return failed(ctx.record, "invalid_otlp", str(error) or type(error).__name__)
    return succeeded(events)


def _batch_events(batch: dict[str, Any], ctx: Context) -> list[LogEvent]:
    """The events of every ``resourceLogs[].scopeLogs[].logRecords[]`` entry."""
    resource_logs = batch.get("resourceLogs")
    if type(resource_logs) is not list:
        raise OtlpError("resourceLogs is not a list")
    events: list[LogEvent] = []
    for resource_log in resource_logs:
        resource = attributes((resource_log.get("resource") or {}).get("attributes"))
        for scope_log in resource_log.get("scopeLogs") or ():
            for log_record in scope_log.get("logRecords") or ():
                event = _record_event(log_record, resource, ctx)
                if event is not None:
                    events.append(event)
    return events


def _record_event(log_record: dict[str, Any], resource: dict[str, object], ctx: Context) -> LogEvent | None:
    """One ``LogRecord`` as an event; None for a record without a body."""
    text = body_text(any_value(log_record.get("body")))
    if text is None:
        return None
    record_attributes = attributes(log_record.get("attributes"))
    merged = {**record_attributes, **resource} if record_attributes else resource
    stream = merged.get("log.iostream")
    level = normalise_level(log_record.get("severityText")) or severity_level(log_record.get("severityNumber"))
    timestamp = _record_time(log_record)
    return otel_event(text, ctx, merged, stream if type(stream) is str else None, timestamp, level)


def _record_time(log_record: dict[str, Any]) -> datetime | None:
    """``timeUnixNano``, else ``observedTimeUnixNano`` (0 means unset)."""
    for key in ("timeUnixNano", "observedTimeUnixNano"):
        value = log_record.get(key)
        if value not in (None, 0, "0", ""):
            return parse_time(value)
    return None


def otel_event(
    text: str,
    ctx: Context,
    attributes_: dict[str, object],
    stream: str | None,
    timestamp: datetime | None,
    level: str | None,
) -> LogEvent:
    """An event of an OTLP log record (also used by the protobuf decoder)."""
    partial = attributes_.get("logtag") == "P"
    if stream is None and (cri := split_cri(text)) is not None:
        stream, partial, text = cri.stream, cri.partial, cri.content
        timestamp = timestamp or parse_time(cri.time)
    text = clean_line(text)
    if text[:1] == "{":
        text, level, timestamp = refine_app_json(text, level, timestamp)
    source = otel_source(attributes_, stream, ctx.cluster)
    return build_event(text, ctx, source, timestamp, level, partial)


def raw_body(value: bytes) -> str | None:
    """The text of an OTel ``raw`` record whose string body was JSON-quoted, else None."""
    try:
        body = orjson.loads(value)
    except orjson.JSONDecodeError:
        return None
    return body if type(body) is str else None
