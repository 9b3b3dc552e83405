"""Catalog reload at +5,000 signatures: the longest pause in ``/healthz`` answers, compile in a child process vs
in a thread vs on the loop.

A real local broker (``deploy/local/kafka.py``) holds a 3-partition topic that a producer feeds
at about 500 lines/s for the whole run. ``logsig run`` consumes it with the built-in catalog plus
5,000 generated signatures (``bench/gen_catalog.py``, files of 100 records, compile cache off so
every compile is cold). Once it is consuming, one catalog file is rewritten and the daemon gets
SIGHUP; a thread asks ``/healthz`` every 5 ms from the reload's start until the daemon logs
``catalog reloaded``. Measured: the longest interval between two answers, how long the reload
took, the longest interval over 10 s before it with no reload (the floor the shared machine's
scheduling sets), records consumed meanwhile (``logsig_records_consumed_total``) and whether the consumer
group rebalanced (``partitions revoked`` / ``partitions assigned`` logged after the first
assignment; ``kafka.session_timeout_ms`` is 10 s in both runs).

Three runs in one command: the daemon as shipped (compile in a child process, waited for by a
worker thread), the same daemon compiling in the worker thread itself (``compile_in_a_thread``
below; how reloads ran before the child process), then the baseline, the compile run inline on
the event loop (``_OnLoop`` below replaces the watcher's worker). Usage:
``python bench/bench_reload.py [--extra 5000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from bench_pipeline import _kafka  # noqa: E402
from bench_startup import write_extra  # noqa: E402
from gen_stream import generate  # noqa: E402

PARTITIONS = 3
MODES = {"process": "child process", "thread": "worker thread", "loop": "on the loop"}
TOPIC = "bench-reload"
LAUNCH = """
import sys
sys.path.insert(0, {here!r})
if {mode!r} != "process":
    import bench_reload
    bench_reload.compile_in_this_process(on_the_loop={mode!r} == "loop")
from logsig.cli import main
sys.exit(main(["run", "--config", {config!r}]))
"""


class _OnLoop:
    """An executor that runs what it is given at once, in the caller's thread (the event loop)."""

    def submit(self, fn: Any, *args: Any) -> Future[Any]:
        """Run ``fn(*args)`` now; a finished future of its result or exception."""
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args))
        except Exception as error:
            future.set_exception(error)
        return future

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        """Nothing to stop."""


def _compile_in_this_process(self: Any) -> Any:
    """The watcher's reload compiled in this process, with the collector held off (the thread design)."""
    import gc

    from logsig.daemon import reload

    enabled, interval = gc.isenabled(), sys.getswitchinterval()
    gc.disable()
    sys.setswitchinterval(reload.WORKER_SWITCH_INTERVAL_SECONDS)
    try:
        engine = self._compile()
        gc.freeze()
        return engine
    finally:
        sys.setswitchinterval(interval)
        if enabled:
            gc.enable()


def compile_in_this_process(on_the_loop: bool) -> None:
    """Make every CatalogWatcher compile in the daemon's process: in its worker thread, or (``on_the_loop``)
    on the event loop, as reloads did before the worker thread."""
    from logsig.daemon import reload

    reload.CatalogWatcher._compile_in_worker = _compile_in_this_process  # type: ignore[method-assign]
    if not on_the_loop:
        return
    original = reload.CatalogWatcher.__init__

    def init(self: reload.CatalogWatcher, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self._executor = _OnLoop()  # type: ignore[assignment]

    reload.CatalogWatcher.__init__ = init  # type: ignore[method-assign]


async def _create_topics(bootstrap: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1), NewTopic(f"{TOPIC}-incidents", 1, 1),
                                   NewTopic(f"{TOPIC}-dlq", 1, 1)])
    finally:
        await admin.close()


async def _feed(bootstrap: str, lines: list[str], stop: threading.Event) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    await producer.start()
    try:
        n = 0
        while not stop.is_set():
            for _ in range(50):
                await producer.send(TOPIC, lines[n % len(lines)].encode(), key=f"pod-{n % 16}".encode())
                n += 1
            await asyncio.sleep(0.1)
    finally:
        await producer.stop()


@dataclass
class Watch:
    """What the daemon's log said, read by a thread: lines seen, when the reload finished, rebalances."""

    lines: list[dict[str, Any]] = field(default_factory=list)
    reloaded: threading.Event = field(default_factory=threading.Event)
    consuming: threading.Event = field(default_factory=threading.Event)

    def read(self, stream: Any) -> None:
        """Parse JSON log lines until the stream ends."""
        for raw in stream:
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            self.lines.append(entry)
            if entry.get("event") == "catalog reloaded":
                self.reloaded.set()
            if entry.get("event") == "partitions assigned":
                self.consuming.set()

    def rebalances(self) -> int:
        """Revocations and assignments logged after the first assignment."""
        events = [e.get("event") for e in self.lines]
        first = events.index("partitions assigned") if "partitions assigned" in events else len(events)
        return sum(1 for e in events[first + 1:] if e in ("partitions revoked", "partitions assigned"))


def _consumed(port: int) -> float:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30).read().decode()
    return sum(float(v) for v in re.findall(r"^logsig_records_consumed_total\{[^}]*\} (\S+)$", text, re.M))


def _answers(port: int, until: threading.Event) -> list[float]:
    """Times of every ``/healthz`` answer, asked every 5 ms until ``until`` is set."""
    times: list[float] = []
    while not until.is_set():
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=60).read()
            times.append(time.perf_counter())
        except OSError:
            pass
        time.sleep(0.005)
    return times


def _longest_gap(port: int, seconds: float) -> float:
    """The longest interval between /healthz answers over ``seconds`` with no reload (the machine's floor)."""
    until = threading.Event()
    timer = threading.Timer(seconds, until.set)
    started = time.perf_counter()
    timer.start()
    points = [started, *_answers(port, until)]
    return max(b - a for a, b in itertools.pairwise(points))


def one_run(bootstrap: str, folder: Path, catalog: Path, port: int, mode: str) -> dict[str, float]:
    """Start the daemon, reload once under load, stop it; that reload's figures (``mode``: a key of MODES)."""
    group = f"bench-reload-{mode}"
    config = folder / f"{group}.yaml"
    config.write_text(
        f"kafka:\n  bootstrap_servers: '{bootstrap}'\n  topics: [{TOPIC}]\n  group_id: {group}\n"
        f"  output_topic: {TOPIC}-incidents\n  dead_letter_topic: {TOPIC}-dlq\n  session_timeout_ms: 10000\n"
        f"http:\n  host: 127.0.0.1\n  port: {port}\ncatalog:\n  paths: ['{catalog}']\n  cache_max_entries: 0\n"
        "logging:\n  level: info\n  format: json\n")
    code = LAUNCH.format(here=str(HERE), mode=mode, config=str(config))
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    watch = Watch()
    reader = threading.Thread(target=watch.read, args=(process.stdout,), daemon=True)
    reader.start()
    try:
        if not watch.consuming.wait(600):
            raise SystemExit("the daemon did not start consuming")
        idle = _longest_gap(port, 10.0)
        before = _consumed(port)
        first = catalog / "extra-000.json"
        records = json.loads(first.read_text(encoding="utf-8"))
        first.write_text(json.dumps(records[:-1]), encoding="utf-8")  # a changed catalog: compiled again
        answers: list[float] = []
        poller = threading.Thread(target=lambda: answers.extend(_answers(port, watch.reloaded)))
        started = time.perf_counter()
        poller.start()
        process.send_signal(signal.SIGHUP)
        if not watch.reloaded.wait(900):
            raise SystemExit("the reload did not finish")
        took = time.perf_counter() - started
        poller.join()
        during = _consumed(port) - before
        time.sleep(2)
        points = [started, *answers]
        gap = max(b - a for a, b in itertools.pairwise(points))
        return {"gap": gap, "idle": idle, "took": took, "consumed": during, "rebalances": watch.rebalances(),
                "answers": len(answers)}
    finally:
        process.terminate()
        process.wait(timeout=120)


def main() -> None:
    """The three runs against one broker; prints their figures and the ratios of the longest gaps."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extra", type=int, default=5000)
    options = parser.parse_args()
    kafka = _kafka()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        state = folder / "kafka"
        broker = kafka.start(state)
        stop = threading.Event()
        try:
            bootstrap = str(broker.bootstrap)
            asyncio.run(_create_topics(bootstrap))
            feeder = threading.Thread(target=lambda: asyncio.run(_feed(bootstrap, generate(20_000), stop)))
            feeder.start()
            results = {}
            for mode, name in MODES.items():
                catalog = write_extra(folder / f"catalog-{mode}", options.extra)
                results[name] = one_run(bootstrap, folder, catalog, kafka.free_port(), mode)
            stop.set()
            feeder.join()
        finally:
            kafka.stop(state)
    report(results, options.extra)


def report(results: dict[str, dict[str, float]], extra: int) -> None:
    """One line per run, then the ratios of the longest /healthz gaps."""
    print(f"catalog reload, built-in + {extra:,} signatures, feed ~500 lines/s")
    print(f"  {'compile':<15}{'longest /healthz gap ms':>24}{'same, no reload ms':>20}{'reload s':>10}"
          f"{'records consumed':>18}{'rebalances':>12}")
    for name, r in results.items():
        print(f"  {name:<15}{r['gap'] * 1000:>24.0f}{r['idle'] * 1000:>20.0f}{r['took']:>10.1f}"
              f"{r['consumed']:>18,.0f}{r['rebalances']:>12.0f}")
    child, thread, loop = (results[name] for name in MODES.values())
    print(f"longest gap, child process / worker thread: {child['gap'] / thread['gap']:.3f}, "
          f"child process / on the loop: {child['gap'] / loop['gap']:.3f}  (goal: child process < 100 ms)")


if __name__ == "__main__":
    main()
