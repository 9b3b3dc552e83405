"""What the daemon tells its operator while it runs: in its log, on ``/readyz`` and ``/status``.

- :class:`TopicWatch`: subscribed input topics, or the output and dead-letter topics, that the
  cluster does not have. Checked at start, then again with exponential backoff (1 s doubling to
  60 s) while any is missing, every 30 s when none is; each check that finds one logs a warning
  naming it, and ``logsig_input_topics_missing`` counts the input ones. A consumer subscribed to a
  missing topic otherwise looks like a healthy idle one.
- :class:`Activity`: one ``incident`` line at info per new incident group, and a periodic
  ``summary`` line at info (records/s, matching lines, incident events, dead letters, lag,
  partitions), so
  ``kubectl logs`` shows the daemon working; and the incident groups and totals that ``/status``
  (``logsig top``) serves.

An incident group is the grouping stage's (:func:`logsig.group.keys.group_key`: signature, stream,
fingerprint of the line's template), whether or not ``grouping.enabled`` makes the daemon emit one
event per group. At most :data:`MAX_GROUPS` groups are remembered (least recently seen forgotten
first), so a group forgotten and seen again is logged again.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog
from prometheus_client import Gauge

from logsig.discovery.unclassified import utc_iso
from logsig.group.keys import group_key
from logsig.incident import Incident
from logsig.pipeline import Detection, StepResult
from logsig.records import TP

log = structlog.get_logger("logsig.daemon")
MAX_GROUPS = 10_000
LINE_CHARS = 200


_CONSEQUENCE = {"input": "consuming nothing from them until they are created",
                "output": "incidents and dead letters wait, uncommitted, until they are created"}
_RECOVERY = {"input": "consuming them from the next metadata refresh (kafka.metadata_max_age_ms)",
             "output": "delivering to them again"}


class TopicWatch:
    """Asks ``missing()`` for absent topics of one ``kind`` (``input``: subscribed topics; ``output``:
    the output and dead-letter topics), with backoff while some are missing.

    gauge: ``logsig_input_topics_missing`` (None: not counted); clock: monotonic seconds (injected in tests).
    """

    def __init__(self, missing: Callable[[], Awaitable[list[str]]], gauge: Gauge | None, *, initial: float = 1.0,
                 maximum: float = 60.0, healthy_interval: float = 30.0,
                 clock: Callable[[], float] = time.monotonic, kind: str = "input") -> None:
        self._missing, self._gauge, self._clock = missing, gauge, clock
        self.initial, self.maximum, self.healthy_interval = initial, maximum, healthy_interval
        self.kind = kind
        self.missing: list[str] = []
        self._delay = initial
        self._next = float("-inf")

    def recheck(self) -> None:
        """Check at the next :meth:`poll` (partitions were assigned: a topic may have appeared)."""
        self._next = float("-inf")

    async def poll(self) -> None:
        """Check when due; log a warning per check that finds a topic missing, info when all exist again."""
        now = self._clock()
        if now < self._next:
            return
        found = sorted(await self._missing())
        if found:
            log.warning(f"{self.kind} topics do not exist; {_CONSEQUENCE[self.kind]}",
                        topics=found, retry_in_seconds=self._delay)
            self._next, self._delay = now + self._delay, min(self.maximum, self._delay * 2)
        else:
            if self.missing:
                log.info(f"{self.kind} topics exist now; {_RECOVERY[self.kind]}", topics=self.missing)
            self._next, self._delay = now + self.healthy_interval, self.initial
        self.missing = found
        if self._gauge is not None:
            self._gauge.set(len(found))


@dataclass
class Group:
    """One incident group: its key, signature and stream, how often and when (Unix seconds) it was seen."""

    key: str
    signature_id: str
    category: str
    stream: str
    count: int = 0
    first_seen: float = 0.0
    last_seen: float = 0.0
    line: str = ""


def stream_name(incident: Incident) -> str:
    """``namespace/pod/container`` (known parts), or ``topic[partition]``, or the file."""
    source = incident.source
    if source.pod is not None or source.container is not None:
        return "/".join(part for part in (source.namespace, source.pod, source.container) if part)
    if source.topic is not None:
        return f"{source.topic}[{source.partition}]"
    return source.file or "-"


@dataclass
class Totals:
    """Counts since start: records consumed, matching lines, incident events and dead letters delivered
    (with grouping on, one event reports many lines)."""

    records: int = 0
    lines: int = 0
    incidents: int = 0
    dead_letters: int = 0


@dataclass
class Activity:
    """Logs new incident groups and a periodic summary; ``interval_seconds`` 0 turns the summary off."""

    interval_seconds: float = 60.0
    clock: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    totals: Totals = field(default_factory=Totals)
    groups: OrderedDict[str, Group] = field(default_factory=OrderedDict)
    _last: tuple[float, Totals] | None = None

    def consumed(self, records: int) -> None:
        """Count ``records`` read from the source."""
        self.totals.records += records

    def delivered(self, events: StepResult, lines: Sequence[Detection], dead_letters: int) -> None:
        """Count the delivered incident ``events``, the matching ``lines`` (one detection per line) and
        ``dead_letters``; log the first line of each new group."""
        self.totals.dead_letters += dead_letters
        self.totals.incidents += len(events.detections)
        self.totals.lines += len(lines)
        for detection in lines:
            self._group(detection.incident)

    def _group(self, incident: Incident) -> None:
        key, now = group_key(incident), self.wall()
        group = self.groups.get(key)
        if group is None:
            group = Group(key, incident.signature.id, incident.signature.category, stream_name(incident),
                          first_seen=now, line=incident.match.line[:LINE_CHARS])
            self.groups[key] = group
            log.info("incident", signature_id=group.signature_id, category=group.category, stream=group.stream,
                     line=group.line, event_id=incident.event_id)
            if len(self.groups) > MAX_GROUPS:
                self.groups.popitem(last=False)
        self.groups.move_to_end(key)
        group.count += 1
        group.last_seen = now

    def tick(self, lag: dict[TP, int], partitions: int) -> None:
        """Log the summary when ``interval_seconds`` passed since the last one; the first call starts the
        clock, and the first summary counts everything since start."""
        now = self.clock()
        if self.interval_seconds <= 0:
            return
        if self._last is None:
            self._last = (now, Totals())
            return
        since, before = self._last
        if now - since < self.interval_seconds:
            return
        records = self.totals.records - before.records
        log.info("summary", interval_seconds=round(now - since, 1), records=records,
                 records_per_second=round(records / (now - since), 1),
                 lines=self.totals.lines - before.lines, incidents=self.totals.incidents - before.incidents,
                 dead_letters=self.totals.dead_letters - before.dead_letters,
                 lag_records=sum(lag.values()), lag_by_topic=_by_topic(lag), partitions=partitions,
                 groups=len(self.groups))
        self._last = (now, Totals(**vars(self.totals)))

    def top_groups(self, n: int = 50) -> list[dict[str, Any]]:
        """The ``n`` groups seen most, as JSON-ready dicts (``first_seen``/``last_seen`` ISO 8601 UTC,
        as :func:`~logsig.discovery.unclassified.utc_iso` writes them)."""
        ranked = sorted(self.groups.values(), key=lambda g: (-g.count, -g.last_seen))[:n]
        return [{**vars(group), "first_seen": utc_iso(group.first_seen), "last_seen": utc_iso(group.last_seen)}
                for group in ranked]


def _by_topic(lag: dict[TP, int]) -> dict[str, int]:
    out: dict[str, int] = {}
    for (topic, _), records in lag.items():
        out[topic] = out.get(topic, 0) + records
    return out
