"""Three replicas in one consumer group, one killed with SIGKILL mid-stream: the other two take its
partitions over (the takeover time is printed) and no incident is lost."""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

from tests.integration.daemon_proc import DaemonProcess, http_get, start_daemon
from tests.integration.faults import line_numbers, oom_lines, wait_for
from tests.integration.kafka_util import make_topic, produce, read_all, wait_committed

SESSION_TIMEOUT_MS = 6000


def _settings(bootstrap: str) -> dict[str, Any]:
    return {"kafka": {"bootstrap_servers": bootstrap, "topics": ["r3-in"], "output_topic": "r3-out",
                      "dead_letter_topic": "r3-dlq", "group_id": "r3", "fetch_timeout_ms": 200,
                      "session_timeout_ms": SESSION_TIMEOUT_MS, "heartbeat_interval_ms": 1000},
            "decode": {"multiline": {"enabled": False}}, "grouping": {"enabled": False}}


def _partitions(daemon: DaemonProcess) -> set[str]:
    status, body = http_get(f"{daemon.base_url}/status")
    return set(json.loads(body)["partitions"]) if status == 200 else set()


class TestReplicas:
    async def test_one_of_three_replicas_killed_loses_nothing(self, kafka_bootstrap: str, tmp_path: Path) -> None:
        """SIGKILL one of 3 replicas sharing 6 partitions mid-stream: its partitions move, 0 of 600 lines lost."""
        await make_topic(kafka_bootstrap, partitions=6, name="r3-in")
        for name in ("r3-out", "r3-dlq"):
            await make_topic(kafka_bootstrap, name=name)
        replicas = [start_daemon(tmp_path, _settings(kafka_bootstrap), name=f"r3-{i}") for i in range(3)]
        try:
            await wait_for(lambda: all(_partitions(r) for r in replicas), "each replica has partitions", 180)
            await produce(kafka_bootstrap, "r3-in", oom_lines(0, 300))
            await read_all(kafka_bootstrap, "r3-out", 300, settle=False)
            victim, survivors = replicas[0], replicas[1:]
            owned = _partitions(victim)
            victim.process.kill()
            killed_at = time.monotonic()
            await produce(kafka_bootstrap, "r3-in", oom_lines(300, 300))
            await wait_for(lambda: owned <= set().union(*(_partitions(r) for r in survivors)), "takeover", 120)
            takeover = time.monotonic() - killed_at
            await wait_committed(kafka_bootstrap, "r3", "r3-in", survivors[0], timeout_s=180)
            values = [r.value for r in await read_all(kafka_bootstrap, "r3-out", 600)]
            found = line_numbers(values)
            print(f"3 replicas, one killed (it owned {sorted(owned)}): takeover in {takeover:.1f} s "
                  f"(session timeout {SESSION_TIMEOUT_MS / 1000:.0f} s); {len(values)} incidents, "
                  f"{len(values) - len(set(found))} duplicates, {600 - len(set(found))} of 600 lines lost")
            assert list(range(600)) == sorted(set(found))
            assert [0, 0] == [r.terminate() for r in survivors]
        finally:
            for replica in replicas:
                with contextlib.suppress(ProcessLookupError):
                    replica.process.kill()
