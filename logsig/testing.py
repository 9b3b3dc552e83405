"""Fakes for unit tests of the daemon's wiring: a scripted source and a recording sink.

- :class:`FakeSource` plays a script of batches and :class:`Revoke` steps, records every commit,
  and calls ``when_done`` once the script is played (tests stop the daemon there);
- :class:`RecordingSink` records every step it is given and what it answered; it can reject
  chosen outputs (as Kafka rejects a record too large for a request) and fail a number of tries;
- :func:`make_record` builds a Kafka-like record; :func:`fresh_metrics` metrics on their own registry.

Nothing here talks to a network; integration tests use the real broker instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry

from logsig.batch import RecordBatch, batch_of_records
from logsig.pipeline import Detection, StepResult
from logsig.records import TP, DecodeFailure, Origin, RawRecord
from logsig.sinks import Outcome, OutputKind
from logsig.sources import Rebalance
from logsig.telemetry import Metrics


def make_record(value: bytes | str, offset: int, partition: int = 0, topic: str = "logs",
                timestamp_ms: int | None = 1_700_000_000_000, key: bytes | None = None) -> RawRecord:
    """A record as the Kafka source delivers it (``value`` str is UTF-8 encoded)."""
    data = value.encode() if isinstance(value, str) else value
    origin = Origin(topic=topic, partition=partition, offset=offset, timestamp_ms=timestamp_ms,
                    key=None if key is None else key.decode())
    return RawRecord(value=data, origin=origin, key=key)


def fresh_metrics() -> Metrics:
    """Metrics on a registry of their own."""
    return Metrics(CollectorRegistry())


@dataclass(frozen=True)
class Revoke:
    """A script step: the partitions are revoked (the rebalance listener is awaited) and unassigned."""

    partitions: frozenset[TP]


async def _nothing(_: set[TP]) -> None:
    return None


class FakeSource:
    """A :class:`logsig.sources.Source` playing ``script`` (record batches and :class:`Revoke` steps).

    partitions: assigned at :meth:`start`; commits: every :meth:`commit` call, in order;
    fail_commits: how many commits fail first; when_done: called when a poll finds the script played.
    """

    def __init__(self, script: Iterable[list[RawRecord] | Revoke], partitions: Iterable[TP],
                 when_done: Callable[[], None] | None = None, fail_commits: int = 0) -> None:
        self.script = list(script)
        self.partitions = set(partitions)
        self.when_done = when_done
        self.fail_commits = fail_commits
        self.commits: list[dict[TP, int]] = []
        self.missing: set[str] = set()
        self.started = self.stopped = False
        self._assigned: set[TP] = set()
        self._on_revoked: Rebalance = _nothing
        self._on_assigned: Rebalance = _nothing

    def listen(self, on_revoked: Rebalance, on_assigned: Rebalance) -> None:
        """Remember the rebalance callbacks."""
        self._on_revoked, self._on_assigned = on_revoked, on_assigned

    async def start(self) -> None:
        """Assign ``partitions``."""
        self.started = True
        self._assigned = set(self.partitions)
        await self._on_assigned(set(self._assigned))

    async def poll(self) -> RecordBatch:
        """The next batch of the script (a :class:`Revoke` is played first and gives an empty batch)."""
        await asyncio.sleep(0)
        if not self.script:
            if self.when_done is not None:
                self.when_done()
            return batch_of_records([])
        step = self.script.pop(0)
        if isinstance(step, Revoke):
            await self._on_revoked(set(step.partitions))
            self._assigned -= step.partitions
            return batch_of_records([])
        return batch_of_records(step)

    def assignment(self) -> set[TP]:
        """The partitions assigned now."""
        return set(self._assigned)

    async def missing_topics(self) -> list[str]:
        """The topics of :attr:`missing` (set by a test), sorted."""
        return sorted(self.missing)

    async def commit(self, offsets: dict[TP, int]) -> bool:
        """Record ``offsets``; False while ``fail_commits`` remain."""
        if self.fail_commits > 0:
            self.fail_commits -= 1
            return False
        self.commits.append(dict(offsets))
        return True

    def committed(self) -> dict[TP, int]:
        """The last committed offset per partition."""
        out: dict[TP, int] = {}
        for commit in self.commits:
            out.update(commit)
        return out

    async def lag(self) -> dict[TP, int]:
        """No lag is known."""
        return {}

    async def stop(self) -> None:
        """Mark stopped."""
        self.stopped = True


@dataclass
class RecordingSink:
    """A :class:`logsig.sinks.Sink` that records each step and answers with outcomes.

    reject: outputs for which it returns True are rejected as ``record_too_large``;
    give_ups: how many deliveries end by waiting for ``give_up()`` (a broker away) before succeeding;
    hold: while set to an unset event, deliveries wait for it (acknowledgements that are slow to come);
    stop_hold: likewise for :meth:`stop` (a producer's flush to a broker that went away).
    """

    name: str = "kafka"
    reject: Callable[[Detection | DecodeFailure], bool] = lambda _: False
    give_ups: int = 0
    hold: asyncio.Event | None = None
    stop_hold: asyncio.Event | None = None
    steps: list[StepResult] = field(default_factory=list)
    started: bool = False
    stopped: bool = False

    async def start(self) -> None:
        """Mark started."""
        self.started = True

    async def deliver(self, step: StepResult, give_up: Callable[[], bool],
                      sleep: Callable[[float], Awaitable[None]]) -> list[Outcome] | None:
        """Record ``step``; None while ``give_ups`` remain and ``give_up()`` turns true."""
        while self.give_ups > 0:
            if give_up():
                self.give_ups -= 1
                return None
            await sleep(0.01)
        if self.hold is not None:
            await self.hold.wait()
        self.steps.append(step)
        outputs: list[tuple[OutputKind, Detection | DecodeFailure]] = [
            *(("incident", d) for d in step.detections), *(("dead_letter", f) for f in step.failures)]
        return [Outcome(kind, o, not self.reject(o), "record_too_large" if self.reject(o) else None)
                for kind, o in outputs]

    async def stop(self) -> None:
        """Mark stopped (once ``stop_hold`` is set, if given)."""
        if self.stop_hold is not None:
            await self.stop_hold.wait()
        self.stopped = True

    def incidents(self) -> list[Detection]:
        """Every detection delivered, in order."""
        return [d for step in self.steps for d in step.detections]

    def dead_letters(self) -> list[DecodeFailure]:
        """Every failure delivered, in order."""
        return [f for step in self.steps for f in step.failures]
