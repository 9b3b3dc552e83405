"""Multi-line assembly: partial lines joined, each Python traceback turned into one event.

Per stream (``(cluster, namespace, pod, container, stream)`` when the record names a pod or
container, else the Kafka key, else the topic-partition, else the file):

1. CRI ``P`` fragments and Docker 16 KiB parts are joined with the line that completes them;
2. a line ending in ``Traceback (most recent call last):`` opens a group for its stream and
   process (vLLM ``pid=`` tag, torch ``[rankN]:``); the following lines of the traceback join
   it (:meth:`logsig.assemble.groups.Traceback.accepts`), with their prefixes removed;
3. a group is emitted when a line that does not continue it arrives, when it has been idle
   for ``idle_timeout_seconds``, at ``max_lines`` / ``max_bytes`` (the rest of the traceback
   continues in a new event), when ``max_open_groups`` would be exceeded (the group idle the
   longest goes first), on :meth:`Assembler.flush_partitions` and :meth:`Assembler.flush_all`;
4. a traceback equal to one emitted on the same container and process within
   ``dedupe_window_seconds`` (same last frame and exception line: vLLM V1 prints it twice,
   prefixed then bare) is dropped.

Every other line passes straight through. ``now`` is a monotonic clock in seconds, injected.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace
from datetime import datetime

from logsig.assemble.groups import Fragments, GroupKey, Held, Traceback
from logsig.assemble.traceback import START_MARK, Kind, final_exception, split_line
from logsig.decode.settings import DecodeSettings
from logsig.records import LogEvent


def stream_key(event: LogEvent) -> GroupKey:
    """The stream an event belongs to (see the module docstring)."""
    source, origin = event.source, event.origin
    if source.pod is not None or source.container is not None:
        return (source.cluster, source.namespace, source.pod, source.container, source.stream)
    if origin.key is not None:
        return ("key", origin.topic, origin.key, source.stream)
    if origin.topic is not None:
        return ("partition", origin.topic, origin.partition, source.stream)
    return ("file", origin.file, source.stream)


class Assembler:
    """Joins partial lines and tracebacks per stream; bounded by ``settings.multiline``."""

    def __init__(self, settings: DecodeSettings) -> None:
        self._bounds = settings.multiline
        self._max_record_bytes = settings.max_record_bytes
        self._open: OrderedDict[GroupKey, Held] = OrderedDict()
        self._groups: dict[GroupKey, dict[str, Traceback]] = {}
        self._recent: OrderedDict[tuple[object, ...], tuple[float, datetime | None]] = OrderedDict()

    def feed(self, event: LogEvent, now: float) -> list[LogEvent]:
        """Events ready to match, in order, after ``event`` arrived at ``now`` (seconds)."""
        out: list[LogEvent] = []
        key = stream_key(event)
        fragments_key = ("fragments", key)
        if event.partial or fragments_key in self._open:
            joined = self._join(fragments_key, event, now, out)
            if joined is None:
                return out
            event = joined
        if self._bounds.enabled and (key in self._groups or START_MARK in event.message):
            self._route(key, event, now, out)
        else:
            out.append(event)
        return out

    def flush_idle(self, now: float) -> list[LogEvent]:
        """Events of the groups idle for ``idle_timeout_seconds`` or more at ``now``."""
        out: list[LogEvent] = []
        deadline = now - self._bounds.idle_timeout_seconds
        while self._open:
            held = next(iter(self._open.values()))
            if held.last_seen > deadline:
                break
            self._close(held, now, out)
        return out

    def flush_all(self) -> list[LogEvent]:
        """Every held event, oldest group first (on shutdown)."""
        out: list[LogEvent] = []
        while self._open:
            held = next(iter(self._open.values()))
            self._close(held, held.last_seen, out)
        return out

    def flush_partitions(self, partitions: set[tuple[str, int]]) -> list[LogEvent]:
        """Events of the groups holding a record of ``partitions`` ((topic, partition) pairs)."""
        out: list[LogEvent] = []
        for held in [h for h in self._open.values() if not partitions.isdisjoint(h.lowest)]:
            self._close(held, held.last_seen, out)
        return out

    def watch(self) -> dict[GroupKey, frozenset[str] | None]:
        """Per stream (:func:`stream_key`) with an open group, who may join or close it: the process
        tags of its open tracebacks (a line is routed to the traceback of its own tag), or None when
        any line may (fragments are open, or a traceback of lines without a tag)."""
        out: dict[GroupKey, frozenset[str] | None] = {
            stream: None if "" in procs else frozenset(procs) for stream, procs in self._groups.items()}
        for key in self._open:
            if key[0] == "fragments":
                out[key[1]] = None  # type: ignore[index]
        return out

    def held_offsets(self) -> dict[tuple[str, int], int]:
        """For each (topic, partition), the lowest offset of a record held in an open group."""
        lowest: dict[tuple[str, int], int] = {}
        for held in self._open.values():
            for where, offset in held.lowest.items():
                if offset < lowest.get(where, offset + 1):
                    lowest[where] = offset
        return lowest

    def _join(self, key: GroupKey, event: LogEvent, now: float, out: list[LogEvent]) -> LogEvent | None:
        """Add ``event`` to the fragments of its stream; the whole line once it is complete."""
        held = self._open.get(key)
        if not isinstance(held, Fragments):
            self._make_room(now, out)
            self._open[key] = Fragments(key, event, now)
            return None
        held.add(event, now, self._max_record_bytes)
        self._open.move_to_end(key)
        if event.partial and len(held.origins) < self._bounds.max_lines:
            return None
        del self._open[key]
        return held.joined(self._max_record_bytes)

    def _route(self, key: GroupKey, event: LogEvent, now: float, out: list[LogEvent]) -> None:
        """Add ``event`` to its stream's open traceback, or open one, or pass it through."""
        line = split_line(event.message)
        procs = self._groups.get(key)
        group = procs.get(line.proc) if procs else None
        if group is not None:
            if group.accepts(line):
                group.add(line, event, now)
                self._open.move_to_end(group.key)
                if group.full(self._bounds.max_lines, self._bounds.max_bytes):
                    self._emit(group, now, out, truncated=True)
                    group.restart()
                return
            self._close(group, now, out)
        if line.kind is Kind.START:
            self._make_room(now, out)
            group = Traceback(("traceback", key, line.proc), key, line, event, now)
            self._open[group.key] = group
            self._groups.setdefault(key, {})[line.proc] = group
        else:
            out.append(_with_final_line(event))

    def _make_room(self, now: float, out: list[LogEvent]) -> None:
        """Close the group idle the longest when ``max_open_groups`` are open."""
        while len(self._open) >= self._bounds.max_open_groups:
            self._close(next(iter(self._open.values())), now, out)

    def _close(self, held: Held, now: float, out: list[LogEvent]) -> None:
        """Forget ``held`` and emit what it holds."""
        self._open.pop(held.key, None)
        if isinstance(held, Fragments):
            out.append(held.joined(self._max_record_bytes))
            return
        assert isinstance(held, Traceback)
        procs = self._groups.get(held.stream)
        if procs is not None and procs.get(held.proc) is held:
            del procs[held.proc]
            if not procs:
                del self._groups[held.stream]
        if held.lines:
            self._emit(held, now, out, truncated=False)

    def _emit(self, group: Traceback, now: float, out: list[LogEvent], truncated: bool) -> None:
        """Append the group's event unless it repeats a traceback just emitted."""
        event = group.event(truncated)
        if not self._is_repeat(group, event, now):
            out.append(event)

    def _is_repeat(self, group: Traceback, event: LogEvent, now: float) -> bool:
        """Whether an equal traceback was emitted on this container within the window."""
        window = self._bounds.dedupe_window_seconds
        if window <= 0 or group.exception is None:
            return False
        while self._recent:
            first_key, (seen, _) = next(iter(self._recent.items()))
            if now - seen <= window and len(self._recent) < self._bounds.max_open_groups:
                break
            del self._recent[first_key]
        key = (group.stream[:-1], *group.dedupe_key())
        previous = self._recent.get(key)
        self._recent[key] = (now, event.timestamp)
        self._recent.move_to_end(key)
        if previous is None:
            return False
        seen, stamp = previous
        if stamp is not None and event.timestamp is not None:
            return abs((event.timestamp - stamp).total_seconds()) <= window
        return now - seen <= window


def _with_final_line(event: LogEvent) -> LogEvent:
    """``event``, with ``line`` set to the final exception line if it holds a whole traceback."""
    if "\n" not in event.message or START_MARK not in event.message:
        return event
    lines = event.message.split("\n")
    found = final_exception(lines)
    return replace(event, line=found, context=tuple(lines)) if found else event
