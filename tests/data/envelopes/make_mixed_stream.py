"""Regenerate mixed_stream.jsonl: every envelope fixture, corpus tracebacks line by line, garbage.

    python tests/data/envelopes/make_mixed_stream.py

One JSON object per Kafka record, in produce order: ``value_b64`` (the value, base64), ``key``
(the Kafka key or null) and ``garbage`` (the failure reason the record must be dead-lettered
with, or null). Tracebacks of two pods are interleaved line by line, in the plain (keyed by pod),
CRI (keyed by pod) and Fluent Bit envelopes; the stream is for an integration test against a
real broker (one partition: what goes to the dead-letter topic, what incidents come out, a
restart in the middle of an open traceback).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import orjson

HERE = Path(__file__).parent
CORPUS = HERE.parent / "corpus" / "real_logs.jsonl"
TRACEBACKS = {"hf-gated-401-vllm-1": (4, 10), "sglang-cuda-graph-capture-gloo-1": (0, 8)}
GARBAGE = [
    (b"", "empty_value"),
    (b"\xff\xfe\x00\x81 not text", "not_utf8"),
    (b'{"log": "cut in the mid', "invalid_json"),
    (b"[1, 2, 3]", "json_not_object"),
    (b'{"kubernetes": {"pod_name": "vllm-0"}, "stream": "stdout"}', "no_message_field"),
    (b"\x84\xa3log\xa1x", "invalid_msgpack"),
    (b'{"resourceLogs": [{"scopeLogs": [{"logRecords": 7}]}]}', "invalid_otlp"),
]


def fixture_values() -> list[bytes]:
    """The value of every envelope fixture (binary ones as stored)."""
    values = []
    for path in sorted(HERE.glob("*.json")):
        fixture = json.loads(path.read_text(encoding="utf-8"))
        if "value_file" in fixture:
            values.append((HERE / fixture["value_file"]).read_bytes())
        elif "value_text" in fixture:
            values.append(fixture["value_text"].encode())
        else:
            values.append(orjson.dumps(fixture["value"]))
    return values


def wrap(line: str, pod: str, style: int, n: int) -> tuple[bytes, str | None]:
    """``line`` of ``pod`` as a plain (keyed), CRI (keyed) or Fluent Bit record."""
    if style == 0:
        return line.encode(), pod
    if style == 1:
        return f"2025-05-04T12:23:{n % 60:02d}.000000001Z stderr F {line}".encode(), pod
    kubernetes = {"pod_name": pod, "namespace_name": "inference", "container_name": "server", "host": "n1"}
    return orjson.dumps(
        {"@timestamp": 1746361380.0 + n, "log": line, "stream": "stderr", "kubernetes": kubernetes}
    ), None


def records() -> list[dict[str, object]]:
    """The stream, in produce order."""
    rows = {row["id"]: row for row in map(json.loads, CORPUS.read_text(encoding="utf-8").splitlines())}
    out: list[tuple[bytes, str | None, str | None]] = [(value, None, None) for value in fixture_values()]
    (a, (a0, a1)), (b, (b0, b1)) = TRACEBACKS.items()
    first, second = rows[a]["lines"][a0:a1], rows[b]["lines"][b0:b1]
    for style in range(3):
        for n in range(max(len(first), len(second))):
            if n < len(first):
                out.append((*wrap(first[n], f"pod-a-{style}", style, n), None))
            if n < len(second):
                out.append((*wrap(second[n], f"pod-b-{style}", style, n), None))
            if n < len(GARBAGE):
                value, reason = GARBAGE[(n + style) % len(GARBAGE)]
                out.append((value, None, reason))
    return [{"value_b64": base64.b64encode(v).decode(), "key": k, "garbage": g} for v, k, g in out]


def main() -> None:
    """Write mixed_stream.jsonl next to this script."""
    lines = [json.dumps(record) for record in records()]
    (HERE / "mixed_stream.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
