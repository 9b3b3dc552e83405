"""What identifies an incident group and one of its events (pure functions).

- stream: ``k8s:<cluster>/<namespace>/<pod>/<container>`` when the record names a pod, else
  ``kafka:<topic>/<partition>``, else ``file:<path>`` (empty parts stay empty);
- group key: ``<signature id>|<stream>|<fingerprint of the matched line's template>``;
- instance: the coordinates of a group's first occurrence (``kafka:<topic>:<partition>:<offset>`` or
  ``file:<path>:<line>``), so a group that opens again later is a new instance of the same key;
- event id: 32 hex characters of SHA-256 over (key, instance, status, occurrences).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import UTC, datetime

from logsig.incident import Incident, SourceOut
from logsig.records import TP, Origin


def stream_of(source: SourceOut) -> str:
    """The stream a line belongs to (see the module docstring)."""
    if source.pod:
        return f"k8s:{source.cluster or ''}/{source.namespace or ''}/{source.pod}/{source.container or ''}"
    if source.topic is not None:
        return f"kafka:{source.topic}/{source.partition}"
    return f"file:{source.file or ''}"


def group_key(incident: Incident) -> str:
    """The stable key of ``incident``'s group."""
    return f"{incident.signature.id}|{stream_of(incident.source)}|{incident.fingerprint}"


def source_name(source: SourceOut) -> str:
    """``topic/partition`` of a Kafka record, else the file name."""
    return f"{source.topic}/{source.partition}" if source.topic is not None else source.file or ""


def instance_of(source: SourceOut) -> str:
    """The coordinates of an occurrence's record."""
    if source.topic is not None:
        return f"kafka:{source.topic}:{source.partition}:{source.offset}"
    return f"file:{source.file}:{source.line_number}"


def group_event_id(key: str, instance: str, status: str, occurrences: int) -> str:
    """Deterministic id of one group event."""
    digest = hashlib.sha256(f"{key}\0{instance}\0{status}\0{occurrences}".encode())
    return digest.hexdigest()[:32]


def seen_at(incident: Incident) -> datetime:
    """When the line was logged: its log time, else the record time, else when it was detected."""
    return incident.log_timestamp or incident.source.timestamp or incident.detected_at


def epoch_seconds(moment: datetime) -> float:
    """``moment`` as Unix seconds (a naive datetime is taken as UTC)."""
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def lowest_offsets(origins: Iterable[Origin]) -> dict[TP, int]:
    """The lowest offset per (topic, partition) among ``origins`` (file origins are skipped)."""
    out: dict[TP, int] = {}
    for o in origins:
        if o.topic is not None and o.partition is not None and o.offset is not None:
            tp = (o.topic, o.partition)
            out[tp] = min(out.get(tp, o.offset), o.offset)
    return out
