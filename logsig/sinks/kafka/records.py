"""What a pipeline step becomes on the wire: incident records and dead letters.

Pure functions (no I/O), so the delivery rules are unit-tested without a broker:

- an incident is keyed by its source (``namespace/pod/container``, else the input record's key,
  else ``topic/partition``) so one source's incidents stay ordered in one output partition;
- a dead letter keeps the original key, value, headers and timestamp and adds ``logsig.*``
  headers naming the reason and the source coordinates;
- a record the broker refuses as too large is built again smaller, step by step
  (:data:`SHRINK_STEPS`): first sent alone (a batch of several may be what was too large), then
  ``trimmed`` (optional parts dropped: an incident's context and copy of the input key, a dead
  letter's original key and headers, line and value cut), then ``minimal`` (an incident with its
  id, signature, root cause, source and the line's first 256 characters; a dead letter with only
  its ``logsig.*`` headers).
"""

from __future__ import annotations

from dataclasses import dataclass

from logsig.incident import Incident, TransitionsOut
from logsig.records import DecodeFailure
from logsig.sinks.kafka.envelope import DEFAULT_SOURCE, cloudevent_headers

MAX_DETAIL = 512


@dataclass(frozen=True, slots=True)
class OutRecord:
    """A record to produce: ``timestamp_ms`` None lets the broker/producer stamp it."""

    topic: str
    value: bytes
    key: bytes | None = None
    headers: tuple[tuple[str, bytes], ...] = ()
    timestamp_ms: int | None = None


def incident_key(incident: Incident) -> bytes:
    """The Kafka key of an incident: its source, so per-source order is kept."""
    s = incident.source
    if s.pod:
        return f"{s.namespace or ''}/{s.pod}/{s.container or ''}".encode()
    if s.key is not None:
        return s.key.encode()
    return f"{s.topic}/{s.partition}".encode()


def incident_record(incident: Incident, topic: str, source: str = DEFAULT_SOURCE) -> OutRecord:
    """The output record of an incident: CloudEvents binary-mode headers (``source`` is ``ce_source``,
    :mod:`logsig.sinks.kafka.envelope`), then ``logsig.schema_version`` and ``logsig.signature_id``."""
    headers = (*cloudevent_headers(incident, source),
               ("logsig.schema_version", str(incident.schema_version).encode()),
               ("logsig.signature_id", incident.signature.id.encode()))
    return OutRecord(topic=topic, value=incident.to_json(), key=incident_key(incident), headers=headers)


def dead_letter_record(failure: DecodeFailure, topic: str, max_bytes: int = 900_000) -> OutRecord:
    """The dead-letter record of an undecodable record, original bytes intact up to ``max_bytes``
    (a longer value is cut, with ``logsig.original_bytes`` giving its size, so that the broker's
    1 MB default ``max.message.bytes`` never blocks the consumer)."""
    record, origin = failure.record, failure.record.origin
    value = record.value if record.value is not None else b""
    cut: tuple[tuple[str, bytes], ...] = ()
    if len(value) > max_bytes:
        cut = (("logsig.original_bytes", str(len(value)).encode()),)
        value = value[:max_bytes]
    extra = (
        ("logsig.reason", failure.reason.encode()),
        ("logsig.detail", failure.detail[:MAX_DETAIL].encode("utf-8", errors="replace")),
        ("logsig.source.topic", (origin.topic or origin.file or "").encode()),
        ("logsig.source.partition", str(origin.partition if origin.partition is not None else "").encode()),
        ("logsig.source.offset", str(origin.offset if origin.offset is not None else "").encode()),
    )
    return OutRecord(topic=topic, value=value, key=record.key,
                     headers=(*record.headers, *extra, *cut), timestamp_ms=origin.timestamp_ms)


SHRINK_STEPS = ("alone", "trimmed", "minimal")
"""The ways a refused record is sent again, in order (the ``step`` label of ``logsig_outputs_shrunk_total``)."""
TRIMMED_LINE_CHARS = 1024
MINIMAL_LINE_CHARS = 256
TRIMMED_VALUE_BYTES = 64 * 1024


def shrunk_incident(incident: Incident, step: str) -> Incident:
    """``incident`` for shrink ``step``: ``alone`` as it is, ``trimmed`` without context and key copy and
    with the line and template cut to 1,024 characters, ``minimal`` also without workarounds, dead ends, transitions,
    other matches and captures, line and template cut to 256 characters (``match.truncated`` set when cut)."""
    if step == "alone":
        return incident
    chars = TRIMMED_LINE_CHARS if step == "trimmed" else MINIMAL_LINE_CHARS
    m = incident.match
    cut = len(m.line) > chars or len(m.matched_text) > chars
    match = m.model_copy(update={"line": m.line[:chars], "matched_text": m.matched_text[:chars],
                                 "truncated": m.truncated or cut})
    update: dict[str, object] = {"context": [], "source": incident.source.model_copy(update={"key": None}),
                                 "match": match, "template": incident.template[:chars]}
    if step == "minimal":
        match = match.model_copy(update={"captures": {}, "values": {}})
        update.update(match=match, workarounds=[], dead_ends=[], transitions=TransitionsOut(), also_matched=[])
    return incident.model_copy(update=update)


def shrunk_dead_letter(failure: DecodeFailure, topic: str, max_bytes: int, step: str) -> OutRecord:
    """The dead letter of ``failure`` for shrink ``step``: ``alone`` as it is; ``trimmed`` without the
    original key and headers (their sizes in ``logsig.original_key_bytes`` and
    ``logsig.original_headers``) and the value cut to 64 KiB; ``minimal`` with no value either."""
    full = dead_letter_record(failure, topic, max_bytes)
    if step == "alone":
        return full
    record = failure.record
    ours = tuple((k, v) for k, v in full.headers[len(record.headers):] if k != "logsig.detail")
    sizes = (("logsig.original_key_bytes", str(len(record.key or b"")).encode()),
             ("logsig.original_headers", str(len(record.headers)).encode()),
             ("logsig.original_bytes", str(len(record.value or b"")).encode()))
    detail = (("logsig.detail", failure.detail[:64].encode("utf-8", errors="replace")),)
    value = full.value[:TRIMMED_VALUE_BYTES] if step == "trimmed" else b""
    ours = tuple((k, v) for k, v in ours if k != "logsig.original_bytes")
    return OutRecord(topic=topic, value=value, key=None, headers=(*ours, *detail, *sizes),
                     timestamp_ms=full.timestamp_ms)
