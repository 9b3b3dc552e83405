"""The daemon end to end against the real broker: incidents, counters, commits, restarts, bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import orjson

from logsig.config import load_settings
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.pipeline import Pipeline
from logsig.records import Origin, RawRecord
from tests.integration.daemon_proc import metric_value, start_daemon
from tests.integration.kafka_util import lag, make_topic, produce, read_all, wait_committed

CORPUS = Path(__file__).parents[1] / "data" / "corpus"
SEED_ID = "llm/vllm-cuda-oom-during-prefill"
SEED_REGEX = re.compile(load_catalog().by_id()[SEED_ID].regex)
TORCH_OOM = "cuda/torch-oom"
"""The primary of the seed's line on a stream whose server is unknown (plain text, no banner)."""
POD = {"pod_name": "vllm-0", "namespace_name": "ml", "container_name": "vllm", "host": "gpu-node-1"}


def _key_lines() -> list[str]:
    out = []
    for line in (CORPUS / "real_logs.jsonl").read_text(encoding="utf-8").splitlines():
        excerpt = json.loads(line)
        out.append(excerpt["lines"][excerpt["key_line_index"]])
    return out


def _benign_lines() -> list[str]:
    return [json.loads(line)["line"] for line in (CORPUS / "benign_lines.jsonl").read_text().splitlines()]


def _envelope(line: str, index: int) -> bytes:
    """Plain text, a Fluent Bit record or a Vector record, in turn."""
    if index % 3 == 0:
        return line.encode()
    if index % 3 == 1:
        return orjson.dumps({"@timestamp": 1.7e9, "log": line, "stream": "stderr", "kubernetes": POD})
    vector = {"pod_name": "vllm-1", "pod_namespace": "ml", "container_name": "vllm", "pod_node_name": "gpu-node-2"}
    return orjson.dumps({"message": line, "timestamp": "2026-01-01T00:00:00Z", "kubernetes": vector})


def _mixed_stream() -> tuple[list[bytes], list[str], list[bool]]:
    """Values, their message lines, and whether each is a benign line, benign lines interleaved."""
    keys, benign = _key_lines(), _benign_lines()
    lines: list[tuple[str, bool]] = []
    for i in range(max(len(keys), len(benign))):
        if i < len(keys):
            lines.append((keys[i], False))
        if i < len(benign):
            lines.append((benign[i], True))
    values = [_envelope(line, i) for i, (line, _) in enumerate(lines)]
    return values, [line for line, _ in lines], [is_benign for _, is_benign in lines]


def _settings(bootstrap: str, topic: str, out: str, dlq: str, group: str, **kafka: Any) -> dict[str, Any]:
    """Daemon settings; one record is one message here (multi-line assembly has its own tests)."""
    return {"kafka": {"bootstrap_servers": bootstrap, "topics": [topic], "output_topic": out,
                      "dead_letter_topic": dlq, "group_id": group, "fetch_timeout_ms": 200, **kafka},
            "decode": {"multiline": {"enabled": False}}, "grouping": {"enabled": False}}


def _keys(count: int) -> list[bytes]:
    """Record keys: one per pod for the Kubernetes envelopes (as the README tells shippers to key), so
    each stream stays in one partition and its order (banners first) is the same online and offline."""
    return [b"pod-fluent-bit" if i % 3 == 1 else b"pod-vector" if i % 3 == 2 else f"k{i % 7}".encode()
            for i in range(count)]


def _offline_expected(values: list[bytes], coords: list[tuple[int, int]], topic: str) -> set[tuple[int, int, str]]:
    """(partition, offset, signature id) of every incident the same pipeline yields offline."""
    settings = load_settings(decode={"multiline": {"enabled": False}})
    pipeline = Pipeline(Engine(load_catalog().signatures), settings.decode)
    keys = _keys(len(values))
    records = [RawRecord(value=v, key=k, origin=Origin(topic=topic, partition=p, offset=o, key=k.decode()))
               for v, k, (p, o) in zip(values, keys, coords, strict=True)]
    by_partition: dict[int, list[RawRecord]] = {}
    for r in records:
        by_partition.setdefault(r.origin.partition or 0, []).append(r)
    found = set()
    for part in by_partition.values():
        for step in (pipeline.process(part, 0.0), pipeline.flush_all()):
            for d in step.detections:
                found.add((d.event.origin.partition, d.event.origin.offset, d.incident.signature.id))
    return found


class TestDaemonEndToEnd:
    async def test_real_logs_become_incidents_and_counters(self, kafka_bootstrap: str, tmp_path: Path) -> None:
        """Seed-matching lines give seed incidents, benign lines none, counters equal incidents, offsets committed."""
        topic = await make_topic(kafka_bootstrap, partitions=3)
        out, dlq = await make_topic(kafka_bootstrap), await make_topic(kafka_bootstrap)
        values, lines, benign = _mixed_stream()
        coords = await produce(kafka_bootstrap, topic, values, keys=_keys(len(values)))
        expected = _offline_expected(values, coords, topic)
        daemon = start_daemon(tmp_path, _settings(kafka_bootstrap, topic, out, dlq, "g-e2e"))
        try:
            daemon.wait_ready()
            await wait_committed(kafka_bootstrap, "g-e2e", topic, daemon)
            records = await read_all(kafka_bootstrap, out, len(expected))
            incidents = [orjson.loads(r.value) for r in records]
            metrics = daemon.metrics()
        finally:
            assert 0 == daemon.terminate()
        by_coord = {(i["source"]["partition"], i["source"]["offset"]): i for i in incidents}
        actual = {(p, o, i["signature"]["id"]) for (p, o), i in by_coord.items()}
        differ = {lines[coords.index((p, o))] for p, o, _ in expected ^ actual}
        assert expected == actual, differ
        seed_lines = [n for n, line in enumerate(lines) if SEED_REGEX.search(line)]
        assert len(seed_lines) >= 3
        assert {SEED_ID if n % 3 else TORCH_OOM for n in seed_lines} == {  # plain text (n % 3 == 0) names no server
            by_coord[coords[n]]["signature"]["id"] for n in seed_lines}
        benign_coords = {coords[n] for n, is_benign in enumerate(benign) if is_benign}
        assert set() == benign_coords & set(by_coord)
        matched: dict[str, int] = {}
        for i in incidents:
            for sig_id in [i["signature"]["id"], *i["also_matched"]]:
                matched[sig_id] = matched.get(sig_id, 0) + 1
        for sig_id, count in matched.items():
            assert count == metric_value(metrics, "logsig_signature_matches_total", signature_id=sig_id), sig_id
        assert len(incidents) == metric_value(metrics, "logsig_incidents_emitted_total", sink="kafka")
        pods = {i["source"]["pod"] for i in incidents}
        assert {"vllm-0", "vllm-1", None} <= pods

    async def test_sigterm_mid_stream_then_restart_loses_nothing(self, kafka_bootstrap: str, tmp_path: Path) -> None:
        """A SIGTERM while records are pending exits 0; a restart resumes and every incident arrives."""
        topic = await make_topic(kafka_bootstrap, partitions=2)
        out, dlq = await make_topic(kafka_bootstrap), await make_topic(kafka_bootstrap)
        oom = load_catalog().by_id()[SEED_ID].signature
        benign = _benign_lines()
        values = [(oom if n % 500 == 0 else benign[n % len(benign)]).encode() for n in range(40_000)]
        coords = await produce(kafka_bootstrap, topic, values)
        expected = {coords[n] for n in range(0, len(values), 500)}
        settings = _settings(kafka_bootstrap, topic, out, dlq, "g-restart", max_poll_records=50)
        first = start_daemon(tmp_path, settings, name="first")
        first.wait_ready()
        await read_all(kafka_bootstrap, out, 1, timeout_s=60, settle=False)
        assert 0 == first.terminate()
        assert 0 < await lag(kafka_bootstrap, "g-restart", topic), "the first run consumed everything"
        second = start_daemon(tmp_path, settings, name="second")
        try:
            second.wait_ready()
            await wait_committed(kafka_bootstrap, "g-restart", topic, second)
        finally:
            assert 0 == second.terminate()
        incidents = [orjson.loads(r.value) for r in await read_all(kafka_bootstrap, out, len(expected))]
        assert expected == {(i["source"]["partition"], i["source"]["offset"]) for i in incidents}

    async def test_bad_input_is_counted_and_dead_lettered(self, kafka_bootstrap: str, tmp_path: Path) -> None:
        """Empty, non-UTF-8, huge, non-object and message-less values never stop the consumer."""
        topic = await make_topic(kafka_bootstrap, max_message_bytes=20 * 1024 * 1024)
        out, dlq = await make_topic(kafka_bootstrap), await make_topic(kafka_bootstrap)
        oom = load_catalog().by_id()[SEED_ID].signature
        values = [b"", b"\xff\xfe\x00\x81garbage", b"x" * (10 * 1024 * 1024), b"[1, 2, 3]",
                  b'{"kubernetes": {"pod_name": "p"}, "stream": "stderr"}', oom.encode()]
        await produce(kafka_bootstrap, topic, values)
        daemon = start_daemon(tmp_path, _settings(kafka_bootstrap, topic, out, dlq, "g-bad"))
        try:
            daemon.wait_ready()
            await wait_committed(kafka_bootstrap, "g-bad", topic, daemon)
            incidents = [orjson.loads(r.value) for r in await read_all(kafka_bootstrap, out, 1)]
            dead = await read_all(kafka_bootstrap, dlq, 4)
            metrics = daemon.metrics()
        finally:
            assert 0 == daemon.terminate()
        assert [TORCH_OOM] == [i["signature"]["id"] for i in incidents]
        reasons = sorted(dict(r.headers)["logsig.reason"].decode() for r in dead)
        assert ["empty_value", "json_not_object", "no_message_field", "not_utf8"] == reasons
        for reason in reasons:
            assert 1 == metric_value(metrics, "logsig_records_failed_total", reason=reason)
            assert 1 == metric_value(metrics, "logsig_dead_letters_total", reason=reason)
        assert 1 <= metric_value(metrics, "logsig_messages_truncated_total")
        assert 6 == metric_value(metrics, "logsig_records_consumed_total")
