"""What exactly-once delivery costs: ``logsig run`` at least once vs exactly once, paired on one broker.

Both modes consume the same topic of a real local broker (``deploy/local/kafka.py``) in a fresh
consumer group each, from the moment ``/readyz`` answers 200 until the group's committed offsets
reach the end of every partition; runs alternate (at-least-once, exactly-once, at-least-once, ...)
so drift on a shared machine hits both. Two streams: the realistic one of ``bench/gen_stream.py``
(about 0.1% failure lines) and one where every line is a failure (an incident per record, the worst
case for a transaction's size). Grouping is off (one incident per matching line).

Prints records/s per mode (median of the runs) and the ratio exactly-once / at-least-once.
Usage: ``python bench/bench_exactly_once.py [--lines 50000] [--runs 3]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from bench_pipeline import _committed_all, _kafka  # noqa: E402
from gen_stream import generate  # noqa: E402

PARTITIONS = 3
FAILURE = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
           "capacity of 79.15 GiB of which 0 bytes is free. req-{}")
MODES = ("at_least_once", "exactly_once")


async def _produce(bootstrap: str, topic: str, stream: list[str]) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, PARTITIONS, 1, topic_configs={"max.message.bytes": "2097152"})])
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


async def _outputs(bootstrap: str, names: list[str]) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, 1, 1) for name in names])
    finally:
        await admin.close()


def _ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _run(bootstrap: str, topic: str, mode: str, run: int, folder: Path, port: int) -> float:
    """Seconds from /readyz 200 until every offset of ``topic`` is committed, for one ``mode``."""
    group, out = f"bench-{topic}-{mode}-{run}", f"{topic}-{mode}-{run}"
    asyncio.run(_outputs(bootstrap, [f"{out}-incidents", f"{out}-dlq"]))
    kafka = {"bootstrap_servers": bootstrap, "topics": [topic], "group_id": group, "delivery": mode,
             "output_topic": f"{out}-incidents", "dead_letter_topic": f"{out}-dlq", "group_instance_id": group}
    config = folder / f"{group}.yaml"
    config.write_text(yaml.safe_dump({"kafka": kafka, "http": {"host": "127.0.0.1", "port": port},
                                      "grouping": {"enabled": False}, "logging": {"level": "warning"}}))
    process = subprocess.Popen([sys.executable, "-m", "logsig", "run", "--config", str(config)])
    try:
        while not _ready(port):
            if process.poll() is not None:
                raise SystemExit(f"logsig run ({mode}) exited early")
            time.sleep(0.05)
        started = time.perf_counter()
        while not asyncio.run(_committed_all(bootstrap, topic, group)):
            if process.poll() is not None:
                raise SystemExit(f"logsig run ({mode}) exited early")
            time.sleep(0.1)
        return time.perf_counter() - started
    finally:
        process.terminate()
        process.wait(timeout=60)


def bench_stream(name: str, stream: list[str], bootstrap: str, folder: Path, runs: int, port: int) -> None:
    """Both modes over one stream, alternating, ``runs`` times each; prints medians and the ratio."""
    topic = f"bench-eos-{name}"
    asyncio.run(_produce(bootstrap, topic, stream))
    seconds: dict[str, list[float]] = {mode: [] for mode in MODES}
    for run in range(runs):
        for mode in MODES:
            seconds[mode].append(_run(bootstrap, topic, mode, run, folder, port))
    rates = {mode: len(stream) / statistics.median(values) for mode, values in seconds.items()}
    print(f"{name}: {len(stream):,} records, {runs} runs per mode (median)")
    for mode in MODES:
        print(f"  {mode:<14} {rates[mode]:10,.0f} records/s")
    print(f"  ratio exactly_once / at_least_once {rates['exactly_once'] / rates['at_least_once']:.3f}")


def main() -> None:
    """Start a broker, bench both streams, stop the broker."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    kafka = _kafka()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        broker = kafka.start(folder / "kafka")
        try:
            port = kafka.free_port()
            bench_stream("realistic", generate(args.lines), str(broker.bootstrap), folder, args.runs, port)
            failures = [FAILURE.format(n) for n in range(args.lines)]
            bench_stream("all-failures", failures, str(broker.bootstrap), folder, args.runs, port)
        finally:
            kafka.stop(folder / "kafka")


if __name__ == "__main__":
    main()
