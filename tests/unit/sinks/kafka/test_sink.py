"""The sink's delivery rules with a fake producer: retry failed records only, reject oversized ones."""

import asyncio
from typing import Any

from aiokafka.errors import KafkaConnectionError, MessageSizeTooLargeError, OutOfOrderSequenceNumber

from logsig.config import KafkaSettings
from logsig.decode.settings import DecodeSettings
from logsig.matchers.engine.engine import Engine
from logsig.matchers.signature import Signature
from logsig.pipeline import Pipeline
from logsig.sinks.kafka.sink import KafkaSink, OutRecord
from logsig.testing import make_record


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

    async def test_give_up_returns_none(self) -> None:
        """While stopping, a failing batch is abandoned (nothing may be committed)."""
        sink = KafkaSink(KafkaSettings())
        sink._producer = FakeProducer({b"a": [KafkaConnectionError()] * 5})  # type: ignore[assignment]
        assert None is await sink.produce([OutRecord("t", b"a")], lambda: True, _no_sleep)


class TestOutcomes:
    async def test_one_outcome_per_output_telling_incident_from_dead_letter(self) -> None:
        """An oversized dead letter comes back as a rejected dead letter; the incident as delivered."""
        pipeline = Pipeline(Engine([Signature(id="t/oom", signature="s", regex="out of memory")]), DecodeSettings())
        step = pipeline.process([make_record("out of memory", 0), make_record(b"\xff\xfe", 1)], 0.0)
        sink = KafkaSink(KafkaSettings())
        sink._producer = FakeProducer({b"\xff\xfe": [MessageSizeTooLargeError()]})  # type: ignore[assignment]
        outcomes = await sink.deliver(step, lambda: False, _no_sleep)
        assert [("incident", True, None), ("dead_letter", False, "record_too_large")] == [
            (o.kind, o.delivered, o.reason) for o in outcomes or []]
