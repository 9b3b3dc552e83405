"""kill -9 at random moments under load, for the fault test (tests/integration/test_fault_kill.py)
and its longer run (bench/fault_kill.py).

Each trial starts ``logsig run`` (static member ``kill-0`` of one group, so the restarted replica
takes its partitions back at once), produces a batch of distinct matching lines, waits a random
moment and kills the daemon with SIGKILL. Every other trial first freezes the broker (SIGSTOP) once
the daemon has read part of the batch, so the kill falls between produce and commit, then thaws it
(SIGCONT). A last daemon drains the rest. Then every line must have an incident (0 lost) and all
copies of one line's incident must share one ``event_id``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from tests.integration.daemon_proc import DaemonProcess, metric_value, start_daemon
from tests.integration.faults import oom_lines
from tests.integration.kafka_util import make_topic, produce, read_all, wait_committed


@dataclass
class KillReport:
    """What the trials did and found: kills (with the broker frozen), lines, incidents, duplicates."""

    trials: int = 0
    frozen: int = 0
    lines: int = 0
    incidents: int = 0
    duplicates: int = 0
    lost: list[int] = field(default_factory=list)
    ids_differing: list[int] = field(default_factory=list)

    def summary(self) -> str:
        return (f"{self.trials} kill -9 ({self.frozen} with the broker frozen): {self.lines} lines, "
                f"{self.incidents} incidents, {self.duplicates} duplicates, {len(self.lost)} lost, "
                f"{len(self.ids_differing)} lines whose copies differ in event_id")


def _settings(bootstrap: str, name: str) -> dict[str, Any]:
    return {"kafka": {"bootstrap_servers": bootstrap, "topics": [f"{name}-in"], "output_topic": f"{name}-out",
                      "dead_letter_topic": f"{name}-dlq", "group_id": name, "fetch_timeout_ms": 200,
                      "max_poll_records": 50, "retry_backoff_max_seconds": 1.0, "session_timeout_ms": 10000,
                      "heartbeat_interval_ms": 1000, "group_instance_id": "kill-0"},
            "decode": {"multiline": {"enabled": False}}, "grouping": {"enabled": False}}


async def _trial(bootstrap: str, broker_pid: int, tmp_path: Path, name: str, index: int, lines: int,
                 rng: random.Random) -> bool:
    """One trial; returns whether the broker was frozen for the kill."""
    daemon = start_daemon(tmp_path, _settings(bootstrap, name), name=f"{name}-{index}")
    frozen = index % 2 == 1
    try:
        await asyncio.to_thread(daemon.wait_ready, 120.0)
        before = metric_value(daemon.metrics(), "logsig_records_consumed_total")
        await produce(bootstrap, f"{name}-in", oom_lines(index * lines, lines))
        if frozen:
            await _wait_consumed(daemon, before + 1)
            os.kill(broker_pid, signal.SIGSTOP)
            await asyncio.sleep(rng.uniform(0.05, 0.5))
        else:
            await asyncio.sleep(rng.uniform(0.0, 1.0))
        daemon.process.kill()
        daemon.process.wait(timeout=30)
    finally:
        if frozen:
            os.kill(broker_pid, signal.SIGCONT)
        with contextlib.suppress(ProcessLookupError):
            daemon.process.kill()
    return frozen


async def _wait_consumed(daemon: DaemonProcess, at_least: float) -> None:
    deadline = time.monotonic() + 60
    while metric_value(daemon.metrics(), "logsig_records_consumed_total") < at_least:
        assert time.monotonic() < deadline, daemon.log()
        await asyncio.sleep(0.02)


async def run_kill_trials(bootstrap: str, broker_pid: int, tmp_path: Path, trials: int, lines: int = 200,
                          seed: int = 13, name: str = "kill") -> KillReport:
    """Run ``trials`` kills of ``lines`` lines each on topics ``<name>-in``/``-out``/``-dlq``."""
    await make_topic(bootstrap, partitions=3, name=f"{name}-in")
    for suffix in ("out", "dlq"):
        await make_topic(bootstrap, name=f"{name}-{suffix}")
    rng, report = random.Random(seed), KillReport(trials=trials, lines=trials * lines)
    for index in range(trials):
        report.frozen += await _trial(bootstrap, broker_pid, tmp_path, name, index, lines, rng)
    last = start_daemon(tmp_path, _settings(bootstrap, name), name=f"{name}-last")
    try:
        await asyncio.to_thread(last.wait_ready, 120.0)
        await wait_committed(bootstrap, name, f"{name}-in", last, timeout_s=300)
        values = [r.value for r in await read_all(bootstrap, f"{name}-out", report.lines, timeout_s=120)]
        assert 0 == last.terminate()
    finally:
        with contextlib.suppress(ProcessLookupError):
            last.process.kill()
    return _check(report, values)


def _check(report: KillReport, values: list[bytes]) -> KillReport:
    ids: dict[int, set[str]] = {}
    for value in values:
        incident = orjson.loads(value)
        number = int(incident["match"]["line"].rsplit("(line ", 1)[1].rstrip(")"))
        ids.setdefault(number, set()).add(incident["event_id"])
    report.incidents = len(values)
    report.duplicates = len(values) - len(ids)
    report.lost = [n for n in range(report.lines) if n not in ids]
    report.ids_differing = sorted(n for n, found in ids.items() if len(found) > 1)
    return report
