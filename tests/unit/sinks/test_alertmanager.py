"""The Alertmanager sink: alert shape, coalescing, bounded queue, retries and drain, against a fake server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from prometheus_client import CollectorRegistry
from structlog.testing import capture_logs

from logsig.config import AlertmanagerSettings
from logsig.incident import Incident, MatchOut, SignatureRef, SourceOut, TransitionsOut, WorkaroundOut
from logsig.severity import severity_of
from logsig.sinks.alertmanager import MAX_LINE_CHARS, AlertmanagerSink, Pacing, alert_name, to_alert
from logsig.telemetry import Metrics

DETECTED = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
NOW = 1_772_366_400.0  # 2026-03-01T12:00:00Z
FAST = Pacing(backoff_base_seconds=0.01, backoff_max_seconds=0.02, post_interval_seconds=0.01,
              drain_timeout_seconds=2.0, drop_log_interval_seconds=10.0)
SEED = "llm/vllm-cuda-oom-during-prefill"


def incident(sig_id: str = SEED, category: str = "resource_error", pod: str | None = "vllm-0",
             event_id: str = "e1", line: str = "torch.OutOfMemoryError: CUDA out of memory.") -> Incident:
    """An incident of ``sig_id`` in cluster c1, namespace ml, on node n1."""
    workarounds = [WorkaroundOut(action="a1", how="lower --max-model-len", success_rate=0.9, condition="", sources=[]),
                   WorkaroundOut(action="a2", how="enable prefix caching", success_rate=0.85, condition="", sources=[])]
    return Incident(
        event_id=event_id, detected_at=DETECTED, severity=severity_of(category),
        signature=SignatureRef(id=sig_id, title="CUDA out of memory during prefill", category=category,
                               domain=sig_id.split("/")[0], confidence=0.9, official_doc_url="https://docs.example/oom"),
        root_cause="The prefill allocates KV cache.", workarounds=workarounds, dead_ends=[],
        transitions=TransitionsOut(), match=MatchOut(line=line, span=(0, 5), matched_text="torch", captures={},
                                                     values={}),
        source=SourceOut(cluster="c1", namespace="ml", pod=pod, node="n1"))


async def until(condition: Callable[[], bool], timeout_s: float = 5.0) -> None:
    """Poll ``condition`` until true; fail after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


class FakeAlertmanager:
    """Records each POST /api/v2/alerts body; answers with ``statuses`` in turn, then 200."""

    def __init__(self) -> None:
        self.posts: list[list[dict[str, Any]]] = []
        self.statuses: list[int] = []
        self.hold = asyncio.Event()
        self.hold.set()

    async def alerts(self, request: web.Request) -> web.Response:
        self.posts.append(await request.json())
        await self.hold.wait()
        return web.Response(status=self.statuses.pop(0) if self.statuses else 200, text="{}")


@pytest_asyncio.fixture(loop_scope="function")
async def fake() -> AsyncIterator[tuple[FakeAlertmanager, str]]:
    """A fake Alertmanager on a free loopback port and its base URL."""
    server = FakeAlertmanager()
    app = web.Application()
    app.router.add_post("/api/v2/alerts", server.alerts)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    yield server, f"http://127.0.0.1:{port}/"
    server.hold.set()
    await runner.cleanup()


class Harness:
    """A sink with its own registry and a settable clock."""

    def __init__(self, url: str, pacing: Pacing = FAST, **settings: Any) -> None:
        self.registry = CollectorRegistry()
        self.now = NOW
        self.mono = 100.0
        config = AlertmanagerSettings(enabled=True, url=url, resolve_after_seconds=300, **settings)
        self.sink = AlertmanagerSink(config, Metrics(self.registry), pacing, clock=lambda: self.now,
                                     monotonic=lambda: self.mono)

    def emitted(self) -> float | None:
        return self.registry.get_sample_value("logsig_incidents_emitted_total", {"sink": "alertmanager"})

    def dropped(self, reason: str) -> float | None:
        return self.registry.get_sample_value("logsig_incidents_dropped_total",
                                              {"sink": "alertmanager", "reason": reason})


class TestAlert:
    @pytest.mark.parametrize(("sig_id", "name"), [(SEED, "LlmVllmCudaOomDuringPrefill"),
                                                  ("gpu/xid-79-fallen-off-bus", "GpuXid79FallenOffBus"),
                                                  ("k8s/oom_killed.v2", "K8sOomKilledV2")])
    def test_alertname_is_the_signature_id_in_camel_case(self, sig_id: str, name: str) -> None:
        """Every run of letters and digits of the id starts with a capital; separators vanish."""
        assert name == alert_name(sig_id)

    def test_labels_name_the_signature_and_where_it_happened(self) -> None:
        """Labels: alertname, signature, category, severity, cluster, namespace, pod and node."""
        labels = to_alert(incident(), DETECTED)["labels"]
        assert {"alertname": "LlmVllmCudaOomDuringPrefill", "signature_id": SEED, "category": "resource_error",
                "severity": "error", "cluster": "c1", "namespace": "ml", "pod": "vllm-0", "node": "n1"} == labels

    def test_unclassified_alerts_carry_tier_and_fingerprint(self) -> None:
        """Two unknown failures of one generic signature are two alerts: tier and fingerprint are labels."""
        base = incident(sig_id="generic/python-exception", category="runtime_error")
        first = base.model_copy(update={"tier": "generic", "fingerprint": "00aa11bb22cc33dd"})
        second = base.model_copy(update={"tier": "generic", "fingerprint": "ffee0011aabbccdd"})
        labels = [to_alert(i, DETECTED)["labels"] for i in (first, second)]
        assert [("generic", "00aa11bb22cc33dd"), ("generic", "ffee0011aabbccdd")] == [
            (x["tier"], x["fingerprint"]) for x in labels]

    def test_unknown_source_fields_are_left_out(self) -> None:
        """A record without a pod gives an alert without a pod label (never an empty value)."""
        assert "pod" not in to_alert(incident(pod=None), DETECTED)["labels"]

    @pytest.mark.parametrize(("category", "severity"), [
        ("hardware_error", "critical"), ("resource_error", "error"), ("configuration_error", "error"),
        ("input_error", "warning"), ("something_new", "error")])
    def test_severity_follows_the_category(self, category: str, severity: str) -> None:
        """The alert's severity is the incident's: hardware errors critical, input errors warning, the rest error."""
        assert severity == to_alert(incident(category=category), DETECTED)["labels"]["severity"]

    def test_annotations_carry_what_to_do(self) -> None:
        """The line as logged, root cause, the best workaround's how, doc link, event id and the matched line."""
        annotations = to_alert(incident(), DETECTED)["annotations"]
        assert {"summary": f"{SEED}: torch.OutOfMemoryError: CUDA out of memory.", "description": "The prefill allocates KV cache.",
                "workaround": "lower --max-model-len", "doc_url": "https://docs.example/oom", "event_id": "e1",
                "matched_line": "torch.OutOfMemoryError: CUDA out of memory."} == annotations

    def test_long_lines_are_cut(self) -> None:
        """The matched line annotation is at most MAX_LINE_CHARS long."""
        alert = to_alert(incident(line="x" * 5000), DETECTED)
        assert MAX_LINE_CHARS == len(alert["annotations"]["matched_line"])

    def test_starts_when_detected_and_ends_when_told(self) -> None:
        """startsAt is the detection time, endsAt the given end, both RFC 3339 UTC."""
        alert = to_alert(incident(), datetime(2026, 3, 1, 12, 5, tzinfo=UTC))
        assert ("2026-03-01T12:00:00+00:00", "2026-03-01T12:05:00+00:00") == (alert["startsAt"], alert["endsAt"])


class TestDelivery:
    async def test_an_incident_is_posted_ending_after_resolve_after_seconds(self, fake: tuple[FakeAlertmanager, str]) -> None:
        """One offer gives one post of one alert whose endsAt is the offer time plus 300 s."""
        server, url = fake
        h = Harness(url)
        await h.sink.start()
        h.sink.offer(incident())
        await until(lambda: h.emitted() == 1)
        await h.sink.stop()
        assert [["2026-03-01T12:05:00+00:00"]] == [[a["endsAt"] for a in post] for post in server.posts]

    async def test_a_resolved_group_ends_its_alert_now(self, fake: tuple[FakeAlertmanager, str]) -> None:
        """A group's resolved event is posted with endsAt at the offer time and the group's count."""
        from logsig.incident import GroupOut

        server, url = fake
        h = Harness(url)
        await h.sink.start()
        group = GroupOut(key="k", occurrences=1000, first_seen=DETECTED, last_seen=DETECTED)
        h.sink.offer(incident().model_copy(update={"status": "resolved", "group": group}))
        await until(lambda: h.emitted() == 1)
        await h.sink.stop()
        assert [[("2026-03-01T12:00:00+00:00", "1000")]] == [
            [(a["endsAt"], a["annotations"]["occurrences"]) for a in post] for post in server.posts]

    async def test_repeats_of_one_failure_become_one_alert(self, fake: tuple[FakeAlertmanager, str]) -> None:
        """Three matches of one signature in one pod are one posted alert, counted as three incidents."""
        server, url = fake
        h = Harness(url)
        for n in range(3):
            h.now = NOW + n
            h.sink.offer(incident(event_id=f"e{n}"))
        assert 1 == h.sink.pending()
        await h.sink.start()
        await until(lambda: h.emitted() == 3)
        await h.sink.stop()
        (post,) = server.posts
        assert [("e2", "2026-03-01T12:05:02+00:00", "2026-03-01T12:00:00+00:00")] == [
            (a["annotations"]["event_id"], a["endsAt"], a["startsAt"]) for a in post]

    async def test_alerts_are_batched(self, fake: tuple[FakeAlertmanager, str]) -> None:
        """Pending alerts of different pods go out in one post."""
        server, url = fake
        h = Harness(url)
        for pod in ("p0", "p1", "p2"):
            h.sink.offer(incident(pod=pod))
        await h.sink.start()
        await until(lambda: h.emitted() == 3)
        await h.sink.stop()
        assert [["p0", "p1", "p2"]] == [[a["labels"]["pod"] for a in post] for post in server.posts]

    async def test_a_full_queue_drops_new_alerts_and_counts_them(self) -> None:
        """Beyond queue_size distinct alerts, new ones are dropped (queue_full); repeats still merge."""
        h = Harness("http://127.0.0.1:9", queue_size=2)
        for pod in ("p0", "p1", "p2", "p0"):
            h.sink.offer(incident(pod=pod))
        assert (2, 1.0, 0.0) == (h.sink.pending(), h.dropped("queue_full"), h.dropped("post_failed"))

    async def test_queue_full_is_logged_at_most_once_per_interval(self) -> None:
        """Drops within the interval are summed into the next log line after it."""
        h = Harness("http://127.0.0.1:9", queue_size=1)
        with capture_logs() as logs:
            for n in range(6):
                h.mono = 100.0 + (11.0 if n == 5 else 0.0)
                h.sink.offer(incident(pod=f"p{n}"))
        assert [1, 4] == [e["dropped"] for e in logs if e["event"] == "alertmanager queue full; incidents dropped"]
        assert 5.0 == h.dropped("queue_full")


class TestRetries:
    async def test_server_errors_are_retried_until_accepted(self, fake: tuple[FakeAlertmanager, str]) -> None:
        """Two 503 answers then a 200: three posts, the incident counted once as emitted."""
        server, url = fake
        server.statuses = [503, 503]
        h = Harness(url, max_retries=3)
        await h.sink.start()
        h.sink.offer(incident())
        await until(lambda: h.emitted() == 1)
        await h.sink.stop()
        assert (3, 0.0) == (len(server.posts), h.dropped("post_failed"))

    async def test_after_max_retries_the_incidents_are_dropped(self, fake: tuple[FakeAlertmanager, str]) -> None:
        """A server that keeps failing gets 1 + max_retries posts; the incidents count as post_failed."""
        server, url = fake
        server.statuses = [500] * 10
        h = Harness(url, max_retries=2)
        h.sink.offer(incident(event_id="a"))
        h.sink.offer(incident(event_id="b"))
        await h.sink.start()
        await until(lambda: h.dropped("post_failed") == 2)
        await h.sink.stop()
        assert (3, 0.0) == (len(server.posts), h.emitted())

    async def test_a_rejected_batch_is_not_retried(self, fake: tuple[FakeAlertmanager, str]) -> None:
        """A 400 (invalid alert) is final: one post, counted as post_failed."""
        server, url = fake
        server.statuses = [400]
        h = Harness(url, max_retries=5)
        await h.sink.start()
        h.sink.offer(incident())
        await until(lambda: h.dropped("post_failed") == 1)
        await h.sink.stop()
        assert 1 == len(server.posts)

    async def test_an_unreachable_alertmanager_counts_as_post_failed(self) -> None:
        """Connection refused is retried, then the incident is dropped with reason post_failed."""
        h = Harness("http://127.0.0.1:9", max_retries=1)
        await h.sink.start()
        h.sink.offer(incident())
        await until(lambda: h.dropped("post_failed") == 1)
        await h.sink.stop()
        assert 0.0 == h.emitted()


class TestStop:
    async def test_stop_posts_what_is_pending(self, fake: tuple[FakeAlertmanager, str]) -> None:
        """Alerts offered just before stop are still delivered."""
        server, url = fake
        h = Harness(url, pacing=Pacing(post_interval_seconds=5.0, drain_timeout_seconds=5.0))
        await h.sink.start()
        h.sink.offer(incident(pod="p0"))
        await until(lambda: h.emitted() == 1)
        h.sink.offer(incident(pod="p1"))
        await h.sink.stop()
        assert (2.0, [["p0"], ["p1"]]) == (h.emitted(), [[a["labels"]["pod"] for a in p] for p in server.posts])

    async def test_stop_is_bounded_and_counts_what_it_could_not_post(self, fake: tuple[FakeAlertmanager, str]) -> None:
        """A hanging Alertmanager holds stop only for the drain bound; the unposted count as shutdown."""
        server, url = fake
        server.hold.clear()
        pacing = Pacing(drain_timeout_seconds=0.2, post_interval_seconds=0.01)
        h = Harness(url, pacing=pacing, timeout_seconds=30)
        await h.sink.start()
        h.sink.offer(incident(pod="p0"))
        await until(lambda: len(server.posts) == 1)
        h.sink.offer(incident(pod="p1"))
        started = time.monotonic()
        await h.sink.stop()
        assert (2.0, 0.0, True) == (h.dropped("shutdown"), h.emitted(), time.monotonic() - started < 2.0)

    async def test_drop_reasons_start_at_zero(self) -> None:
        """Every drop reason of the sink is exported at 0 before anything happens."""
        h = Harness("http://127.0.0.1:9")
        assert [0.0, 0.0, 0.0, 0.0] == [h.emitted(), h.dropped("queue_full"), h.dropped("post_failed"),
                                        h.dropped("shutdown")]
