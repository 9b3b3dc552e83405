"""One realistic record per shipper format (tests/data/envelopes) decoded to message and source."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import orjson
import pytest

from logsig.decode import DecodeSettings, decode_record
from logsig.decode.otlp_proto import AVAILABLE as PROTO_AVAILABLE
from logsig.records import LogEvent, Origin, RawRecord

FIXTURES = Path(__file__).parents[2] / "data" / "envelopes"
NAMES = sorted(path.stem for path in FIXTURES.glob("*.json"))


def load(name: str) -> tuple[RawRecord, list[dict[str, Any]]]:
    """The fixture's record (value as on the wire) and its expected events."""
    fixture = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    if "value_file" in fixture:
        value = (FIXTURES / fixture["value_file"]).read_bytes()
    elif "value_text" in fixture:
        value = fixture["value_text"].encode()
    else:
        value = orjson.dumps(fixture["value"])
    origin = Origin(topic="logs", partition=3, offset=42, timestamp_ms=fixture["timestamp_ms"])
    return RawRecord(value=value, origin=origin), fixture["expected"]


def summary(event: LogEvent) -> dict[str, Any]:
    """The fields a fixture states, in its JSON shape."""
    return {
        "message": event.message,
        "timestamp": event.timestamp.isoformat() if event.timestamp else None,
        "level": event.level,
        "partial": event.partial,
        "source": {**asdict(event.source), "labels": dict(event.source.labels)},
    }


class TestShipperFixtures:
    @pytest.mark.parametrize("name", NAMES)
    def test_fixture_decodes_to_expected_events(self, name: str) -> None:
        """Each shipper's record decodes to the stated message, time, level and source."""
        if name == "otlp_proto" and not PROTO_AVAILABLE:
            pytest.skip("opentelemetry-proto is not installed")
        record, expected = load(name)
        result = decode_record(record, DecodeSettings())
        assert None is result.failure
        assert expected == [summary(event) for event in result.events]

    @pytest.mark.parametrize("name", NAMES)
    def test_events_keep_the_kafka_coordinates(self, name: str) -> None:
        """Every event carries the record's topic, partition and offset as its origin."""
        if name == "otlp_proto" and not PROTO_AVAILABLE:
            pytest.skip("opentelemetry-proto is not installed")
        record, _ = load(name)
        result = decode_record(record, DecodeSettings())
        assert [record.origin] * len(result.events) == [event.origin for event in result.events]

    def test_there_is_a_fixture_per_shipper_format(self) -> None:
        """The fixture set covers every format the issue lists."""
        required = {
            "plain_text",
            "cri_line",
            "docker_json_file",
            "fluentbit_json",
            "fluentbit_json_iso_message",
            "fluentbit_merge_log",
            "fluentbit_msgpack",
            "fluentd_kafka2",
            "vector_kubernetes_logs",
            "filebeat_ecs",
            "otlp_json",
            "otlp_proto",
            "otlp_raw",
            "tgi_json",
            "ollama_slog",
        }
        assert set() == required - set(NAMES)


class TestTopicSettings:
    def test_topic_cluster_fills_records_without_one(self) -> None:
        """A record with no cluster of its own takes its topic's configured cluster."""
        record, _ = load("fluentbit_json")
        settings = DecodeSettings.model_validate(
            {"cluster": "fallback", "topics": {"logs": {"cluster": "prod-gpu-west"}}}
        )
        assert "prod-gpu-west" == decode_record(record, settings).events[0].source.cluster

    def test_record_cluster_wins_over_the_topic_setting(self) -> None:
        """A cluster written in the record is kept even when the topic sets one."""
        record, _ = load("filebeat_ecs")
        settings = DecodeSettings.model_validate({"topics": {"logs": {"cluster": "other"}}})
        assert "prod-gpu-east" == decode_record(record, settings).events[0].source.cluster

    def test_default_cluster_applies_to_other_topics(self) -> None:
        """The default cluster applies when the topic has no override."""
        record, _ = load("plain_text")
        settings = DecodeSettings(cluster="lab")
        assert "lab" == decode_record(record, settings).events[0].source.cluster

    def test_fixed_envelope_rejects_records_of_another_format(self) -> None:
        """A topic fixed to ``json`` dead-letters a plain-text record instead of guessing."""
        record, _ = load("plain_text")
        settings = DecodeSettings.model_validate({"topics": {"logs": {"envelope": "json"}}})
        failure = decode_record(record, settings).failure
        assert "invalid_json" == (failure.reason if failure else None)

    def test_fixed_text_envelope_keeps_the_line_whole(self) -> None:
        """Under ``text`` a CRI line is not unwrapped."""
        record, _ = load("cri_line")
        settings = DecodeSettings(envelope="text")
        event = decode_record(record, settings).events[0]
        assert event.message.startswith("2025-05-04T12:23:00.123456789Z stderr F ")


class TestDockerParts:
    def _partial(self, log: str) -> bool:
        value = orjson.dumps({"log": log, "stream": "stdout", "time": "2026-01-01T00:00:00Z"})
        return decode_record(RawRecord(value=value, origin=Origin(topic="logs")), DecodeSettings()).events[0].partial

    def test_exactly_16_kib_without_newline_is_a_part(self) -> None:
        """Docker's json-file driver writes a long line as 16 KiB parts without a newline."""
        assert True is self._partial("x" * 16384)

    def test_longer_line_without_newline_is_whole(self) -> None:
        """A 20 KiB ``log`` without a newline is a whole line (a shipper removed the newline)."""
        assert False is self._partial("x" * 20000)

    def test_part_cut_inside_a_character_is_a_part(self) -> None:
        """A 16 KiB part ending inside a multi-byte character (decoded as U+FFFD) is still a part."""
        assert True is self._partial("x" * 16382 + "\ufffd")
