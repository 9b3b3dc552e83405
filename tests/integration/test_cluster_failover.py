"""A 3-node KRaft cluster (replication factor 3, min.insync.replicas=2): the node leading the input and
the output partitions is killed mid-stream; nothing is lost, and the recovery time is printed."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.daemon_proc import start_daemon
from tests.integration.local_kafka import load_kafka_script
from tests.integration.stream_check import Producer, Tail, leaders, make_topics, tail, wait_for

LINES = 1500
KILL_AT = 500
LEADER = 1


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Path]]:
    """A running 3-node cluster and its state dir, stopped after the module."""
    kafka = load_kafka_script()
    state = tmp_path_factory.mktemp("cluster")
    try:
        yield kafka.start_cluster(state, timeout_s=300.0), state
    finally:
        kafka.stop_cluster(state)


def _settings(bootstrap: str, name: str, exactly_once: bool) -> dict[str, Any]:
    kafka = {"bootstrap_servers": bootstrap, "topics": [f"{name}-in"], "output_topic": f"{name}-out",
             "dead_letter_topic": f"{name}-dlq", "group_id": name, "fetch_timeout_ms": 200,
             "retry_backoff_max_seconds": 1.0, "metadata_max_age_ms": 5000, "session_timeout_ms": 10000}
    if exactly_once:
        kafka |= {"delivery": "exactly_once", "group_instance_id": "logsig-0", "transaction_timeout_ms": 10000}
    return {"kafka": kafka, "decode": {"multiline": {"enabled": False}},
            "grouping": {"enabled": False}}


class TestLeaderFailover:
    @pytest.mark.parametrize("exactly_once", [False, True], ids=["at_least_once", "exactly_once"])
    async def test_killing_the_leader_of_input_and_output_loses_no_incident(
            self, cluster: tuple[Any, Path], tmp_path: Path, exactly_once: bool) -> None:
        """SIGKILL of the node leading both partitions mid-stream: every line gets its incident (exactly once
        in exactly-once mode, read with read_committed), and logsig resumes on the new leaders."""
        running, state = cluster
        kafka = load_kafka_script()
        bootstrap = running.bootstrap
        name = f"failover-{uuid.uuid4().hex[:8]}"
        await make_topics(bootstrap, [f"{name}-in", f"{name}-out", f"{name}-dlq"], replicas=[LEADER, 2, 3])
        assert {0: LEADER} == await leaders(bootstrap, f"{name}-in")
        daemon = start_daemon(tmp_path, _settings(bootstrap, name, exactly_once))
        found, stop = Tail(), asyncio.Event()
        isolation = "read_committed" if exactly_once else "read_uncommitted"
        reader = asyncio.create_task(tail(bootstrap, f"{name}-out", found, stop, isolation), name="the incident reader")
        shipper = Producer(bootstrap, f"{name}-in")
        try:
            await asyncio.to_thread(daemon.wait_ready, 120.0)
            sending = asyncio.create_task(shipper.run(LINES, 0.004))
            await wait_for(lambda: shipper.sent >= KILL_AT and len(found.arrivals) > 0, 120, "half the stream",
                           watch=(reader,))
            killed_at_line, killed_at = shipper.sent, time.monotonic()
            await asyncio.to_thread(kafka.kill_node, state, LEADER)
            await sending
            await wait_for(lambda: len(found.arrivals) >= LINES, 180, f"incidents of all {LINES} lines",
                           watch=(reader,))
            first = found.first_after(killed_at_line) or float("nan")
            recovery, behind_shipper = first - killed_at, first - shipper.acked_at[killed_at_line]
            new_leaders = (await leaders(bootstrap, f"{name}-in"))[0], (await leaders(bootstrap, f"{name}-out"))[0]
            assert 0 == daemon.terminate()
            stop.set()
            await reader
        finally:
            if daemon.process.poll() is None:
                daemon.process.kill()
            stop.set()
            await asyncio.to_thread(kafka.restart_node, state, LEADER, 3, 300.0)
        mode = "exactly-once" if exactly_once else "at-least-once"
        print(f"\nleader failover ({mode}): {LINES} lines, node {LEADER} (leader of input and output) killed at "
              f"line {killed_at_line}; new leaders {new_leaders}; lost {len(found.lost(LINES))}, "
              f"duplicates {found.duplicates()}, recovery {recovery:.2f} s (kill to the first incident of a "
              f"line sent after it; {behind_shipper:.2f} s after the broker acknowledged that line to the "
              f"shipper, whose longest wait for an acknowledgement was {shipper.longest_ack_s:.2f} s)")
        assert [] == found.lost(LINES)
        assert LEADER not in new_leaders
        assert [] == found.duplicate_ids_differ()
        if exactly_once:
            assert 0 == found.duplicates()
