"""Where the batch-first pipeline's CPU time goes: microseconds per record of each stage, as ``logsig scan`` runs it.

The stream of ``gen_stream.py`` (200,000 lines), as plain lines and as Fluent Bit JSON records
(``bench_hot_path.fluent_bit``), through ``line_batches`` -> ``Pipeline.process_batch`` with the
built-in catalog + 1,000 generated signatures, phase two compiled beforehand and the heap settled
(``gc.freeze``). Each stage's CPU time (``time.process_time``) is summed over the run and divided
by the records; indented rows are part of the row above them. Timing each call adds a little.

Usage: ``python bench/bench_stages.py [--lines 200000]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]
from bench_hot_path import fluent_bit, write_catalog  # noqa: E402
from gen_stream import generate  # noqa: E402

import logsig.glance as glance  # noqa: E402
import logsig.pipeline as pipeline  # noqa: E402
from logsig.daemon.reload import settle_heap  # noqa: E402
from logsig.decode.settings import DecodeSettings  # noqa: E402
from logsig.matchers.catalog.loader import load_catalog  # noqa: E402
from logsig.matchers.engine.engine import Engine  # noqa: E402
from logsig.sources.lines import line_batches  # noqa: E402

STAGES = ("read and split into lines", "glance (one pass over the batch)", "  peek at JSON maps (msgspec)",
          "  glance patterns (Vectorscan)", "  phase one over every record", "decode the records that need it",
          "assemble them", "match their events", "  build and redact incidents")
SPENT: dict[str, float] = {}


def timed(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``, adding the CPU time of each call to ``SPENT[name]``."""
    def call(*args: Any, **kwargs: Any) -> Any:
        started = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            SPENT[name] = SPENT.get(name, 0.0) + time.process_time() - started
    return call


def instrument() -> None:
    """Time the stages of :meth:`logsig.pipeline.Pipeline.process_batch` (those the code has)."""
    for owner, attribute, stage in (
            (glance.Looker, "look", "glance (one pass over the batch)"),
            (glance.Looker, "_peek", "  peek at JSON maps (msgspec)"),
            (glance.Looker, "_hits", "  glance patterns (Vectorscan)"),
            (Engine, "prefilter_ends", "  phase one over every record"),
            (pipeline, "decode_record", "decode the records that need it"),
            (pipeline.Pipeline, "_feed", "assemble them"),
            (pipeline.Pipeline, "_match", "match their events"),
            (pipeline.Pipeline, "_detect", "  build and redact incidents")):
        if hasattr(owner, attribute):
            setattr(owner, attribute, timed(stage, getattr(owner, attribute)))


def run(engine: Engine, path: Path) -> tuple[int, float]:
    """Records and CPU seconds of one pass over ``path``."""
    SPENT.clear()
    SPENT.update(dict.fromkeys(STAGES, 0.0))
    pipe = pipeline.Pipeline(engine, DecodeSettings())
    records, started = 0, time.process_time()
    with open(path, "rb") as stream:
        batches = list(line_batches(stream, path.name))
        SPENT["read and split into lines"] = time.process_time() - started
        for batch in batches:
            pipe.process_batch(batch, 0.0)
            records += len(batch)
        pipe.flush_all()
    return records, time.process_time() - started


def main() -> None:
    """Print the per-record cost of each stage, plain lines and Fluent Bit JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    args = parser.parse_args()
    lines = generate(args.lines)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        engine = Engine(load_catalog([write_catalog(folder)], builtin=False).signatures)
        if hasattr(engine, "warm"):
            engine.warm(float("inf"))
        settle_heap()
        plain, json = folder / "plain.log", folder / "fluent-bit.log"
        plain.write_text("\n".join(lines) + "\n", encoding="utf-8")
        json.write_bytes(b"\n".join(fluent_bit(line, n) for n, line in enumerate(lines)) + b"\n")
        instrument()
        for name, path in (("plain lines", plain), ("Fluent Bit JSON", json)):
            run(engine, path)  # the first pass fills caches (Sources, RE2 objects)
            records, seconds = run(engine, path)
            print(f"{name}: {records:,} records, {seconds / records * 1e6:.2f} us/record in all")
            for stage, spent in SPENT.items():
                print(f"  {stage:42s} {spent / records * 1e6:6.2f} us/record")


if __name__ == "__main__":
    main()
