"""Incident groups through the real broker: a burst becomes one group, a kill -9 mid-burst loses no count,
and every output record is a CloudEvent the CloudEvents SDK reads."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from cloudevents.core.bindings.kafka import KafkaMessage, from_binary
from cloudevents.core.formats.json import JSONFormat

from logsig.matchers.catalog.loader import load_catalog
from tests.integration.daemon_proc import DaemonProcess, start_daemon
from tests.integration.kafka_util import lag, make_topic, produce, read_all, wait_committed

pytestmark = pytest.mark.integration

OOM = load_catalog().by_id()["llm/vllm-cuda-oom-during-prefill"].signature
KUBERNETES = {"pod_name": "vllm-0", "namespace_name": "ml", "container_name": "vllm"}


def _settings(bootstrap: str, topic: str, out: str, dlq: str, group: str) -> dict[str, Any]:
    """Grouping with a 1 s update interval and a 3 s quiet time; one record per poll batch of 10."""
    return {"kafka": {"bootstrap_servers": bootstrap, "topics": [topic], "output_topic": out,
                      "dead_letter_topic": dlq, "group_id": group, "fetch_timeout_ms": 200, "max_poll_records": 10},
            "decode": {"multiline": {"enabled": False}},
            "grouping": {"update_interval_seconds": 1.0, "quiet_seconds": 3.0}}


def _burst(n: int) -> list[bytes]:
    """``n`` Fluent Bit records of the same CUDA OOM line from pod vllm-0, logged 1 ms apart."""
    return [orjson.dumps({"@timestamp": 1_746_361_380.0 + i / 1000, "log": OOM, "kubernetes": KUBERNETES})
            for i in range(n)]


def _events(records: list[Any]) -> list[dict[str, Any]]:
    """Each record read as a CloudEvent (binary mode) by the SDK, checked against its incident JSON."""
    out = []
    for record in records:
        event = from_binary(KafkaMessage(headers={k: v for k, v in record.headers}, key=record.key,
                                         value=record.value), JSONFormat())
        data = event.get_data()
        assert isinstance(data, dict)
        assert (data["event_id"], f"dev.logsig.incident.{data['status']}", data["group"]["key"], "1.0") == (
            event.get_id(), event.get_type(), event.get_subject(), event.get_specversion())
        out.append(data)
    return out


def _instances(events: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Events deduplicated on event_id, split into group instances: each opened starts one."""
    seen: set[str] = set()
    instances: list[list[dict[str, Any]]] = []
    for event in events:
        if event["event_id"] in seen:
            continue
        seen.add(event["event_id"])
        if event["status"] == "opened" or not instances:
            instances.append([])
        instances[-1].append(event)
    return instances


async def _wait_resolved(bootstrap: str, out: str, daemon: DaemonProcess, timeout_s: float = 90.0) -> list[Any]:
    """The output records once the last one is a resolved event."""
    deadline = time.monotonic() + timeout_s
    while True:
        records = await read_all(bootstrap, out, 1, timeout_s=5)
        if records and orjson.loads(records[-1].value)["status"] == "resolved":
            return records
        assert daemon.process.poll() is None, daemon.log()
        assert time.monotonic() < deadline, f"no resolved event in time\n{daemon.log()}"
        await asyncio.sleep(0.5)


class TestGroupsThroughTheBroker:
    async def test_burst_is_one_group_with_every_line_counted(self, kafka_bootstrap: str, tmp_path: Path) -> None:
        """1,000 identical OOM lines: opened, updates, resolved with 1,000 occurrences, all CloudEvents."""
        topic, out, dlq = [await make_topic(kafka_bootstrap) for _ in range(3)]
        await produce(kafka_bootstrap, topic, _burst(1000))
        daemon = start_daemon(tmp_path, _settings(kafka_bootstrap, topic, out, dlq, "g-burst"))
        try:
            daemon.wait_ready()
            events = _events(await _wait_resolved(kafka_bootstrap, out, daemon))
        finally:
            assert 0 == daemon.terminate()
        statuses = [e["status"] for e in events]
        assert ("opened", "resolved", 1, 1000) == (statuses[0], statuses[-1], len({e["group"]["key"] for e in events}),
                                                   events[-1]["group"]["occurrences"])
        assert set(statuses[1:-1]) <= {"updated"}

    async def test_kill_9_mid_burst_loses_no_occurrence(self, kafka_bootstrap: str, tmp_path: Path) -> None:
        """A kill -9 after the first update, then a restart: the instances' last counts add up to at least
        every line, and each instance ends reported."""
        n = 5000
        topic, out, dlq = [await make_topic(kafka_bootstrap) for _ in range(3)]
        await produce(kafka_bootstrap, topic, _burst(n))
        settings = _settings(kafka_bootstrap, topic, out, dlq, "g-kill")
        first = start_daemon(tmp_path, settings, name="first")
        first.wait_ready()
        await read_all(kafka_bootstrap, out, 2, timeout_s=60, settle=False)
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(timeout=30)
        assert 0 < await lag(kafka_bootstrap, "g-kill", topic), "the first run consumed everything"
        second = start_daemon(tmp_path, settings, name="second")
        try:
            second.wait_ready()
            await wait_committed(kafka_bootstrap, "g-kill", topic, second)
            events = _events(await _wait_resolved(kafka_bootstrap, out, second))
        finally:
            assert 0 == second.terminate()
        instances = _instances(events)
        counted = sum(instance[-1]["group"]["occurrences"] for instance in instances)
        assert (True, "resolved", 1) == (counted >= n, instances[-1][-1]["status"],
                                         len({e["group"]["key"] for e in events}))
