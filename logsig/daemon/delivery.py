"""What a pipeline step becomes on the wire: incident records, dead letters, and commit offsets.

Pure functions (no I/O), so the delivery rules are unit-tested without a broker:

- an incident is keyed by its source (``namespace/pod/container``, else the input record's key,
  else ``topic/partition``) so one source's incidents stay ordered in one output partition;
- a dead letter keeps the original key, value, headers and timestamp and adds ``logsig.*``
  headers naming the reason and the source coordinates;
- the offset committed for a partition is one past the last record delivered, but never beyond
  the lowest offset still held in an open multi-line group.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from logsig.daemon.sink import OutRecord
from logsig.matchers.incident import Incident
from logsig.records import DecodeFailure, RawRecord

TP = tuple[str, int]
MAX_DETAIL = 512


def incident_key(incident: Incident) -> bytes:
    """The Kafka key of an incident: its source, so per-source order is kept."""
    s = incident.source
    if s.pod:
        return f"{s.namespace or ''}/{s.pod}/{s.container or ''}".encode()
    if s.key is not None:
        return s.key.encode()
    return f"{s.topic}/{s.partition}".encode()


def incident_record(incident: Incident, topic: str) -> OutRecord:
    """The output record of an incident."""
    headers = (("logsig.schema_version", b"1"), ("logsig.signature_id", incident.signature.id.encode()))
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


def next_offsets(records: Iterable[RawRecord]) -> dict[TP, int]:
    """One past the highest offset seen per (topic, partition)."""
    out: dict[TP, int] = {}
    for record in records:
        o = record.origin
        if o.topic is not None and o.partition is not None and o.offset is not None:
            tp = (o.topic, o.partition)
            out[tp] = max(out.get(tp, 0), o.offset + 1)
    return out


def committable(delivered: Mapping[TP, int], held: Mapping[TP, int], assigned: set[TP]) -> dict[TP, int]:
    """Offsets safe to commit: delivered positions capped by held groups, assigned partitions only."""
    return {tp: min(offset, held.get(tp, offset)) for tp, offset in delivered.items() if tp in assigned}
