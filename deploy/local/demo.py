"""``make demo``: real inference-server logs through a real Kafka broker into logsig and back out.

Starts the local broker (``deploy/local/kafka.py``), creates the topics, starts ``logsig run``,
replays ``deploy/local/sample/records.txt`` (real failure excerpts and benign lines, as plain
lines and Fluent Bit / Vector records, keyed by pod), waits until logsig has committed every
offset, prints the incidents it emitted and the non-zero ``logsig_signature_matches_total``
lines from ``/metrics``, then stops everything. Exit code 0 on success.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from types import ModuleType

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
STATE_DIR = ROOT / ".cache" / "demo-kafka"
INPUT, OUTPUT, DEAD = "inference-logs", "logsig-incidents", "logsig-dead-letters"
GROUP = "logsig-demo"


def _kafka_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("logsig_local_kafka", HERE / "kafka.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _say(text: str) -> None:
    print(f"==> {text}", flush=True)


async def _create_topics(bootstrap: str) -> None:
    """Create the demo's topics, and wait until the broker can coordinate consumer groups (its
    offsets topic is created on first use; without this wait the first join logs a transient
    GroupCoordinatorNotAvailableError)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        new = [NewTopic(t, 3 if t == INPUT else 1, 1) for t in (INPUT, OUTPUT, DEAD) if t not in existing]
        if new:
            await admin.create_topics(new)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                await admin.list_consumer_group_offsets(GROUP)
                return
            except Exception:  # coordinator not available yet: the offsets topic is being created
                await asyncio.sleep(0.5)
    finally:
        await admin.close()


async def _replay(bootstrap: str) -> int:
    lines = (HERE / "sample" / "records.txt").read_text(encoding="utf-8").splitlines()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True, acks="all")
    await producer.start()
    try:
        for line in lines:
            await producer.send(INPUT, line.encode(), key=_pod_of(line).encode())
        await producer.flush()
    finally:
        await producer.stop()
    return len(lines)


def _pod_of(value: str) -> str:
    if value.startswith("{"):
        meta = json.loads(value).get("kubernetes", {})
        return str(meta.get("pod_name", "plain"))
    return "plain"


async def _wait_committed(bootstrap: str, daemon: subprocess.Popen[bytes], timeout_s: float = 120.0) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
    await admin.start()
    await consumer.start()
    try:
        parts = [TopicPartition(INPUT, p) for p in range(3)]
        deadline = time.monotonic() + timeout_s
        while True:
            ends = await consumer.end_offsets(parts)
            done = await admin.list_consumer_group_offsets(GROUP)
            if all(tp in done and done[tp].offset >= ends[tp] for tp in parts):
                return
            if daemon.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("logsig did not commit the whole input in time")
            await asyncio.sleep(0.2)
    finally:
        await admin.close()
        await consumer.stop()


async def _incidents(bootstrap: str) -> list[dict[str, object]]:
    consumer = AIOKafkaConsumer(OUTPUT, bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    await consumer.start()
    try:
        out = []
        while batches := await consumer.getmany(timeout_ms=1500):
            out.extend(orjson.loads(r.value) for batch in batches.values() for r in batch)
        return out
    finally:
        await consumer.stop()


def _print_incident(incident: dict) -> None:  # type: ignore[type-arg]
    sig, src, match = incident["signature"], incident["source"], incident["match"]
    if src.get("pod"):
        where = f"{src['namespace']}/{src['pod']}"
    else:
        where = f"{src['topic']}[{src['partition']}]@{src['offset']}"
    print(f"\n[{sig['category']}] {sig['id']}  ({where})")
    print(f"  line: {_around(match['line'], match['span'])}")
    if match["values"]:
        print(f"  values: {match['values']}")
    if incident["workarounds"]:
        top = incident["workarounds"][0]
        print(f"  try first ({top['success_rate']:.0%}): {top['how'][:160]}")


def _around(line: str, span: list[int], width: int = 160) -> str:
    """At most ``width`` characters of ``line``, from a little before the matched ``span``."""
    if len(line) <= width:
        return line
    start = max(0, min(span[0] - 40, len(line) - width))
    return ("..." if start else "") + line[start:start + width] + ("..." if start + width < len(line) else "")


def _wait_ready(port: int, daemon: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if daemon.poll() is not None:
            raise SystemExit("logsig exited early; see its log above")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("logsig did not become ready")


def _matches_lines(port: int) -> list[str]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    return [line for line in text.splitlines()
            if line.startswith("logsig_signature_matches_total{") and not line.endswith(" 0.0")]


def main() -> int:
    """Run the demo; returns the exit code."""
    kafka = _kafka_script()
    _say("starting the local Kafka broker (first run fetches the jars with Maven)")
    broker = kafka.start(STATE_DIR)
    daemon: subprocess.Popen[bytes] | None = None
    try:
        bootstrap = str(broker.bootstrap)
        asyncio.run(_create_topics(bootstrap))
        port = _free_port()
        config = Path(tempfile.mkdtemp()) / "logsig.yaml"
        config.write_text(f"kafka:\n  bootstrap_servers: '{bootstrap}'\n  group_id: {GROUP}\n  topics: [{INPUT}]\n"
                          f"http:\n  host: 127.0.0.1\n  port: {port}\nlogging:\n  level: warning\n")
        _say(f"starting logsig run (metrics on http://127.0.0.1:{port}/metrics)")
        env = {k: v for k, v in os.environ.items() if not k.startswith("LOGSIG_")}
        daemon = subprocess.Popen([sys.executable, "-m", "logsig", "run", "--config", str(config)], env=env)
        _wait_ready(port, daemon)
        sent = asyncio.run(_replay(bootstrap))
        _say(f"replayed {sent} records of real inference-server logs into '{INPUT}'")
        asyncio.run(_wait_committed(bootstrap, daemon))
        incidents = asyncio.run(_incidents(bootstrap))
        _say(f"{len(incidents)} incidents on '{OUTPUT}':")
        for incident in incidents:
            _print_incident(incident)
        print()
        _say("non-zero logsig_signature_matches_total on /metrics:")
        print("\n".join(_matches_lines(port)))
        return 0 if incidents else 1
    finally:
        if daemon is not None and daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=60)
        _say("stopping the broker")
        kafka.stop(STATE_DIR)


if __name__ == "__main__":
    sys.exit(main())
