"""OpenTelemetry Collector ``kafka`` exporter records with ``encoding: otlp_proto`` (default).

The value is a protobuf ``ExportLogsServiceRequest`` (same wire layout as ``LogsData``: field 1
``resource_logs``), decoded with the optional ``opentelemetry-proto`` package (upb backend).
Without that package, protobuf records are not recognised in ``auto`` mode and are an
``invalid_otlp`` failure under ``envelope: otlp_proto``.

A text line can also start with ``0x0a`` (a newline), so in ``auto`` mode a value counts as a
batch only when it parses with no error, holds at least one log record, and its records have
string bodies or times between 2000 and 2100 (``docs/record-formats.md`` §12, step 4).
"""

from __future__ import annotations

import importlib
from typing import Any

from logsig.decode.envelopes import Context
from logsig.decode.otlp import body_text, otel_event
from logsig.decode.result import DecodeResult, failed, succeeded
from logsig.decode.text import normalise_level, parse_time, severity_level
from logsig.records import LogEvent


def _load() -> tuple[Any, type[Exception]]:
    """The request class and protobuf's DecodeError, or (None, ValueError) without them."""
    try:
        service = importlib.import_module("opentelemetry.proto.collector.logs.v1.logs_service_pb2")
        message = importlib.import_module("google.protobuf.message")
    except ImportError:
        return None, ValueError
    return service.ExportLogsServiceRequest, message.DecodeError


ExportLogsServiceRequest, DecodeError = _load()
AVAILABLE = ExportLogsServiceRequest is not None
"""Whether the optional ``opentelemetry-proto`` package is installed."""

_YEAR_2000_NS = 946_684_800 * 10**9
_YEAR_2100_NS = 4_102_444_800 * 10**9


def _parse(value: bytes) -> Any:
    """The parsed request, or None when the package is missing or the bytes do not parse."""
    if ExportLogsServiceRequest is None:
        return None
    request = ExportLogsServiceRequest()
    try:
        request.ParseFromString(value)
    except (DecodeError, ValueError, RuntimeError):
        return None
    return request


def _plausible(request: Any) -> bool:
    """At least one log record, each with a string body or a time in 2000..2100."""
    seen = False
    for resource_log in request.resource_logs:
        for scope_log in resource_log.scope_logs:
            for record in scope_log.log_records:
                seen = True
                stamp = record.time_unix_nano or record.observed_time_unix_nano
                is_text = record.body.WhichOneof("value") == "string_value"
                if not is_text and not _YEAR_2000_NS <= stamp <= _YEAR_2100_NS:
                    return False
    return seen


def looks_like_batch(value: bytes) -> bool:
    """Whether ``value`` is a plausible OTLP protobuf batch (see the module docstring)."""
    request = _parse(value)
    return request is not None and _plausible(request)


def proto_events(value: bytes, ctx: Context) -> DecodeResult:
    """Every log record of the batch as an event, in batch order, or ``invalid_otlp``."""
    if not AVAILABLE:
        return failed(ctx.record, "invalid_otlp", "opentelemetry-proto is not installed")
    request = _parse(value)
    if request is None:
        return failed(ctx.record, "invalid_otlp", "not a protobuf ExportLogsServiceRequest")
    events: list[LogEvent] = []
    for resource_log in request.resource_logs:
        resource = _attributes(resource_log.resource.attributes)
        for scope_log in resource_log.scope_logs:
            for record in scope_log.log_records:
                event = _record_event(record, resource, ctx)
                if event is not None:
                    events.append(event)
    return succeeded(tuple(events))


def _record_event(record: Any, resource: dict[str, object], ctx: Context) -> LogEvent | None:
    """One ``LogRecord`` message as an event; None without a body."""
    text = body_text(_any_value(record.body))
    if text is None:
        return None
    record_attributes = _attributes(record.attributes)
    merged = {**record_attributes, **resource} if record_attributes else resource
    stream = merged.get("log.iostream")
    level = normalise_level(record.severity_text) or severity_level(record.severity_number)
    stamp = record.time_unix_nano or record.observed_time_unix_nano
    timestamp = parse_time(stamp) if stamp else None
    return otel_event(text, ctx, merged, stream if type(stream) is str else None, timestamp, level)


def _attributes(items: Any) -> dict[str, object]:
    """Repeated ``KeyValue`` messages as a dict."""
    return {item.key: _any_value(item.value) for item in items}


def _any_value(value: Any) -> object:
    """The Python value of an ``AnyValue`` message (None when unset)."""
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "kvlist_value":
        return _attributes(value.kvlist_value.values)
    if kind == "array_value":
        return [_any_value(item) for item in value.array_value.values]
    if kind == "bytes_value":
        return bytes(value.bytes_value).decode("utf-8", "replace")
    return getattr(value, kind)
