"""The dashboard and rules against a real Prometheus scraping a real logsig fed through the real broker.

Prometheus scrapes logsig every second and evaluates deploy/prometheus/rules.yml as often. Every
panel query and every template-variable query of deploy/grafana/logsig-dashboard.json is then sent
to Prometheus's HTTP API: each must parse, and the ones that should show data must return the
series this stream produces.

Two batches are fed on purpose: a (cluster, namespace) series of the match counter appears with its
first match, and the recorded 5-minute increase counts an appearance at its full value only for
replicas Prometheus scraped 5 minutes before (see rules.yml), never in a fresh Prometheus. The
second batch is the increase every "per 5 minutes" panel shows.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from logsig import __version__
from logsig.matchers.catalog.loader import load_catalog
from tests.deploy.support import RULES
from tests.deploy.test_grafana import DASHBOARD, Query, dashboard_queries
from tests.integration.conftest import NewTopicFn, ProduceFn
from tests.integration.daemon_proc import DaemonProcess, start_daemon
from tests.integration.services import Service, prometheus, prometheus_binary, scrape_config

SEED = "llm/vllm-cuda-oom-during-prefill"
XID = "gpu/xid-79-fallen-off-bus"
ENGINE_DEAD = "llm/vllm-engine-dead"
CATALOG = load_catalog()
CLUSTER = "gpu-east"
VLLM_POD = {"pod_name": "vllm-0", "namespace_name": "ml", "container_name": "vllm", "host": "gpu-node-1"}
DCGM_POD = {"pod_name": "dcgm-exporter-7x2", "namespace_name": "gpu-operator", "container_name": "dcgm",
            "host": "gpu-node-2"}
DEADLINE_S = 60.0
WINDOW_S = 300


@dataclass(frozen=True)
class Expect:
    """What a query must return: a series carrying each of ``series`` (a subset of its labels), and
    every value passing ``value``."""

    series: tuple[dict[str, str], ...] = ({},)
    value: Callable[[float], bool] = math.isfinite


POSITIVE = Expect(value=lambda v: v > 0)
EXPECTED: dict[str, Expect] = {
    "panel 'Matches by signature (per 5 minutes)' A": Expect(
        ({"signature_id": SEED}, {"signature_id": XID}, {"signature_id": ENGINE_DEAD})),
    "panel 'Matches by category (per 5 minutes)' A": Expect(
        ({"category": "resource_error"}, {"category": "hardware_error"}, {"category": "runtime_error"})),
    "panel 'Top signatures in the time range' A": Expect(({"signature_id": SEED}, {"signature_id": XID})),
    "panel 'Signatures in the time range' A": Expect(
        ({"signature_id": SEED, "category": "resource_error", "domain": "llm"},
         {"signature_id": XID, "category": "hardware_error", "domain": "gpu"})),
    "panel 'Matches by namespace (per 5 minutes)' A": Expect(
        ({"cluster": CLUSTER, "namespace": "ml"}, {"cluster": CLUSTER, "namespace": "gpu-operator"})),
    "panel 'Namespace and category in the time range' A": Expect(
        ({"cluster": CLUSTER, "namespace": "ml", "category": "resource_error"},
         {"cluster": CLUSTER, "namespace": "gpu-operator", "category": "hardware_error"})),
    "panel 'Hardware faults in the time range' A": POSITIVE,
    "panel 'Hardware fault matches (per 5 minutes)' A": Expect(
        ({"cluster": CLUSTER, "namespace": "gpu-operator", "signature_id": XID},)),
    "panel 'Out-of-memory and engine-dead matches (per 5 minutes)' A": Expect(({"cluster": CLUSTER, "namespace": "ml"},)),
    "panel 'Out-of-memory and engine-dead matches (per 5 minutes)' B": Expect(({"cluster": CLUSTER, "namespace": "ml"},)),
    "panel 'Replicas up' A": Expect(value=lambda v: v == 1),
    "panel 'Partitions assigned' A": Expect(value=lambda v: v == 1),
    "panel 'Signatures loaded' A": Expect(value=lambda v: v == len(CATALOG.signatures)),
    "panel 'Catalog reload' A": Expect(value=lambda v: v == 1),
    "panel 'Last catalog reload' A": Expect(value=lambda v: 0 <= v < 600),
    "panel 'Version' A": Expect(({"version": __version__},)),
    "panel 'Records consumed' A": POSITIVE,
    "panel 'Bytes consumed' A": POSITIVE,
    "panel 'Consumer lag' A": Expect(value=lambda v: v >= 0),
    "panel 'Consumer lag' B": Expect(value=lambda v: v >= 0),
    "panel 'Decode failures and dead letters' A": Expect(({"reason": "empty_value"},)),
    "panel 'Decode failures and dead letters' B": Expect(({"reason": "empty_value"},)),
    "panel 'Processing latency' A": Expect(value=lambda v: 0 <= v < 60),
    "panel 'Processing latency' B": Expect(value=lambda v: 0 <= v < 60),
    "panel 'Incidents' A": Expect(({"sink": "kafka"},), value=lambda v: v > 0),
    "panel 'Regex time by signature (top 10)' A": POSITIVE,
    "panel 'Truncated messages and label overflow' A": Expect(value=lambda v: v == 0),
    "panel 'Truncated messages and label overflow' C": Expect(value=lambda v: v == 0),  # no record repaired
    "panel 'Incident groups' A": Expect(value=lambda v: v >= 0),
    "panel 'Incident groups' B": Expect(value=lambda v: v == 0),
    "panel 'Kafka sink delivery' A": Expect(value=lambda v: 0 <= v <= 10),
    "panel 'Input topics missing' A": Expect(value=lambda v: v == 0),
    "panel 'Unclassified failures' A": Expect(({"domain": "generic"},), value=lambda v: v >= 0),
    "variable cluster": Expect(({"value": CLUSTER},)),
    "variable namespace": Expect(({"value": "ml"}, {"value": "gpu-operator"})),
    "variable signature": Expect(({"value": SEED}, {"value": XID}, {"value": ENGINE_DEAD})),
}
"""Queries that must return data after the two batches, and what."""

EMPTY = {
    "panel 'Incidents' B",  # nothing dropped
    "panel 'Truncated messages and label overflow' B",  # no label set beyond the cap
    "panel 'Catalog reloads' A",  # the only load happened before the first scrape
    "panel 'Decode failures and dead letters' C",  # no dead letter dropped
    "panel 'Kafka sink delivery' B",  # no output refused as too large
    "panel 'Kafka sink delivery' C",  # delivery never blocked
    "panel 'Redactions' A",  # the fed lines carry no secret to redact
}
"""Queries that must parse and return nothing in this run."""


@pytest.fixture(scope="session")
def prometheus_exe() -> str:
    """The Prometheus binary, looked up before the broker starts (fails in CI / skips if absent)."""
    return prometheus_binary()


def queries() -> list[Query]:
    """The dashboard's queries with every variable at "All"."""
    return dashboard_queries(json.loads(DASHBOARD.read_text(encoding="utf-8")))


def fluent_bit(sig_id: str, pod: dict[str, str]) -> bytes:
    """A Fluent Bit record of the signature's first real example line, from ``pod`` in CLUSTER."""
    line = CATALOG.by_id()[sig_id].examples.match[0]
    return orjson.dumps({"log": line, "stream": "stderr", "cluster": CLUSTER, "kubernetes": pod})


def batch() -> list[bytes]:
    """Two OOMs and an engine death in ml, an Xid in gpu-operator, and one empty (dead-lettered) value."""
    return [fluent_bit(SEED, VLLM_POD), fluent_bit(ENGINE_DEAD, VLLM_POD), fluent_bit(SEED, VLLM_POD),
            fluent_bit(XID, DCGM_POD), b""]


def evaluate(prom: Service, query: Query, now: float) -> tuple[list[dict[str, str]], list[float]]:
    """Label sets and values ``query`` returns (a variable: its label values as ``{"value": ...}``).

    Range panels are also run as a range query over the last minute. A subquery ``[...:5m]`` only
    sees recorded samples at 5-minute boundaries, so the time-range tables are evaluated at the next
    boundary: what the dashboard shows once the current window closes.
    """
    if query.label is not None:
        found = prom.get(f"/api/v1/label/{query.label}/values", **{"match[]": [query.expr]})
        assert "success" == found["status"], (query.source, found)
        return [{"value": v} for v in found["data"]], []
    if not query.instant:
        ranged = prom.get("/api/v1/query_range", query=query.expr, start=str(now - 60), end=str(now), step="5")
        assert "success" == ranged["status"], (query.source, ranged)
    at = (now // WINDOW_S + 1) * WINDOW_S if ":5m]" in query.expr else now
    found = prom.get("/api/v1/query", query=query.expr, time=str(at))
    assert ("success", "vector") == (found["status"], found["data"]["resultType"]), (query.source, found)
    result = found["data"]["result"]
    return [r["metric"] for r in result], [float(r["value"][1]) for r in result]


def problems(prom: Service) -> list[str]:
    """Why the dashboard's queries do not (yet) return what EXPECTED and EMPTY say; [] when they do."""
    now, found = time.time(), []
    for query in queries():
        series, values = evaluate(prom, query, now)
        expect = EXPECTED.get(query.source)
        if expect is None:
            found += [f"{query.source}: expected nothing, got {series}"] if series else []
            continue
        missing = [s for s in expect.series if not any(s.items() <= got.items() for got in series)]
        wrong = [v for v in values if not expect.value(v)]
        found += [f"{query.source}: missing {missing} in {series}"] if missing else []
        found += [f"{query.source}: values {wrong} of {values}"] if wrong else []
    return found


def emitted(prom: Service, incidents: int) -> list[str]:
    """[] once Prometheus has scraped ``incidents`` incidents produced to Kafka, else why not."""
    found = prom.get("/api/v1/query", query='sum(logsig_incidents_emitted_total{sink="kafka"})')["data"]["result"]
    total = float(found[0]["value"][1]) if found else None
    return [] if total == incidents else [f"scraped incidents: {total}, waiting for {incidents}"]


async def wait_until(what: str, check: Callable[[], list[str]], daemon: DaemonProcess, prom: Service) -> None:
    """Poll ``check`` until it reports no problem; fail with the last ones and both logs past the deadline."""
    deadline = time.monotonic() + DEADLINE_S
    while found := check():
        assert daemon.process.poll() is None, daemon.log()
        assert time.monotonic() < deadline, f"{what} not reached: {found}\n{daemon.log()}\n{prom.log()}"
        await asyncio.sleep(0.5)


def settings(bootstrap: str, topic: str, out: str, dlq: str) -> dict[str, Any]:
    """logsig with the default source labels (cluster, namespace); one record is one message."""
    return {"kafka": {"bootstrap_servers": bootstrap, "topics": [topic], "output_topic": out,
                      "dead_letter_topic": dlq, "group_id": f"g-{topic}", "fetch_timeout_ms": 200},
            "decode": {"multiline": {"enabled": False}}, "grouping": {"enabled": False}}


class TestDashboardOnPrometheus:
    def test_every_query_has_an_expectation(self) -> None:
        """Each dashboard query is listed as returning data or as returning nothing here."""
        assert sorted(EXPECTED.keys() | EMPTY) == sorted(q.source for q in queries())

    async def test_every_query_parses_and_shows_the_fed_failures(
            self, prometheus_exe: str, kafka_bootstrap: str, new_topic: NewTopicFn, produce: ProduceFn, tmp_path: Path) -> None:
        """Every panel and variable query succeeds on Prometheus and returns the signatures, namespaces,
        topic and health the logsig it scrapes exports after two batches of real lines."""
        topic, out, dlq = await new_topic(), await new_topic(), await new_topic()
        daemon = start_daemon(tmp_path, settings(kafka_bootstrap, topic, out, dlq))
        try:
            daemon.wait_ready()
            with prometheus(tmp_path, scrape_config(f"127.0.0.1:{daemon.port}", [RULES]), prometheus_exe) as prom:
                await wait_until("a first scrape", lambda: emitted(prom, 0), daemon, prom)
                await produce(topic, batch())
                await wait_until("the first batch scraped", lambda: emitted(prom, 4), daemon, prom)
                await produce(topic, batch())
                await wait_until("every expected query result", lambda: problems(prom), daemon, prom)
        finally:
            assert 0 == daemon.terminate()
