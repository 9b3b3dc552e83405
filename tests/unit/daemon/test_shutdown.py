"""A stop is bounded: the drain ends within shutdown_timeout_seconds, and at once on a second request."""

import asyncio

from structlog.testing import capture_logs

from logsig.daemon.offsets import OffsetTracker
from logsig.daemon.runner import Daemon
from logsig.daemon.shutdown import StopDeadline
from logsig.decode.settings import DecodeSettings
from logsig.matchers.engine.engine import Engine
from logsig.matchers.signature import Signature
from logsig.pipeline import Pipeline
from logsig.testing import FakeSource, RecordingSink, fresh_metrics, make_record

OOM = Signature(id="t/oom", signature="s", regex="CUDA out of memory")
DEADLINE_S = 30.0


def _daemon(source: FakeSource, sink: RecordingSink, shutdown_timeout_seconds: float) -> Daemon:
    return Daemon(source, Pipeline(Engine([OOM]), DecodeSettings()), [sink], OffsetTracker(), fresh_metrics(),
                  shutdown_timeout_seconds=shutdown_timeout_seconds, retry_backoff_max_seconds=0.01,
                  commit_interval_seconds=0)


async def _stuck_daemon(shutdown_timeout_seconds: float) -> tuple[Daemon, FakeSource, asyncio.Task[None]]:
    """A daemon whose sink never acknowledges nor finishes stopping (a broker gone mid-delivery),
    running with its first batch handed to the sink; the task ends when :meth:`Daemon.run` returns."""
    sink = RecordingSink(hold=asyncio.Event(), stop_hold=asyncio.Event())
    source = FakeSource([[make_record("CUDA out of memory", 0), make_record("ok", 1)]], {("logs", 0)})
    daemon = _daemon(source, sink, shutdown_timeout_seconds)
    task = asyncio.create_task(daemon.run())
    while source.script or daemon.deliveries.pending_outputs == 0:
        await asyncio.sleep(0.01)
    return daemon, source, task


class TestStopDeadline:
    async def test_no_request_never_expires(self) -> None:
        """Without a stop request the scope runs its body to the end."""
        deadline = StopDeadline(0.01)
        async with deadline.bounded():
            await asyncio.sleep(0.05)
        assert (False, 0) == (deadline.expired(), deadline.requests)

    async def test_second_request_expires_at_once(self) -> None:
        """A second request ends a scope that the first gave a long timeout."""
        deadline = StopDeadline(3600.0)
        try:
            async with deadline.bounded():
                deadline.request()
                deadline.request()
                await asyncio.sleep(DEADLINE_S)
        except TimeoutError:
            pass
        assert (True, "a second stop signal") == (deadline.expired(), deadline.reason())

    async def test_abort_time_is_at_most_a_quarter(self) -> None:
        """The abort time is one second, or a quarter of a short timeout."""
        assert (1.0, 0.5) == (StopDeadline(20.0).abort_seconds(), StopDeadline(2.0).abort_seconds())


class TestBoundedDrain:
    async def test_drain_ends_within_the_timeout_when_acks_never_come(self) -> None:
        """Unacknowledged outputs and a sink that never stops: run returns after the timeout, cut short,
        committing nothing."""
        daemon, source, task = await _stuck_daemon(shutdown_timeout_seconds=0.5)
        daemon.request_stop()
        await asyncio.wait_for(task, timeout=DEADLINE_S)
        assert ("shutdown_timeout_seconds (0.5 s) passed", [], True) == (
            daemon.cut_short, source.commits, source.stopped)

    async def test_second_request_ends_the_drain_at_once(self) -> None:
        """With an hour of shutdown timeout, a second stop request still makes run return."""
        daemon, source, task = await _stuck_daemon(shutdown_timeout_seconds=3600.0)
        with capture_logs() as logs:
            daemon.request_stop()
            await asyncio.sleep(0.05)
            daemon.request_stop()
            await asyncio.wait_for(task, timeout=DEADLINE_S)
        cut = [e for e in logs if e["event"].startswith("drain cut short")]
        assert ("a second stop signal", [], [1]) == (daemon.cut_short, source.commits,
                                                     [e["outputs_not_acknowledged"] for e in cut])

    async def test_graceful_drain_is_not_cut_short(self) -> None:
        """A drain that finishes in time commits and leaves cut_short None."""
        sink = RecordingSink()
        source = FakeSource([[make_record("CUDA out of memory", 0)]], {("logs", 0)})
        daemon = _daemon(source, sink, 5.0)
        source.when_done = daemon.request_stop
        await asyncio.wait_for(daemon.run(), timeout=DEADLINE_S)
        assert (None, {("logs", 0): 1}) == (daemon.cut_short, source.committed())
