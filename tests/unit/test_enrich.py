"""Enrichment: incidents built from the seed signature and ranking of several matches."""

from dataclasses import replace
from datetime import UTC, datetime

import orjson

from logsig.decode.settings import DecodeSettings, MultilineSettings
from logsig.enrich import build_incident, event_id, rank
from logsig.group.template import fingerprint, template
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine, Match
from logsig.matchers.signature import GENERIC_PRIORITY, Signature
from logsig.pipeline import Pipeline
from logsig.records import LogEvent, Origin, RawRecord, Source

SEED_ID = "llm/vllm-cuda-oom-during-prefill"
NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def _seed() -> Signature:
    return load_catalog().by_id()[SEED_ID]


def _event(message: str, offset: int = 7) -> LogEvent:
    origin = Origin(topic="logs", partition=2, offset=offset, timestamp_ms=1_700_000_000_000, key="k")
    return LogEvent(message=message, origin=origin, source=Source(namespace="ml", pod="vllm-0", node="gpu-1"))


class TestBuildIncident:
    def test_seed_signature_text_gives_a_full_incident(self) -> None:
        """The seed's own example message yields an incident with sorted workarounds and every dead end."""
        seed = _seed()
        event = _event(seed.signature)
        incident = build_incident(event, Engine([seed]).match(seed.signature), NOW)
        rates = [w.success_rate for w in incident.workarounds]
        assert [0.9, 0.85, 0.8] == rates
        assert len(seed.dead_ends) == len(incident.dead_ends)
        assert all("" == d.action and d.why_fails for d in incident.dead_ends)
        assert SEED_ID == incident.signature.id
        assert ("vLLM CUDA OOM during prefill", seed.signature) == (incident.signature.title, incident.signature.example)
        assert ("logs", 2, 7, "vllm-0", "gpu-1") == (
            incident.source.topic, incident.source.partition, incident.source.offset,
            incident.source.pod, incident.source.node)
        assert 2 == incident.schema_version

    def test_event_id_is_deterministic(self) -> None:
        """The same record and signature give the same id; another offset gives another."""
        seed = _seed()
        first = build_incident(_event(seed.signature), Engine([seed]).match(seed.signature), NOW)
        again = build_incident(_event(seed.signature), Engine([seed]).match(seed.signature), datetime.now(UTC))
        other = build_incident(_event(seed.signature, offset=8), Engine([seed]).match(seed.signature), NOW)
        assert first.event_id == again.event_id
        assert first.event_id != other.event_id

    def test_captures_are_parsed_to_base_units(self) -> None:
        """Named captures keep their text and gain values in bytes."""
        sig = Signature(id="t/oom", signature="s", regex=r"Tried to allocate (?P<requested_bytes>[\d.]+ [KMG]iB)")
        line = "CUDA out of memory. Tried to allocate 2.00 GiB"
        incident = build_incident(_event(line), Engine([sig]).match(line), NOW)
        assert {"requested_bytes": "2.00 GiB"} == incident.match.captures
        assert {"requested_bytes": 2 * 1024**3} == incident.match.values
        assert "Tried to allocate 2.00 GiB" == incident.match.matched_text


class TestGrouping:
    """Every incident carries its tier, template and fingerprint."""

    def test_specific_incident_has_template_and_fingerprint(self) -> None:
        """The seed's incident is specific; its template masks the numbers of the line."""
        seed = _seed()
        line = seed.signature
        incident = build_incident(_event(line), Engine([seed]).match(line), NOW)
        assert ("specific", fingerprint(line), template(line)) == (incident.tier, incident.fingerprint, incident.template)
        assert "Tried to allocate <SIZE>" in incident.template

    def test_generic_primary_gives_a_generic_incident(self) -> None:
        """A line only a generic-tier signature matches gives a ``generic`` incident."""
        sig = Signature(id="generic/t", signature="s", regex=r"\w+Error: ", priority=GENERIC_PRIORITY)
        line = "KeyError: 'layers.0.mlp.down_proj.weight_scale'"
        incident = build_incident(_event(line), Engine([sig]).match(line), NOW)
        assert ("generic", "KeyError: '<STR>'") == (incident.tier, incident.template)

    def test_fingerprint_is_of_the_key_line(self) -> None:
        """For a multi-line event the template is of ``line`` (the exception line), not the message."""
        sig = Signature(id="generic/t", signature="s", regex=r"\w+Error: ", priority=GENERIC_PRIORITY)
        message = "Traceback (most recent call last):\n  File \"x.py\", line 3, in f\nValueError: bad 7"
        event = replace(_event(message), line="ValueError: bad 7")
        incident = build_incident(event, Engine([sig]).match(message), NOW)
        assert fingerprint("ValueError: bad 8") == incident.fingerprint


class TestRank:
    def test_priority_wins_then_specificity(self) -> None:
        """Higher priority is primary; among equals the regex with more literal text wins."""
        generic = Signature(id="t/generic", signature="s", regex="out of memory", priority=-10)
        short = Signature(id="t/short", signature="s", regex="CUDA.*memory")
        long = Signature(id="t/long", signature="s", regex="CUDA out of memory")
        matches = [Match(s, (0, 1), {}) for s in (generic, short, long)]
        assert ["t/long", "t/short", "t/generic"] == [m.signature.id for m in rank(matches)]

    def test_event_id_differs_by_signature(self) -> None:
        """Two signatures matching one record get different ids."""
        origin = Origin(topic="t", partition=0, offset=1)
        assert event_id(origin, "m", "a/b") != event_id(origin, "m", "a/c")


class TestBounds:
    def test_long_line_and_context_are_cut(self) -> None:
        """A 1 MiB line and a huge traceback still give a small incident, flagged truncated."""
        sig = Signature(id="t/oom", signature="s", regex="out of memory")
        line = "x" * 1_000_000 + " out of memory"
        event = LogEvent(message=line, origin=Origin(file="f", line_number=1), context=tuple([line] * 50))
        incident = build_incident(event, Engine([sig]).match(line), NOW)
        assert incident.match.truncated
        assert len(incident.to_json()) < 200_000
        assert incident.context[-1].startswith("…")

    def test_values_come_from_every_match_primary_first(self) -> None:
        """A generic primary without groups still carries the numbers another signature captured."""
        generic = Signature(id="t/generic", signature="s", regex="CUDA out of memory.*Tried to allocate", priority=1)
        detailed = Signature(id="t/detailed", signature="s",
                             regex=r"Tried to allocate (?P<requested_bytes>[\d.]+ GiB)", priority=-10)
        line = "CUDA out of memory. Tried to allocate 2.00 GiB"
        incident = build_incident(_event(line), Engine([generic, detailed]).match(line), NOW)
        assert ("t/generic", {"requested_bytes": 2 * 1024**3}) == (incident.signature.id, incident.match.values)

    def test_domain_defaults_to_the_id_prefix(self) -> None:
        """A record without domain reports the <domain> part of its id; confidence stays unknown."""
        sig = Signature(id="site/boom", signature="s", regex="boom")
        incident = build_incident(_event("boom"), Engine([sig]).match("boom"), NOW)
        assert ("site", None) == (incident.signature.domain, incident.signature.confidence)


class TestEventIdPerEvent:
    def _ids(self, value: bytes) -> list[str]:
        seed = _seed()
        pipeline = Pipeline(Engine([seed]), DecodeSettings(multiline=MultilineSettings(enabled=False)))
        record = RawRecord(value=value, origin=Origin(topic="logs", partition=0, offset=3))
        return [d.incident.event_id for d in pipeline.process([record], 0.0).detections]

    def test_repeated_lines_of_one_record_get_distinct_ids(self) -> None:
        """Two identical NDJSON lines in one record are two events with two ids."""
        line = orjson.dumps({"log": _seed().signature, "stream": "stderr"})
        ids = self._ids(line + b"\n" + line + b"\n")
        assert 2 == len(set(ids))

    def test_same_line_of_two_pods_in_one_otlp_batch_gets_distinct_ids(self) -> None:
        """One OTLP batch holding the same line from two pods gives two ids."""
        def resource(pod: str) -> dict[str, object]:
            attrs = [{"key": "k8s.pod.name", "value": {"stringValue": pod}}]
            return {"resource": {"attributes": attrs},
                    "scopeLogs": [{"logRecords": [{"body": {"stringValue": _seed().signature}}]}]}
        ids = self._ids(orjson.dumps({"resourceLogs": [resource("vllm-0"), resource("vllm-1")]}))
        assert 2 == len(set(ids))

    def test_ids_are_stable_across_redelivery(self) -> None:
        """The same record decoded again (a redelivery) gives the same ids in the same order."""
        line = orjson.dumps({"log": _seed().signature, "stream": "stderr"})
        assert self._ids(line + b"\n" + line) == self._ids(line + b"\n" + line)
