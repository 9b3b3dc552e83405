"""Every shipper format, tracebacks and garbage through the real broker, multi-line assembly on."""

from __future__ import annotations

import base64
import json
import signal
from pathlib import Path
from typing import Any

import orjson

from logsig.config import load_settings
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.pipeline import Pipeline
from logsig.records import Origin, RawRecord
from tests.integration.daemon_proc import start_daemon
from tests.integration.kafka_util import lag, make_topic, produce, read_all, wait_committed

DATA = Path(__file__).parents[1] / "data"
IDLE_SECONDS = 1.0


def _mixed() -> tuple[list[bytes], list[bytes | None], list[str | None]]:
    """Values, keys and garbage reasons of the mixed stream (every envelope, tracebacks, garbage)."""
    rows = [json.loads(x) for x in (DATA / "envelopes" / "mixed_stream.jsonl").read_text().splitlines()]
    keys = [row["key"].encode() if row["key"] else None for row in rows]
    return [base64.b64decode(row["value_b64"]) for row in rows], keys, [row["garbage"] for row in rows]


def _settings(bootstrap: str, topic: str, out: str, dlq: str, group: str) -> dict[str, Any]:
    return {"kafka": {"bootstrap_servers": bootstrap, "topics": [topic], "output_topic": out,
                      "dead_letter_topic": dlq, "group_id": group, "fetch_timeout_ms": 200},
            "decode": {"multiline": {"idle_timeout_seconds": IDLE_SECONDS}}, "grouping": {"enabled": False}}


def _offline(values: list[bytes], keys: list[bytes | None], topic: str) -> set[tuple[int, str]]:
    """(offset, signature id) of the incidents the same pipeline gives offline, one partition."""
    pipeline = Pipeline(Engine(load_catalog().signatures), load_settings().decode)
    records = [RawRecord(value=v, key=k, origin=Origin(topic=topic, partition=0, offset=n,
                                                       key=k.decode() if k else None))
               for n, (v, k) in enumerate(zip(values, keys, strict=True))]
    steps = [pipeline.process(records, 0.0), pipeline.flush_all()]
    return {(d.event.origin.offset or 0, d.incident.signature.id) for s in steps for d in s.detections}


def _traceback_lines(excerpt_id: str) -> list[str]:
    for line in (DATA / "corpus" / "real_logs.jsonl").read_text(encoding="utf-8").splitlines():
        excerpt = json.loads(line)
        if excerpt["id"] == excerpt_id:
            return list(excerpt["lines"])
    raise KeyError(excerpt_id)


def _fluent_bit(line: str) -> bytes:
    meta = {"pod_name": "sglang-0", "namespace_name": "ml", "container_name": "sglang", "host": "gpu-node-3"}
    return orjson.dumps({"@timestamp": 1.7e9, "log": line, "stream": "stderr", "kubernetes": meta})


class TestDecodeStream:
    async def test_mixed_formats_garbage_and_tracebacks(self, kafka_bootstrap: str, tmp_path: Path) -> None:
        """The dead-letter topic gets exactly the garbage; every incident the pipeline finds offline arrives."""
        topic = await make_topic(kafka_bootstrap)
        out, dlq = await make_topic(kafka_bootstrap), await make_topic(kafka_bootstrap)
        values, keys, garbage = _mixed()
        await produce(kafka_bootstrap, topic, values, keys=keys)
        expected = _offline(values, keys, topic)
        daemon = start_daemon(tmp_path, _settings(kafka_bootstrap, topic, out, dlq, "g-mixed"))
        try:
            daemon.wait_ready()
            await wait_committed(kafka_bootstrap, "g-mixed", topic, daemon)
            incidents = [orjson.loads(r.value) for r in await read_all(kafka_bootstrap, out, len(expected))]
            dead = await read_all(kafka_bootstrap, dlq, sum(g is not None for g in garbage))
        finally:
            assert 0 == daemon.terminate()
        assert expected == {(i["source"]["offset"], i["signature"]["id"]) for i in incidents}
        want_dead = sorted((n, reason) for n, reason in enumerate(garbage) if reason is not None)
        got_dead = sorted((int(dict(r.headers)["logsig.source.offset"]), dict(r.headers)["logsig.reason"].decode())
                          for r in dead)
        assert want_dead == got_dead
        assert all(r.value == values[int(dict(r.headers)["logsig.source.offset"])] for r in dead)
        whole = [i for i in incidents if len(i["context"]) > 3]
        assert len(whole) >= 6, "each corpus traceback arrives as one incident with its context"

    async def test_crash_in_an_open_traceback_loses_nothing(self, kafka_bootstrap: str, tmp_path: Path) -> None:
        """A crash while a traceback is half read leaves its records uncommitted; the restart emits it whole."""
        topic = await make_topic(kafka_bootstrap)
        out, dlq = await make_topic(kafka_bootstrap), await make_topic(kafka_bootstrap)
        lines = _traceback_lines("sglang-cuda-graph-capture-gloo-1")[:8]
        first_half, second_half = [_fluent_bit(x) for x in lines[:4]], [_fluent_bit(x) for x in lines[4:]]
        settings = _settings(kafka_bootstrap, topic, out, dlq, "g-crash")
        settings["decode"]["multiline"]["idle_timeout_seconds"] = 600
        settings["kafka"]["session_timeout_ms"] = 6000
        await produce(kafka_bootstrap, topic, [_fluent_bit("INFO warming up")], keys=[b"sglang-0"])
        first = start_daemon(tmp_path, settings, name="first")
        first.wait_ready()
        await wait_committed(kafka_bootstrap, "g-crash", topic, first)
        await produce(kafka_bootstrap, topic, first_half, keys=[b"sglang-0"] * 4)
        first.wait_metric("logsig_records_consumed_total", 5.0, topic=topic)
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(timeout=30)
        assert 4 == await lag(kafka_bootstrap, "g-crash", topic), "held traceback records must stay uncommitted"
        await produce(kafka_bootstrap, topic, [*second_half, _fluent_bit("INFO next")], keys=[b"sglang-0"] * 5)
        second = start_daemon(tmp_path, settings, name="second")
        try:
            second.wait_ready()
            await wait_committed(kafka_bootstrap, "g-crash", topic, second)
            incidents = [orjson.loads(r.value) for r in await read_all(kafka_bootstrap, out, 1)]
        finally:
            assert 0 == second.terminate()
        assert 1 == len(incidents)
        assert 1 == incidents[0]["source"]["offset"]
        assert len(incidents[0]["context"]) >= 6
