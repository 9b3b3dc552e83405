"""What the daemon says while it runs: missing input topics, new incident groups, the summary,
/readyz reasons and /status, with fakes (no broker)."""

import asyncio
from datetime import UTC, datetime

from prometheus_client import CollectorRegistry, Gauge
from structlog.testing import capture_logs

from logsig.daemon.offsets import OffsetTracker
from logsig.daemon.runner import Daemon
from logsig.daemon.status import Activity, TopicWatch
from logsig.decode.settings import DecodeSettings
from logsig.errors import SinkError
from logsig.matchers.engine.engine import Engine
from logsig.matchers.signature import Signature
from logsig.pipeline import Pipeline, StepResult
from logsig.testing import FakeSource, RecordingSink, fresh_metrics, make_record

OOM = Signature(id="t/oom", signature="s", regex="CUDA out of memory", category="resource_error")


class Clock:
    """A settable monotonic clock."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def steps(*records: tuple[str, str]) -> StepResult:
    """The step the pipeline makes of Fluent Bit records ``(pod, message)``."""
    pipeline = Pipeline(Engine([OOM]), DecodeSettings(), clock=lambda: datetime(2024, 1, 1, tzinfo=UTC))
    raw = [make_record(f'{{"log": "{message}", "kubernetes": {{"pod_name": "{pod}", "namespace_name": "ml"}}}}', i)
           for i, (pod, message) in enumerate(records)]
    return pipeline.process(raw, 0.0)


class TestTopicWatch:
    async def test_missing_topic_is_warned_about_with_growing_delays(self) -> None:
        """Checks at 0, 1, 3 and 7 s (doubling) each warn naming the topic; the gauge counts it."""
        clock, checks = Clock(), []

        async def missing() -> list[str]:
            checks.append(clock.now)
            return ["logs-b"]
        gauge = Gauge("missing", "m", registry=CollectorRegistry())
        watch = TopicWatch(missing, gauge, clock=clock)
        with capture_logs() as logs:
            for clock.now in (0.0, 0.5, 1.0, 2.0, 3.0, 6.0, 7.0):
                await watch.poll()
        warnings = [e["topics"] for e in logs if e["log_level"] == "warning"]
        assert ([0.0, 1.0, 3.0, 7.0], [["logs-b"]] * 4, 1.0) == (checks, warnings, gauge._value.get())

    async def test_topic_created_later_is_reported_and_checked_less_often(self) -> None:
        """Once the topic exists an info line says so, the gauge drops to 0 and checks are 30 s apart."""
        clock, answers = Clock(), [["logs-b"], []]
        checks: list[float] = []

        async def missing() -> list[str]:
            checks.append(clock.now)
            return answers.pop(0) if answers else []
        gauge = Gauge("missing", "m", registry=CollectorRegistry())
        watch = TopicWatch(missing, gauge, clock=clock)
        with capture_logs() as logs:
            for clock.now in (0.0, 1.0, 20.0, 31.0):
                await watch.poll()
        assert ([0.0, 1.0, 31.0], "input topics exist now", 0.0, []) == (
            checks, logs[1]["event"].split(";")[0], gauge._value.get(), watch.missing)


    async def test_output_topics_are_warned_about_without_a_gauge(self) -> None:
        """An output watch warns naming the missing dead-letter topic, says what waits, and keeps it for /status."""
        clock = Clock()

        async def missing() -> list[str]:
            return ["logsig-dead-letters"]
        watch = TopicWatch(missing, None, clock=clock, kind="output")
        with capture_logs() as logs:
            await watch.poll()
        assert ([("output topics do not exist; incidents and dead letters wait, uncommitted, until they are created",
                  ["logsig-dead-letters"])], ["logsig-dead-letters"]) == (
            [(e["event"], e["topics"]) for e in logs], watch.missing)


class TestActivity:
    def test_first_incident_of_each_group_is_logged_once(self) -> None:
        """Two OOMs on vllm-0 (same template) and one on vllm-1 give two 'incident' lines naming signature and stream."""
        activity = Activity()
        with capture_logs() as logs:
            first = steps(("vllm-0", "CUDA out of memory: 2 GiB"), ("vllm-0", "CUDA out of memory: 4 GiB"))
            activity.delivered(first, first.matched, 0)
            second = steps(("vllm-1", "CUDA out of memory: 2 GiB"))
            activity.delivered(second, second.matched, 0)
        assert [("incident", "t/oom", "ml/vllm-0"), ("incident", "t/oom", "ml/vllm-1")] == [
            (e["event"], e["signature_id"], e["stream"]) for e in logs]
        assert [2, 1] == [g["count"] for g in activity.top_groups()]

    def test_group_times_are_iso_8601_utc(self) -> None:
        """A group's first and last sightings are served as ISO 8601 UTC, as /unclassified serves its times."""
        wall = Clock()
        activity = Activity(wall=wall)
        wall.now = 1_767_225_600.0
        first = steps(("vllm-0", "CUDA out of memory: 2 GiB"))
        activity.delivered(first, first.matched, 0)
        wall.now += 90.5
        activity.delivered(first, first.matched, 0)
        group = activity.top_groups()[0]
        assert ("2026-01-01T00:00:00+00:00", "2026-01-01T00:01:30.500000+00:00") == (
            group["first_seen"], group["last_seen"])

    def test_summary_reports_the_interval(self) -> None:
        """After the interval one 'summary' line gives records, rate, incidents, dead letters and lag."""
        clock = Clock()
        activity = Activity(interval_seconds=60, clock=clock)
        activity.tick({}, 1)
        activity.consumed(600)
        step = steps(("vllm-0", "CUDA out of memory"))
        activity.delivered(step, step.matched, 2)
        clock.now = 30.0
        with capture_logs() as early:
            activity.tick({("logs", 0): 5}, 1)
        clock.now = 60.0
        with capture_logs() as logs:
            activity.tick({("logs", 0): 5, ("logs", 1): 7}, 2)
        summary = logs[0]
        assert ([], "summary", 600, 10.0, 1, 2, 12, {"logs": 12}, 2) == (
            early, summary["event"], summary["records"], summary["records_per_second"], summary["incidents"],
            summary["dead_letters"], summary["lag_records"], summary["lag_by_topic"], summary["partitions"])

    def test_interval_zero_turns_the_summary_off(self) -> None:
        """With interval_seconds 0 no summary is ever logged."""
        clock = Clock()
        activity = Activity(interval_seconds=0, clock=clock)
        with capture_logs() as logs:
            for clock.now in (0.0, 100.0, 1000.0):
                activity.tick({}, 1)
        assert [] == logs


def _daemon(source: FakeSource, sink: RecordingSink | None = None) -> Daemon:
    pipeline = Pipeline(Engine([OOM]), DecodeSettings())
    return Daemon(source, pipeline, [sink or RecordingSink()], OffsetTracker(), fresh_metrics(),
                  retry_backoff_max_seconds=0.01, group_id="g1")


class FailingSink(RecordingSink):
    """A sink whose start fails as the Kafka sink's does while the output topics are missing."""

    async def start(self) -> None:
        raise SinkError("output topics do not exist: logsig-incidents; create them", retriable=True)


class TestReadiness:
    async def test_missing_output_topic_is_the_reason_before_connecting(self) -> None:
        """While the sink cannot start, /readyz gives the sink's own message naming the topic."""
        daemon = _daemon(FakeSource([], set()), FailingSink())
        task = asyncio.create_task(daemon.run())
        while daemon.not_ready_reason() == "connecting to Kafka":
            await asyncio.sleep(0.01)
        daemon.stop_event.set()
        await asyncio.wait_for(task, timeout=10)
        assert "output topics do not exist: logsig-incidents; create them" == daemon.not_ready_reason()

    async def test_missing_input_topic_without_partitions_is_the_reason(self) -> None:
        """No partition and a missing input topic: /readyz names the topic and /status lists it."""
        source = FakeSource([], set())
        source.missing = {"logs"}
        daemon = _daemon(source)
        source.when_done = daemon.stop_event.set
        await asyncio.wait_for(daemon.run(), timeout=10)
        assert ("input topics do not exist: logs", ["logs"], 1.0) == (
            daemon.not_ready_reason(), daemon.status()["missing_topics"],
            daemon.registry.get_sample_value("logsig_input_topics_missing"))

    async def test_no_partition_names_the_group(self) -> None:
        """All topics present but no partition assigned: the reason names the consumer group."""
        daemon = _daemon(FakeSource([], set()))
        daemon.source.when_done = daemon.stop_event.set  # type: ignore[attr-defined]
        await asyncio.wait_for(daemon.run(), timeout=10)
        assert ("no partitions assigned to this member of consumer group 'g1' (a rebalance in progress, or more "
                "replicas than partitions)") == daemon.not_ready_reason()

    async def test_sink_trouble_makes_a_consuming_replica_unready(self) -> None:
        """With partitions assigned, a sink that cannot deliver (broker away) gives /readyz its reason."""
        source = FakeSource([[make_record("ok", 0)]], {("logs", 0)})
        sink = RecordingSink()
        sink.trouble = lambda: "Kafka sink retrying 3 records against the broker"  # type: ignore[attr-defined]
        daemon = _daemon(source, sink)
        source.when_done = daemon.stop_event.set
        await asyncio.wait_for(daemon.run(), timeout=10)
        assert "Kafka sink retrying 3 records against the broker" == daemon.not_ready_reason()

    async def test_status_counts_what_was_delivered(self) -> None:
        """/status holds readiness, partitions, totals and the incident groups."""
        source = FakeSource([[make_record("CUDA out of memory", 0), make_record(b"", 1), make_record("ok", 2)]],
                            {("logs", 0)})
        daemon = _daemon(source)
        source.when_done = daemon.stop_event.set
        await asyncio.wait_for(daemon.run(), timeout=10)
        status = daemon.status()
        assert (True, ["logs[0]"], {"records": 3, "lines": 1, "incidents": 1, "dead_letters": 1}, ["t/oom"]) == (
            status["ready"], status["partitions"], status["totals"],
            [g["signature_id"] for g in status["groups"]])  # type: ignore[attr-defined]
