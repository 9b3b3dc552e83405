"""What the daemon tells its operator, against the real broker: /readyz reasons, a missing input
topic (warning, gauge, /readyz), one log line per new incident group, the summary line, /status."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import orjson

from tests.integration.conftest import create_topic, produce_values
from tests.integration.daemon_proc import DaemonProcess, http_get, metric_value, start_daemon
from tests.integration.faults import delete_topic

OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
       "79.25 GiB of which 1.16 GiB is free.")
DEADLINE_S = 90.0


def _settings(bootstrap: str, topic: str, out: str, dlq: str, **extra: Any) -> dict[str, Any]:
    kafka = {"bootstrap_servers": bootstrap, "topics": [topic], "output_topic": out, "dead_letter_topic": dlq,
             "group_id": f"g-{uuid.uuid4().hex[:8]}", "fetch_timeout_ms": 200, "metadata_max_age_ms": 1000}
    return {"kafka": kafka, **extra}


def _log_events(daemon: DaemonProcess) -> list[dict[str, Any]]:
    """The daemon's JSON log lines, parsed."""
    events = []
    for line in daemon.log_path.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            events.append(json.loads(line))
    return events


def _wait(daemon: DaemonProcess, condition: Any, what: str) -> Any:
    """Poll ``condition()`` until it returns something truthy; fail with the log past the deadline."""
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        assert daemon.process.poll() is None, daemon.log()
        found = condition()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"{what} not seen in {DEADLINE_S}s:\n{daemon.log()}")


def _record(pod: str) -> bytes:
    return orjson.dumps({"log": OOM, "kubernetes": {"pod_name": pod, "namespace_name": "ml"}})


class TestReadiness:
    async def test_missing_output_topic_is_named_on_readyz(self, kafka_bootstrap: str, tmp_path: Path) -> None:
        """Output topics that do not exist are the /readyz reason, by name, and /status lists them."""
        topic = await create_topic(kafka_bootstrap)
        out = f"absent-{uuid.uuid4().hex[:8]}"
        daemon = start_daemon(tmp_path, _settings(kafka_bootstrap, topic, out, out + "-dlq"))
        try:
            reason = _wait(daemon, lambda: "do not exist" in (body := http_get(f"{daemon.base_url}/readyz")[1])
                           and body, "the output-topic reason")
            status = orjson.loads(http_get(f"{daemon.base_url}/status")[1])
            assert (f"not ready: output topics do not exist: {out}, {out}-dlq; create them\n", [out, f"{out}-dlq"]) == (
                reason, status["missing_topics"])
        finally:
            assert 0 == daemon.terminate()

    async def test_missing_input_topic_is_warned_gauged_and_named(self, kafka_bootstrap: str, tmp_path: Path) -> None:
        """A missing input topic: warnings naming it, the gauge at 1, /readyz naming it; once created,
        the gauge is 0 and the daemon becomes ready."""
        out, dlq = await create_topic(kafka_bootstrap), await create_topic(kafka_bootstrap)
        topic = f"later-{uuid.uuid4().hex[:8]}"
        daemon = start_daemon(tmp_path, _settings(kafka_bootstrap, topic, out, dlq))
        try:
            _wait(daemon, lambda: len([e for e in _log_events(daemon) if e["event"].startswith(
                "input topics do not exist")]) >= 2, "two warnings")
            assert (503, f"not ready: input topics do not exist: {topic}\n", 1.0) == (
                *http_get(f"{daemon.base_url}/readyz"), metric_value(daemon.metrics(), "logsig_input_topics_missing"))
            await create_topic_named(kafka_bootstrap, topic)
            daemon.wait_ready(DEADLINE_S)
            _wait(daemon, lambda: metric_value(daemon.metrics(), "logsig_input_topics_missing") == 0.0, "gauge at 0")
            warned = [e["topics"] for e in _log_events(daemon) if e["event"].startswith("input topics do not exist")]
            assert {(topic,)} == {tuple(t) for t in warned}
        finally:
            assert 0 == daemon.terminate()


    async def test_dead_letter_topic_deleted_while_running_is_listed(self, kafka_bootstrap: str,
                                                                      tmp_path: Path) -> None:
        """A dead-letter topic deleted under a running daemon is warned about and listed in /status
        missing_topics; once created again the list is empty."""
        topic, out, dlq = [await create_topic(kafka_bootstrap) for _ in range(3)]
        daemon = start_daemon(tmp_path, _settings(kafka_bootstrap, topic, out, dlq, logging={"format": "json"}))
        try:
            daemon.wait_ready(DEADLINE_S)
            await delete_topic(kafka_bootstrap, dlq)
            missing = _wait(daemon, lambda: orjson.loads(http_get(f"{daemon.base_url}/status")[1])["missing_topics"],
                            "the dead-letter topic in /status")
            warned = [e["topics"] for e in _log_events(daemon) if e["event"].startswith("output topics do not exist")]
            await create_topic_named(kafka_bootstrap, dlq)
            _wait(daemon, lambda: not orjson.loads(http_get(f"{daemon.base_url}/status")[1])["missing_topics"]
                  and "empty", "an empty missing_topics")
        finally:
            assert 0 == daemon.terminate()
        assert ([dlq], [dlq]) == (missing, warned[0])


async def create_topic_named(bootstrap: str, name: str) -> None:
    """Create topic ``name`` (1 partition, RF 1)."""
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, 1, replication_factor=1)])
    finally:
        await admin.close()


class TestActivityLog:
    async def test_new_groups_summary_and_status(self, kafka_bootstrap: str, tmp_path: Path) -> None:
        """Five OOMs on two pods: two 'incident' lines, summaries counting five lines, /status with both
        groups counting 3 and 2, `logsig top --once` showing both; no error line at all (the first-start
        coordinator error is gone)."""
        topic, out, dlq = [await create_topic(kafka_bootstrap) for _ in range(3)]
        settings = _settings(kafka_bootstrap, topic, out, dlq, logging={"format": "json",
                                                                          "summary_interval_seconds": 1})
        daemon = start_daemon(tmp_path, settings)
        try:
            daemon.wait_ready()
            await produce_values(kafka_bootstrap, topic, [_record(f"vllm-{i % 2}") for i in range(5)])
            summaries = _wait(daemon, lambda: [e for e in _log_events(daemon) if e["event"] == "summary"
                                               and e["lines"] > 0], "a summary with matching lines")
            status = orjson.loads(http_get(f"{daemon.base_url}/status")[1])
            top = subprocess.run([sys.executable, "-m", "logsig", "top", "--once", "--url", daemon.base_url],
                                 capture_output=True, text=True, timeout=60, check=False, env={**os.environ,
                                                                                               "COLUMNS": "160"})
        finally:
            assert 0 == daemon.terminate()
        events = _log_events(daemon)
        incidents = sorted(e["stream"] for e in events if e["event"] == "incident")
        assert (["ml/vllm-0", "ml/vllm-1"], 5, [3, 2]) == (
            incidents, sum(e["lines"] for e in events if e["event"] == "summary"),
            [g["count"] for g in status["groups"]])
        assert (True, 5, []) == (status["ready"], status["totals"]["lines"],
                                 [e["event"] for e in events if e["level"] == "error"])
        assert summaries[0]["records"] >= 1
        rows = [line for line in top.stdout.splitlines() if "cuda/torch-oom" in line]  # pods named vllm-N say no server
        assert (0, True, 2) == (top.returncode, "ready" in top.stdout, len(rows)), top.stdout + top.stderr
