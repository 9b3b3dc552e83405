"""JSON and msgpack shipper records: Fluent Bit, Fluentd, Vector, Filebeat/ECS, Docker.

All these shippers write one map per log line; they differ in where the text, the time and
the Kubernetes metadata sit (see :mod:`logsig.decode.kubernetes` and ``docs/decoding.md``):

- text: ``log`` (Fluent Bit, Fluentd, Docker json-file), ``message`` (Vector, ECS, the legacy
  ``cri`` parser), or the app's own keys when Fluent Bit ``Merge_Log`` lifted a JSON line and
  removed ``log`` (``fields.message`` for TGI, ``msg``, ``body``, ...);
- time: ``@timestamp`` (Fluent Bit float epoch or ISO text, ECS ISO), ``time`` (Docker,
  Fluent Bit CRI parser), ``timestamp`` (Vector), else the Kafka record timestamp (Fluentd);
- partial lines: ``_p``/``logtag`` = ``P`` (CRI), or a Docker ``log`` of exactly 16 KiB without
  its trailing newline (Docker splits longer lines into 16 KiB parts).

A map with shipper metadata but no text is a ``no_message_field`` failure. A bare application
JSON line (no shipper keys) with no known text key is kept whole as the message, so that it
can still be matched; so is an OpenAI-style error body (``"object": "error"``), whose message alone
would no longer say that a request failed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson

from logsig.decode.kubernetes import make_source, record_source
from logsig.decode.result import DecodeResult, failed, succeeded
from logsig.decode.text import (
    clean_line,
    kafka_time,
    keep_ends_utf8,
    line_level,
    normalise_level,
    parse_time,
    split_cri,
    strip_ansi,
)
from logsig.records import LogEvent, RawRecord

_TEXT_KEYS = ("msg", "body", "text", "MESSAGE", "short_message", "full_message")
_LEVEL_KEYS = ("level", "severity_text", "severityText", "levelname", "severity")
_SHIPPER_KEYS = frozenset(
    {
        "kubernetes",
        "@timestamp",
        "@metadata",
        "source_type",
        "stream",
        "_p",
        "logtag",
        "docker",
        "ecs",
        "agent",
        "input",
        "kubernetes_namespace",
        "file",
        "filename",
    }
)


class Context:
    """What every decoder of one record needs besides the value."""

    __slots__ = ("cluster", "max_bytes", "max_events", "record")

    def __init__(self, record: RawRecord, cluster: str | None, max_bytes: int, max_events: int = 10_000) -> None:
        self.record = record
        self.cluster = cluster
        self.max_bytes = max_bytes
        self.max_events = max_events


def find_text(obj: dict[str, Any]) -> str | None:
    """The log text of a shipper or application map, probed in the order above, or None."""
    value = obj.get("log")
    if type(value) is str:
        return value
    value = obj.get("message")
    if type(value) is str:
        return value
    fields = obj.get("fields")
    if type(fields) is dict:
        value = fields.get("message")
        if type(value) is str:
            return value
    for key in _TEXT_KEYS:
        value = obj.get(key)
        if type(value) is str:
            return value
    return None


def is_api_error(obj: dict[str, Any]) -> bool:
    """Whether ``obj`` is an OpenAI-style error response printed to the log, not a log record:
    ``{"object": "error", "message": ..., "type": ..., "code": 400}`` (vLLM ``ErrorResponse`` in
    ``vllm/entrypoints/openai/protocol.py``, SGLang, LMDeploy)."""
    return obj.get("object") == "error"


def find_level(obj: dict[str, Any]) -> str | None:
    """The level an application map names (``level``, ``severity_text``, ECS ``log.level``)."""
    for key in _LEVEL_KEYS:
        value = obj.get(key)
        if value is not None:
            return normalise_level(value)
    log = obj.get("log")
    if type(log) is dict:
        return normalise_level(log.get("level"))
    return None


def _time_of(obj: dict[str, Any]) -> datetime | None:
    """The record time: ``@timestamp``, then ``time``, then ``timestamp``; None if none."""
    for key in ("@timestamp", "time", "timestamp"):
        value = obj.get(key)
        if value is not None:
            return parse_time(value)
    return None


DOCKER_SPLIT_BYTES = 16 * 1024
"""Docker json-file writes a line longer than this as parts of exactly this many bytes, without a
newline (moby ``daemon/logger/copier.go``, ``bufSize``)."""
_SPLIT_SLACK = 6
"""A part cut inside a multi-byte character is written with U+FFFD (3 bytes) for each of its at
most 3 cut bytes, so a part may hold up to this many bytes more."""


def _is_partial(obj: dict[str, Any], text: str) -> bool:
    """Whether the map holds a fragment of a longer line (CRI ``P`` or a Docker 16 KiB part)."""
    tag = obj.get("_p") or obj.get("logtag")
    if type(tag) is str:
        return tag[:1] == "P"
    # A ``log`` without its newline of another size is a whole line whose newline a parser
    # (Fluent Bit's CRI parser, Vector) already removed.
    if "stream" not in obj or type(obj.get("log")) is not str or text.endswith("\n"):
        return False
    size = len(text.encode("utf-8", "surrogatepass"))
    return size == DOCKER_SPLIT_BYTES or (
        DOCKER_SPLIT_BYTES < size <= DOCKER_SPLIT_BYTES + _SPLIT_SLACK and text.endswith("\ufffd"))


def map_events(obj: dict[str, Any], ctx: Context, raw: bytes | None) -> DecodeResult:
    """Decode one shipper or application map into a result with one event.

    raw: the map's JSON bytes, kept whole as the message of a bare application map with no
    text key; None (msgpack) makes such a map a ``no_message_field`` failure.
    """
    text = find_text(obj)
    if text is None or (is_api_error(obj) and raw is not None and _SHIPPER_KEYS.isdisjoint(obj)):
        return _no_text(obj, ctx, raw)
    stream = obj.get("stream")
    stream = stream if type(stream) is str else None
    partial = _is_partial(obj, text)
    timestamp = _time_of(obj)
    level = find_level(obj)
    if stream is None and (cri := split_cri(text)) is not None:
        stream, partial, text = cri.stream, cri.partial, cri.content
        timestamp = timestamp or parse_time(cri.time)
    text = strip_ansi(text) if partial else clean_line(text)
    if text[:1] == "{":
        text, level, timestamp = refine_app_json(text, level, timestamp)
    source = record_source(obj, stream, ctx.cluster)
    event = build_event(text, ctx, source, timestamp, level, partial)
    return succeeded((event,))


def _no_text(obj: dict[str, Any], ctx: Context, raw: bytes | None) -> DecodeResult:
    """A map without log text: a failure for a shipper record, the whole line for app JSON."""
    if raw is None or not _SHIPPER_KEYS.isdisjoint(obj):
        return failed(ctx.record, "no_message_field", "record has no log/message field")
    level = find_level(obj)
    text = clean_line(raw.decode("utf-8", "replace").strip())
    event = build_event(text, ctx, None, _time_of(obj), level, False)
    return succeeded((event,))


def refine_app_json(
    text: str, level: str | None, timestamp: datetime | None
) -> tuple[str, str | None, datetime | None]:
    """Unwrap an application JSON line (TGI ``--json-output``, llama.cpp, vLLM OTel formatter).

    Returns (text, level, timestamp): the app's message text when the line is a JSON map with
    one, with the app's level and time filling those the envelope lacked; else the input.
    """
    try:
        inner = orjson.loads(text)
    except orjson.JSONDecodeError:
        return text, level, timestamp
    if type(inner) is not dict or is_api_error(inner):
        return text, level, timestamp
    message = find_text(inner)
    if message is None:
        return text, level or find_level(inner), timestamp or _time_of(inner)
    return clean_line(message), level or find_level(inner), timestamp or _time_of(inner)


def build_event(
    text: str,
    ctx: Context,
    source: Any,
    timestamp: datetime | None,
    level: str | None,
    partial: bool,
) -> LogEvent:
    """One LogEvent of ``ctx.record``: text cut to ``max_bytes`` (head and tail kept), level from the line if unset,
    time falling back to the Kafka record timestamp, cluster falling back to the settings."""
    text, truncated = keep_ends_utf8(text, ctx.max_bytes)
    origin = ctx.record.origin
    if source is None:
        source = make_source(ctx.cluster)
    if timestamp is None:
        timestamp = kafka_time(origin.timestamp_ms)
    if level is None:
        level = line_level(text)
    return LogEvent(
        message=text,
        origin=origin,
        source=source,
        timestamp=timestamp,
        level=level,
        line=text,
        truncated=truncated,
        partial=partial,
    )
