"""The Alertmanager sink against a real Alertmanager: real log lines in Kafka -> logsig -> alerts.

Alertmanager runs with deploy/alertmanager/alertmanager.yml itself, so the test also shows where
the shipped routing sends each alert (its webhooks point at .invalid hosts and never deliver).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from logsig.matchers.catalog.loader import load_catalog
from tests.integration.conftest import NewTopicFn, ProduceFn
from tests.integration.daemon_proc import DaemonProcess, metric_value, start_daemon
from tests.integration.services import Service, alertmanager, alertmanager_binary

CONFIG = Path(__file__).parents[2] / "deploy" / "alertmanager" / "alertmanager.yml"
SEED = "llm/vllm-cuda-oom-during-prefill"
XID = "gpu/xid-79-fallen-off-bus"
CATALOG = load_catalog().by_id()
VLLM_POD = {"pod_name": "vllm-0", "namespace_name": "ml", "container_name": "vllm", "host": "gpu-node-1"}
DCGM_POD = {"pod_name": "dcgm-exporter-7x2", "namespace_name": "gpu-operator", "container_name": "dcgm",
            "host": "gpu-node-2"}
DEADLINE_S = 45.0


@pytest.fixture(scope="session")
def alertmanager_exe() -> str:
    """The Alertmanager binary, looked up before the broker starts (fails in CI / skips if absent)."""
    return alertmanager_binary()


def fluent_bit(sig_id: str, pod: dict[str, str]) -> bytes:
    """A Fluent Bit record of the signature's first real example line, from ``pod`` in cluster gpu-east."""
    line = CATALOG[sig_id].examples.match[0]
    return orjson.dumps({"log": line, "stream": "stderr", "cluster": "gpu-east", "kubernetes": pod})


def alerts_of(service: Service) -> list[dict[str, Any]]:
    """Every alert Alertmanager holds (active, silenced or inhibited)."""
    found: list[dict[str, Any]] = service.get("/api/v2/alerts")
    return found


async def wait_for(what: str, check: Callable[[], bool], daemon: DaemonProcess) -> None:
    """Poll ``check`` until true; fail naming ``what`` with logsig's log past the deadline."""
    deadline = time.monotonic() + DEADLINE_S
    while not check():
        assert daemon.process.poll() is None, daemon.log()
        assert time.monotonic() < deadline, f"{what} not seen in {DEADLINE_S}s\n{daemon.log()}"
        await asyncio.sleep(0.2)


def settings(bootstrap: str, topic: str, out: str, dlq: str, url: str) -> dict[str, Any]:
    """logsig with the Alertmanager sink on; one record is one message."""
    return {"kafka": {"bootstrap_servers": bootstrap, "topics": [topic], "output_topic": out,
                      "dead_letter_topic": dlq, "group_id": f"g-{topic}", "fetch_timeout_ms": 200},
            "decode": {"multiline": {"enabled": False}}, "grouping": {"enabled": False},
            "alertmanager": {"enabled": True, "url": url, "resolve_after_seconds": 300, "max_retries": 3}}


def by_signature(alerts: list[dict[str, Any]], sig_id: str) -> list[dict[str, Any]]:
    return [a for a in alerts if a["labels"].get("signature_id") == sig_id]


class TestAlertmanagerSink:
    async def test_incidents_become_one_routed_alert_per_failure(
            self, alertmanager_exe: str, kafka_bootstrap: str, new_topic: NewTopicFn, produce: ProduceFn, tmp_path: Path) -> None:
        """Six OOM lines of one pod are one alert with the signature's labels and annotations, refreshed
        by the repeats; an Xid line is a second alert, and the shipped routing pages it."""
        topic, out, dlq = await new_topic(), await new_topic(), await new_topic()
        with alertmanager(tmp_path, CONFIG, alertmanager_exe) as am:
            daemon = start_daemon(tmp_path, settings(kafka_bootstrap, topic, out, dlq, am.base_url))
            try:
                daemon.wait_ready()
                await produce(topic, [fluent_bit(SEED, VLLM_POD)] * 3 + [fluent_bit(XID, DCGM_POD)])
                await wait_for("both alerts", lambda: len(alerts_of(am)) == 2, daemon)
                first_end = datetime.fromisoformat(by_signature(alerts_of(am), SEED)[0]["endsAt"])
                await produce(topic, [fluent_bit(SEED, VLLM_POD)] * 3)
                await wait_for("seven incidents posted", lambda: 7 == metric_value(
                    daemon.metrics(), "logsig_incidents_emitted_total", sink="alertmanager"), daemon)
                alerts, metrics = alerts_of(am), daemon.metrics()
            finally:
                assert 0 == daemon.terminate()
        (oom,) = by_signature(alerts, SEED)
        (xid,) = by_signature(alerts, XID)
        assert 2 == len(alerts)
        assert {"alertname": "LlmVllmCudaOomDuringPrefill", "signature_id": SEED, "category": "resource_error",
                "severity": "error", "cluster": "gpu-east", "namespace": "ml", "pod": "vllm-0",
                "node": "gpu-node-1"} == oom["labels"]
        seed = CATALOG[SEED]
        top = max(seed.workarounds, key=lambda w: w.success_rate)
        assert (f"{SEED}: {seed.examples.match[0][:200]}", seed.root_cause, top.how, seed.official_doc_url, seed.examples.match[0][:1000]) == (
            oom["annotations"]["summary"], oom["annotations"]["description"], oom["annotations"]["workaround"],
            oom["annotations"]["doc_url"], oom["annotations"]["matched_line"])
        assert 32 == len(oom["annotations"]["event_id"])
        assert first_end < datetime.fromisoformat(oom["endsAt"]), "the repeats did not refresh endsAt"
        assert ("active", "critical", "GpuXid79FallenOffBus") == (
            xid["status"]["state"], xid["labels"]["severity"], xid["labels"]["alertname"])
        assert ([{"name": "chat"}], [{"name": "pager"}]) == (oom["receivers"], xid["receivers"])
        assert 7 == metric_value(metrics, "logsig_incidents_emitted_total", sink="kafka")
        assert 0 == metric_value(metrics, "logsig_incidents_dropped_total", sink="alertmanager")
