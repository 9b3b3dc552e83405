"""The runner's rules with fakes: what is delivered, what is committed, revocation and drain."""

import asyncio
from collections.abc import Awaitable, Callable

from logsig.batch import RecordBatch, batch_of_records
from logsig.daemon.offsets import OffsetTracker
from logsig.daemon.runner import Daemon
from logsig.decode.settings import DecodeSettings
from logsig.matchers.engine.engine import Engine
from logsig.matchers.signature import GENERIC_PRIORITY, Signature
from logsig.pipeline import Detection, Pipeline, StepResult
from logsig.records import DecodeFailure
from logsig.sinks import Outcome
from logsig.testing import FakeSource, RecordingSink, Revoke, fresh_metrics, make_record

OOM = Signature(id="t/oom", signature="s", regex="CUDA out of memory")
TRACE = [
    "Traceback (most recent call last):",
    '  File "x.py", line 1, in f',
    "torch.OutOfMemoryError: CUDA out of memory",
]


def _daemon(source: FakeSource, *sinks: RecordingSink, shutdown_timeout_seconds: float = 5.0) -> Daemon:
    pipeline = Pipeline(Engine([OOM]), DecodeSettings())
    daemon = Daemon(source, pipeline, list(sinks) or [RecordingSink()], OffsetTracker(), fresh_metrics(),
                    shutdown_timeout_seconds=shutdown_timeout_seconds, retry_backoff_max_seconds=0.01, commit_interval_seconds=0)
    source.when_done = daemon.stop_event.set
    return daemon


async def _run(daemon: Daemon) -> None:
    await asyncio.wait_for(daemon.run(), timeout=30)


def _sample(daemon: Daemon, name: str, **labels: str) -> float | None:
    return daemon.registry.get_sample_value(name, labels)


class TestDelivery:
    async def test_incidents_and_dead_letters_reach_the_sink(self) -> None:
        """A matching line becomes an incident and an empty value a dead letter."""
        sink = RecordingSink()
        source = FakeSource([[make_record("CUDA out of memory", 0), make_record(b"", 1), make_record("ok", 2)]],
                            {("logs", 0)})
        await _run(_daemon(source, sink))
        assert (["t/oom"], ["empty_value"]) == ([d.incident.signature.id for d in sink.incidents()],
                                                [f.reason for f in sink.dead_letters()])

    async def test_later_sinks_get_only_delivered_incidents(self) -> None:
        """An incident the first sink rejected is not handed to the next sink."""
        first = RecordingSink(reject=lambda o: isinstance(o, Detection) and o.event.origin.offset == 0)
        second = RecordingSink(name="alertmanager")
        source = FakeSource([[make_record("CUDA out of memory", 0), make_record("CUDA out of memory", 1)]],
                            {("logs", 0)})
        await _run(_daemon(source, first, second))
        assert [1] == [d.event.origin.offset for d in second.incidents()]

    async def test_rejected_dead_letter_is_not_counted_as_a_dropped_incident(self) -> None:
        """An oversized dead letter counts as a dropped dead letter, not as a written one or a dropped incident."""
        sink = RecordingSink(reject=lambda o: isinstance(o, DecodeFailure))
        daemon = _daemon(FakeSource([[make_record(b"", 0)]], {("logs", 0)}), sink)
        await _run(daemon)
        counts = (_sample(daemon, "logsig_incidents_dropped_total", sink="kafka", reason="record_too_large"),
                  _sample(daemon, "logsig_dead_letters_total", reason="empty_value"),
                  _sample(daemon, "logsig_dead_letters_dropped_total", reason="record_too_large"),
                  _sample(daemon, "logsig_records_failed_total", reason="empty_value"))
        assert (0.0, 0.0, 1.0, 1.0) == counts

    async def test_record_past_the_event_bound_is_dead_lettered_and_committed(self) -> None:
        """A record expanding to 20,000 NDJSON lines gives 10,000 incidents, one dead letter, and the offset moves on."""
        line = b'{"log": "CUDA out of memory"}'
        sink = RecordingSink()
        source = FakeSource([[make_record(b"\n".join([line] * 20_000), 0)]], {("logs", 0)})
        await _run(_daemon(source, sink))
        assert (10_000, ["too_many_events"], {("logs", 0): 1}) == (
            len(sink.incidents()), [f.reason for f in sink.dead_letters()], source.committed())

    async def test_delivered_incidents_are_counted_per_sink(self) -> None:
        """Each acknowledged incident counts once under the first sink's name."""
        daemon = _daemon(FakeSource([[make_record("CUDA out of memory", 0)] * 1], {("logs", 0)}))
        await _run(daemon)
        assert 1.0 == _sample(daemon, "logsig_incidents_emitted_total", sink="kafka")


class TestCommits:
    async def test_commit_follows_the_delivered_batch(self) -> None:
        """After a delivered batch each partition commits one past its last record."""
        source = FakeSource([[make_record("a", 0), make_record("b", 1), make_record("c", 7, partition=1)]],
                            {("logs", 0), ("logs", 1)})
        await _run(_daemon(source))
        assert {("logs", 0): 2, ("logs", 1): 8} == source.committed()

    async def test_unchanged_offsets_are_not_committed_again(self) -> None:
        """Idle polls after a batch send no further commits."""
        source = FakeSource([[make_record("a", 0)], [], [], []], {("logs", 0)})
        await _run(_daemon(source))
        assert [{("logs", 0): 1}] == source.commits

    async def test_held_traceback_caps_the_commit(self) -> None:
        """While a traceback is open, the commit stops at its first record."""
        source = FakeSource([[make_record("a", 0), make_record(TRACE[0], 1), make_record(TRACE[1], 2)]],
                            {("logs", 0)})
        daemon = _daemon(source)
        source.when_done = None
        task = asyncio.create_task(_run(daemon))
        while not source.commits:
            await asyncio.sleep(0.01)
        first = source.committed()
        daemon.stop_event.set()
        await task
        assert ({("logs", 0): 1}, {("logs", 0): 3}) == (first, source.committed())

    async def test_failed_commit_is_sent_again(self) -> None:
        """A commit that failed is retried on a later turn with the same offsets."""
        source = FakeSource([[make_record("a", 0)], [], []], {("logs", 0)}, fail_commits=1)
        await _run(_daemon(source))
        assert [{("logs", 0): 1}] == source.commits

    async def test_given_up_delivery_commits_nothing(self) -> None:
        """When stopping while the sink cannot deliver, the batch's offsets are not committed."""
        sink = RecordingSink(give_ups=1)
        source = FakeSource([[make_record("CUDA out of memory", 0)]], {("logs", 0)})
        daemon = _daemon(source, sink)
        source.when_done = None
        task = asyncio.create_task(_run(daemon))
        while source.script:
            await asyncio.sleep(0.01)
        daemon.stop_event.set()
        await task
        assert ([], []) == (source.commits, sink.incidents())


class TestOverlap:
    async def test_next_batch_is_fetched_before_the_previous_is_acknowledged(self) -> None:
        """While acknowledgements are outstanding the source is polled on, and nothing is committed."""
        sink = RecordingSink(hold=asyncio.Event())
        source = FakeSource([[make_record("a", 0)], [make_record("b", 1)], [make_record("c", 2)]], {("logs", 0)})
        daemon = _daemon(source, sink)
        source.when_done = None
        task = asyncio.create_task(_run(daemon))
        while source.script:
            await asyncio.sleep(0.01)
        before = (list(source.commits), len(sink.steps))
        assert sink.hold is not None
        sink.hold.set()
        while not source.commits:
            await asyncio.sleep(0.01)
        daemon.stop_event.set()
        await task
        assert (([], 0), {("logs", 0): 3}) == (before, source.committed())

    async def test_acknowledged_steps_keep_their_order(self) -> None:
        """Steps delivered together or apart reach the sink in the order of their records."""
        sink = RecordingSink()
        batches = [[make_record("CUDA out of memory", n)] for n in range(5)]
        await _run(_daemon(FakeSource(batches, {("logs", 0)}), sink))
        assert [0, 1, 2, 3, 4] == [d.event.origin.offset for d in sink.incidents()]


class _EagerSource(FakeSource):
    """A source whose poll never suspends (as aiokafka's when records are buffered)."""

    async def poll(self) -> RecordBatch:
        if not self.script:
            if self.when_done is not None:
                self.when_done()
            return batch_of_records([])
        return batch_of_records(self.script.pop(0))  # type: ignore[arg-type]


class TestEventLoop:
    async def test_delivery_starts_while_batches_keep_coming(self) -> None:
        """The first batch is with the sink before the second is polled, though polls never suspend."""
        source = _EagerSource([[make_record("CUDA out of memory", n)] for n in range(20)], {("logs", 0)})
        waiting: list[int] = []

        class Sink(RecordingSink):
            async def deliver(self, step: StepResult, give_up: Callable[[], bool],
                              sleep: Callable[[float], Awaitable[None]]) -> list[Outcome] | None:
                waiting.append(len(source.script))
                return await super().deliver(step, give_up, sleep)

        await _run(_daemon(source, Sink()))
        assert 19 == waiting[0]


class TestRevocation:
    async def test_revoked_groups_are_flushed_delivered_and_committed(self) -> None:
        """A traceback open on a revoked partition is emitted, and that partition alone is committed past it."""
        sink = RecordingSink()
        batch = [make_record(TRACE[0], 0), make_record(TRACE[1], 1), make_record(TRACE[2], 2),
                 make_record(TRACE[0], 5, partition=1)]
        source = FakeSource([batch, Revoke(frozenset({("logs", 0)}))], {("logs", 0), ("logs", 1)})
        await _run(_daemon(source, sink))
        revoked_commits = [commit for commit in source.commits if ("logs", 0) in commit]
        assert ([{("logs", 0): 3}], ["t/oom"]) == (revoked_commits[-1:], [d.incident.signature.id
                                                                         for d in sink.incidents()])

    async def test_revoked_partition_is_not_committed_later(self) -> None:
        """After revocation, the partition's offsets are forgotten and never committed again."""
        source = FakeSource([[make_record("a", 0)], Revoke(frozenset({("logs", 0)})),
                             [make_record("b", 4, partition=1)]], {("logs", 0), ("logs", 1)})
        await _run(_daemon(source))
        assert [{("logs", 0): 1}, {("logs", 1): 5}] == source.commits


class TestDrain:
    async def test_shutdown_flushes_open_groups_and_commits(self) -> None:
        """On stop, an open traceback is matched, delivered and its records committed."""
        sink = RecordingSink()
        source = FakeSource([[make_record(TRACE[0], 0), make_record(TRACE[1], 1), make_record(TRACE[2], 2)]],
                            {("logs", 0)})
        await _run(_daemon(source, sink))
        assert (["t/oom"], {("logs", 0): 3}) == ([d.incident.signature.id for d in sink.incidents()],
                                                 source.committed())

    async def test_parts_are_started_and_stopped(self) -> None:
        """Every sink and the source are started, then stopped after the drain."""
        first, second = RecordingSink(), RecordingSink(name="alertmanager")
        source = FakeSource([], {("logs", 0)})
        await _run(_daemon(source, first, second))
        assert (True, True, True) == (first.stopped and first.started, second.stopped and second.started,
                                      source.stopped and source.started)

    async def test_a_part_failing_to_stop_does_not_keep_the_others_open(self) -> None:
        """A source whose stop raises CancelledError (aiokafka's consumer with the broker away) still
        lets the sinks stop, and the run ends normally."""

        class Stubborn(FakeSource):
            async def stop(self) -> None:
                raise asyncio.CancelledError

        first, second = RecordingSink(), RecordingSink(name="alertmanager")
        await _run(_daemon(Stubborn([], {("logs", 0)}), first, second))
        assert (True, True) == (first.stopped, second.stopped)


class TestGrouping:
    async def test_unreported_occurrences_hold_the_commit_until_the_drain_reports_them(self) -> None:
        """Three OOM lines: opened for the first; the commit waits below the two counted ones until shutdown
        reports them as updated, and then passes them."""
        from logsig.group.settings import GroupSettings
        from logsig.group.stage import GroupStage

        sink = RecordingSink()
        source = FakeSource([[make_record("CUDA out of memory", i) for i in range(3)], []], {("logs", 0)})
        pipeline = Pipeline(Engine([OOM]), DecodeSettings())
        daemon = Daemon(source, pipeline, [sink], OffsetTracker(), fresh_metrics(),
                        grouping=GroupStage(GroupSettings(update_interval_seconds=3600)),
                        retry_backoff_max_seconds=0.01, commit_interval_seconds=0)
        source.when_done = daemon.stop_event.set
        await _run(daemon)
        events = [(d.incident.status, d.incident.group.occurrences if d.incident.group else 0)
                  for d in sink.incidents()]
        assert ([("opened", 1), ("updated", 3)], [{("logs", 0): 1}, {("logs", 0): 3}]) == (events, source.commits)


class TestUnclassified:
    async def test_generic_incidents_are_counted_and_tracked(self) -> None:
        """A line only a generic signature names counts in logsig_unclassified_total and tops the view."""
        generic = Signature(id="generic/t", signature="s", regex=r"\w+Error: ", priority=GENERIC_PRIORITY)
        pipeline = Pipeline(Engine([OOM, generic]), DecodeSettings())
        source = FakeSource([[make_record("KeyError: 'w1'", 0), make_record("KeyError: 'w2'", 1),
                              make_record("CUDA out of memory", 2)]], {("logs", 0)})
        daemon = Daemon(source, pipeline, [RecordingSink()], OffsetTracker(), fresh_metrics(),
                        retry_backoff_max_seconds=0.01)
        source.when_done = daemon.stop_event.set
        await _run(daemon)
        top = daemon.unclassified.view()["templates"]
        assert (2.0, [("KeyError: '<STR>'", 2)]) == (
            _sample(daemon, "logsig_unclassified_total", domain="generic"),
            [(t["template"], t["count"]) for t in top])


class TestWarm:
    async def test_signatures_without_a_candidate_yet_are_compiled_while_consuming(self) -> None:
        """A signature no record has been a candidate for has its RE2 object by the time the stream ends."""
        later = Signature(id="t/later", signature="s", regex=r"runner-warm-test NCCL WARN \d+")
        pipeline = Pipeline(Engine([OOM, later]), DecodeSettings())
        source = FakeSource([[make_record("ok", n)] for n in range(5)], {("logs", 0)})
        daemon = Daemon(source, pipeline, [RecordingSink()], OffsetTracker(), fresh_metrics(),
                        retry_backoff_max_seconds=0.01)
        source.when_done = daemon.stop_event.set
        await _run(daemon)
        assert [True, True] == [c._re2 is not None for c in pipeline.engine.compiled.confirmers]

    async def test_not_ready_until_the_first_engine_is_compiled(self) -> None:
        """``/readyz`` says the regexes are compiling at the first poll, and is ready once they are."""
        reasons: list[str | None] = []

        class Watching(FakeSource):
            async def poll(self) -> RecordBatch:
                reasons.append(daemon.not_ready_reason())
                return await super().poll()

        source = Watching([[make_record("ok", n)] for n in range(5)], {("logs", 0)})
        daemon = _daemon(source)
        await _run(daemon)
        assert ("compiling the catalog's phase-two regexes", None) == (reasons[0], reasons[-1])
