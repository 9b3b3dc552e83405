"""Benchmark of the matching engine; prints lines/s and ratios (see bench/README.md).

One command, one process for the in-process part::

    .venv/bin/python bench/bench_engine.py [--lines 200000] [--sizes 10,100,1000,5000]

For each catalog size (the real catalog plus generated variants, ``gen_catalog.py``) on the same
generated stream (``gen_stream.py``):

- logsig's ``Engine.match_batch`` over the stream in batches of 4,096 lines (as ``logsig scan``);
- the naive loop: every compiled Python ``re`` pattern searched on every line (on the first
  ``max(1000, 4e6 / size)`` lines, since at 5,000 patterns the whole stream would take hours),
  also used to check that the engine gives the same answers on those lines;
- the floor: a bare loop that only touches each line;
- compile time (cold and cached, the reload path), database size and memory growth.

Then, unless ``--no-processes``: ``logsig scan FILE --catalog PATH --no-builtin`` and Google's
mtail (``mtail --one_shot``, one counter per pattern) as whole processes on the same file.
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable, Sequence

from engine_processes import run_processes
from gen_catalog import catalog
from gen_stream import generate

from logsig.matchers.compiled import clear_cache
from logsig.matchers.engine import Engine
from logsig.matchers.signature import Signature

BATCH = 4096
REPEAT = 3
"""Timed runs per figure; the best is kept (the machine is shared, so noise only slows)."""
NAIVE_SEARCHES = 4_000_000
"""The naive loop runs on ``max(1000, NAIVE_SEARCHES // size)`` lines."""


def _rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * 4096


def _rate(lines: int, seconds: float) -> float:
    return lines / seconds if seconds > 0 else float("inf")


def _timed(run: Callable[[], object]) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def engine_rate(engine: Engine, stream: Sequence[str]) -> float:
    """Lines/s of ``match_batch`` over ``stream`` in batches of :data:`BATCH` (best of 3).

    Each batch's result is dropped before the next, as the pipeline does.
    """
    def run() -> None:
        for start in range(0, len(stream), BATCH):
            engine.match_batch(stream[start:start + BATCH])
    return _rate(len(stream), min(_timed(run) for _ in range(REPEAT)))


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
    """Lines/s of a loop that only touches each line."""
    def touch() -> int:
        count = 0
        for line in stream:
            if line:
                count += 1
        return count
    return _rate(len(stream), min(_timed(touch) for _ in range(REPEAT)))


def measure(sigs: list[Signature], stream: Sequence[str]) -> dict[str, float]:
    """Every in-process figure for one catalog."""
    clear_cache()
    rss = _rss_bytes()
    compile_s = _timed(lambda: Engine(sigs))
    grown = _rss_bytes() - rss
    engine = Engine(sigs)
    reload_s = _timed(lambda: Engine(sigs))
    rate = engine_rate(engine, stream)
    patterns = [re.compile(sig.regex) for sig in sigs]
    sample = stream[:max(1000, NAIVE_SEARCHES // len(sigs))]
    started = time.perf_counter()
    expected = naive(patterns, sample)
    naive_rate = _rate(len(sample), time.perf_counter() - started)
    position = {sig.id: i for i, sig in enumerate(sigs)}
    got = [[(position[m.signature.id], (m.span, dict(m.captures))) for m in row]
           for row in engine.match_batch(sample)]
    return {"engine": rate, "naive": naive_rate, "compile_s": compile_s, "reload_s": reload_s,
            "db_bytes": engine.compiled.prefilter.size_bytes(), "rss_growth": grown,
            "always": len(engine.compiled.prefilter.always), "same": float(got == expected),
            "matched_lines": sum(1 for row in got if row)}


def report(results: dict[int, dict[str, float]], floor: float) -> None:
    """Print the table and the ratios."""
    print(f"floor (touch each line): {floor:,.0f} lines/s")
    print(f"{'sigs':>6} {'engine l/s':>12} {'naive l/s':>10} {'x naive':>8} {'/floor':>7} "
          f"{'compile s':>9} {'reload s':>9} {'db KiB':>8} {'rss MiB':>8} {'same':>5}")
    for size, r in results.items():
        print(f"{size:>6} {r['engine']:>12,.0f} {r['naive']:>10,.0f} "
              f"{r['engine'] / r['naive']:>8,.1f} {r['engine'] / floor:>7.3f} "
              f"{r['compile_s']:>9.2f} {r['reload_s']:>9.4f} {r['db_bytes'] / 1024:>8,.0f} "
              f"{r['rss_growth'] / 2**20:>8.1f} {'yes' if r['same'] else 'NO':>5}")
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
    parser.add_argument("--no-processes", action="store_true")
    parser.add_argument("--process-sizes", default="10,100,1000,5000")
    parser.add_argument("--timeout", type=float, default=900.0, help="per process run (s)")
    args = parser.parse_args()
    stream = generate(args.lines)
    sizes = [int(s) for s in args.sizes.split(",")]
    floor = floor_rate(stream)
    results = {}
    for size in sizes:
        results[size] = measure(catalog(size), stream)
        print(f"... {size} signatures measured", flush=True)
    report(results, floor)
    if not args.no_processes:
        run_processes(stream, [int(s) for s in args.process_sizes.split(",")], args.timeout)


if __name__ == "__main__":
    main()
