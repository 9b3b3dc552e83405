"""The exactly-once sink's rules with a fake transactional producer: what a transaction holds when it commits."""

import asyncio
from typing import Any

from aiokafka.errors import KafkaConnectionError, ProducerFenced

from logsig.config import KafkaSettings
from logsig.sinks.kafka.records import OutRecord
from logsig.sinks.kafka.transactional import TransactionalKafkaSink


class FakeTxnProducer:
    """Records each transaction (values sent, offsets, outcome); ``fail_commits`` commits raise first."""

    def __init__(self, fail_sends: dict[bytes, int] | None = None, fail_commits: int = 0) -> None:
        self.fail_sends = dict(fail_sends or {})
        self.fail_commits = fail_commits
        self.open: list[bytes] | None = None
        self.offsets: dict[Any, int] = {}
        self.committed: list[tuple[list[bytes], dict[tuple[str, int], int]]] = []
        self.begun = 0

    async def begin_transaction(self) -> None:
        assert self.open is None, "a transaction is already open"
        self.open, self.offsets = [], {}
        self.begun += 1

    async def send(self, topic: str, value: bytes, **_: Any) -> "asyncio.Future[object]":
        assert self.open is not None, "send outside a transaction"
        future: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        if self.fail_sends.get(value, 0) > 0:
            self.fail_sends[value] -= 1
            future.set_exception(KafkaConnectionError())
        else:
            self.open.append(value)
            future.set_result(None)
        return future

    async def send_offsets_to_transaction(self, offsets: dict[Any, int], group_id: str) -> None:
        self.offsets = {(tp.topic, tp.partition): o for tp, o in offsets.items()}

    async def commit_transaction(self) -> None:
        assert self.open is not None
        if self.fail_commits > 0:
            self.fail_commits -= 1
            raise ProducerFenced()
        self.committed.append((self.open, self.offsets))
        self.open = None

    async def stop(self) -> None:
        self.open = None


def _sink(producers: list[FakeTxnProducer]) -> TransactionalKafkaSink:
    """A sink whose producer is the first fake; each restart (abort) takes the next one."""
    settings = KafkaSettings(delivery="exactly_once", group_instance_id="pod-0", retry_backoff_max_seconds=0.01)
    sink = TransactionalKafkaSink(settings, give_up_after_seconds=1.0)
    queue = list(producers)
    sink._producer = queue.pop(0)  # type: ignore[assignment]

    async def start() -> None:
        sink._producer = queue.pop(0)  # type: ignore[assignment]

    sink._open = start  # type: ignore[method-assign]
    return sink


async def _no_sleep(_: float) -> None:
    return None


class TestTransactionalKafkaSink:
    async def test_records_and_offsets_commit_in_one_transaction(self) -> None:
        """A delivered batch and its offsets are committed together, once."""
        fake = FakeTxnProducer()
        sink = _sink([fake])
        assert [] == await sink.produce([OutRecord("out", b"a"), OutRecord("out", b"b")], lambda: False, _no_sleep)
        assert await sink.commit({("in", 0): 2})
        assert [([b"a", b"b"], {("in", 0): 2})] == fake.committed

    async def test_failed_send_aborts_and_resends_every_staged_record(self) -> None:
        """A send failure replaces the producer (aborting the transaction) and the new one sends the whole batch."""
        first, second = FakeTxnProducer(fail_sends={b"b": 1}), FakeTxnProducer()
        sink = _sink([first, second])
        await sink.produce([OutRecord("out", b"a"), OutRecord("out", b"b")], lambda: False, _no_sleep)
        assert await sink.commit({("in", 0): 2})
        assert ([], [([b"a", b"b"], {("in", 0): 2})]) == (first.committed, second.committed)

    async def test_failed_commit_is_retried_with_the_same_records(self) -> None:
        """A commit that fails (fenced) runs the whole transaction again; nothing commits without its records."""
        first, second = FakeTxnProducer(fail_commits=1), FakeTxnProducer()
        sink = _sink([first, second])
        await sink.produce([OutRecord("out", b"a")], lambda: False, _no_sleep)
        assert await sink.commit({("in", 0): 1})
        assert ([], [([b"a"], {("in", 0): 1})]) == (first.committed, second.committed)

    async def test_unchanged_offsets_open_no_transaction(self) -> None:
        """An idle poll with nothing sent and offsets already committed costs no transaction."""
        fake = FakeTxnProducer()
        sink = _sink([fake])
        await sink.produce([OutRecord("out", b"a")], lambda: False, _no_sleep)
        await sink.commit({("in", 0): 1})
        await sink.produce([], lambda: False, _no_sleep)
        await sink.commit({("in", 0): 1})
        assert 1 == fake.begun

    async def test_give_up_while_stopping_commits_nothing(self) -> None:
        """While stopping, a batch that cannot be sent is abandoned (None): its offsets stay uncommitted."""
        producers = [FakeTxnProducer(fail_sends={b"a": 99}) for _ in range(3)]
        sink = _sink(producers)
        assert None is await sink.produce([OutRecord("out", b"a")], lambda: True, _no_sleep)
        assert [] == [p.committed for p in producers if p.committed]
