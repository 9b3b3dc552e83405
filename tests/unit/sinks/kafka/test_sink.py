"""The sink's delivery rules with a fake producer: retry failed records only, reject oversized ones."""

import asyncio
from dataclasses import replace
from typing import Any

import orjson
from aiokafka import AIOKafkaProducer, TopicPartition
from aiokafka.errors import KafkaConnectionError, MessageSizeTooLargeError, OutOfOrderSequenceNumber

from logsig.config import KafkaSettings
from logsig.decode.settings import DecodeSettings
from logsig.matchers.engine.engine import Engine
from logsig.matchers.signature import Signature
from logsig.pipeline import Pipeline, StepResult
from logsig.records import DecodeFailure
from logsig.sinks.kafka.sink import KafkaSink, OutRecord
from logsig.telemetry import Metrics
from logsig.testing import fresh_metrics, make_record


class FakeProducer:
    """Fails each value per a script of errors (None = acknowledged), recording what was sent."""

    def __init__(self, script: dict[bytes, list[BaseException | None]]) -> None:
        self.script = script
        self.sent: list[bytes] = []

    async def send(self, topic: str, value: bytes, **_: Any) -> "asyncio.Future[object]":
        self.sent.append(value)
        future: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        outcome = self.script.get(value, [None]).pop(0) if self.script.get(value) else None
        if isinstance(outcome, MessageSizeTooLargeError) and value == b"client-side":
            raise outcome
        future.set_exception(outcome) if outcome is not None else future.set_result(None)
        return future

    async def stop(self) -> None:
        return None


async def _no_sleep(_: float) -> None:
    return None


class TestDeliver:
    async def test_only_failed_records_are_sent_again(self) -> None:
        """A record acknowledged on the first try is not produced twice."""
        sink = KafkaSink(KafkaSettings())
        fake = FakeProducer({b"b": [KafkaConnectionError(), None]})
        sink._producer = fake  # type: ignore[assignment]
        rejected = await sink.produce([OutRecord("t", b"a"), OutRecord("t", b"b")], lambda: False, _no_sleep)
        assert ([], [b"a", b"b", b"b"]) == (rejected, fake.sent)

    async def test_oversized_records_are_rejected_not_retried(self) -> None:
        """A record the broker can never take is returned as rejected and never blocks the rest."""
        sink = KafkaSink(KafkaSettings())
        fake = FakeProducer({b"big": [MessageSizeTooLargeError()], b"client-side": [MessageSizeTooLargeError()]})
        sink._producer = fake  # type: ignore[assignment]
        records = [OutRecord("t", b"big"), OutRecord("t", b"client-side"), OutRecord("t", b"ok")]
        rejected = await sink.produce(records, lambda: False, _no_sleep)
        assert [(b"big", "MessageSizeTooLargeError"), (b"client-side", "MessageSizeTooLargeError")] == sorted(
            (r.value, error) for r, error in rejected)

    async def test_unusable_producer_is_replaced(self) -> None:
        """After OutOfOrderSequenceNumber the producer is restarted before the retry."""
        sink = KafkaSink(KafkaSettings())
        first = FakeProducer({b"a": [OutOfOrderSequenceNumber()]})
        second = FakeProducer({})
        sink._producer = first  # type: ignore[assignment]

        async def start() -> None:
            sink._producer = second  # type: ignore[assignment]

        sink._open = start  # type: ignore[method-assign]
        assert [] == await sink.produce([OutRecord("t", b"a")], lambda: False, _no_sleep)
        assert ([b"a"], [b"a"]) == (first.sent, second.sent)

    async def test_failing_delivery_is_trouble_until_acknowledged(self) -> None:
        """While a failed record waits for its retry the sink reports trouble; once acknowledged, none."""
        sink = KafkaSink(KafkaSettings())
        sink._producer = FakeProducer({b"a": [KafkaConnectionError(), None]})  # type: ignore[assignment]
        seen: list[str | None] = []

        async def sleep(_: float) -> None:
            seen.append(sink.trouble())

        await sink.produce([OutRecord("t", b"a")], lambda: False, sleep)
        assert (["Kafka sink retrying 1 records against the broker"], None) == (seen, sink.trouble())

    async def test_give_up_returns_none(self) -> None:
        """While stopping, a failing batch is abandoned (nothing may be committed)."""
        sink = KafkaSink(KafkaSettings())
        sink._producer = FakeProducer({b"a": [KafkaConnectionError()] * 5})  # type: ignore[assignment]
        assert None is await sink.produce([OutRecord("t", b"a")], lambda: True, _no_sleep)


class TestOutcomes:
    async def test_one_outcome_per_output_telling_incident_from_dead_letter(self) -> None:
        """A dead letter refused once in a batch is sent again alone; both outputs come back delivered."""
        pipeline = Pipeline(Engine([Signature(id="t/oom", signature="s", regex="out of memory")]), DecodeSettings())
        step = pipeline.process([make_record("out of memory", 0), make_record(b"\xff\xfe", 1)], 0.0)
        sink = KafkaSink(KafkaSettings())
        sink._producer = FakeProducer({b"\xff\xfe": [MessageSizeTooLargeError()]})  # type: ignore[assignment]
        outcomes = await sink.deliver(step, lambda: False, _no_sleep)
        assert [("incident", True, None), ("dead_letter", True, None)] == [
            (o.kind, o.delivered, o.reason) for o in outcomes or []]


class SizeLimitedProducer:
    """Acknowledges records of at most ``limit`` bytes (value, key and headers), refuses larger ones as
    a topic with a small ``max.message.bytes`` does; ``sent`` keeps every record acknowledged."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.sent: list[tuple[bytes, bytes | None, dict[str, bytes]]] = []

    async def send(self, topic: str, value: bytes, key: bytes | None = None, headers: Any = (),
                   **_: Any) -> "asyncio.Future[object]":
        future: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        size = len(value) + len(key or b"") + sum(len(k) + len(v) for k, v in headers)
        if size > self.limit:
            future.set_exception(MessageSizeTooLargeError())
        else:
            self.sent.append((value, key, dict(headers)))
            future.set_result(None)
        return future

    async def stop(self) -> None:
        return None


def _step(value: bytes, key: bytes | None = None) -> StepResult:
    pipeline = Pipeline(Engine([Signature(id="t/oom", signature="s", regex="out of memory")]), DecodeSettings())
    return pipeline.process([make_record(value, 0, key=key)], 0.0)


def _shrunk(metrics: Metrics, kind: str, step: str) -> float | None:
    return metrics.registry.get_sample_value("logsig_outputs_shrunk_total", {"kind": kind, "step": step})


class TestShrink:
    async def test_incident_of_a_record_with_a_huge_key_is_written_without_the_key_copy(self) -> None:
        """A 2 MiB input key makes the incident too large; it is written trimmed, keyed by topic/partition."""
        metrics = fresh_metrics()
        metrics.init_sinks(["kafka"])
        sink = KafkaSink(KafkaSettings(), metrics)
        producer = SizeLimitedProducer(1024 * 1024)
        sink._producer = producer  # type: ignore[assignment]
        outcomes = await sink.deliver(_step(b"out of memory", key=b"k" * (2 << 20)), lambda: False, _no_sleep)
        value, key, _ = producer.sent[0]
        assert ([True], b"logs/0", None, 1.0) == ([o.delivered for o in outcomes or []], key,
                                                  orjson.loads(value)["source"]["key"],
                                                  _shrunk(metrics, "incident", "trimmed"))

    async def test_small_topic_gets_a_minimal_incident(self) -> None:
        """A topic taking 2,000 bytes gets the incident of a long traceback line in minimal form, counted."""
        metrics = fresh_metrics()
        metrics.init_sinks(["kafka"])
        sink = KafkaSink(KafkaSettings(), metrics)
        producer = SizeLimitedProducer(2000)
        sink._producer = producer  # type: ignore[assignment]
        await sink.deliver(_step(b"x" * 3000 + b" out of memory"), lambda: False, _no_sleep)
        incident = orjson.loads(producer.sent[0][0])
        assert ("t/oom", 256, 1.0) == (incident["signature"]["id"], len(incident["match"]["line"]),
                                       _shrunk(metrics, "incident", "minimal"))

    async def test_dead_letter_with_big_headers_is_written_without_them(self) -> None:
        """A dead letter whose original headers exceed the limit is written with logsig headers only."""
        sink = KafkaSink(KafkaSettings())
        producer = SizeLimitedProducer(4096)
        sink._producer = producer  # type: ignore[assignment]
        record = make_record(b"\xff\xfe", 3)
        step = StepResult(failures=[DecodeFailure("not_utf8", "bad", replace(record, headers=(("h", b"v" * 9000),)))])
        await sink.deliver(step, lambda: False, _no_sleep)
        headers = producer.sent[0][2]
        assert (b"not_utf8", b"3", b"1", "h" in headers) == (
            headers["logsig.reason"], headers["logsig.source.offset"], headers["logsig.original_headers"], False)

    async def test_refused_minimal_incident_blocks_and_says_so_until_taken(self) -> None:
        """A topic refusing even the minimal incident blocks delivery (readiness and gauge say so) until it takes it."""
        metrics = fresh_metrics()
        sink = KafkaSink(KafkaSettings(), metrics)
        producer = SizeLimitedProducer(10)
        sink._producer = producer  # type: ignore[assignment]
        seen: list[tuple[str | None, float | None]] = []

        async def sleep(_: float) -> None:
            seen.append((sink.trouble(), metrics.registry.get_sample_value("logsig_delivery_blocked")))
            if len(seen) == 3:
                producer.limit = 1 << 20  # the operator raised max.message.bytes

        outcomes = await sink.deliver(_step(b"out of memory"), lambda: False, sleep)
        assert (3, True, 1.0) == (len(seen), "max.message.bytes" in (seen[0][0] or ""), seen[0][1])
        assert ([True], None, 0.0) == ([o.delivered for o in outcomes or []], sink.trouble(),
                                       metrics.registry.get_sample_value("logsig_delivery_blocked"))

    async def test_blocked_delivery_gives_up_when_stopping(self) -> None:
        """While blocked, a stop gives up (None: nothing is committed) instead of dropping the incident."""
        sink = KafkaSink(KafkaSettings())
        sink._producer = SizeLimitedProducer(10)  # type: ignore[assignment]
        tries: list[float] = []

        async def sleep(delay: float) -> None:
            tries.append(delay)

        assert None is await sink.deliver(_step(b"out of memory"), lambda: len(tries) >= 2, sleep)


class TestBatching:
    async def test_a_steps_incidents_share_one_batch_per_partition(self) -> None:
        """Thirty 2 KB incidents are queued into one producer batch (one request), none waits for a round trip."""
        producer = AIOKafkaProducer(**KafkaSink(KafkaSettings())._producer_options())
        partition = TopicPartition("incidents", 0)
        try:
            for _ in range(30):
                await producer._message_accumulator.add_message(partition, None, b"x" * 2000, timeout=0.1)
            batches = len(producer._message_accumulator._batches[partition])
        finally:
            await producer.stop()
        assert 1 == batches
