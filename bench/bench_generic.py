"""What the generic family and the fingerprint cost, against the catalog without them, in one run.

    .venv/bin/python bench/bench_generic.py [--lines 100000]

On the stream of ``gen_stream.py`` (real-looking benign lines, about 0.1% failures), measured in
lines per CPU second, best of five runs with the two catalogs alternating (noise only slows):

- ``Engine.match_batch`` in batches of 4,096 with the built-in catalog without the generic tier
  (the baseline), and with it;
- ``template`` + ``fingerprint_of_template`` over the lines that raised an incident (each
  incident computes them once), against ``Engine.match_batch`` over the same lines.

Prints the incidents per catalog, the rates and the ratios.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_stream import generate

from logsig.group.template import fingerprint_of_template, template
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine

BATCH = 4096
REPEAT = 5


def _cpu(work: Callable[[], object]) -> float:
    started = time.process_time()
    work()
    return time.process_time() - started


def _match_all(engine: Engine, lines: Sequence[str]) -> int:
    return sum(1 for i in range(0, len(lines), BATCH) for found in engine.match_batch(lines[i:i + BATCH]) if found)


def _templates(lines: Sequence[str]) -> None:
    for line in lines:
        fingerprint_of_template(template(line))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000)
    args = parser.parse_args()
    lines = generate(args.lines)
    signatures = load_catalog().signatures
    engines = {"without generic": Engine([s for s in signatures if s.tier != "generic"]),
               "with generic": Engine(signatures)}
    matched = {name: _match_all(engine, lines) for name, engine in engines.items()}
    best = dict.fromkeys(engines, float("inf"))
    for _ in range(REPEAT):
        for name, engine in engines.items():
            best[name] = min(best[name], _cpu(lambda e=engine: _match_all(e, lines)))
    hits = [line for line, found in zip(lines, engines["with generic"].match_batch(lines), strict=True) if found]
    fp = min(_cpu(lambda: _templates(hits)) for _ in range(REPEAT))
    hit_match = min(_cpu(lambda: _match_all(engines["with generic"], hits)) for _ in range(REPEAT))
    base = best["without generic"]
    print(f"{len(lines):,} lines, {len(signatures)} signatures "
          f"({sum(s.tier == 'generic' for s in signatures)} generic)")
    for name, seconds in best.items():
        print(f"  match_batch {name:16} {len(lines) / seconds:12,.0f} lines/CPU-s  "
              f"{base / seconds:5.2f}x of baseline  lines with a match: {matched[name]:,}")
    print(f"  template+fingerprint on the {len(hits):,} matched lines: {len(hits) / fp:,.0f} lines/CPU-s, "
          f"{fp / hit_match:.2f}x the match time of those lines")


if __name__ == "__main__":
    main()
