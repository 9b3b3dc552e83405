"""A batch of raw records held in columns: record objects are built only for the few that need them.

A source hands the pipeline a :class:`RecordBatch`: the values as one list of bytes, the
(topic, partition) runs they came in, and a way to build the :class:`~logsig.records.RawRecord`
of record ``i`` on demand. Most records of a realistic stream are never more than a value in that
list (:mod:`logsig.glance` tells which are).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from logsig.records import TP, Origin, RawRecord

StreamKey = tuple[object, ...]


@dataclass(frozen=True, slots=True)
class Run:
    """Records ``start`` to ``end`` (exclusive) of a batch come from one place.

    topic/partition: the Kafka partition, or None for a file; file: the file name, else None.
    """

    start: int
    end: int
    topic: str | None = None
    partition: int | None = None
    file: str | None = None


class RecordBatch:
    """``values[i]`` is the value of record ``i``; :meth:`record` builds its RawRecord.

    runs: where each stretch of records came from, in order; keys: each record's key as bytes
    (Kafka) or as the text of ``Origin.key``, None when it has none; offsets: each record's Kafka
    offset (files: line numbers; -1: none); make: builds record ``i`` (every field the source has).
    """

    __slots__ = ("keys", "make", "offsets", "runs", "values")

    def __init__(self, values: list[bytes | None], runs: Sequence[Run], keys: Sequence[bytes | str | None],
                 offsets: Sequence[int], make: Callable[[int], RawRecord]) -> None:
        self.values, self.runs, self.keys, self.offsets, self.make = values, tuple(runs), keys, offsets, make

    def __len__(self) -> int:
        return len(self.values)

    def record(self, index: int) -> RawRecord:
        """The RawRecord of record ``index`` (built now)."""
        return self.make(index)

    def head(self, count: int) -> RecordBatch:
        """The first ``count`` records."""
        runs = [Run(r.start, min(r.end, count), r.topic, r.partition, r.file) for r in self.runs if r.start < count]
        return RecordBatch(self.values[:count], runs, self.keys[:count], self.offsets[:count], self.make)

    def records(self) -> list[RawRecord]:
        """Every record (builds them all: for tests and slow paths)."""
        return [self.make(i) for i in range(len(self.values))]

    def next_offsets(self) -> dict[TP, int]:
        """One past the highest Kafka offset per (topic, partition)."""
        out: dict[TP, int] = {}
        for run in self.runs:
            if run.topic is None or run.partition is None or run.end <= run.start:
                continue
            highest = max(self.offsets[run.start:run.end])
            if highest >= 0:
                tp = (run.topic, run.partition)
                out[tp] = max(out.get(tp, 0), highest + 1)
        return out

    def plain_stream_keys(self, run: Run) -> list[StreamKey]:
        """The assembler's stream key of each record of ``run`` decoded as a plain line (no pod)."""
        if run.topic is None:
            return [("file", run.file, None)] * (run.end - run.start)
        keys = self.keys[run.start:run.end]
        streams: dict[bytes | str | None, StreamKey] = {
            key: ("partition", run.topic, run.partition, None) if key is None
            else ("key", run.topic, key if isinstance(key, str) else key.decode("utf-8", errors="replace"), None)
            for key in set(keys)}
        return [streams[key] for key in keys]


def batch_of_records(records: Sequence[RawRecord]) -> RecordBatch:
    """A batch of already built records (each run one record long, so any mix is allowed)."""
    runs = [Run(i, i + 1, r.origin.topic, r.origin.partition, r.origin.file) for i, r in enumerate(records)]
    offsets = [r.origin.offset if r.origin.offset is not None else -1 for r in records]
    keys = [r.origin.key for r in records]
    return RecordBatch([r.value for r in records], runs, keys, offsets, records.__getitem__)


def batch_of_lines(values: list[bytes], file: str, first_line: int) -> RecordBatch:
    """Lines of ``file`` as records (line ``first_line`` first, 1-based), as ``logsig scan`` reads them."""

    def make(index: int) -> RawRecord:
        return RawRecord(value=values[index], origin=Origin(file=file, line_number=first_line + index))

    return RecordBatch(list(values), [Run(0, len(values), file=file)], [None] * len(values),
                       range(first_line, first_line + len(values)), make)
