"""What the Kafka source asks of its consumer: static membership, heartbeats, isolation, and where commits go."""

from typing import Any, ClassVar

import pytest

import logsig.sources.kafka as source_module
from logsig.config import KafkaSettings
from logsig.records import TP
from logsig.sources.kafka import KafkaSource


class RecordingConsumer:
    """Stands in for AIOKafkaConsumer: keeps its keyword arguments and every commit."""

    last: "RecordingConsumer | None" = None

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.commits: list[dict[Any, int]] = []
        RecordingConsumer.last = self

    async def start(self) -> None:
        return None

    def subscribe(self, topics: list[str], listener: Any) -> None:
        return None

    async def commit(self, offsets: dict[Any, int]) -> None:
        self.commits.append(offsets)


@pytest.fixture
def recording(monkeypatch: pytest.MonkeyPatch) -> type[RecordingConsumer]:
    monkeypatch.setattr(source_module, "AIOKafkaConsumer", RecordingConsumer)
    return RecordingConsumer


class TestKafkaSourceMembership:
    async def test_static_member_with_its_heartbeat(self, recording: type[RecordingConsumer]) -> None:
        """group_instance_id and heartbeat_interval_ms reach the consumer; at least once reads uncommitted."""
        source = KafkaSource(KafkaSettings(group_instance_id="logsig-0", heartbeat_interval_ms=1000))
        await source.start()
        assert recording.last is not None
        kwargs = recording.last.kwargs
        assert ("logsig-0", 1000, "read_uncommitted") == (
            kwargs["group_instance_id"], kwargs["heartbeat_interval_ms"], kwargs["isolation_level"])

    async def test_exactly_once_reads_committed_and_commits_through_the_transaction(
            self, recording: type[RecordingConsumer]) -> None:
        """With delivery=exactly_once the input is read committed and offsets go to commit_via, not the consumer."""
        sent: list[dict[TP, int]] = []

        async def commit_via(offsets: dict[TP, int]) -> bool:
            sent.append(offsets)
            return True

        settings = KafkaSettings(delivery="exactly_once", group_instance_id="logsig-0")
        source = KafkaSource(settings, commit_via=commit_via)
        await source.start()
        assert await source.commit({("in", 0): 7})
        assert recording.last is not None
        assert ("read_committed", [{("in", 0): 7}], []) == (
            recording.last.kwargs["isolation_level"], sent, recording.last.commits)

    def test_no_partitions_before_the_consumer_started(self) -> None:
        """Before start (the broker not reached yet) the source has no partitions; it does not raise."""
        assert set() == KafkaSource(KafkaSettings()).assignment()


class UnreachableConsumer(RecordingConsumer):
    """A consumer whose broker went away after it started: metadata and positions fail."""

    answers: ClassVar[list[object]] = []

    async def topics(self) -> set[str]:
        answer = UnreachableConsumer.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer  # type: ignore[return-value]

    def assignment(self) -> set[Any]:
        from aiokafka import TopicPartition
        return {TopicPartition("logs", 0)}

    def highwater(self, tp: Any) -> int:
        return 10

    async def position(self, tp: Any) -> int:
        from aiokafka.errors import KafkaConnectionError
        raise KafkaConnectionError("Unable to bootstrap")


class TestBrokerGone:
    async def test_topic_checks_and_lag_survive_an_unreachable_broker(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """While no broker answers, missing_topics keeps its previous answer and lag leaves the partition
        out, instead of raising into the daemon's housekeeping."""
        from aiokafka.errors import KafkaError
        monkeypatch.setattr(source_module, "AIOKafkaConsumer", UnreachableConsumer)
        UnreachableConsumer.answers = [{"other"}, KafkaError("Unable to get cluster metadata over all known brokers")]
        source = KafkaSource(KafkaSettings(topics=["logs"]))
        await source.start()
        assert (["logs"], ["logs"], {}) == (await source.missing_topics(), await source.missing_topics(),
                                            await source.lag())
