"""Generate a realistic inference-server log stream for the matching benchmark.

The stream is built from the repository's corpus (``tests/data/corpus``): benign lines of vLLM,
SGLang, TGI, TensorRT-LLM, Triton, Ollama, llama.cpp and NCCL (``benign_lines.jsonl``) with their
digits and hex ids re-drawn so no two lines repeat, about 0.1% real failure lines (the key lines
of ``real_logs.jsonl``) and a few lines of 64 KiB (a long prompt echoed into a log line). The
same seed gives the same stream.

Usage: ``python bench/gen_stream.py OUT [--lines 200000] [--seed 1]`` (one line per record).
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "corpus"
FAILURE_RATE = 0.001
LONG_LINES = 5
LONG_LINE_BYTES = 65536
_DIGIT = re.compile(r"\d")
_HEX = re.compile(r"\b[0-9a-f]{8,}\b")


def load_corpus(corpus: Path = CORPUS) -> tuple[list[str], list[str]]:
    """``(benign lines, failure key lines)`` from the corpus files."""
    benign = [json.loads(line)["line"] for line in _lines(corpus / "benign_lines.jsonl")]
    failures = []
    for line in _lines(corpus / "real_logs.jsonl"):
        record = json.loads(line)
        failures.append(record["lines"][record["key_line_index"]])
    return benign, failures


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _redraw(line: str, rng: random.Random) -> str:
    """``line`` with each hex id and digit re-drawn (same shape, new values)."""
    line = _HEX.sub(lambda m: "".join(rng.choice("0123456789abcdef") for _ in m.group()), line)
    return _DIGIT.sub(lambda _: rng.choice("0123456789"), line)


def _long_line(rng: random.Random, benign: list[str]) -> str:
    """A 64 KiB line: an access-log prefix followed by an echoed prompt."""
    words = " ".join(rng.choice(benign) for _ in range(800))
    prefix = "INFO 05-12 08:01:39 [logger.py:39] Received request chatcmpl-1: prompt: '"
    return (prefix + words)[:LONG_LINE_BYTES - 1] + "'"


def generate(lines: int = 200_000, seed: int = 1, corpus: Path = CORPUS) -> list[str]:
    """The stream as a list of ``lines`` lines (no newlines inside)."""
    rng = random.Random(seed)
    benign, failures = load_corpus(corpus)
    out = []
    for _ in range(lines):
        if rng.random() < FAILURE_RATE:
            out.append(rng.choice(failures))
        else:
            out.append(_redraw(rng.choice(benign), rng))
    for _ in range(min(LONG_LINES, lines)):
        out[rng.randrange(lines)] = _long_line(rng, benign)
    return [line.replace("\n", " ") for line in out]


def main() -> None:
    """Write the stream to the file named on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    stream = generate(args.lines, args.seed)
    args.out.write_text("\n".join(stream) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
