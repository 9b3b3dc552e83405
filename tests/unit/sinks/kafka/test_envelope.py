"""CloudEvents binary-mode headers of incident records, read back with the CloudEvents SDK."""

from __future__ import annotations

from datetime import UTC, datetime

import orjson
from cloudevents.core.bindings.kafka import KafkaMessage, from_binary
from cloudevents.core.formats.json import JSONFormat

from logsig.enrich import build_incident
from logsig.group.grouper import Grouper
from logsig.group.settings import GroupSettings
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.pipeline import Detection
from logsig.records import LogEvent, Origin, Source
from logsig.sinks.kafka.records import incident_record

SEED = load_catalog().by_id()["llm/vllm-cuda-oom-during-prefill"]
LOGGED = datetime(2026, 3, 1, 12, 0, 5, tzinfo=UTC)


def detection(offset: int) -> Detection:
    """The seed's own line, read at ``offset`` from pod vllm-0 and logged at LOGGED."""
    event = LogEvent(message=SEED.signature, origin=Origin(topic="logs", partition=0, offset=offset),
                     source=Source(namespace="ml", pod="vllm-0"), timestamp=LOGGED)
    matches = Engine([SEED]).match(SEED.signature)
    return Detection(build_incident(event, matches, datetime(2026, 3, 1, 13, tzinfo=UTC)), event, tuple(matches))


def read(record_headers: tuple[tuple[str, bytes], ...], value: bytes, key: bytes | None):  # type: ignore[no-untyped-def]
    """The CloudEvent the SDK reads from a binary-mode Kafka message."""
    return from_binary(KafkaMessage(headers=dict(record_headers), key=key, value=value), JSONFormat())


class TestCloudEventHeaders:
    def test_group_event_attributes(self) -> None:
        """An opened group event reads back as a CloudEvent: id, type per status, subject = group key, time."""
        (opened,) = Grouper(GroupSettings()).feed([detection(3)], now=0.0)
        record = incident_record(opened.incident, "out", "/logsig/prod-a")
        event = read(record.headers, record.value, record.key)
        assert opened.incident.group is not None
        assert ("1.0", opened.incident.event_id, "/logsig/prod-a", "dev.logsig.incident.opened",
                opened.incident.group.key, LOGGED, "application/json") == (
            event.get_specversion(), event.get_id(), event.get_source(), event.get_type(), event.get_subject(),
            event.get_time(), event.get_datacontenttype())

    def test_body_stays_the_incident_json(self) -> None:
        """The record value is the incident JSON, which the SDK hands back as the event's data."""
        incident = detection(4).incident
        record = incident_record(incident, "out")
        assert orjson.loads(incident.to_json()) == read(record.headers, record.value, record.key).get_data()

    def test_per_line_event_type_and_subject(self) -> None:
        """A per-line event is of type dev.logsig.incident.line with the signature id as subject."""
        incident = detection(5).incident
        event = read(incident_record(incident, "lines").headers, incident.to_json(), None)
        assert ("dev.logsig.incident.line", SEED.id) == (event.get_type(), event.get_subject())

    def test_headers_are_named_as_the_kafka_binding_says(self) -> None:
        """ce_-prefixed attributes, content-type for datacontenttype, then logsig's own two headers."""
        names = [name for name, _ in incident_record(detection(6).incident, "out").headers]
        assert ["ce_id", "ce_source", "ce_type", "ce_specversion", "ce_time", "ce_subject", "content-type",
                "ce_dataschema", "logsig.schema_version", "logsig.signature_id"] == names
