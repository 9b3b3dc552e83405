"""Grouping: detections in, incident group events out (pure: no I/O, no clock of its own).

A group is one signature, one line template, one stream (:mod:`logsig.group.keys`). Its events:

- ``opened`` at its first occurrence, at once, carrying that occurrence;
- ``updated`` (the latest occurrence and the count so far) when an occurrence arrives and the
  group's last event is at least ``update_interval_seconds`` old, else at the first :meth:`tick`
  after that: at most one per interval per group;
- ``resolved`` from :meth:`tick` once ``quiet_seconds`` passed without an occurrence; it carries
  the final count, so ``group.occurrences`` of the last event equals the number of matching lines;
- :meth:`flush` emits ``updated`` for groups with occurrences not yet reported (shutdown, partition
  revocation) or ``resolved`` (end of a scan), then forgets them;
- beyond ``max_groups`` the least recently seen group is evicted: reported (``updated``) if it has
  unreported occurrences, forgotten, counted in :attr:`Grouper.evicted`.

A group opening within ``causal_window_seconds`` of the last occurrence of an open group on the
same stream whose signature ``leads_to`` it (or that it is ``preceded_by``, per the catalog's
transition_graph) carries ``caused_by`` naming that group.

Offsets: :meth:`held_offsets` gives, per (topic, partition), the lowest offset of an occurrence
counted but not yet in an emitted event. Committing no further than that means a crash never
loses a count (it can count an occurrence twice; see docs/incident.md).

Clock: ``now`` is seconds on any monotonic scale (the daemon passes ``time.monotonic()``); None
means log time: each occurrence is at its own log time and ticks use the latest seen (``logsig scan``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from logsig.group.keys import (
    epoch_seconds,
    group_event_id,
    group_key,
    instance_of,
    lowest_offsets,
    seen_at,
    source_name,
    stream_of,
)
from logsig.group.settings import GroupSettings
from logsig.incident import CauseOut, GroupOut, Incident, Status
from logsig.pipeline import Detection
from logsig.records import TP


@dataclass
class _Bounded:
    """Distinct values in first-seen order, at most ``limit`` kept; ``more`` counts the others."""

    limit: int
    values: dict[str, None] = field(default_factory=dict)
    more: int = 0

    def add(self, value: str | None) -> None:
        if not value or value in self.values:
            return
        if len(self.values) < self.limit:
            self.values[value] = None
        else:
            self.more += 1


@dataclass
class _Group:
    key: str
    stream: str
    instance: str
    first: Incident
    latest: Detection
    pods: _Bounded
    sources: _Bounded
    first_at: float
    last_at: float
    emitted_at: float = 0.0
    occurrences: int = 0
    caused_by: CauseOut | None = None
    held: dict[TP, int] = field(default_factory=dict)
    partitions: set[TP] = field(default_factory=set)

    def add(self, detection: Detection, at: float) -> None:
        incident = detection.incident
        self.occurrences += 1
        self.last_at = max(self.last_at, at)
        self.latest = detection
        self.pods.add(incident.source.pod)
        self.sources.add(source_name(incident.source))
        for tp, offset in lowest_offsets(detection.event.covered_origins).items():
            self.held[tp] = min(self.held.get(tp, offset), offset)
            self.partitions.add(tp)

    def out(self) -> GroupOut:
        return GroupOut(key=self.key, occurrences=self.occurrences, first_seen=seen_at(self.first),
                        last_seen=seen_at(self.latest.incident), pods=list(self.pods.values), pods_more=self.pods.more,
                        sources=list(self.sources.values), sources_more=self.sources.more)


class Grouper:
    """Open incident groups; see the module docstring. ``evicted`` counts groups evicted so far."""

    def __init__(self, settings: GroupSettings) -> None:
        self.settings = settings
        self.evicted = 0
        self._groups: OrderedDict[str, _Group] = OrderedDict()
        self._by_stream: dict[str, dict[str, None]] = {}
        self._dirty: dict[str, None] = {}
        self._log_now = float("-inf")

    def __len__(self) -> int:
        return len(self._groups)

    def feed(self, detections: Sequence[Detection], now: float | None = None) -> list[Detection]:
        """Count ``detections`` into their groups; returns the events due now, in order (each a
        detection whose incident is the group event and whose event and matches are the occurrence
        it reports)."""
        out: list[Detection] = []
        for detection in detections:
            at = self._clock(detection.incident, now)
            key = group_key(detection.incident)
            group = self._groups.get(key)
            if group is None:
                out.extend(self._open(key, detection, at))
                continue
            group.add(detection, at)
            self._groups.move_to_end(key)
            self._dirty[key] = None
            if at - group.emitted_at >= self.settings.update_interval_seconds:
                out.append(self._emit(group, "updated", at))
        return out

    def tick(self, now: float | None = None) -> list[Detection]:
        """Events due at ``now`` (None: the latest log time seen): updates, then resolutions."""
        at = self._log_now if now is None else now
        interval, quiet = self.settings.update_interval_seconds, self.settings.quiet_seconds
        out = [self._emit(self._groups[k], "updated", at) for k in list(self._dirty)
               if at - self._groups[k].emitted_at >= interval and at - self._groups[k].last_at < quiet]
        quiet_keys = [k for k, g in self._groups.items() if at - g.last_at >= quiet]
        out.extend(self._close(k, "resolved", at) for k in quiet_keys)
        return out

    def flush(self, partitions: Iterable[TP] | None = None, resolve: bool = False) -> list[Detection]:
        """Report and forget every group (``partitions`` None) or those fed from ``partitions``:
        ``resolved`` if ``resolve``, else ``updated`` for those with unreported occurrences."""
        wanted = None if partitions is None else set(partitions)
        keys = [k for k, g in self._groups.items() if wanted is None or g.partitions & wanted]
        out: list[Detection] = []
        for key in keys:
            group = self._groups[key]
            if resolve:
                out.append(self._close(key, "resolved", group.last_at))
            else:
                if key in self._dirty:
                    out.append(self._emit(group, "updated", group.last_at))
                self._forget(key)
        return out

    def held_offsets(self) -> dict[TP, int]:
        """Lowest offset per (topic, partition) of an occurrence not yet in an emitted event."""
        out: dict[TP, int] = {}
        for key in self._dirty:
            for tp, offset in self._groups[key].held.items():
                out[tp] = min(out.get(tp, offset), offset)
        return out

    def _clock(self, incident: Incident, now: float | None) -> float:
        if now is not None:
            return now
        at = epoch_seconds(seen_at(incident))
        self._log_now = max(self._log_now, at)
        return at

    def _open(self, key: str, detection: Detection, at: float) -> list[Detection]:
        out = self._evict() if len(self._groups) >= self.settings.max_groups else []
        incident = detection.incident
        limit = self.settings.max_listed
        group = _Group(key=key, stream=stream_of(incident.source), instance=instance_of(incident.source),
                       first=incident, latest=detection, pods=_Bounded(limit), sources=_Bounded(limit),
                       first_at=at, last_at=at)
        group.caused_by = self._cause(group, incident, at)
        group.add(detection, at)
        self._groups[key] = group
        self._by_stream.setdefault(group.stream, {})[key] = None
        out.append(self._emit(group, "opened", at))
        return out

    def _cause(self, group: _Group, incident: Incident, at: float) -> CauseOut | None:
        """The most recently seen open group on the same stream that the catalog says leads here."""
        me, before = incident.signature.id, set(incident.transitions.preceded_by)
        best: _Group | None = None
        for other in (self._groups[k] for k in self._by_stream.get(group.stream, ())):
            sig = other.first.signature.id
            if sig == me or at - other.last_at > self.settings.causal_window_seconds:
                continue
            if (sig in before or me in other.first.transitions.leads_to) and (
                    best is None or other.last_at >= best.last_at):
                best = other
        return None if best is None else CauseOut(key=best.key, signature_id=best.first.signature.id)

    def _evict(self) -> list[Detection]:
        key, group = next(iter(self._groups.items()))
        self.evicted += 1
        out = [self._emit(group, "updated", group.last_at)] if key in self._dirty else []
        self._forget(key)
        return out

    def _emit(self, group: _Group, status: Status, at: float) -> Detection:
        group.emitted_at = at
        group.held.clear()
        self._dirty.pop(group.key, None)
        event_id = group_event_id(group.key, group.instance, status, group.occurrences)
        latest = group.latest
        incident = latest.incident.model_copy(update={
            "event_id": event_id, "status": status, "group": group.out(), "caused_by": group.caused_by})
        return Detection(incident, latest.event, latest.matches)

    def _close(self, key: str, status: Status, at: float) -> Detection:
        event = self._emit(self._groups[key], status, at)
        self._forget(key)
        return event

    def _forget(self, key: str) -> None:
        group = self._groups.pop(key)
        peers = self._by_stream[group.stream]
        del peers[key]
        if not peers:
            del self._by_stream[group.stream]
        self._dirty.pop(key, None)
