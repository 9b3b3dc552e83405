"""Library log lines are rate-limited per message."""

import logging

from logsig.log import QuietFilter, RepeatFilter


def _record(msg: str) -> logging.LogRecord:
    return logging.LogRecord("aiokafka", logging.ERROR, __file__, 1, msg, None, None)


class TestRepeatFilter:
    def test_repeats_are_suppressed_then_counted(self) -> None:
        """The same message passes once per interval; the next one says how many were dropped."""
        now = [0.0]
        f = RepeatFilter(interval_seconds=10, clock=lambda: now[0])
        passed = [f.filter(_record("Unable connect to node %s")) for _ in range(5)]
        now[0] = 11.0
        later = _record("Unable connect to node %s")
        assert [True, False, False, False, False] == passed
        assert f.filter(later)
        assert "(repeated 4 times in 10s)" in str(later.msg)

    def test_other_messages_pass(self) -> None:
        """A different message is not held back by another's limit."""
        f = RepeatFilter(interval_seconds=10, clock=lambda: 0.0)
        assert [True, True] == [f.filter(_record("a")), f.filter(_record("b"))]


def _library_record(name: str, level: int, msg: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord(name, level, "x.py", 1, msg, args, None)


class TestQuietFilter:
    def test_first_start_coordinator_error_is_dropped(self) -> None:
        """aiokafka's GroupCoordinatorNotAvailable error (a fresh broker's __consumer_offsets) does not pass."""
        error = "[Error 15] GroupCoordinatorNotAvailableError"
        record = _library_record("aiokafka.consumer.group_coordinator", logging.ERROR, "Group Coordinator Request failed: %s",
                         error)
        assert False is QuietFilter().filter(record)

    def test_other_coordinator_errors_pass(self) -> None:
        """A coordinator failure of another kind is still logged."""
        record = _library_record("aiokafka.consumer.group_coordinator", logging.ERROR, "Group Coordinator Request failed: %s",
                         "[Error 58] SaslAuthenticationFailedError")
        assert True is QuietFilter().filter(record)

    def test_missing_topic_lines_of_aiokafka_are_dropped(self) -> None:
        """aiokafka's own missing-topic lines give way to logsig's warning."""
        records = [_library_record("aiokafka.cluster", logging.ERROR, "Topic %s not found in cluster metadata", "logs"),
                   _library_record("aiokafka.coordinator.assignors.roundrobin", logging.WARNING,
                           "No partition metadata for topic %s", "logs")]
        assert [False, False] == [QuietFilter().filter(r) for r in records]
