"""The batch-first pipeline gives exactly the incidents, dead letters and counts of the reference.

Inputs: every line of the corpus (real failures and benign lines) as a file and as Kafka records
of several keys and partitions, every envelope fixture, the mixed stream, lines built to sit on
each edge of the glance (empty, JSON-like, escapes, colour codes, CRI, non-UTF-8, overlong,
tracebacks cut by batch ends), and seeded random mixes of all of them in random batches.
"""

from __future__ import annotations

import base64
import json
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import orjson
import pytest

from logsig.batch import RecordBatch, batch_of_lines
from logsig.decode.settings import DecodeSettings
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.pipeline import Pipeline, StepResult
from logsig.sources.kafka import batch_of_messages
from tests.unit.pipeline.reference import ReferencePipeline

DATA = Path(__file__).parents[2] / "data"
CLOCK = datetime(2026, 1, 1, tzinfo=UTC)
TRACE = ["Traceback (most recent call last):", '  File "/app/x.py", line 3, in run',
         "    raise RuntimeError('x')", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"]
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
EDGE_TEXTS = [
    "", "[1, 2]", f"[{OOM!r}]", f'"{OOM}"', f"[INFO] {OOM}", f'"{OOM}', f' {{"log": "{OOM}"}}', f'  "{OOM}"',
    f"\t{OOM}", f"\n{OOM}", f"{OOM}\n", f"{OOM}\r", "torch.OutOfMemoryError: CUDA out\x1b[0m of memory. Tried",
    f"\x1b[31m{OOM}\x1b[0m", f"#033[31m{OOM}#033[0m", f'worker: \\"{OOM}\\"', f"worker:\\n {OOM}",
    f"escaped \\u001b[31m {OOM}", f"C:\\path\\to {OOM}", f"2025-05-04T12:23:00.123456789Z stdout F {OOM}",
    "2025-05-04T12:23:00.123456789Z stdout P torch.OutOfMemoryError: CUDA out ",
    "2025-05-04T12:23:01.000000000Z stdout F of memory. Tried to allocate 2.00 GiB", f"caf\u00e9 {OOM}",
    f"{'x' * 70_000} {OOM}", f"{OOM} {'y' * 70_000}", f"{'z' * 1_100_000} {OOM}", *TRACE, "an ordinary line",
    "RuntimeError: CUDA error: an illegal memory access was encountered", f"{{\"msg\": \"{OOM}\"}}",
    "RuntimeError: CUDA error: an illegal mem\x1b[0mory access was encountered",
    "RuntimeError: CUDA error: an illegal mem#033[0mory access was encountered",
    "worker: \\\"RuntimeError: CUDA error: an illegal mem\\u006fry access was encountered\\\"",
]
EDGES: list[bytes] = [text.encode() for text in EDGE_TEXTS] + [
    b"\xff\xfe " + OOM.encode(), b"\xef\xbb\xbf" + orjson.dumps({"log": OOM}), b"\x81\xa3log" + OOM.encode()[:31],
    b"\xef\xbb\xbf" + orjson.dumps({"log": "part", "stream": "stdout", "_p": "P"}),
]



def fluent_bit(log: object, **extra: object) -> bytes:
    """A Fluent Bit ``format json`` record of a CRI line with Kubernetes metadata (``extra`` keys added)."""
    record = {"@timestamp": 1746361380.123, "time": "2025-05-04T12:23:00.123456789Z", "stream": "stdout", "_p": "F",
              "log": log, "kubernetes": {"pod_name": "vllm-0", "namespace_name": "inference",
                                         "container_name": "vllm", "labels": {"app": "vllm"}}, **extra}
    return json.dumps(record).encode()


JSON_MAPS: list[bytes] = [
    fluent_bit("an ordinary line"), fluent_bit(OOM), fluent_bit(OOM + "\n"), fluent_bit("line\n\n"),
    fluent_bit("two\nlines " + OOM), fluent_bit(f'quoted "{OOM}"'), fluent_bit(f"caf\u00e9 {OOM}"),
    fluent_bit("caf\u00e9"), fluent_bit(f"\x1b[31m{OOM}\x1b[0m"), fluent_bit(f"#033[31m{OOM}"),
    fluent_bit(f"{OOM}\r"), fluent_bit(f'worker: \\"{OOM}\\"'), fluent_bit(f"2025-05-04T12:23:00.1Z stdout F {OOM}"),
    fluent_bit(f'{{"msg": "{OOM}", "level": "error"}}'), fluent_bit(f"[{OOM!r}]"), fluent_bit(""), fluent_bit("x" * 20_000),
    fluent_bit("x" * 16_000), fluent_bit(OOM, level="error"), fluent_bit("a failed request", level="error"),
    fluent_bit("a failed request", severity="ERROR"), fluent_bit("a failed request", levelname="ERROR"),
    fluent_bit("a failed request", severity_text="ERROR"), fluent_bit("a failed request", severityText="ERROR"),
    fluent_bit("part of a line ", _p="P"), fluent_bit("part of a line ", logtag="P"), fluent_bit("text", _p=1),
    fluent_bit("an error body", object="error"), fluent_bit("x", resourceLogs=[]), fluent_bit(None),
    fluent_bit(["a list"]), fluent_bit("big", n=1e300) .replace(b"1e+300", b"1e400"), fluent_bit("big", n=10 ** 400),
    fluent_bit("fine", n=10 ** 30), fluent_bit("fine", n=1.5e-300), fluent_bit("hex 1e123 ids", n="1e123"),
    fluent_bit("bad utf-8 in a label").replace(b'"vllm"}', b'"vl\xffm"}'), b'{"log": "a", }',
    b'{"lo\\u0067": "' + OOM.encode() + b'"}', b'{"log": "a", "le\\u0076el": "error", "msg": "' + OOM.encode() + b'"}',
    b'{"log": "first", "log": "' + OOM.encode() + b'"}', b'{"_p": "P", "log": "x", "_p": "F"}',
    b'{"log": "x", "n": [' + b"[" * 1100 + b"]" * 1100 + b"]}", b'{"log": "x"} trailing', b'  {"log": "' + OOM.encode() + b'"}',
    b'{"message": "' + OOM.encode() + b'", "stream": "stdout"}', b'{"log": "x", "kubernetes": {"pod_name": 7}}',
    b'{"log": "Traceback (most recent call last):", "stream": "stderr"}', b'{"log": "a\\u0000b"}',
    b'{"object": "error", "log": "ordinary", "message": "' + OOM.encode() + b'"}', fluent_bit("z" * 1900),
    orjson.dumps({"log": "d" * 16384, "stream": "stdout"}), orjson.dumps({"log": OOM[:20], "stream": "stdout"}),
    *(fluent_bit(line) for line in TRACE), *(fluent_bit(f"(VllmWorker rank=1 pid=7) {line}") for line in TRACE),
]
"""JSON maps on each edge of the peek (:mod:`logsig.decode.peek`): what it may take, and what it must leave."""


class Message(NamedTuple):
    """A fetched Kafka message (the fields a batch reads)."""

    value: bytes | None
    key: bytes | None
    offset: int
    timestamp: int
    headers: tuple[tuple[str, bytes], ...] = ()


@pytest.fixture(scope="module")
def engine() -> Engine:
    """The built-in catalog, banners included."""
    return Engine(load_catalog([], builtin=True).signatures)


def corpus_lines() -> list[bytes]:
    """Every line of the real-failure corpus, then every benign line."""
    lines = []
    for row in map(json.loads, (DATA / "corpus" / "real_logs.jsonl").read_text().splitlines()):
        lines.extend(line.encode() for line in row["lines"])
    lines.extend(json.loads(row)["line"].encode() for row in (DATA / "corpus" / "benign_lines.jsonl").read_text()
                 .splitlines() if row.strip())
    return lines


def envelope_values() -> list[bytes]:
    """The value of every envelope fixture, as on the wire."""
    values = []
    for path in sorted((DATA / "envelopes").glob("*.json")):
        fixture: dict[str, Any] = json.loads(path.read_text())
        if "value_file" in fixture:
            values.append((DATA / "envelopes" / fixture["value_file"]).read_bytes())
        elif "value_text" in fixture:
            values.append(fixture["value_text"].encode())
        else:
            values.append(orjson.dumps(fixture["value"]))
    return values


def mixed_stream() -> list[tuple[bytes, bytes | None]]:
    """The mixed stream's (value, key) pairs."""
    rows = [json.loads(line) for line in (DATA / "envelopes" / "mixed_stream.jsonl").read_text().splitlines()]
    return [(base64.b64decode(row["value_b64"]), None if row["key"] is None else row["key"].encode()) for row in rows]


def kafka_batches(pairs: list[tuple[bytes, bytes | None]], sizes: list[int], partitions: int = 1) -> list[RecordBatch]:
    """``pairs`` as fetched batches of the given sizes, record ``n`` on partition ``n % partitions``."""
    next_offset = [0] * partitions
    batches, start = [], 0
    for size in sizes:
        chunk = pairs[start:start + size]
        by_tp: dict[tuple[str, int], list[Message]] = {}
        for n, (value, key) in enumerate(chunk, start=start):
            partition = n % partitions
            by_tp.setdefault(("logs", partition), []).append(
                Message(value, key, next_offset[partition], 1_700_000_000_000 + n, (("h", b"v"),)))
            next_offset[partition] += 1
        batches.append(batch_of_messages(by_tp))
        start += size
    return batches


def file_batches(lines: list[bytes], sizes: list[int]) -> list[RecordBatch]:
    """``lines`` as batches of a file, the given sizes."""
    batches, start = [], 0
    for size in sizes:
        batches.append(batch_of_lines(lines[start:start + size], "input.log", start + 1))
        start += size
    return batches


def cut(total: int, size: int) -> list[int]:
    """Batch sizes of ``size`` covering ``total`` records."""
    return [min(size, total - start) for start in range(0, total, size)]


def outcome(step: StepResult) -> tuple[list[bytes], list[tuple[str, str, object]], int, int]:
    """What a step produced, comparable: incident JSON, dead letters, event and truncation counts."""
    return ([d.incident.to_json() for d in step.detections],
            [(f.reason, f.detail, f.record) for f in step.failures], step.events, step.truncated)


def run(pipeline: Pipeline, batches: list[RecordBatch], settings: DecodeSettings) -> list[object]:
    """Every step's outcome and held offsets, then the final flush's outcome."""
    out: list[object] = []
    for n, batch in enumerate(batches):
        out.append((outcome(pipeline.process_batch(batch, float(n))), pipeline.held_offsets()))
    out.append(outcome(pipeline.flush_all()))
    return out


def same(engine: Engine, batches: list[RecordBatch], settings: DecodeSettings | None = None) -> tuple[object, object]:
    """The reference's and the batch-first pipeline's results on ``batches``."""
    settings = settings or DecodeSettings()
    reference = ReferencePipeline(engine, settings, clock=lambda: CLOCK)
    batched = Pipeline(engine, settings, clock=lambda: CLOCK)
    return run(reference, batches, settings), run(batched, batches, settings)


class TestDifferential:
    @pytest.mark.parametrize("size", [1, 7, 4096])
    def test_corpus_as_a_file(self, engine: Engine, size: int) -> None:
        """Every corpus line, as lines of a file in batches of ``size``."""
        lines = corpus_lines()
        expected, actual = same(engine, file_batches(lines, cut(len(lines), size)))
        assert expected == actual

    @pytest.mark.parametrize("partitions", [1, 3])
    def test_corpus_as_keyed_kafka_records(self, engine: Engine, partitions: int) -> None:
        """Every corpus line, keyed by one of five pods, over ``partitions`` partitions."""
        lines = corpus_lines()
        pairs = [(line, f"pod-{n % 5}".encode() if n % 7 else None) for n, line in enumerate(lines)]
        expected, actual = same(engine, kafka_batches(pairs, cut(len(pairs), 100), partitions))
        assert expected == actual

    def test_every_envelope_fixture(self, engine: Engine) -> None:
        """Each envelope fixture alone, and all of them in one batch."""
        values = [(value, None) for value in envelope_values()]
        expected, actual = same(engine, kafka_batches(values, [1] * len(values)) + kafka_batches(values, [len(values)]))
        assert expected == actual

    @pytest.mark.parametrize("size", [1, 5, 64, 10_000])
    def test_mixed_stream(self, engine: Engine, size: int) -> None:
        """The mixed stream in batches of ``size``."""
        pairs = mixed_stream()
        expected, actual = same(engine, kafka_batches(pairs, cut(len(pairs), size)))
        assert expected == actual

    def test_edges_of_the_glance(self, engine: Engine) -> None:
        """Lines on each edge of the glance, alone, together, and between plain lines."""
        lines = [line for edge in EDGES for line in (b"plain before", edge, b"plain after")]
        expected, actual = same(engine, file_batches(EDGES, [1] * len(EDGES)) + file_batches(lines, [len(lines)]))
        assert expected == actual

    def test_edges_as_kafka_records_with_tombstones(self, engine: Engine) -> None:
        """The edge lines and a tombstone as records of two keys, one batch."""
        pairs: list[tuple[bytes | None, bytes | None]] = [(edge, b"a" if n % 2 else b"b") for n, edge in enumerate(EDGES)]
        pairs.append((None, b"a"))
        expected, actual = same(engine, kafka_batches(pairs, [len(pairs)]))  # type: ignore[arg-type]
        assert expected == actual

    def test_fixed_envelopes(self, engine: Engine) -> None:
        """The edge lines under the text, cri and json envelopes."""
        for envelope in ("text", "cri", "json"):
            settings = DecodeSettings(envelope=envelope)
            expected, actual = same(engine, file_batches(EDGES, [len(EDGES)]), settings)
            assert (envelope, expected) == (envelope, actual)

    @pytest.mark.parametrize("size", [1, 4, 1000])
    def test_json_maps_on_the_edges_of_the_peek(self, engine: Engine, size: int) -> None:
        """Each edge map, between plain lines and ordinary maps, over two keys, in batches of ``size``."""
        ordinary = fluent_bit("an ordinary line")
        values = [value for edge in JSON_MAPS for value in (ordinary, edge, b"plain line", ordinary)]
        pairs = [(value, b"pod-a" if n % 3 else b"pod-b") for n, value in enumerate(values)]
        expected, actual = same(engine, kafka_batches(pairs, cut(len(pairs), size), partitions=2))
        assert expected == actual

    @pytest.mark.parametrize("envelope", ["auto", "json", "text", "cri"])
    def test_json_maps_under_each_envelope(self, engine: Engine, envelope: str) -> None:
        """The edge maps in one batch under ``envelope``, with a small ``decode.max_value_bytes``."""
        settings = DecodeSettings(envelope=envelope, max_value_bytes=2048)
        expected, actual = same(engine, file_batches(JSON_MAPS, [len(JSON_MAPS)]), settings)
        assert (envelope, expected) == (envelope, actual)

    @pytest.mark.parametrize("size", [1, 3, 100])
    def test_tagged_traceback_open_across_other_lines(self, engine: Engine, size: int) -> None:
        """A traceback of one process stays open while other processes' and untagged lines pass by."""
        tag = "(VllmWorker rank=1 pid=7) "
        lines = [f"{tag}ERROR 05-01 14:39:06 [core.py:1] Worker failed: Traceback (most recent call last):",
                 "an untagged line", f"(APIServer pid=1) {OOM}", f"{tag}  File \"/app/x.py\", line 3, in run",
                 OOM, "another untagged line", f"{tag}{OOM}", "after it", f"{tag}INFO 05-01 14:39:07 [x.py:2] ok"]
        data = [line.encode() for line in lines * 3]
        expected, actual = same(engine, file_batches(data, cut(len(data), size)))
        assert expected == actual

    @pytest.mark.parametrize("seed", range(8))
    def test_random_mixes(self, engine: Engine, seed: int) -> None:
        """A seeded mix of every input above, tracebacks kept in order, in random batches over two keys."""
        rng = random.Random(seed)
        pool = corpus_lines() + envelope_values() + [value for value, _ in mixed_stream()] + EDGES + JSON_MAPS
        lines = [rng.choice(pool) for _ in range(3000)]
        for at in rng.sample(range(len(lines)), 20):
            lines[at:at] = [line.encode() for line in TRACE]
        pairs = [(line, rng.choice([b"pod-a", b"pod-b", None])) for line in lines]
        sizes: list[int] = []
        while sum(sizes) < len(pairs):
            sizes.append(min(rng.choice([1, 3, 50, 500]), len(pairs) - sum(sizes)))
        expected, actual = same(engine, kafka_batches(pairs, sizes, partitions=2))
        assert expected == actual
