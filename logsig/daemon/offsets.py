"""Commit offsets: the one place that decides what may be committed (at least once, no loss).

Kafka's committed offset is the next offset to read. For each partition the tracker commits one
past the last record whose output was acknowledged, but never beyond the lowest offset still held
in an open multi-line group, and only for partitions still assigned:

- :meth:`OffsetTracker.delivered`: a batch's outputs were acknowledged; pass its
  :func:`next_offsets` and the held offsets taken right after the batch was processed (a record
  held then may be emitted by a later batch, which is not acknowledged yet);
- :meth:`OffsetTracker.committable`: what may be committed now, for the partitions given;
- :meth:`OffsetTracker.changed`: the same, less what was already committed (an idle replica
  commits nothing); :meth:`OffsetTracker.committed` records a successful commit;
- :meth:`OffsetTracker.revoked`: forget partitions that moved to another member.

Pure (no I/O); batches must be reported in the order they were processed.
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


class OffsetTracker:
    """Delivered positions, held records and committed offsets per (topic, partition)."""

    def __init__(self) -> None:
        self._delivered: dict[TP, int] = {}
        self._held: dict[TP, int] = {}
        self._committed: dict[TP, int] = {}

    def delivered(self, offsets: Mapping[TP, int], held: Mapping[TP, int]) -> None:
        """A batch's outputs are acknowledged: ``offsets`` are its :func:`next_offsets`, ``held`` the
        lowest offset per partition still held in an open group once the batch was processed."""
        for tp, offset in offsets.items():
            if offset > self._delivered.get(tp, 0):
                self._delivered[tp] = offset
        self._held = dict(held)

    def committable(self, assigned: set[TP]) -> dict[TP, int]:
        """Offsets safe to commit now for the ``assigned`` partitions."""
        return committable(self._delivered, self._held, assigned)

    def changed(self, assigned: set[TP]) -> dict[TP, int]:
        """:meth:`committable` less the partitions already committed at that offset."""
        return {tp: o for tp, o in self.committable(assigned).items() if self._committed.get(tp) != o}

    def last_committed(self) -> dict[TP, int]:
        """The offsets committed so far, per partition (the next offset a restart reads)."""
        return dict(self._committed)

    def committed(self, offsets: Mapping[TP, int]) -> None:
        """``offsets`` were committed."""
        self._committed.update(offsets)

    def revoked(self, partitions: Iterable[TP]) -> None:
        """Forget ``partitions`` (now read by another member, from what was committed)."""
        for tp in partitions:
            self._delivered.pop(tp, None)
            self._held.pop(tp, None)
            self._committed.pop(tp, None)
