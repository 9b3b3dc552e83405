"""The built-in catalog's coverage and its recall / false positives on the repository's corpus.

Prints Markdown for ``docs/signatures.md``: signatures per server and category, then, on
``tests/data/corpus``, how many failure excerpts are detected on their key line (with the
expected primary signature, and with any signature) and how many benign lines match anything.
Usage: ``python bench/catalog_coverage.py [--readme]`` (``--readme``: the README's shorter table).
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

import yaml

from logsig.enrich import rank
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "corpus"


# The layer a signature without ``servers`` belongs to, by its domain (``llm`` ids name the server first).
DOMAIN_SERVERS = {"host": "host", "gpu": "nvidia-driver", "cuda": "pytorch", "nccl": "nccl", "k8s": "k8s",
                  "ray": "ray", "kserve": "kserve", "generic": "any (generic)"}


def _server_of(domain: str, sig_id: str) -> str:
    return DOMAIN_SERVERS.get(domain) or sig_id.split("/")[-1].split("-")[0]


def coverage_table() -> str:
    """Markdown table: one row per server, one column per category, plus totals."""
    started = time.perf_counter()
    sigs = [s for s in load_catalog().signatures if s.role != "banner"]  # banners name servers, not failures
    load_s = time.perf_counter() - started
    cats = sorted({s.category for s in sigs})
    cells: Counter[tuple[str, str]] = Counter()
    for sig in sigs:
        for server in sig.servers or [_server_of(sig.domain, sig.id)]:
            cells[(server, sig.category)] += 1
    servers = sorted({server for server, _ in cells})
    head = "| server | " + " | ".join(c.replace("_error", "") for c in cats) + " | total |"
    rows = [head, "|" + "---|" * (len(cats) + 2)]
    for server in servers:
        counts = [cells[(server, c)] for c in cats]
        rows.append(f"| {server} | " + " | ".join(str(n or "") for n in counts) + f" | {sum(counts)} |")
    domains = Counter(s.domain for s in sigs)
    summary = ", ".join(f"{d} {n}" for d, n in sorted(domains.items()))
    rows.append("")
    rows.append(f"{len(sigs)} signatures ({summary}); a signature printed by several servers counts in each row. "
                f"Loaded and validated in {load_s:.2f} s.")
    return "\n".join(rows)


def corpus_figures() -> str:
    """Recall on the failure corpus and false positives on the benign corpus."""
    engine = Engine(load_catalog().signatures)
    expected: dict[str, str | None] = {}
    for path in sorted(CORPUS.glob("expected-*.yaml")):
        expected.update(yaml.safe_load(path.read_text(encoding="utf-8")))
    excerpts = [json.loads(x) for x in (CORPUS / "real_logs.jsonl").read_text(encoding="utf-8").splitlines()]
    exact = detected = 0
    for excerpt in excerpts:
        matches = engine.match(excerpt["lines"][excerpt["key_line_index"]])
        detected += bool(matches)
        exact += bool(matches) and rank(matches)[0].signature.id == expected.get(excerpt["id"])
    benign = [json.loads(x)["line"] for x in (CORPUS / "benign_lines.jsonl").read_text(encoding="utf-8").splitlines()]
    # through the pipeline, as the daemon sees them (a line's own level and advice words count there)
    from corpus_detection import primaries

    from logsig.config import load_settings
    from logsig.pipeline import Pipeline
    settings = load_settings(decode={"multiline": {"enabled": False}}).decode
    false_pos = len(primaries(Pipeline(engine, settings), benign))
    kinds = len({e["kind"] for e in excerpts})
    return (f"On the corpus ({len(excerpts)} excerpts of {kinds} failure kinds from public bug reports, "
            f"{len(benign)} benign lines): {detected}/{len(excerpts)} key lines detected, "
            f"{exact}/{len(excerpts)} with the expected primary signature; "
            f"{false_pos}/{len(benign)} benign lines matched (false positives).")


LAYERS = {"vllm": "vLLM", "sglang": "SGLang", "tgi": "TGI", "triton": "Triton, TensorRT-LLM",
          "trtllm": "Triton, TensorRT-LLM", "lmdeploy": "LMDeploy", "ollama": "Ollama, llama.cpp",
          "llamacpp": "Ollama, llama.cpp", "ray": "Ray", "kserve": "KServe", "pytorch": "PyTorch, CUDA, ROCm",
          "nccl": "NCCL", "nvidia-driver": "NVIDIA driver", "k8s": "Kubernetes", "host": "host"}


def compact_table() -> str:
    """The README's table: specific signatures per server (``llm`` ones, by their ``servers``; one
    printed by several counts in each row) or per layer (the other domains) and category."""
    sigs = [s for s in load_catalog().signatures if s.role != "banner" and s.tier != "generic"]
    cats = sorted({s.category for s in sigs})
    cells: Counter[tuple[str, str]] = Counter()
    for sig in sigs:
        names = (sig.servers or [_server_of(sig.domain, sig.id)]) if sig.domain == "llm" else [
            _server_of(sig.domain, sig.id)]
        for layer in {LAYERS[x] for x in names if x in LAYERS}:
            cells[(layer, sig.category)] += 1
    rows = ["| | " + " | ".join(c.replace("_error", "")[:6] for c in cats) + " | all |", "|" + "---|" * (len(cats) + 2)]
    for layer in dict.fromkeys(LAYERS.values()):
        counts = [cells[(layer, c)] for c in cats]
        rows.append(f"| {layer} | " + " | ".join(str(n or "") for n in counts) + f" | {sum(counts)} |")
    return "\n".join(rows)


if __name__ == "__main__":
    if sys.argv[1:] == ["--readme"]:
        print(compact_table())
        raise SystemExit(0)
    print(coverage_table())
    print()
    print(corpus_figures())
