"""Add newly gathered real excerpts to the corpus, split into written-from and held-out parts.

Usage: ``python tests/data/corpus/add_excerpts.py [--benign] FILE.jsonl ...``

Each excerpt (``{"id", "kind", "project", "source_url", "lines", "key_line_index", ...}``) or benign
line (``{"project", "source_url", "line"}``) is scrubbed with ``scrub.py``'s rules and appended to
one of two parts, by its source URL, so that every excerpt of one bug report lands in one part:

- ``real_logs.jsonl`` / ``benign_lines.jsonl``: the part signatures are written from (new
  excerpts of it wait in ``incoming/real_logs.jsonl`` until the expected tables name their
  signatures; the benchmark counts them with the written-from part);
- ``heldout/real_logs.jsonl`` / ``heldout/benign_lines.jsonl``: the held-out part, which no
  signature is written or tuned from. It is only measured (``bench/corpus_detection.py``).

A URL already in a part stays in it. A new URL goes to the held-out part when its BLAKE2b hash
falls in the lowest :data:`HELD_OUT_PERCENT` percent, or when any of its excerpts is of a held-out
kind: a kind new to the corpus whose own hash falls in the lowest :data:`HELD_OUT_KIND_PERCENT`
percent, so that whole kinds exist only in the held-out part. Ids already present and benign
lines already present are skipped; at most :data:`MAX_PER_URL` excerpts are kept per URL.
When a miss shown by the held-out part is fixed, move that excerpt to the written-from part
(``--promote ID``) and gather new held-out excerpts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from scrub import Scrubber, scrub_record

HERE = Path(__file__).parent
HELD_OUT_PERCENT = 40
HELD_OUT_KIND_PERCENT = 30
MAX_PER_URL = 3
PARTS = {"written": HERE, "incoming": HERE / "incoming", "heldout": HERE / "heldout",
         "heldout-fresh": HERE / "heldout-fresh", "heldout-fresh-2": HERE / "heldout-fresh" / "second",
         "heldout-fresh-3": HERE / "heldout-fresh" / "third", "heldout-fresh-4": HERE / "heldout-fresh" / "fourth",
         "heldout-fresh-5": HERE / "heldout-fresh" / "fifth"}


def _percent(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=4).digest(), "big") % 100


def _read(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def _corpus(name: str) -> dict[str, list[dict[str, Any]]]:
    return {part: _read(folder / name) for part, folder in PARTS.items() if (folder / name).exists()
            or part in ("written", "heldout") or (part == "incoming" and name == "real_logs.jsonl")}


def add(files: list[Path], name: str, into: str | None = None) -> Counter[str]:
    """Append the records of ``files`` to the parts of corpus file ``name``; counts per part.

    into: put every new URL in that part (``heldout-fresh``: a set gathered after the catalog was
    written, that no one has read) instead of splitting by hash.
    """
    corpus = _corpus(name)
    corpus.setdefault("incoming", [])
    if into is not None:
        corpus.setdefault(into, [])
    both = [_corpus(other) for other in ("real_logs.jsonl", "benign_lines.jsonl")]
    url_part = {r["source_url"]: part for c in both for part, records in c.items() for r in records}
    known_kinds = {r["kind"] for records in corpus.values() for r in records if "kind" in r}
    seen_ids = {r["id"] for records in corpus.values() for r in records if "id" in r}
    seen_lines = {r["line"] for records in corpus.values() for r in records if "line" in r}
    new = [r for path in files for r in _read(path)]
    held_kinds = {r["kind"] for r in new if "kind" in r and r["kind"] not in known_kinds
                  and _percent("kind:" + r["kind"]) < HELD_OUT_KIND_PERCENT}
    for record in new:
        url = record["source_url"]
        if url not in url_part and into is not None:
            url_part[url] = into
        elif url not in url_part and (_percent(url) < HELD_OUT_PERCENT or record.get("kind") in held_kinds):
            url_part[url] = "heldout"
    per_url = Counter(r["source_url"] for records in corpus.values() for r in records)
    scrubber, added = Scrubber(), Counter[str]()
    for record in new:
        url = record["source_url"]
        duplicate = ("id" in record and record["id"] in seen_ids) or ("line" in record and record["line"] in seen_lines)
        if duplicate or ("lines" in record and per_url[url] >= MAX_PER_URL):
            continue
        part = url_part.setdefault(url, "written")
        if part in ("written", "incoming"):
            part = "incoming" if "lines" in record else "written"
        corpus[part].append(scrub_record(record, scrubber))
        per_url[url] += 1
        if "id" in record:
            seen_ids.add(record["id"])
        if "line" in record:
            seen_lines.add(record["line"])
        added[part] += 1
    for part, records in corpus.items():
        if records or (PARTS[part] / name).exists():
            _write(PARTS[part] / name, records)
    return added


def promote(ids: set[str], source: str = "heldout") -> int:
    """Move the excerpts ``ids`` of held-out part ``source`` (and every excerpt of their URLs) to the
    written-from part (``incoming/``)."""
    corpus = _corpus("real_logs.jsonl")
    urls = {r["source_url"] for r in corpus[source] if r["id"] in ids}
    moved = [r for r in corpus[source] if r["source_url"] in urls]
    corpus[source] = [r for r in corpus[source] if r["source_url"] not in urls]
    corpus["incoming"].extend(moved)
    for part, records in corpus.items():
        _write(PARTS[part] / "real_logs.jsonl", records)
    return len(moved)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--benign", action="store_true", help="the files hold benign lines")
    parser.add_argument("--promote", action="append", default=[], metavar="ID")
    parser.add_argument("--into", choices=sorted(PARTS), help="put every new source URL in this part")
    parser.add_argument("--from", dest="source", choices=sorted(p for p in PARTS if p.startswith("heldout")),
                        default="heldout", help="the held-out part --promote takes excerpts from")
    args = parser.parse_args(argv)
    if args.promote:
        print(f"moved {promote(set(args.promote), args.source)} excerpts to the written-from part")
        return 0
    added = add(args.files, "benign_lines.jsonl" if args.benign else "real_logs.jsonl", args.into)
    print("added: " + ", ".join(f"{part} {count}" for part, count in sorted(added.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
