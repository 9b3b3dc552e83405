"""Throughput of the whole pipeline, offline and through a real broker, against baselines run alongside.

1. ``logsig scan FILE`` (decode, assemble, match, enrich, JSON out) over a generated 200,000-line
   stream (``bench/gen_stream.py``: mostly benign, ~0.1% real failures, a few 64 KiB lines), and a
   plain Python loop reading the same file line by line, both as whole processes.
2. The daemon end to end: the same lines produced to a topic of a real local broker
   (``deploy/local/kafka.py``); a bare aiokafka consumer reads the whole topic, then ``logsig run``
   consumes it in a fresh group until its committed offsets reach the end.

Prints lines/s and the ratios. Usage: ``python bench/bench_pipeline.py [--lines 200000]
[--skip-broker]``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from gen_stream import generate  # noqa: E402

PARTITIONS = 3


def _timed(command: list[str], stdout: int | None = subprocess.DEVNULL) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=stdout, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def bench_scan(path: Path, lines: int) -> None:
    """logsig scan vs a plain Python read loop, as processes on the same file."""
    loop = _timed([sys.executable, "-c", f"for line in open({str(path)!r}, 'rb'): pass"])
    scan = _timed([sys.executable, "-m", "logsig", "scan", str(path)])
    print(f"plain python read loop   {lines / loop:12,.0f} lines/s")
    print(f"logsig scan              {lines / scan:12,.0f} lines/s")
    print(f"ratio scan / read loop   {loop / scan:12.3f}")


def _kafka() -> ModuleType:
    spec = importlib.util.spec_from_file_location("logsig_local_kafka", ROOT / "deploy" / "local" / "kafka.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


async def _produce(bootstrap: str, topic: str, stream: list[str]) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, PARTITIONS, 1, topic_configs={"max.message.bytes": "2097152"}),
                                   NewTopic(f"{topic}-incidents", 1, 1), NewTopic(f"{topic}-dlq", 1, 1)])
    finally:
        await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=20, max_batch_size=262144,
                                max_request_size=2097152)
    await producer.start()
    try:
        for n, line in enumerate(stream):
            await producer.send(topic, line.encode(), key=f"pod-{n % 16}".encode())
        await producer.flush()
    finally:
        await producer.stop()


async def _bare_consumer(bootstrap: str, topic: str, total: int) -> float:
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                group_id="bench-bare", enable_auto_commit=False, max_poll_records=1000)
    await consumer.start()
    try:
        started, seen = time.perf_counter(), 0
        while seen < total:
            batches = await consumer.getmany(timeout_ms=500, max_records=1000)
            seen += sum(len(b) for b in batches.values())
        await consumer.commit()
        return time.perf_counter() - started
    finally:
        await consumer.stop()


async def _committed_all(bootstrap: str, topic: str, group: str) -> bool:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
    await admin.start()
    await consumer.start()
    try:
        parts = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        ends = await consumer.end_offsets(parts)
        done = await admin.list_consumer_group_offsets(group)
        return all(tp in done and done[tp].offset >= ends[tp] for tp in parts)
    finally:
        await admin.close()
        await consumer.stop()


def _daemon_seconds(bootstrap: str, topic: str, folder: Path) -> float:
    config = folder / "logsig.yaml"
    config.write_text(f"kafka:\n  bootstrap_servers: '{bootstrap}'\n  topics: [{topic}]\n  group_id: bench-logsig\n"
                      f"  output_topic: {topic}-incidents\n  dead_letter_topic: {topic}-dlq\n"
                      "http:\n  host: 127.0.0.1\n  port: 0\nlogging:\n  level: warning\n")
    process = subprocess.Popen([sys.executable, "-m", "logsig", "run", "--config", str(config)])
    started = time.perf_counter()
    try:
        while not asyncio.run(_committed_all(bootstrap, topic, "bench-logsig")):
            if process.poll() is not None:
                raise SystemExit("logsig run exited early")
            time.sleep(0.2)
        return time.perf_counter() - started
    finally:
        process.terminate()
        process.wait(timeout=60)


def bench_broker(stream: list[str], folder: Path) -> None:
    """The daemon end to end vs a bare aiokafka consumer on the same topic of a real broker."""
    kafka = _kafka()
    state = folder / "kafka"
    broker = kafka.start(state)
    try:
        bootstrap, topic = str(broker.bootstrap), "bench-logs"
        asyncio.run(_produce(bootstrap, topic, stream))
        bare = asyncio.run(_bare_consumer(bootstrap, topic, len(stream)))
        daemon = _daemon_seconds(bootstrap, topic, folder)
    finally:
        kafka.stop(state)
    n = len(stream)
    print(f"bare aiokafka consumer   {n / bare:12,.0f} records/s")
    print(f"logsig run (end to end)  {n / daemon:12,.0f} records/s  (includes process start and catalog load)")
    print(f"ratio logsig / bare      {bare / daemon:12.3f}")


def main() -> None:
    """Run both benchmarks and print their figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--skip-broker", action="store_true", help="only the offline benchmark")
    args = parser.parse_args()
    stream = generate(args.lines)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / "stream.log"
        path.write_text("\n".join(stream) + "\n", encoding="utf-8")
        print(f"stream: {len(stream):,} lines, {path.stat().st_size / 1e6:.1f} MB")
        bench_scan(path, len(stream))
        if not args.skip_broker:
            bench_broker(stream, folder)


if __name__ == "__main__":
    main()
