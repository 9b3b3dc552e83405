"""Static group membership: a replica killed and restarted within the session timeout gets its partition
back without a rebalance (the other replica is never revoked), and consumption resumes; times printed."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from pathlib import Path
from typing import Any

import orjson

from tests.integration.daemon_proc import DaemonProcess, start_daemon
from tests.integration.kafka_util import produce
from tests.integration.stream_check import Tail, line, make_topics, tail, wait_for

SESSION_TIMEOUT_MS = 30000


def _settings(bootstrap: str, name: str, instance: str | None) -> dict[str, Any]:
    kafka = {"bootstrap_servers": bootstrap, "topics": [f"{name}-in"], "output_topic": f"{name}-out",
             "dead_letter_topic": f"{name}-dlq", "group_id": name, "fetch_timeout_ms": 200,
             "session_timeout_ms": SESSION_TIMEOUT_MS, "heartbeat_interval_ms": 1000,
             "group_instance_id": instance}
    return {"kafka": kafka, "decode": {"multiline": {"enabled": False}},
            "grouping": {"enabled": False}}


def _events(daemon: DaemonProcess, event: str) -> list[list[Any]]:
    """The ``partitions`` of each ``event`` line (``partitions assigned`` / ``partitions revoked``) of the log."""
    out = []
    for text in daemon.log_path.read_text(errors="replace").splitlines():
        with contextlib.suppress(ValueError):
            entry = orjson.loads(text)
            if isinstance(entry, dict) and entry.get("event") == event:
                out.append(entry.get("partitions"))
    return out


def _assignments(daemon: DaemonProcess) -> list[list[Any]]:
    return _events(daemon, "partitions assigned")


def _revocations(daemon: DaemonProcess) -> int:
    return len(_events(daemon, "partitions revoked"))


class TestStaticMembership:
    async def test_restart_within_the_session_timeout_causes_no_rebalance(self, kafka_bootstrap: str,
                                                                         tmp_path: Path) -> None:
        """kill -9 and restart of replica a (group_instance_id kept): replica b is never revoked, a reads its
        partition again, and every line sent before, during and after gets its incident."""
        name = f"static-{uuid.uuid4().hex[:8]}"
        await make_topics(kafka_bootstrap, [f"{name}-in", f"{name}-out", f"{name}-dlq"], partitions=2)
        b = start_daemon(tmp_path, _settings(kafka_bootstrap, name, "logsig-b"), name="b")
        a: DaemonProcess | None = None
        found, stop = Tail(), asyncio.Event()
        reader = asyncio.create_task(tail(kafka_bootstrap, f"{name}-out", found, stop), name="the incident reader")
        try:
            await asyncio.to_thread(b.wait_ready, 120.0)
            a = start_daemon(tmp_path, _settings(kafka_bootstrap, name, "logsig-a"), name="a")
            await asyncio.to_thread(a.wait_ready, 120.0)
            await wait_for(lambda: len(_assignments(b)) >= 2 and _revocations(b) >= 1, 60, "b's second assignment")
            await produce(kafka_bootstrap, f"{name}-in", [line(i) for i in range(0, 20)], keys=[None] * 20)
            await wait_for(lambda: len(found.arrivals) >= 20, 60, "incidents before the restart", watch=(reader,))
            before = (len(_assignments(b)), _revocations(b), _assignments(a)[-1])
            a.process.kill()
            a.process.wait(timeout=30)
            await produce(kafka_bootstrap, f"{name}-in", [line(i) for i in range(20, 40)], keys=[None] * 20)
            restarted = time.monotonic()
            a = start_daemon(tmp_path, _settings(kafka_bootstrap, name, "logsig-a"), name="a-restarted")
            await asyncio.to_thread(a.wait_ready, 120.0)
            ready_s = time.monotonic() - restarted
            await wait_for(lambda: len(found.arrivals) >= 40, 90, "incidents of the lines sent while a was down",
                           watch=(reader,))
            resumed_s = max(found.arrivals[i][0] for i in range(20, 40)) - restarted
            after = (len(_assignments(b)), _revocations(b), _assignments(a)[-1])
            for daemon in (a, b):
                assert 0 == daemon.terminate()
            stop.set()
            await reader
        finally:
            stop.set()
            for daemon in (a, b):
                if daemon is not None and daemon.process.poll() is None:
                    daemon.process.kill()
        print(f"\nstatic membership: replica a killed (-9) and restarted within session_timeout_ms="
              f"{SESSION_TIMEOUT_MS}: ready {ready_s:.2f} s after its restart, all 20 lines sent while it was down "
              f"matched {resumed_s:.2f} s after its restart; b's assignments/revocations before {before[:2]}, "
              f"after {after[:2]}; lost {len(found.lost(40))}")
        assert before == after
        assert [] == found.lost(40)
