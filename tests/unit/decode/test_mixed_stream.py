"""The mixed stream of tests/data/envelopes/mixed_stream.jsonl, decoded and assembled offline.

Every format, corpus tracebacks of two pods interleaved line by line in three envelopes, and
garbage: exactly the garbage fails, with its reason; and a crash at any record, followed by a
restart from the committed offset (capped by ``held_offsets``), loses no traceback.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from logsig.assemble import Assembler
from logsig.decode import DecodeSettings, decode_record
from logsig.records import LogEvent, Origin, RawRecord

HERE = Path(__file__).parents[2] / "data"
SETTINGS = DecodeSettings()


def stream() -> tuple[list[RawRecord], list[str | None]]:
    """The records (topic ``logs``, partition 0, offset = position) and their garbage reasons."""
    rows = [json.loads(line) for line in (HERE / "envelopes" / "mixed_stream.jsonl").read_text().splitlines()]
    records = [
        RawRecord(base64.b64decode(row["value_b64"]), Origin(topic="logs", partition=0, offset=n, key=row["key"]))
        for n, row in enumerate(rows)
    ]
    return records, [row["garbage"] for row in rows]


def expected_tracebacks() -> set[tuple[str, ...]]:
    """The two corpus tracebacks the stream holds (three times each)."""
    rows = {r["id"]: r for r in map(json.loads, (HERE / "corpus" / "real_logs.jsonl").read_text().splitlines())}
    return {
        tuple(rows["hf-gated-401-vllm-1"]["lines"][4:10]),
        tuple(rows["sglang-cuda-graph-capture-gloo-1"]["lines"][0:8]),
    }


def consume(records: list[RawRecord], assembler: Assembler) -> list[LogEvent]:
    """Decode and assemble ``records`` (no flush at the end)."""
    out: list[LogEvent] = []
    for record in records:
        for event in decode_record(record, SETTINGS).events:
            out.extend(assembler.feed(event, 0.0))
    return out


def traceback_pods(events: list[LogEvent]) -> dict[str, tuple[str, ...]]:
    """Whole tracebacks emitted, by pod (source pod or Kafka key)."""
    whole = expected_tracebacks()
    return {str(e.source.pod or e.origin.key): e.context for e in events if e.context in whole}


class TestMixedStream:
    def test_exactly_the_garbage_fails(self) -> None:
        """Each garbage record fails with its stated reason; every other record decodes."""
        records, garbage = stream()
        results = [decode_record(record, SETTINGS) for record in records]
        assert garbage == [r.failure.reason if r.failure else None for r in results]
        assert 7 <= sum(reason is not None for reason in garbage)

    def test_every_traceback_comes_out_whole(self) -> None:
        """Six tracebacks (two pods, three envelopes) give six whole events."""
        records, _ = stream()
        assembler = Assembler(SETTINGS)
        events = consume(records, assembler) + assembler.flush_all()
        assert 6 == len(traceback_pods(events))

    @pytest.mark.parametrize("crash_at", range(1, 79))
    def test_restart_at_any_record_loses_no_traceback(self, crash_at: int) -> None:
        """A crash after any record and a restart from the committed offset lose nothing."""
        records, _ = stream()
        first = Assembler(SETTINGS)
        before = consume(records[:crash_at], first)
        committed = min(crash_at, first.held_offsets().get(("logs", 0), crash_at))
        second = Assembler(SETTINGS)
        after = consume(records[committed:], second) + second.flush_all()
        found = {**traceback_pods(before), **traceback_pods(after)}
        assert 6 == len(found)
