"""``decode_record``: one Kafka (or file) record value to log events, or a decode failure.

Auto-detection, per record, by the first byte of the value (``docs/decoding.md``, "Formats and how
they are detected"; ``docs/record-formats.md`` §12):

1. empty value: ``empty_value`` failure (tombstones, OTel ``raw`` with an empty body); a blank
   line of a file (a record whose origin is a file) decodes to no event and no failure;
2. ``{``: a JSON map (OTLP/JSON batch if it has ``resourceLogs``, else a shipper or app map).
   Several maps separated by newlines (NDJSON) give several events. Text that starts with
   ``{"`` but is not JSON is an ``invalid_json`` failure (a shipper's JSON broken on the way);
   other text starting with ``{`` (a Python dict, a template) is a plain line;
3. msgpack map lead byte (``0x80``-``0x8f``, ``0xde``, ``0xdf``): Fluent Bit ``format msgpack``;
4. ``0x0a``: an OTLP protobuf batch when it parses as one, else text;
5. ``[`` or ``"``: JSON when it parses (an array is a ``json_not_object`` failure, a string is
   an OTel ``raw`` body whose text is then decoded as a line), else text (SGLang lines
   start with ``[``);
6. anything else: a text line (a CRI line is unwrapped). Text with a few bytes that are not
   UTF-8 is decoded with U+FFFD in their place and matched, its events flagged ``repaired``
   (:func:`logsig.decode.text.repaired_text`); a value that is not text at all (a NUL byte, or
   more than one byte in ten invalid) is a ``not_utf8`` failure.

The decoder never raises: an unexpected error becomes a ``decode_error`` failure.
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import msgpack
import orjson

from logsig.decode import otlp_proto
from logsig.decode.envelopes import Context, build_event, map_events, refine_app_json
from logsig.decode.kubernetes import make_source
from logsig.decode.otlp import otlp_json_events, raw_body
from logsig.decode.result import DecodeResult, failed, succeeded
from logsig.decode.settings import DecodeSettings
from logsig.decode.text import clean_line, kafka_time, leading_time, parse_time, repaired_text, split_cri
from logsig.records import RawRecord

_WHITESPACE = frozenset(b" \t\r\n")
_BOM = b"\xef\xbb\xbf"


def decode_record(record: RawRecord, settings: DecodeSettings) -> DecodeResult:
    """Decode ``record`` with the envelope its topic is set to (``auto`` by default).

    Returns a :class:`DecodeResult`: events in order, or a failure whose reason is one of
    :data:`~logsig.records.FAILURE_REASONS`. Never raises.
    """
    try:
        value = record.value
        if not value:
            if record.origin.file is not None:  # a blank line of a text file: nothing to decode
                return DecodeResult()
            return failed(record, "empty_value", "record value is empty")
        if len(value) > settings.max_value_bytes:
            return failed(record, "too_large", f"record value is {len(value)} bytes after decompression, over "
                          f"decode.max_value_bytes={settings.max_value_bytes}")
        topic = record.origin.topic
        ctx = Context(record, settings.cluster_for(topic), settings.max_record_bytes, settings.max_events_per_record)
        return _bounded(_DECODERS[settings.envelope_for(topic)](value, ctx), ctx)
    except Exception as error:  # the decode stage reports, it never raises
        return failed(record, "decode_error", f"{type(error).__name__}: {error}")


def _bounded(result: DecodeResult, ctx: Context) -> DecodeResult:
    """``result`` with each event's ``position`` in its record set (part of its ``event_id``), and
    at most ``ctx.max_events`` events: past that, the record is also a ``too_many_events`` failure."""
    if len(result.events) < 2:
        return result
    failure = result.failure
    events = result.events
    if len(events) > ctx.max_events and failure is None:
        failure = _too_many(ctx).failure
        events = events[:ctx.max_events]
    events = tuple(replace(event, position=i) for i, event in enumerate(events))
    return DecodeResult(events, failure, result.truncated)


def _too_many(ctx: Context) -> DecodeResult:
    return failed(ctx.record, "too_many_events", f"record holds more than decode.max_events_per_record="
                  f"{ctx.max_events} events; the first {ctx.max_events} were matched")


def _auto(value: bytes, ctx: Context) -> DecodeResult:
    """Detect the format of one value by its first byte (see the module docstring)."""
    first = value[0]
    if first == 0x7B:
        return _json_map(value, ctx, strict=False)
    if 0x80 <= first <= 0x8F or first in (0xDE, 0xDF):
        return _msgpack(value, ctx, strict=False)
    if first in _WHITESPACE or value.startswith(_BOM):
        stripped = value.lstrip(b" \t\r\n").removeprefix(_BOM)
        if stripped[:1] in (b"{", b"[", b'"'):
            return _auto(stripped, ctx)
    elif first == 0x5B or first == 0x22:
        return _json_other(value, ctx)
    if first == 0x0A and otlp_proto.looks_like_batch(value):
        return otlp_proto.proto_events(value, ctx)
    return _text(value, ctx, cri=True)


def _json_map(value: bytes, ctx: Context, strict: bool) -> DecodeResult:
    """A JSON map (or NDJSON maps); ``strict``: anything else is a failure, not text."""
    try:
        obj, repaired = loads_lenient(value)
    except orjson.JSONDecodeError as error:
        return _broken_json(value, ctx, strict, error)
    if type(obj) is not dict:
        return failed(ctx.record, "json_not_object", f"JSON value is a {type(obj).__name__}")
    result = otlp_json_events(obj, ctx) if "resourceLogs" in obj else map_events(obj, ctx, value)
    if not repaired:
        return result
    return DecodeResult(tuple(replace(e, repaired=True) for e in result.events), result.failure, result.truncated, True)


_LONE_SURROGATE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
                             rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")
"""A ``\\uD800``-``\\uDFFF`` escape that is not half of a pair: what a shipper writes when it cuts a
string inside a surrogate pair (an emoji). RFC 8259 section 8.2 allows it; orjson refuses it."""


def loads_lenient(value: bytes) -> tuple[Any, bool]:
    """``(JSON value of value, repaired)``: orjson's, or when orjson refuses the text for a lone
    surrogate escape (made U+FFFD, ``repaired``) or a number beyond a double (``1e999``: the
    standard library's ``inf``), the value it has anyway. Raises orjson's error when neither parses."""
    try:
        return orjson.loads(value), False
    except orjson.JSONDecodeError as error:
        fixed = _LONE_SURROGATE.sub(rb"\\ufffd", value)
        try:
            return orjson.loads(fixed), fixed != value
        except orjson.JSONDecodeError:
            pass
        try:
            return json.loads(fixed), fixed != value
        except ValueError:
            raise error from None


def _broken_json(value: bytes, ctx: Context, strict: bool, error: orjson.JSONDecodeError) -> DecodeResult:
    """Value that starts like JSON but does not parse: NDJSON, a text line, or a failure."""
    body = value.strip()
    if b"\n" in body:
        events = _ndjson(body, ctx)
        if events is not None:
            return events
    if strict or body.startswith(b'{"'):
        return failed(ctx.record, "invalid_json", str(error))
    return _text(value, ctx, cri=True)


def _ndjson(body: bytes, ctx: Context) -> DecodeResult | None:
    """Several JSON maps, one a line, as one result; None unless every line is a map."""
    results = []
    lines = body.split(b"\n", ctx.max_events)
    more = len(lines) > ctx.max_events and bool(lines[-1].strip())
    for line in lines[:ctx.max_events]:
        if not line.strip():
            continue
        try:
            obj, _ = loads_lenient(line)
        except orjson.JSONDecodeError:
            return None
        if type(obj) is not dict:
            return None
        results.append(_json_map(line, ctx, strict=True))
    failures = [result for result in results if result.failure is not None]
    if failures:
        return failures[0]
    events = tuple(event for result in results for event in result.events)
    return DecodeResult(events, _too_many(ctx).failure, any(e.truncated for e in events)) if more else succeeded(events)


def _json_other(value: bytes, ctx: Context) -> DecodeResult:
    """A value starting with ``[`` or ``"``: JSON array (failure), JSON string, or text."""
    try:
        obj = orjson.loads(value)
    except orjson.JSONDecodeError:
        return _text(value, ctx, cri=True)
    if type(obj) is str:
        return _line(obj, ctx, cri=True)
    if type(obj) is dict:
        return _json_map(value, ctx, strict=True)
    return failed(ctx.record, "json_not_object", f"JSON value is a {type(obj).__name__}")


def _msgpack(value: bytes, ctx: Context, strict: bool) -> DecodeResult:
    """A Fluent Bit ``format msgpack`` map; not a map: failure (``strict``) or text."""
    try:
        obj = msgpack.unpackb(value, raw=False, strict_map_key=False, timestamp=1, ext_hook=_event_time)
    except Exception as error:  # msgpack raises several unrelated types on bad input
        if strict:
            return failed(ctx.record, "invalid_msgpack", f"{type(error).__name__}: {error}")
        return _text(value, ctx, cri=True, not_utf8="invalid_msgpack")
    if type(obj) is not dict:
        return failed(ctx.record, "invalid_msgpack", f"msgpack value is a {type(obj).__name__}")
    return map_events(obj, ctx, None)


def _event_time(code: int, data: bytes) -> object:
    """Fluent Bit's msgpack ``EventTime`` (ext type 0: big-endian uint32 seconds, nanoseconds)
    as float epoch seconds; other extension types are kept as they are."""
    if code == 0 and len(data) == 8:
        seconds, nanoseconds = struct.unpack(">II", data)
        return seconds + nanoseconds / 1e9
    return msgpack.ExtType(code, data)


def _text(value: bytes, ctx: Context, cri: bool, not_utf8: str = "not_utf8") -> DecodeResult:
    """A UTF-8 text line; ``cri``: unwrap a CRI runtime line."""
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError as error:
        repaired = repaired_text(value) if not_utf8 == "not_utf8" else None
        if repaired is None:
            return failed(ctx.record, not_utf8, str(error))
        result = _line(repaired, ctx, cri)
        return DecodeResult(tuple(replace(e, repaired=True) for e in result.events), None, result.truncated, True)
    return _line(text, ctx, cri)


def _line(text: str, ctx: Context, cri: bool) -> DecodeResult:
    """One text line as an event (CRI unwrapped when ``cri``, app JSON unwrapped)."""
    stream = timestamp = level = None
    partial = False
    if cri and (parsed := split_cri(text)) is not None:
        stream, partial, text = parsed.stream, parsed.partial, parsed.content
        timestamp = parse_time(parsed.time)
    text = clean_line(text)
    if cri and text[:1] == "{":
        text, level, timestamp = refine_app_json(text, level, timestamp)
    if timestamp is None:
        timestamp = leading_time(text, kafka_time(ctx.record.origin.timestamp_ms))
    source = make_source(ctx.cluster, stream=stream)
    return succeeded((build_event(text, ctx, source, timestamp, level, partial),))


def _plain(value: bytes, ctx: Context) -> DecodeResult:
    """Envelope ``text``: the value is the line, nothing is unwrapped."""
    return _text(value, ctx, cri=False)


def _otlp_raw(value: bytes, ctx: Context) -> DecodeResult:
    """Envelope ``otlp_raw``: a JSON-quoted string body, or bytes sent as they were."""
    body = raw_body(value) if value[:1] == b'"' else None
    if body is not None:
        return _line(body, ctx, cri=True)
    return _text(value, ctx, cri=True)


def _otlp_json(value: bytes, ctx: Context) -> DecodeResult:
    """Envelope ``otlp_json``: the value must be an OTLP/JSON batch."""
    try:
        obj = orjson.loads(value)
    except orjson.JSONDecodeError as error:
        return failed(ctx.record, "invalid_otlp", str(error))
    if type(obj) is not dict:
        return failed(ctx.record, "invalid_otlp", f"JSON value is a {type(obj).__name__}")
    return otlp_json_events(obj, ctx)


_DECODERS: dict[str, Callable[[bytes, Context], DecodeResult]] = {
    "auto": _auto,
    "text": _plain,
    "cri": lambda value, ctx: _text(value, ctx, cri=True),
    "json": lambda value, ctx: _json_map(value, ctx, strict=True),
    "msgpack": lambda value, ctx: _msgpack(value, ctx, strict=True),
    "otlp_json": _otlp_json,
    "otlp_proto": lambda value, ctx: otlp_proto.proto_events(value, ctx),
    "otlp_raw": _otlp_raw,
}
