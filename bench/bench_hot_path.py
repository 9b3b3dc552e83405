"""The batch-first hot path against its baselines, paired in one run; prints every figure and ratio.

1. ``scan``: lines per CPU second of the pipeline over the 200,000-line stream (``gen_stream.py``)
   with the built-in catalog + 1,000 generated signatures (``gen_catalog.py``): the batch-first
   pipeline (``line_batches`` -> ``Pipeline.process_batch``, as ``logsig scan`` runs it) against the
   record-by-record pipeline it replaced (``line_chunks`` -> ``tests/unit/pipeline/reference.py``),
   same engine, both after ``gc.freeze``, interleaved, best of ``--repeat``; checks both wrote the
   same incidents.
2. ``run``: ``logsig run`` end to end through a real local broker (``deploy/local/kafka.py``),
   same catalog, against a bare aiokafka consumer reading the same topic, for plain lines and for
   the same lines in Fluent Bit JSON envelopes with Kubernetes metadata; 3 partitions; the topic
   holds the stream ``--copies`` times (2). Steady state: records/s while the records from 10% to
   90% of the topic are read (the daemon's ``/status`` totals polled at 10 Hz, marks taken only
   once it says ready, i.e. its phase-two regexes are compiled; the bare consumer's own count), so
   start-up and fixed delays at the end are left out: commits wait for held multi-line groups
   (``decode.multiline.idle_timeout_seconds``, 2 s) and for incident groups' next report
   (``grouping.update_interval_seconds``, 10 s). The
   daemon reads at most 8 unacknowledged steps ahead of its acknowledgements. Also printed: records/s
   from the daemon's first commit to the commit of the last record (polled from the broker),
   delays included, against the bare consumer's whole run.
3. ``latency``: lines produced at ``--rate`` lines/s (1% failure lines, new failures appearing
   over the whole run) once ``/readyz`` answers 200, while ``logsig run`` consumes: p50/p99 of
   record timestamp to incident, from the incidents' own timestamps (the producer's send time; all
   events, the events opening a group, and group updates, which wait for the group's next report by
   design) and from ``logsig_processing_latency_seconds`` (acknowledged; status ``opened``, and
   every status), in ms.
4. ``rss``: peak and sampled RSS of ``logsig scan`` (same catalog) over ``--soak-lines`` lines
   (the stream repeated on stdin; ``--soak-lines 10000000`` for the long soak).

Usage: ``python bench/bench_hot_path.py [--only scan,run,latency,rss] [--lines 200000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaError

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT)]
from bench_pipeline import _kafka  # noqa: E402
from gen_catalog import catalog  # noqa: E402
from gen_stream import generate  # noqa: E402

from logsig.matchers.catalog.loader import load_catalog  # noqa: E402
from logsig.telemetry import LATENCY_STATUSES  # noqa: E402

PARTITIONS = 3
EXTRA_SIGNATURES = 1000


def write_catalog(folder: Path) -> Path:
    """The built-in catalog plus 1,000 generated signatures, as one JSON file (loaded without the built-in)."""
    size = len(load_catalog([], builtin=True).signatures) + EXTRA_SIGNATURES
    path = folder / "catalog.json"
    path.write_text(json.dumps([sig.to_record() for sig in catalog(size)]), encoding="utf-8")
    return path


# --- 1. scan ------------------------------------------------------------------------------------------

def _scan_once(kind: str, engine: Any, path: Path) -> tuple[float, str, int]:
    """CPU seconds, digest of the incidents and count, for one pass of ``kind`` over ``path``."""
    from logsig.decode.settings import DecodeSettings
    from logsig.pipeline import Pipeline
    from logsig.sources.lines import line_batches, line_chunks
    from tests.unit.pipeline.reference import ReferencePipeline

    digest, count = hashlib.sha256(), 0
    started = time.process_time()
    with open(path, "rb") as stream:
        if kind == "batch-first":
            pipeline = Pipeline(engine, DecodeSettings())
            steps: Iterator[Any] = (pipeline.process_batch(b, 0.0) for b in line_batches(stream, "stream.log"))
        else:
            pipeline = ReferencePipeline(engine, DecodeSettings())
            steps = (pipeline.process(c, 0.0) for c in line_chunks(stream, "stream.log", 4096))
        for step in [*steps, pipeline.flush_all()]:
            for d in step.detections:
                digest.update(d.incident.signature.id.encode() + repr(d.event.origin).encode())
                count += 1
    return time.process_time() - started, digest.hexdigest(), count


def bench_scan(stream: Path, catalog_path: Path, repeat: int) -> None:
    """Lines per CPU second, batch-first against record by record, interleaved, best of ``repeat``."""
    from logsig.daemon.reload import settle_heap
    from logsig.matchers.engine.engine import Engine

    engine = Engine(load_catalog([catalog_path], builtin=False).signatures)
    settle_heap()
    lines = stream.read_bytes().count(b"\n")
    best: dict[str, float] = {}
    outputs: dict[str, tuple[str, int]] = {}
    for _ in range(repeat):
        for kind in ("record-by-record", "batch-first"):
            seconds, digest, count = _scan_once(kind, engine, stream)
            best[kind] = min(best.get(kind, seconds), seconds)
            outputs[kind] = (digest, count)
            gc.collect()
    old, new = lines / best["record-by-record"], lines / best["batch-first"]
    print(f"scan: {lines:,} lines, {len(engine.signatures):,} signatures, best of {repeat}")
    print(f"  record-by-record pipeline  {old:12,.0f} lines/CPU-s")
    print(f"  batch-first pipeline       {new:12,.0f} lines/CPU-s")
    print(f"  ratio                      {new / old:12.2f}x   (goal >= 8)")
    same = outputs["record-by-record"] == outputs["batch-first"]
    print(f"  same incidents             {'yes' if same else 'NO'} ({outputs['batch-first'][1]} incidents)")


# --- 2. run -----------------------------------------------------------------------------------------

def fluent_bit(line: str, n: int) -> bytes:
    """``line`` as Fluent Bit's ``out_kafka`` ``format json`` writes a CRI container line."""
    pod = f"vllm-{n % 16}"
    return json.dumps({"@timestamp": 1746361380.123 + n / 1000, "time": "2025-05-04T12:23:00.123456789Z",
                       "stream": "stdout", "_p": "F", "log": line,
                       "kubernetes": {"pod_name": pod, "namespace_name": "inference", "container_name": "vllm",
                                      "host": "gpu-node-1", "labels": {"app": "vllm"},
                                      "container_image": "vllm/vllm-openai:v0.8.5"}}).encode()


async def _create(bootstrap: str, topic: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, PARTITIONS, 1, topic_configs={"max.message.bytes": "2097152"}),
                                   NewTopic(f"{topic}-incidents", 1, 1), NewTopic(f"{topic}-dlq", 1, 1)])
    finally:
        await admin.close()


async def _produce(bootstrap: str, topic: str, values: list[bytes]) -> None:
    await _create(bootstrap, topic)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=20, max_batch_size=262144,
                                max_request_size=2097152)
    await producer.start()
    try:
        for n, value in enumerate(values):
            await producer.send(topic, value, key=f"pod-{n % 16}".encode())
        await producer.flush()
    finally:
        await producer.stop()


STEADY = (0.1, 0.9)
"""The stretch of the topic (fractions of its records) over which the steady-state rates are taken."""


class Progress:
    """(time, records) samples of a reader; :meth:`rate` is records/s between the first samples at or
    past ``STEADY``'s two fractions of ``total`` taken once the reader is ready."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.marks: list[tuple[float, int]] = []

    def add(self, records: int, ready: bool = True) -> bool:
        """Note ``records`` read by now (``ready``: the reader is past its start-up); True once both marks
        are passed. No mark is taken before the reader is ready."""
        now = time.perf_counter()
        for fraction in STEADY[len(self.marks):]:
            if ready and records >= fraction * self.total:
                self.marks.append((now, records))
        return len(self.marks) == len(STEADY)

    def rate(self) -> float:
        (began, first), (ended, last) = self.marks
        return (last - first) / (ended - began)


async def _bare(bootstrap: str, topic: str, total: int) -> tuple[float, float]:
    """Records/s of a bare consumer: steady state (:class:`Progress`), and from its first non-empty
    batch to its last record."""
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                group_id=f"bare-{topic}", enable_auto_commit=False, max_poll_records=1000)
    await consumer.start()
    try:
        seen, first, started = 0, 0, 0.0
        progress = Progress(total)
        while seen < total:
            batches = await consumer.getmany(timeout_ms=500, max_records=1000)
            got = sum(len(b) for b in batches.values())
            if got and not seen:
                first, started = got, time.perf_counter()
            seen += got
            progress.add(seen)
        return progress.rate(), (total - first) / (time.perf_counter() - started)
    finally:
        await consumer.stop()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _metric(port: int, name: str, **labels: str) -> float:
    """Sum of the samples of ``name`` (with ``labels``) scraped from the daemon's /metrics."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and all(f'{k}="{v}"' in line for k, v in labels.items()):
            head, _, value = line.rpartition(" ")
            if head.split("{")[0] == name:
                total += float(value)
    return total


def _start_daemon(bootstrap: str, topic: str, folder: Path, catalog_path: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    config = folder / f"{topic}.yaml"
    config.write_text(f"kafka:\n  bootstrap_servers: '{bootstrap}'\n  topics: [{topic}]\n  group_id: logsig-{topic}\n"
                      f"  output_topic: {topic}-incidents\n  dead_letter_topic: {topic}-dlq\n"
                      f"http:\n  host: 127.0.0.1\n  port: {port}\nlogging:\n  level: warning\n"
                      f"catalog:\n  builtin: false\n  paths: ['{catalog_path}']\n")
    process = subprocess.Popen([sys.executable, "-m", "logsig", "run", "--config", str(config)])
    return process, port


def _wait(check: Callable[[], bool], process: subprocess.Popen[bytes], interval: float = 0.25) -> float:
    while True:
        if process.poll() is not None:
            raise SystemExit("logsig run exited early")
        try:
            if check():
                return time.perf_counter()
        except OSError:
            pass
        time.sleep(interval)


async def _committed(admin: AIOKafkaAdminClient, group: str) -> int:
    """Records committed by ``group`` over all partitions (the offsets, from 0)."""
    done = await admin.list_consumer_group_offsets(group)
    return sum(max(0, meta.offset) for meta in done.values())


async def _watch_commits(bootstrap: str, group: str, total: int, process: subprocess.Popen[bytes]) -> float:
    """Records/s between the first commit seen and the one covering ``total`` records (polled at 20 Hz
    from the broker, so the daemon is not disturbed)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        first, began = 0, 0.0
        while True:
            if process.poll() is not None:
                raise SystemExit("logsig run exited early")
            try:
                done = await _committed(admin, group)
            except KafkaError:  # the group's coordinator is not known yet
                await asyncio.sleep(0.2)
                continue
            now = time.perf_counter()
            if done and not first:
                first, began = done, now
            if done >= total:
                return (total - first) / (now - began)
            await asyncio.sleep(0.05)
    finally:
        await admin.close()


def _watch_reads(port: int, progress: Progress, process: subprocess.Popen[bytes]) -> None:
    """Feed ``progress`` with the records the daemon read (``/status`` totals, 10 Hz) until both marks
    pass; marks only once ``/status`` says ready (partitions assigned, phase two compiled)."""
    while process.poll() is None:
        try:
            status = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=5).read())
        except OSError:
            status = {"totals": {"records": 0}, "ready": False}
        if progress.add(int(status["totals"]["records"]), ready=bool(status["ready"])):
            return
        time.sleep(0.1)


def _daemon_rate(bootstrap: str, topic: str, total: int, folder: Path, catalog_path: Path) -> tuple[float, float]:
    """Records/s of ``logsig run``: steady state (:class:`Progress`), and from its first commit to the
    commit of the last record."""
    process, port = _start_daemon(bootstrap, topic, folder, catalog_path)
    progress = Progress(total)
    reads = threading.Thread(target=_watch_reads, args=(port, progress, process), daemon=True)
    reads.start()
    try:
        committed = asyncio.run(_watch_commits(bootstrap, f"logsig-{topic}", total, process))
        reads.join(timeout=60)
        return progress.rate(), committed
    finally:
        process.terminate()
        process.wait(timeout=60)


def bench_run(stream: list[str], folder: Path, catalog_path: Path, copies: int = 2) -> None:
    """logsig run against a bare consumer, plain lines and Fluent Bit JSON, on one broker; the topic
    holds the stream ``copies`` times, so the daemon's start-up (its phase-two compile between
    batches) ends well before the steady-state window closes."""
    stream = stream * copies
    kafka = _kafka()
    state = folder / "kafka"
    broker = kafka.start(state)
    try:
        bootstrap = str(broker.bootstrap)
        low, high = (f"{f:.0%}" for f in STEADY)
        print(f"run: {len(stream):,} records, {PARTITIONS} partitions; steady state: records {low} to {high} "
              "of the topic")
        for name, values, goal in (("plain lines", [line.encode() for line in stream], 0.50),
                                   ("Fluent Bit JSON", [fluent_bit(line, n) for n, line in enumerate(stream)], 0.35)):
            topic = "bench-" + name.split()[0].lower()
            asyncio.run(_produce(bootstrap, topic, values))
            bare, bare_whole = asyncio.run(_bare(bootstrap, topic, len(values)))
            daemon, committed = _daemon_rate(bootstrap, topic, len(values), folder, catalog_path)
            print(f"  {name:16s} bare aiokafka {bare:10,.0f} records/s   logsig run {daemon:10,.0f} records/s   "
                  f"ratio {daemon / bare:5.2f}   (goal >= {goal:.2f})")
            print(f"  {'':16s} to the last commit: bare {bare_whole:10,.0f} records/s   logsig run {committed:10,.0f} "
                  f"records/s   ratio {committed / bare_whole:5.2f}")
    finally:
        kafka.stop(state)


# --- 3. latency ---------------------------------------------------------------------------------------

async def _paced(bootstrap: str, topic: str, values: list[bytes], rate: float) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=1)
    await producer.start()
    try:
        started = time.perf_counter()
        for n, value in enumerate(values):
            delay = started + n / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            await producer.send(topic, value, key=f"pod-{n % 16}".encode())
        await producer.flush()
    finally:
        await producer.stop()


async def _incident_latencies(bootstrap: str, topic: str, count: int) -> list[tuple[str | None, float]]:
    """Each incident's status and the milliseconds from its source record's timestamp to the incident's
    (the daemon's send time)."""
    consumer = AIOKafkaConsumer(f"{topic}-incidents", bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                enable_auto_commit=False)
    await consumer.start()
    out: list[tuple[str | None, float]] = []
    try:
        deadline = time.monotonic() + 60
        while len(out) < count and time.monotonic() < deadline:
            for messages in (await consumer.getmany(timeout_ms=500)).values():
                for m in messages:
                    incident = json.loads(m.value)
                    logged = incident["source"].get("timestamp")
                    if logged:
                        from datetime import datetime
                        out.append((incident.get("status"),
                                    m.timestamp - datetime.fromisoformat(logged).timestamp() * 1000))
        return out
    finally:
        await consumer.stop()


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _histogram_quantile(port: int, q: float, statuses: tuple[str, ...]) -> float:
    """``histogram_quantile`` of logsig_processing_latency_seconds summed over ``statuses``, in ms
    (linear within a bucket)."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    counts: dict[float, float] = {}
    for line in text.splitlines():
        if line.startswith("logsig_processing_latency_seconds_bucket") and any(
                f'status="{s}"' in line for s in statuses):
            le = line.split('le="')[1].split('"')[0]
            bound = float("inf") if le == "+Inf" else float(le)
            counts[bound] = counts.get(bound, 0.0) + float(line.rsplit(" ", 1)[1])
    buckets = sorted(counts.items())
    total = buckets[-1][1]
    rank, lower, below = q * total, 0.0, 0.0
    for upper, count in buckets:
        if count >= rank:
            return 1000 * (lower + (upper - lower) * (rank - below) / max(count - below, 1e-9))
        lower, below = upper, count
    return float("inf")


def _failure(failures: list[str], slot: int, slots: int) -> str:
    """The failure line of failure slot ``slot`` of ``slots``: new failures keep appearing over the
    whole run (as they do in production, so groups open throughout it, not only in its first
    half second), while those seen before keep recurring."""
    seen = 1 + slot * len(failures) // slots
    return failures[(slot * 7) % seen]


def bench_latency(stream: list[str], folder: Path, catalog_path: Path, rate: float, seconds: float) -> None:
    """p50/p99 record-to-incident latency at ``rate`` lines/s through the broker."""
    failures = [line for line in stream if "Error" in line or "error" in line][:50] or stream[:50]
    count = int(rate * seconds)
    values = [(_failure(failures, n // 100, count // 100) if n % 100 == 0 else stream[n % len(stream)]).encode()
              for n in range(count)]
    kafka = _kafka()
    state = folder / "kafka-latency"
    broker = kafka.start(state)
    try:
        bootstrap, topic = str(broker.bootstrap), "bench-latency"
        asyncio.run(_create(bootstrap, topic))
        process, port = _start_daemon(bootstrap, topic, folder, catalog_path)
        try:
            _wait(lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5).status == 200,
                  process)
            asyncio.run(_paced(bootstrap, topic, values, rate))
            expected = _wait(lambda: _metric(port, "logsig_records_consumed_total") >= count, process)
            del expected
            incidents = int(_metric(port, "logsig_incidents_emitted_total", sink="kafka"))
            sent = asyncio.run(_incident_latencies(bootstrap, topic, incidents))
            first_ack = [_histogram_quantile(port, q, ("opened", "line")) for q in (0.5, 0.99)]
            all_ack = [_histogram_quantile(port, q, LATENCY_STATUSES) for q in (0.5, 0.99)]
        finally:
            process.terminate()
            process.wait(timeout=60)
    finally:
        kafka.stop(state)
    first = [ms for status, ms in sent if status in (None, "opened")]
    later = [ms for status, ms in sent if status not in (None, "opened")]
    print(f"latency: {count:,} lines at {rate:,.0f} lines/s, {len(sent):,} incidents "
          f"({len(first):,} opening a group, {len(later):,} updates)")
    print(f"  record timestamp -> incident sent          p50 {_quantile([ms for _, ms in sent], 0.5):7.1f} ms   "
          f"p99 {_quantile([ms for _, ms in sent], 0.99):7.1f} ms   (all events)")
    print(f"  record timestamp -> group opened, sent     p50 {_quantile(first, 0.5):7.1f} ms   "
          f"p99 {_quantile(first, 0.99):7.1f} ms")
    if later:
        print(f"  record timestamp -> group updated, sent    p50 {_quantile(later, 0.5):7.1f} ms   "
              f"p99 {_quantile(later, 0.99):7.1f} ms   (an update reports the group's latest occurrence, at most "
              "grouping.update_interval_seconds after its previous report)")
    print(f"  record timestamp -> group opened, acked    p50 {first_ack[0]:7.1f} ms   p99 {first_ack[1]:7.1f} ms   "
          "(histogram, status opened; goal p99 < 200 ms)")
    print(f"  record timestamp -> any event acked        p50 {all_ack[0]:7.1f} ms   p99 {all_ack[1]:7.1f} ms   "
          "(histogram, every status)")


# --- 4. rss -------------------------------------------------------------------------------------------

def bench_rss(stream: Path, catalog_path: Path, lines: int) -> None:
    """Peak RSS of ``logsig scan`` over ``lines`` lines (the stream repeated on stdin), sampled as it goes."""
    per = stream.read_bytes().count(b"\n")
    repeats = max(1, lines // per)
    process = subprocess.Popen([sys.executable, "-m", "logsig", "scan", "--no-builtin", "--catalog",
                                str(catalog_path), "-"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    samples: list[tuple[int, int]] = []
    fed = [0]

    def feed() -> None:
        assert process.stdin is not None
        data = stream.read_bytes()
        for _ in range(repeats):
            process.stdin.write(data)
            fed[0] += per
        process.stdin.close()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    peak = 0
    while process.poll() is None:
        status = Path(f"/proc/{process.pid}/status")
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        except OSError:
            break
        rss = int(fields.get("VmRSS", "0 kB").split()[0]) // 1024
        peak = max(peak, int(fields.get("VmHWM", "0 kB").split()[0]) // 1024)
        samples.append((fed[0], rss))
        time.sleep(0.5)
    writer.join()
    marks = [samples[int(f * (len(samples) - 1))] for f in (0.1, 0.25, 0.5, 0.75, 1.0)] if samples else []
    print(f"rss: logsig scan, {repeats * per:,} lines, {EXTRA_SIGNATURES:,} extra signatures")
    print("  RSS while running (lines fed, MiB): " + ", ".join(f"{n:,}: {m}" for n, m in marks))
    print(f"  peak RSS (VmHWM)                   {peak} MiB   (goal < 250 MiB, flat)")


def main() -> None:
    """Run the chosen benchmarks and print their figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="scan,run,latency,rss")
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rate", type=float, default=10_000)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--soak-lines", type=int, default=2_000_000)
    parser.add_argument("--copies", type=int, default=2, help="run: the stream this many times in the topic")
    args = parser.parse_args()
    only = set(args.only.split(","))
    lines = generate(args.lines)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        stream = folder / "stream.log"
        stream.write_text("\n".join(lines) + "\n", encoding="utf-8")
        catalog_path = write_catalog(folder)
        if "scan" in only:
            bench_scan(stream, catalog_path, args.repeat)
        if "run" in only:
            bench_run(lines, folder, catalog_path, args.copies)
        if "latency" in only:
            bench_latency(lines, folder, catalog_path, args.rate, args.seconds)
        if "rss" in only:
            bench_rss(stream, catalog_path, args.soak_lines)


if __name__ == "__main__":
    main()
