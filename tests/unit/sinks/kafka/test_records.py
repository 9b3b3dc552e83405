"""Kafka record building: keys and dead-letter records."""

from logsig.records import DecodeFailure, Origin, RawRecord
from logsig.sinks.kafka.records import dead_letter_record


def _record(offset: int, partition: int = 0, value: bytes = b"x") -> RawRecord:
    return RawRecord(value=value, origin=Origin(topic="t", partition=partition, offset=offset, timestamp_ms=5),
                     key=b"k", headers=(("h", b"v"),))


class TestDeadLetter:
    def test_keeps_original_and_adds_reason_headers(self) -> None:
        """Key, value, headers and timestamp survive; logsig headers name reason and coordinates."""
        raw = _record(42, value=b"\xff\xfe")
        out = dead_letter_record(DecodeFailure(reason="not_utf8", detail="bad byte", record=raw), "dlq")
        headers = dict(out.headers)
        assert ("dlq", b"\xff\xfe", b"k", 5) == (out.topic, out.value, out.key, out.timestamp_ms)
        assert b"v" == headers["h"]
        assert (b"not_utf8", b"t", b"0", b"42") == (
            headers["logsig.reason"], headers["logsig.source.topic"],
            headers["logsig.source.partition"], headers["logsig.source.offset"])

    def test_oversized_value_is_cut_with_its_size(self) -> None:
        """A value over the dead-letter limit is cut and its original size recorded."""
        raw = _record(1, value=b"\xff" * 5000)
        out = dead_letter_record(DecodeFailure(reason="not_utf8", detail="", record=raw), "dlq", max_bytes=1024)
        assert (1024, b"5000") == (len(out.value), dict(out.headers)["logsig.original_bytes"])
