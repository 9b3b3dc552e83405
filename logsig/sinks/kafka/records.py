"""What a pipeline step becomes on the wire: incident records and dead letters.

Pure functions (no I/O), so the delivery rules are unit-tested without a broker:

- an incident is keyed by its source (``namespace/pod/container``, else the input record's key,
  else ``topic/partition``) so one source's incidents stay ordered in one output partition;
- a dead letter keeps the original key, value, headers and timestamp and adds ``logsig.*``
  headers naming the reason and the source coordinates.
"""

from __future__ import annotations

from dataclasses import dataclass

from logsig.incident import Incident
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
