"""kill -9 of logsig mid-stream, three times, restarted each time with the same group_instance_id: no line
loses its incident, and in exactly-once mode (read with read_committed) none is written twice."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.integration.daemon_proc import DaemonProcess, start_daemon
from tests.integration.stream_check import (
    Producer,
    Tail,
    make_topics,
    pod_key,
    tail,
    traceback_records,
    wait_for,
)

LINES = 3000
KILLS = 3


def _settings(bootstrap: str, name: str, exactly_once: bool, multiline: bool = False) -> dict[str, Any]:
    kafka = {"bootstrap_servers": bootstrap, "topics": [f"{name}-in"], "output_topic": f"{name}-out",
             "dead_letter_topic": f"{name}-dlq", "group_id": name, "fetch_timeout_ms": 200,
             "group_instance_id": "logsig-0", "retry_backoff_max_seconds": 1.0,
             "delivery": "exactly_once" if exactly_once else "at_least_once"}
    return {"kafka": kafka, "decode": {"multiline": {"enabled": multiline}}, "grouping": {"enabled": False}}


class TestKilledMidStream:
    @pytest.mark.parametrize(("exactly_once", "multiline"), [(False, False), (True, False), (True, True)],
                             ids=["at_least_once", "exactly_once", "exactly_once_tracebacks"])
    async def test_kill_9_loses_nothing_and_exactly_once_duplicates_nothing(
            self, kafka_bootstrap: str, tmp_path: Path, exactly_once: bool, multiline: bool) -> None:
        """Three SIGKILLs at random moments while lines stream in: every line has an incident; repeated ones
        share their event_id; with delivery=exactly_once there are none, also when every fourth line ends a
        4-record traceback held across the kills."""
        name = f"kill-{uuid.uuid4().hex[:8]}"
        await make_topics(kafka_bootstrap, [f"{name}-in", f"{name}-out", f"{name}-dlq"], partitions=2)
        settings = _settings(kafka_bootstrap, name, exactly_once, multiline)
        isolation = "read_committed" if exactly_once else "read_uncommitted"
        found, stop = Tail(), asyncio.Event()
        reader = asyncio.create_task(tail(kafka_bootstrap, f"{name}-out", found, stop, isolation),
                                     name="the incident reader")
        shipper = Producer(kafka_bootstrap, f"{name}-in", partitions=2,
                           make=traceback_records if multiline else None, key=pod_key if multiline else None)
        rng = random.Random(20261201)
        daemon: DaemonProcess = start_daemon(tmp_path, settings, name="run-0")
        readiness: list[float] = []
        try:
            await asyncio.to_thread(daemon.wait_ready, 120.0)
            sending = asyncio.create_task(shipper.run(LINES, 0.002))
            for kill in range(1, KILLS + 1):
                await asyncio.sleep(rng.uniform(0.5, 2.0))
                daemon.process.kill()
                daemon.process.wait(timeout=30)
                restarted = time.monotonic()
                daemon = start_daemon(tmp_path, settings, name=f"run-{kill}")
                await asyncio.to_thread(daemon.wait_ready, 120.0)
                readiness.append(time.monotonic() - restarted)
            await sending
            await wait_for(lambda: len(found.arrivals) >= LINES, 120, f"incidents of all {LINES} lines",
                           watch=(reader,))
            assert 0 == daemon.terminate()
            stop.set()
            await reader
        finally:
            stop.set()
            if daemon.process.poll() is None:
                daemon.process.kill()
        mode = ("exactly-once" if exactly_once else "at-least-once") + (", tracebacks" if multiline else "")
        print(f"\nkill -9 mid-stream ({mode}, output read {isolation}): {LINES} lines, {KILLS} kills, lost "
              f"{len(found.lost(LINES))}, duplicates {found.duplicates()}, ready after each restart in "
              f"{', '.join(f'{s:.2f}' for s in readiness)} s")
        assert [] == found.lost(LINES)
        assert [] == found.duplicate_ids_differ()
        if exactly_once:
            assert 0 == found.duplicates()
