"""Decode throughput per envelope, against the bare parser on the same records, in one run.

    .venv/bin/python bench/bench_decode.py [--records 20000] [--batch 50]

For each envelope, the same list of Kafka record values (real corpus lines, benign and failure,
wrapped the way that shipper writes them; the shapes of tests/data/envelopes) is timed through:

- ``decode_record`` with ``envelope: auto`` (detection included), and with the envelope fixed;
- the floor: ``orjson.loads`` alone for JSON values, ``msgpack.unpackb`` for msgpack,
  protobuf ``ParseFromString`` for ``otlp_proto``, ``bytes.decode`` for text values.

Prints records/s (for OTLP batches also log lines/s) and the ratio decode time / floor time.
Each figure is the best of five runs, the three kinds alternating (noise only slows).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import orjson

from logsig.decode import DecodeSettings, decode_record
from logsig.decode import otlp_proto as proto
from logsig.records import Origin, RawRecord

CORPUS = Path(__file__).parents[1] / "tests" / "data" / "corpus"
REPEAT = 5
POD = {
    "pod_name": "vllm-llama3-8b-6d9f7c8b5-x2k4q",
    "namespace_name": "inference",
    "pod_id": "7f3c2a1e-5b6d-4c8e-9a0f-1b2c3d4e5f60",
    "labels": {"app": "vllm", "app.kubernetes.io/name": "vllm", "pod-template-hash": "6d9f7c8b5"},
    "annotations": {"prometheus.io/scrape": "true"},
    "host": "gpu-node-03",
    "pod_ip": "10.42.3.17",
    "container_name": "vllm",
    "docker_id": "3b1f0c9e8d7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c",
    "container_image": "docker.io/vllm/vllm-openai:v0.11.0",
}
VECTOR = {
    "container_name": "vllm",
    "pod_labels": {"app": "vllm"},
    "pod_name": POD["pod_name"],
    "pod_namespace": "inference",
    "pod_node_name": "gpu-node-03",
    "pod_uid": POD["pod_id"],
}
ECS = {
    "pod": {"name": POD["pod_name"], "uid": POD["pod_id"]},
    "namespace": "inference",
    "node": {"name": "gpu-node-03"},
    "container": {"name": "vllm"},
    "labels": {"app": "vllm"},
}


def lines() -> list[str]:
    """Benign and failure lines of the corpus, in a fixed order."""
    text = (CORPUS / "benign_lines.jsonl").read_text(encoding="utf-8").splitlines()
    benign = [json.loads(row)["line"] for row in text]
    real = (CORPUS / "real_logs.jsonl").read_text(encoding="utf-8").splitlines()
    return benign + [line for row in real for line in json.loads(row)["lines"]]


def fluent_bit(line: str, n: int) -> dict[str, Any]:
    """A Fluent Bit record (format json / msgpack)."""
    return {"@timestamp": 1746361380.123457 + n, "time": "2025-05-04T12:23:00.123456789Z",
            "stream": "stdout", "_p": "F", "log": line, "kubernetes": POD}  # fmt: skip


def otlp_batch(chunk: list[str], n: int) -> dict[str, Any]:
    """An OTLP/JSON batch of ``chunk`` lines from one pod."""

    def kv(key: str, value: str) -> dict[str, Any]:
        return {"key": key, "value": {"stringValue": value}}

    resource = [kv("k8s.pod.name", POD["pod_name"]), kv("k8s.namespace.name", "inference"),
                kv("k8s.container.name", "vllm"), kv("k8s.node.name", "gpu-node-03")]  # fmt: skip
    records = [{"timeUnixNano": str(1746361380123456789 + n + i), "body": {"stringValue": line},
                "attributes": [kv("log.iostream", "stdout")]} for i, line in enumerate(chunk)]  # fmt: skip
    return {"resourceLogs": [{"resource": {"attributes": resource},
                              "scopeLogs": [{"scope": {}, "logRecords": records}]}]}  # fmt: skip


def build(records: int, batch: int) -> dict[str, tuple[list[bytes], int, str]]:
    """Per envelope: values, log lines they hold, and the floor's name."""
    pool = lines()
    text = [pool[n % len(pool)] for n in range(records)]
    dumps = orjson.dumps
    out: dict[str, tuple[list[bytes], int, str]] = {
        "text": ([t.encode() for t in text], records, "bytes.decode"),
        "cri": ([f"2025-05-04T12:23:00.123456789Z stdout F {t}".encode() for t in text], records, "bytes.decode"),
        "docker": ([dumps({"log": t + "\n", "stream": "stdout", "time": "2025-05-04T12:23:00.123456789Z"})
                    for t in text], records, "orjson.loads"),
        "fluentbit_json": ([dumps(fluent_bit(t, n)) for n, t in enumerate(text)], records, "orjson.loads"),
        "fluentbit_msgpack": ([msgpack.packb(fluent_bit(t, n)) for n, t in enumerate(text)], records,
                              "msgpack.unpackb"),
        "fluentd": ([dumps({"log": t + "\n", "stream": "stdout", "docker": {"container_id": "3b1f"},
                            "kubernetes": POD}) for t in text], records, "orjson.loads"),
        "vector": ([dumps({"kubernetes": VECTOR, "message": t, "source_type": "kubernetes_logs",
                           "stream": "stdout", "timestamp": "2025-05-04T12:23:00.123456789Z"})
                    for t in text], records, "orjson.loads"),
        "filebeat_ecs": ([dumps({"@timestamp": "2025-05-04T12:23:00.123Z", "@metadata": {"beat": "filebeat"},
                                 "stream": "stdout", "message": t, "kubernetes": ECS, "host": {"name": "fb"}})
                          for t in text], records, "orjson.loads"),
        "otlp_raw": ([dumps(t) for t in text], records, "orjson.loads"),
    }  # fmt: skip
    chunks = [text[i : i + batch] for i in range(0, records, batch)]
    batches = [otlp_batch(chunk, n) for n, chunk in enumerate(chunks)]
    out["otlp_json"] = ([dumps(b) for b in batches], records, "orjson.loads")
    if proto.AVAILABLE:
        from google.protobuf import json_format

        request = proto.ExportLogsServiceRequest
        encoded = [json_format.ParseDict(b, request()).SerializeToString() for b in batches]
        out["otlp_proto"] = (encoded, records, "ParseFromString")
    return out


def floor(name: str) -> Callable[[bytes], object]:
    """The bare parser a decode is compared with."""
    if name == "msgpack.unpackb":
        return msgpack.unpackb
    if name == "ParseFromString":
        return lambda value: proto.ExportLogsServiceRequest().ParseFromString(value)
    if name == "bytes.decode":
        return bytes.decode
    return orjson.loads


def measure(values: list[bytes], envelope: str, floor_name: str) -> tuple[float, float, float]:
    """Best seconds for auto decode, fixed-envelope decode and the floor over ``values``.

    The three runs alternate, REPEAT times, so that load from elsewhere hits them alike.
    """
    origin = Origin(topic="logs", partition=0, offset=0, timestamp_ms=1746361381000)
    records = [RawRecord(value, origin) for value in values]
    auto = DecodeSettings()
    fixed = DecodeSettings(envelope=_FIXED.get(envelope, "auto"))  # type: ignore[arg-type]
    parse = floor(floor_name)
    runs: list[Callable[[], object]] = [
        lambda: [decode_record(r, auto) for r in records],
        lambda: [decode_record(r, fixed) for r in records],
        lambda: [parse(v) for v in values],
    ]
    best = [float("inf")] * len(runs)
    for _ in range(REPEAT):
        for index, run in enumerate(runs):
            start = time.perf_counter()
            run()
            best[index] = min(best[index], time.perf_counter() - start)
    return best[0], best[1], best[2]


_FIXED = {
    "text": "text",
    "cri": "cri",
    "docker": "json",
    "fluentbit_json": "json",
    "fluentbit_msgpack": "msgpack",
    "fluentd": "json",
    "vector": "json",
    "filebeat_ecs": "json",
    "otlp_raw": "otlp_raw",
    "otlp_json": "otlp_json",
    "otlp_proto": "otlp_proto",
}


def main() -> None:
    """Build the records, time every envelope, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=20_000, help="log lines per envelope")
    parser.add_argument("--batch", type=int, default=50, help="log lines per OTLP batch")
    args = parser.parse_args()
    print(f"{'envelope':<18} {'kafka rec/s':>12} {'lines/s auto':>13} {'lines/s fixed':>14} "
          f"{'floor lines/s':>14} {'auto/floor':>10}  floor")  # fmt: skip
    for envelope, (values, line_count, floor_name) in build(args.records, args.batch).items():
        auto, fixed, base = measure(values, envelope, floor_name)
        rates = f"{line_count / auto:>13,.0f} {line_count / fixed:>14,.0f} {line_count / base:>14,.0f}"
        print(f"{envelope:<18} {len(values) / auto:>12,.0f} {rates} {auto / base:>9.2f}x  {floor_name}")


if __name__ == "__main__":
    main()
