"""Delivery that overlaps consumption: steps go to the sinks in order, acknowledged in the background.

The runner hands each processed step to :meth:`Deliveries.send` and goes on fetching: a worker
task takes every step waiting (several at once when the broker is slower than the pipeline),
produces their outputs in one go through the first sink and waits for the acknowledgements; then,
step by step in the order they were sent, it reports the step's offsets to the
:class:`~logsig.daemon.offsets.OffsetTracker` together with the held offsets taken when the step
was made. A commit can therefore never pass a record whose output is unacknowledged, or one that
was still held in an open group when the acknowledged steps were made.

At most ``max_in_flight`` steps wait; :meth:`Deliveries.send` then waits too (back-pressure). If
a delivery is given up (stopping while the broker is away), that step and every later one are
dropped unacknowledged (``abandoned``): nothing past them is ever committed, and they are read
again after a restart.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

import structlog

from logsig.daemon.offsets import OffsetTracker
from logsig.pipeline import StepResult
from logsig.records import TP
from logsig.sinks import Outcome, Sink, delivered_step

log = structlog.get_logger("logsig.daemon")
MAX_IN_FLIGHT = 8


@dataclass(frozen=True, slots=True)
class Sent:
    """A step waiting for its acknowledgements: its offsets, the held offsets when it was made, and
    whether it is part of a drain (retried until the shutdown deadline even while stopping)."""

    step: StepResult
    offsets: Mapping[TP, int]
    held: Mapping[TP, int]
    draining: bool = False


def merged(steps: Sequence[StepResult]) -> StepResult:
    """One step holding the outputs and counts of ``steps``, in order."""
    if len(steps) == 1:
        return steps[0]
    lines = None if all(s.lines is None for s in steps) else [d for s in steps for d in s.lines or []]
    return StepResult(detections=[d for s in steps for d in s.detections],
                      failures=[f for s in steps for f in s.failures],
                      events=sum(s.events for s in steps), truncated=sum(s.truncated for s in steps), lines=lines,
                      repaired=sum(s.repaired for s in steps))


class Deliveries:
    """The worker between the runner and its sinks (the first sink's acknowledgements gate commits).

    account: told each delivered step and its outcomes (telemetry); stopping: whether the daemon
    stops; sleep: an interruptible sleep; shutdown_timeout_seconds: how long a draining step is
    retried; after: awaited after each delivery's offsets are reported (a transactional sink's
    commit, so no later delivery joins the transaction first).
    """

    def __init__(self, sinks: Sequence[Sink], account: Callable[[StepResult, list[Outcome]], None],
                 offsets: OffsetTracker, stopping: Callable[[], bool], sleep: Callable[[float], Awaitable[None]],
                 shutdown_timeout_seconds: float, max_in_flight: int = MAX_IN_FLIGHT,
                 after: Callable[[], Awaitable[None]] | None = None) -> None:
        self.sinks, self._account, self.offsets, self._after = tuple(sinks), account, offsets, after
        self._stopping, self._sleep = stopping, sleep
        self.shutdown_timeout_seconds = shutdown_timeout_seconds
        self.abandoned = False
        self.pending_outputs = 0
        """Incidents and dead letters sent to :meth:`send` and not yet acknowledged or abandoned."""
        self._queue: asyncio.Queue[Sent] = asyncio.Queue(maxsize=max_in_flight)
        self._worker: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the worker."""
        self._worker = asyncio.create_task(self._work(), name="logsig-delivery")

    async def send(self, step: StepResult, offsets: Mapping[TP, int], held: Mapping[TP, int],
                   draining: bool = False) -> None:
        """Queue ``step`` for delivery (waits while ``max_in_flight`` steps are queued)."""
        await self._queue.put(Sent(step, dict(offsets), dict(held), draining))
        self.pending_outputs += _outputs(step)

    async def settled(self) -> None:
        """Wait until every step sent so far is acknowledged or abandoned."""
        await self._queue.join()

    async def stop(self) -> None:
        """Stop the worker (call after :meth:`settled`, or to cut a delivery short). A cancellation of
        the task calling this is passed on, not taken for the worker's."""
        if self._worker is not None:
            worker, self._worker = self._worker, None
            worker.cancel()
            try:
                await worker
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise

    async def _work(self) -> None:
        while True:
            items = [await self._queue.get()]
            while not self._queue.empty():
                items.append(self._queue.get_nowait())
            try:
                if not self.abandoned and await self._deliver(items):
                    for item in items:
                        self.offsets.delivered(item.offsets, item.held)
                    if self._after is not None:
                        await self._after()
                else:
                    self.abandoned = True
            finally:
                for item in items:
                    self.pending_outputs -= _outputs(item.step)
                    self._queue.task_done()

    async def _deliver(self, items: list[Sent]) -> bool:
        """Deliver the steps' outputs until acknowledged. False if given up (stopping): commit nothing."""
        draining = any(item.draining for item in items)
        deadline = time.monotonic() + self.shutdown_timeout_seconds

        def give_up() -> bool:
            return (self._stopping() and not draining) or (draining and time.monotonic() > deadline)

        step = merged([item.step for item in items])
        primary = self.sinks[0]
        outcomes = await primary.deliver(step, give_up, self._sleep)
        if outcomes is None:
            log.error("gave up delivering; offsets not committed, records will be re-read",
                      records=len(step.detections) + len(step.failures))
            return False
        self._account(step, outcomes)
        if len(self.sinks) > 1 and step.detections:
            done = delivered_step(step, outcomes)
            for sink in self.sinks[1:]:
                await sink.deliver(done, give_up, self._sleep)
        return True


def _outputs(step: StepResult) -> int:
    """The incidents and dead letters of ``step``."""
    return len(step.detections) + len(step.failures)
