"""Redaction: a corpus of real-looking secrets in real log lines leaks through no output of logsig."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest
import structlog
from prometheus_client import CollectorRegistry

from logsig.decode.settings import DecodeSettings
from logsig.group.settings import GroupSettings
from logsig.group.stage import GroupStage
from logsig.log import configure_logging
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.pipeline import Pipeline, StepResult
from logsig.records import Origin, RawRecord
from logsig.redact import RedactionSettings, Redactor
from logsig.sinks.alertmanager import to_alert
from logsig.sinks.kafka.records import dead_letter_record, incident_record
from logsig.telemetry import Metrics

ROWS = [json.loads(line) for line in
        (Path(__file__).parents[1] / "data" / "redaction" / "secrets.jsonl").read_text(encoding="utf-8").splitlines()]
SECRETS = [secret for row in ROWS for secret in row["secrets"]]
ENGINE = Engine(load_catalog().signatures)


def records() -> list[RawRecord]:
    """Every corpus line as a plain record, then each excerpt once more as a cut-off JSON record."""
    lines = [line for row in ROWS for line in row["lines"]]
    broken = ['{"log": ' + json.dumps("\n".join(row["lines"]))[:-1] for row in ROWS]
    return [RawRecord(value.encode(), Origin(topic="logs", partition=0, offset=i), key=b"vllm-0")
            for i, value in enumerate(lines + broken)]


def leaks(outputs: dict[str, list[bytes]]) -> list[tuple[str, str]]:
    """(output, secret) for every secret found in an output."""
    return [(name, secret) for name, blobs in outputs.items() for blob in blobs for secret in SECRETS
            if secret.encode() in blob]


def run(redactor: Redactor) -> tuple[StepResult, StepResult]:
    """The corpus through the pipeline and the grouping stage: (per-line step, grouped step)."""
    pipeline = Pipeline(ENGINE, DecodeSettings(), redactor=redactor)
    step = pipeline.process(records(), 0.0)
    tail = pipeline.flush_all()
    lines = StepResult(detections=step.detections + tail.detections, failures=step.failures + tail.failures)
    stage = GroupStage(GroupSettings())
    grouped = stage.step(StepResult(detections=list(lines.detections)), None)
    grouped.detections += stage.flush(StepResult(), resolve=True).detections
    return lines, grouped


def outputs(lines: StepResult, grouped: StepResult) -> dict[str, list[bytes]]:
    """Every byte logsig would write for the corpus: events, records with headers, dead letters, alerts."""
    ends = datetime(2026, 1, 1, tzinfo=UTC)
    events = [d.incident for d in grouped.detections]
    out_records = [incident_record(e, "out") for e in events + [d.incident for d in lines.detections]]
    dead = [dead_letter_record(f, "dlq") for f in lines.failures]
    return {
        "events": [e.to_json() for e in events],
        "line events": [d.incident.to_json() for d in lines.detections],
        "record headers": [v for r in out_records for _, v in r.headers],
        "dead letters": [r.value for r in dead] + [v for r in dead for _, v in r.headers],
        "alerts": [orjson.dumps(to_alert(e, ends)) for e in events],
    }


class TestSecretCorpus:
    def test_no_secret_leaks_into_events_records_dead_letters_or_alerts(self) -> None:
        """Every excerpt becomes incidents and a dead letter, and not one secret survives in any of them."""
        lines, grouped = run(Redactor())
        starts = [sum(len(row["lines"]) for row in ROWS[:n]) for n in range(len(ROWS) + 1)]
        rows = {n for d in lines.detections for n in range(len(ROWS)) if starts[n] <= d.event.origin.offset < starts[n + 1]}
        assert (set(range(len(ROWS))), len(ROWS)) == (rows, len(lines.failures))
        assert [] == leaks(outputs(lines, grouped))

    def test_without_redaction_the_corpus_does_leak(self) -> None:
        """With redaction off the same outputs carry every secret (the corpus tests something)."""
        lines, grouped = run(Redactor(RedactionSettings(enabled=False)))
        assert set(SECRETS) == {secret for _, secret in leaks(outputs(lines, grouped))}

    def test_logs_are_redacted(self, capsys: pytest.CaptureFixture[str]) -> None:
        """logsig's own log lines and library log lines carry no secret."""
        root = logging.getLogger()
        handlers, level = list(root.handlers), root.level
        configure_logging("info", "json", Redactor())
        try:
            for row in ROWS:
                structlog.get_logger("logsig.test").error("delivery failed", line="\n".join(row["lines"]))
                logging.getLogger("aiokafka").error("bad record %s", row["lines"][-1])
            err = capsys.readouterr().err
        finally:
            structlog.reset_defaults()
            root.handlers[:], root.level = handlers, level
        assert (True, []) == ("REDACTED" in err, leaks({"logs": [err.encode()]}))

    def test_redactions_are_counted_per_kind(self) -> None:
        """logsig_redactions_total{kind} counts what the redactor masked."""
        redactor = Redactor()
        run(redactor)
        metrics = Metrics(CollectorRegistry())
        metrics.add_redactions(redactor.counts)
        counted = {k for k in ("authorization", "hf_token", "api_key", "aws_access_key", "url_password",
                               "private_key", "secret_value")
                   if (metrics.registry.get_sample_value("logsig_redactions_total", {"kind": k}) or 0) > 0}
        assert {"authorization", "hf_token", "api_key", "aws_access_key", "url_password", "private_key",
                "secret_value"} == counted


class TestRedactor:
    def test_what_names_the_secret_stays(self) -> None:
        """Header names, URL users and keys stay; only the secret is masked."""
        redactor = Redactor()
        assert ("Authorization: [REDACTED:authorization]", "redis://default:[REDACTED:url_password]@db:6379",
                "HF_TOKEN=[REDACTED:secret_value]") == (
            redactor.text("Authorization: Bearer abcdefgh12345678"), redactor.text("redis://default:pw1234@db:6379"),
            redactor.text("HF_TOKEN=abc123def456"))

    def test_ordinary_words_are_not_secrets(self) -> None:
        """Token counts and the word token are left alone."""
        text = "Invalid token provided; prompt_token_ids_len=75, max_tokens: 512"
        assert text == Redactor().text(text)

    def test_optional_kinds_and_own_patterns(self) -> None:
        """e-mail and IP addresses when asked for, and patterns of one's own."""
        redactor = Redactor(RedactionSettings(kinds=["email", "ip"], patterns=[r"tenant-\d+"]))
        assert "[REDACTED:email] from [REDACTED:ip] for [REDACTED:custom]" == redactor.text(
            "alice@example.com from 10.1.2.3 for tenant-42")
