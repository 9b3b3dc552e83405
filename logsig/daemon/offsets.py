"""Commit offsets: what may be committed, given what was delivered and what is still held.

Pure functions (no I/O). The offset committed for a partition is one past the last record
delivered, but never beyond the lowest offset still held in an open multi-line group, and only
for partitions still assigned (Kafka's committed offset is the next offset to read).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from logsig.records import TP, RawRecord


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
