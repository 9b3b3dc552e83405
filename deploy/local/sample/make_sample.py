"""Build ``records.txt``: the demo's replay stream, one Kafka record value per line.

Real failure excerpts (every line of each, so tracebacks arrive line by line as shippers send
them) from ``tests/data/corpus/real_logs.jsonl``, interleaved with real benign lines, each
excerpt as plain text, a Fluent Bit record or a Vector record in turn. Deterministic: rerun it
after the corpus changes (``python deploy/local/sample/make_sample.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "tests" / "data" / "corpus"
EXCERPTS_PER_KIND = 1


def _fluent_bit(line: str, pod: str, node: str) -> str:
    meta = {"pod_name": pod, "namespace_name": "inference", "container_name": "server", "host": node}
    return json.dumps({"@timestamp": 1767225600.0, "log": line, "stream": "stderr", "kubernetes": meta})


def _vector(line: str, pod: str, node: str) -> str:
    meta = {"pod_name": pod, "pod_namespace": "inference", "container_name": "server", "pod_node_name": node}
    return json.dumps({"message": line, "timestamp": "2026-01-01T00:00:00Z", "stream": "stderr",
                       "kubernetes": meta})


def build() -> list[str]:
    """The record values, in replay order."""
    excerpts = [json.loads(x) for x in (CORPUS / "real_logs.jsonl").read_text(encoding="utf-8").splitlines()]
    benign = [json.loads(x)["line"] for x in (CORPUS / "benign_lines.jsonl").read_text(encoding="utf-8").splitlines()]
    seen: dict[str, int] = {}
    out: list[str] = []
    for n, excerpt in enumerate(excerpts):
        if seen.get(excerpt["kind"], 0) >= EXCERPTS_PER_KIND:
            continue
        seen[excerpt["kind"]] = seen.get(excerpt["kind"], 0) + 1
        pod, node = f"{excerpt['project']}-{n % 4}", f"gpu-node-{n % 3}"
        style = len(out) % 3
        for line in excerpt["lines"]:
            out.append(line if style == 0 else _fluent_bit(line, pod, node) if style == 1 else _vector(line, pod, node))
        out.append(benign[n % len(benign)])
    return out


if __name__ == "__main__":
    target = Path(__file__).with_name("records.txt")
    lines = build()
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} records to {target}")
