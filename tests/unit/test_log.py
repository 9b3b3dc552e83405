"""Library log lines are rate-limited per message."""

import logging

from logsig.log import RepeatFilter


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
