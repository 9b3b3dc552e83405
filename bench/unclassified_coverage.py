"""How many real failure excerpts raise an incident, by tier, and how many benign lines do.

    .venv/bin/python bench/unclassified_coverage.py --real FILE.jsonl ... --benign FILE.jsonl ...
        [--split tune|held-out|all] [--unknown-kinds KINDS.yaml] [--without-generic] [--misses]

Each failure excerpt (``{"id", "kind", "source_url", "lines", "key_line_index"}``, the format of
``tests/data/corpus/real_logs.jsonl``) runs through a fresh pipeline as one stream, exactly as
``logsig scan`` would read a file of its lines (tracebacks assembled, open groups flushed at the
end); it counts as detected when at least one incident comes out, and its tier is the best tier
among them (specific before generic). Each benign line (``{"line"}`` in ``.jsonl`` files, else
one per text line) runs alone; any incident on it is a false positive and is printed.

``--split`` keeps a held-out part: an excerpt is held out when the BLAKE2b of its ``source_url``
is 0 modulo 4, so every excerpt of one bug report falls on the same side; the generic family was
written from the other side only (``tune``). ``--unknown-kinds`` keeps the excerpts whose kind is
absent from that file (``tests/data/corpus/kinds.yaml``: the kinds a specific signature names),
the failures the specific catalog lacks. ``--without-generic`` drops the generic family from the
catalog (the figure before it existed). ``--misses`` lists what raised nothing (not for held-out
runs: a held-out part stays unread); benign lines are not shown when a file under ``heldout/`` is read.
"""

from __future__ import annotations

import argparse
import io
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from hashlib import blake2b
from pathlib import Path
from typing import Any

import yaml

from logsig.decode.settings import DecodeSettings
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.pipeline import Detection, Pipeline
from logsig.sources.lines import line_chunks


def held_out(source_url: str) -> bool:
    """Whether an excerpt from ``source_url`` is in the held-out part (a quarter of the reports)."""
    return int(blake2b(source_url.encode(), digest_size=8).hexdigest(), 16) % 4 == 0


def rows(paths: Sequence[Path]) -> Iterator[dict[str, Any]]:
    """Every JSON object of the ``.jsonl`` files in ``paths``; each line of another file is ``{"line"}``."""
    for path in paths:
        for text in path.read_text(encoding="utf-8").splitlines():
            if text.strip():
                yield json.loads(text) if path.suffix == ".jsonl" else {"line": text}


def detections(engine: Engine, lines: Sequence[str]) -> list[Detection]:
    """The detections of ``lines`` read as one file by a fresh pipeline."""
    pipeline = Pipeline(engine, DecodeSettings())
    stream = io.BytesIO("\n".join(lines).encode("utf-8", "surrogatepass"))
    found: list[Detection] = []
    for chunk in line_chunks(stream, "<excerpt>", 4096):
        found.extend(pipeline.process(chunk, 0.0).detections)
    found.extend(pipeline.flush_all().detections)
    return found


def best_tier(found: Sequence[Detection]) -> str:
    """``specific`` if any incident has a specific primary, ``generic`` if only generic ones, else ``none``."""
    tiers = {d.incident.tier for d in found}
    return "specific" if "specific" in tiers else "generic" if tiers else "none"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real", type=Path, nargs="*", default=[])
    parser.add_argument("--benign", type=Path, nargs="*", default=[])
    parser.add_argument("--split", choices=("tune", "held-out", "all"), default="all")
    parser.add_argument("--unknown-kinds", type=Path, metavar="KINDS.yaml")
    parser.add_argument("--without-generic", action="store_true")
    parser.add_argument("--misses", action="store_true", help="print each excerpt that raised nothing")
    args = parser.parse_args()
    signatures = load_catalog().signatures
    if args.without_generic:
        signatures = [s for s in signatures if s.tier != "generic"]
    engine = Engine(signatures)
    excerpts = list(rows(args.real))
    if args.unknown_kinds is not None:
        known = set(yaml.safe_load(args.unknown_kinds.read_text(encoding="utf-8")))
        excerpts = [e for e in excerpts if e["kind"] not in known]
    report_real(engine, excerpts, args.split, args.misses)
    report_benign(engine, [row["line"] for row in rows(args.benign)],
                  quiet=any("heldout" in path.parts for path in args.benign))


def report_real(engine: Engine, excerpts: list[dict[str, Any]], split: str, misses: bool) -> None:
    """Print detected excerpts by tier for the chosen split."""
    if split != "all":
        excerpts = [e for e in excerpts if held_out(e["source_url"]) == (split == "held-out")]
    tiers: Counter[str] = Counter()
    for excerpt in excerpts:
        tier = best_tier(detections(engine, excerpt["lines"]))
        tiers[tier] += 1
        if misses and tier == "none":
            print(f"  miss {excerpt['id']}: {excerpt['lines'][excerpt['key_line_index']][:160]}")
    total = len(excerpts)
    detected = tiers["specific"] + tiers["generic"]
    print(f"excerpts ({split}): {total}; incident raised: {detected} ({detected / max(total, 1):.1%}): "
          f"specific {tiers['specific']}, generic only {tiers['generic']}, none {tiers['none']}")


def report_benign(engine: Engine, lines: list[str], quiet: bool) -> None:
    """Print the benign lines that raised an incident (only their signature when ``quiet``: a
    held-out file is among them), and the count."""
    noisy = 0
    for line in lines:
        found = detections(engine, [line])
        if found:
            noisy += 1
            shown = "(held-out run: line not shown)" if quiet else line[:160]
            print(f"  benign incident {found[0].incident.signature.id}: {shown}")
    print(f"benign lines: {len(lines)}; with an incident: {noisy}")


if __name__ == "__main__":
    main()
