"""Real corpus tracebacks, one record per line, in three envelopes, interleaved with another pod.

Each traceback must come out as one event carrying the whole traceback (prefixes removed) as
context, the final exception line as ``line``, and the signature its key line matches alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from logsig.assemble import Assembler
from logsig.decode import DecodeSettings, decode_record
from logsig.enrich import rank
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.records import LogEvent, Origin, RawRecord

CORPUS = Path(__file__).parents[2] / "data" / "corpus"
SETTINGS = DecodeSettings()
POD, OTHER = "vllm-llama3-8b-6d9f7c8b5-x2k4q", "sglang-qwen-0"

Span = tuple[int, int, str]
"""A traceback in an excerpt: first line, end (exclusive), the prefix written on its lines."""

TRACEBACKS: list[tuple[str, list[Span]]] = [
    ("hf-gated-401-vllm-1", [(4, 10, "")]),
    ("sglang-cuda-graph-capture-gloo-1", [(0, 8, "")]),
    (
        "vllm-engine-dead-noprefix-1",
        [
            (0, 7, "ERROR 12-16 09:17:04 [async_llm.py:480] "),
            (7, 8, "(EngineCore_DP0 pid=380873) "),
            (9, 10, "ERROR 12-16 09:17:04 [omni_stage.py:1000] "),
        ],
    ),
    ("trtllm-oom-ipcutils-1", [(0, 8, "")]),
    ("sglang-scheduler-exception-init-1", [(0, 5, "[2025-03-29 18:18:34 TP0] ")]),
]


def corpus() -> dict[str, dict[str, object]]:
    """The real-log excerpts by id."""
    rows = (json.loads(line) for line in (CORPUS / "real_logs.jsonl").read_text().splitlines())
    return {str(row["id"]): row for row in rows}


def benign() -> list[str]:
    """Benign lines, used as the other pod's output."""
    rows = (json.loads(line) for line in (CORPUS / "benign_lines.jsonl").read_text().splitlines())
    return [str(row["line"]) for row in rows]


def plain(line: str, pod: str, n: int) -> RawRecord:
    """Plain text value, Kafka key = pod (a shipper keyed by pod)."""
    return RawRecord(line.encode(), Origin(topic="logs", partition=0, offset=n, key=pod))


def cri(line: str, pod: str, n: int) -> RawRecord:
    """Raw CRI line, Kafka key = pod."""
    value = f"2025-05-04T12:23:{n % 60:02d}.000000001Z stdout F {line}".encode()
    return RawRecord(value, Origin(topic="logs", partition=0, offset=n, key=pod))


def fluent_bit(line: str, pod: str, n: int) -> RawRecord:
    """Fluent Bit ``format json`` record with Kubernetes metadata, no Kafka key."""
    kubernetes = {"pod_name": pod, "namespace_name": "inference", "container_name": "server"}
    value = orjson.dumps({"@timestamp": 1746361380.0 + n, "log": line, "stream": "stdout",
                          "_p": "F", "kubernetes": kubernetes})  # fmt: skip
    return RawRecord(value, Origin(topic="logs", partition=0, offset=n))


ENVELOPES: dict[str, Callable[[str, str, int], RawRecord]] = {
    "plain": plain,
    "cri": cri,
    "fluent_bit": fluent_bit,
}


def run(lines: list[str], noise: list[str], envelope: Callable[..., RawRecord]) -> list[LogEvent]:
    """Decode and assemble ``lines`` of POD interleaved one-to-one with OTHER's ``noise``."""
    assembler = Assembler(SETTINGS)
    out: list[LogEvent] = []
    records = []
    for n, line in enumerate(lines):
        records += [envelope(line, POD, 2 * n), envelope(noise[n % len(noise)], OTHER, 2 * n + 1)]
    for n, record in enumerate(records):
        result = decode_record(record, SETTINGS)
        assert None is result.failure
        for event in result.events:
            out.extend(assembler.feed(event, n * 0.001))
    return out + assembler.flush_all()


def primary(engine: Engine, text: str) -> str | None:
    """The id of the primary signature matching ``text``, or None."""
    matches = engine.match(text)
    return rank(matches)[0].signature.id if matches else None


@pytest.fixture(scope="module")
def engine() -> Engine:
    """The built-in catalog, compiled."""
    return Engine(load_catalog().signatures)


class TestCorpusTracebacks:
    @pytest.mark.parametrize("envelope", sorted(ENVELOPES))
    @pytest.mark.parametrize(("ident", "spans"), TRACEBACKS)
    def test_traceback_is_one_event_with_the_whole_traceback(
        self, ident: str, spans: list[Span], envelope: str
    ) -> None:
        """One event per traceback, its context the traceback without prefixes."""
        lines = [str(line) for line in corpus()[ident]["lines"]]  # type: ignore[attr-defined]
        out = run(lines, benign(), ENVELOPES[envelope])
        mine = sorted((e for e in out if e.context and _pod(e) == POD), key=_first_offset)
        expected = [tuple(line.removeprefix(p) for line in lines[a:b]) for a, b, p in spans]
        assert expected == [e.context for e in mine]
        offsets = [list(range(2 * a, 2 * b, 2)) for a, b, _ in spans]
        assert offsets == [[o.offset for o in e.covered_origins] for e in mine]

    @pytest.mark.parametrize("envelope", sorted(ENVELOPES))
    @pytest.mark.parametrize(("ident", "spans"), TRACEBACKS)
    def test_other_lines_pass_through_one_by_one(self, ident: str, spans: list[Span], envelope: str) -> None:
        """The other pod's lines and the lines around the traceback stay single events."""
        lines = [str(line) for line in corpus()[ident]["lines"]]  # type: ignore[attr-defined]
        out = run(lines, benign(), ENVELOPES[envelope])
        singles = [e for e in out if not e.context]
        assert (len(lines), len(lines) - sum(b - a for a, b, _ in spans)) == (
            sum(_pod(e) == OTHER for e in singles),
            sum(_pod(e) == POD for e in singles),
        )

    @pytest.mark.parametrize(("ident", "spans"), TRACEBACKS)
    def test_assembled_event_matches_the_key_line_signature(
        self, engine: Engine, ident: str, spans: list[Span]
    ) -> None:
        """The assembled text matches the signature its key line matches on its own."""
        row = corpus()[ident]
        lines = [str(line) for line in row["lines"]]  # type: ignore[attr-defined]
        key_line = lines[int(row["key_line_index"])]  # type: ignore[call-overload]
        event = next(e for e in run(lines, benign(), fluent_bit) if e.context)
        assert primary(engine, key_line) == primary(engine, event.message)

    def test_key_lines_are_the_final_exception_lines(self) -> None:
        """For complete tracebacks, ``line`` is the corpus key line (the exception)."""
        found = []
        for ident, spans in TRACEBACKS[:4]:
            prefix = spans[0][2]
            row = corpus()[ident]
            lines = [str(line) for line in row["lines"]]  # type: ignore[attr-defined]
            key_line = lines[int(row["key_line_index"])]  # type: ignore[call-overload]
            event = next(e for e in run(lines, benign(), plain) if e.context)
            found.append(event.line == key_line.removeprefix(prefix))
        assert [True] * 4 == found

    def test_most_corpus_tracebacks_match_a_signature(self, engine: Engine) -> None:
        """The check above is not vacuous: the catalog knows most of these tracebacks."""
        rows = corpus()
        known = [
            primary(engine, str(rows[i]["lines"][int(rows[i]["key_line_index"])]))  # type: ignore[index, call-overload]
            for i, _ in TRACEBACKS
        ]
        assert 3 <= sum(found is not None for found in known)


def _first_offset(event: LogEvent) -> int:
    """The offset of the first record an event covers."""
    return event.origin.offset or 0


def _pod(event: LogEvent) -> str | None:
    """The pod of an event: its source pod, else its Kafka key."""
    return event.source.pod or event.origin.key
