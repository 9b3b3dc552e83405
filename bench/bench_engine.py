"""Benchmark of the matching engine; prints lines/s and ratios (see bench/README.md).

One command, one process for the in-process part::

    .venv/bin/python bench/bench_engine.py [--lines 200000] [--sizes 10,100,1000,5000]

For each catalog size (the real catalog plus generated variants, ``gen_catalog.py``) on the same
generated stream (``gen_stream.py``):

- logsig's ``Engine.match_batch`` over the stream in batches of 4,096 lines (as ``logsig scan``),
  and its phase one alone;
- the naive loop: every compiled Python ``re`` pattern searched on every line (on the first
  ``max(1000, 4e6 / size)`` lines, since at 5,000 patterns the whole stream would take hours),
  also used to check that the engine gives the same answers on those lines;
- the floor: a bare loop that only touches each line;
- compile time (cold and cached, the reload path), database size and memory growth.

In-process rates are lines per CPU second of this process, best of 5 runs interleaved across
sizes, since the machine may be shared; single-threaded, they equal wall-clock rates on an idle
machine. ``scan l/s`` is phase one alone, the part whose cost grows with the catalog.

Then, unless ``--no-processes``: ``logsig scan FILE --catalog PATH --no-builtin`` and Google's
mtail (``mtail --one_shot``, one counter per pattern) as whole processes on the same file, the
first ``--process-lines`` lines of the stream (mtail tries every pattern on every line: at
5,000 patterns the whole stream would take it hours).
"""

from __future__ import annotations

import argparse
import gc
import re
import time
from collections.abc import Callable, Sequence

from engine_processes import run_processes
from gen_catalog import catalog
from gen_stream import generate

from logsig.matchers.engine.compiled import clear_cache
from logsig.matchers.engine.engine import Engine
from logsig.matchers.signature import Signature

BATCH = 4096
REPEAT = 5
"""Timed runs per figure; the best is kept (the machine is shared, so noise only slows)."""
NAIVE_SEARCHES = 4_000_000
"""The naive loop runs on ``max(1000, NAIVE_SEARCHES // size)`` lines."""


def _rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * 4096


def _rate(lines: int, seconds: float) -> float:
    return lines / seconds if seconds > 0 else float("inf")


def _timed(run: Callable[[], object]) -> float:
    """CPU seconds of ``run`` (the machine is shared; wall time would count other processes)."""
    started = time.process_time()
    run()
    return time.process_time() - started


def engine_rate(engine: Engine, stream: Sequence[str]) -> float:
    """Lines/s of ``match_batch`` over ``stream`` in batches of :data:`BATCH` (one run).

    Each batch's result is dropped before the next, as the pipeline does.
    """
    def run() -> None:
        for start in range(0, len(stream), BATCH):
            engine.match_batch(stream[start:start + BATCH])
    return _rate(len(stream), _timed(run))


def scan_rate(engine: Engine, encoded: Sequence[bytes]) -> float:
    """Lines/s of phase one alone (the Vectorscan scan of joined batches), one run."""
    prefilter, scratch = engine.compiled.prefilter, engine.compiled.prefilter.scratch()
    def run() -> None:
        for start in range(0, len(encoded), BATCH):
            prefilter.scan(encoded[start:start + BATCH], scratch)
    return _rate(len(encoded), _timed(run))


def naive(patterns: list[re.Pattern[str]], lines: Sequence[str]) -> list[list[tuple[int, object]]]:
    """Every ``(pattern index, (span, groupdict))`` per line, by searching each pattern."""
    out = []
    for line in lines:
        found = []
        for index, pattern in enumerate(patterns):
            hit = pattern.search(line)
            if hit is not None:
                found.append((index, (hit.span(), hit.groupdict())))
        out.append(found)
    return out


def floor_rate(stream: Sequence[str]) -> float:
    """Lines/s of a loop that only touches each line (one run)."""
    def touch() -> int:
        count = 0
        for line in stream:
            if line:
                count += 1
        return count
    return _rate(len(stream), _timed(touch))


def measure(sigs: list[Signature], stream: Sequence[str]) -> tuple[Engine, dict[str, float]]:
    """The engine for ``sigs`` and its compile, memory, naive-loop and same-answers figures."""
    clear_cache()
    rss = _rss_bytes()
    compile_s = _timed(lambda: Engine(sigs))
    grown = _rss_bytes() - rss
    engine = Engine(sigs)
    reload_s = _timed(lambda: Engine(sigs))
    patterns = [re.compile(sig.regex) for sig in sigs]
    sample = stream[:max(1000, NAIVE_SEARCHES // len(sigs))]
    started = time.process_time()
    expected = naive(patterns, sample)
    naive_rate = _rate(len(sample), time.process_time() - started)
    position = {sig.id: i for i, sig in enumerate(sigs)}
    got = [[(position[m.signature.id], (m.span, dict(m.captures))) for m in row]
           for row in engine.match_batch(sample)]
    return engine, {"naive": naive_rate, "compile_s": compile_s, "reload_s": reload_s,
                    "db_bytes": engine.compiled.prefilter.size_bytes(), "rss_growth": grown,
                    "same": float(got == expected)}


def rates(engines: dict[int, Engine], stream: Sequence[str]) -> tuple[float, dict[int, dict[str, float]]]:
    """Best of :data:`REPEAT` interleaved runs: the floor, and per size the engine and scan rates.

    Interleaving spreads the machine's noise over every size alike.
    """
    encoded = [line.encode() for line in stream]
    floor, out = 0.0, {size: {"engine": 0.0, "scan": 0.0} for size in engines}
    for _ in range(REPEAT):
        floor = max(floor, floor_rate(stream))
        for size, engine in engines.items():
            out[size]["engine"] = max(out[size]["engine"], engine_rate(engine, stream))
            out[size]["scan"] = max(out[size]["scan"], scan_rate(engine, encoded))
    return floor, out


def report(results: dict[int, dict[str, float]], floor: float) -> None:
    """Print the table and the ratios."""
    print(f"floor (touch each line): {floor:,.0f} lines/s")
    print(f"{'sigs':>6} {'engine l/s':>11} {'scan l/s':>10} {'naive l/s':>9} {'x naive':>8} "
          f"{'/floor':>7} {'compile s':>9} {'reload s':>8} {'db KiB':>7} {'rss MiB':>7} {'same':>4}")
    for size, r in results.items():
        print(f"{size:>6} {r['engine']:>11,.0f} {r['scan']:>10,.0f} {r['naive']:>9,.0f} "
              f"{r['engine'] / r['naive']:>8,.1f} {r['engine'] / floor:>7.3f} "
              f"{r['compile_s']:>9.2f} {r['reload_s']:>8.4f} {r['db_bytes'] / 1024:>7,.0f} "
              f"{r['rss_growth'] / 2**20:>7.1f} {'yes' if r['same'] else 'NO':>4}")
    sizes = sorted(results)
    if len(sizes) > 1:
        low, high = sizes[0], sizes[-1]
        ratio = results[high]["engine"] / results[low]["engine"]
        print(f"engine at {high} vs at {low} signatures: {ratio:.2f}")


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--sizes", default="10,100,1000,5000")
    parser.add_argument("--gc-freeze", action="store_true",
                        help="gc.freeze() once the catalogs are loaded, as a daemon may do")
    parser.add_argument("--no-processes", action="store_true")
    parser.add_argument("--process-sizes", default="10,100,1000,5000")
    parser.add_argument("--process-lines", type=int, default=20_000,
                        help="lines of the stream (its start) given to logsig scan and mtail")
    parser.add_argument("--timeout", type=float, default=900.0, help="per process run (s)")
    args = parser.parse_args()
    stream = generate(args.lines)
    engines, results = {}, {}
    for size in (int(s) for s in args.sizes.split(",")):
        engines[size], results[size] = measure(catalog(size), stream)
        print(f"... {size} signatures compiled and checked", flush=True)
    if args.gc_freeze:
        gc.collect()
        gc.freeze()
    floor, measured = rates(engines, stream)
    for size, figures in measured.items():
        results[size].update(figures)
    report(results, floor)
    if not args.no_processes:
        sizes = [int(s) for s in args.process_sizes.split(",")]
        run_processes(stream[:args.process_lines], sizes, args.timeout)


if __name__ == "__main__":
    main()
