"""The built-in catalog proven on real logs: its own examples, the failure corpus, the benign corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from logsig.cli.catalog import example_failures
from logsig.config import load_settings
from logsig.matchers.catalog.loader import load_catalog
from logsig.pipeline import Pipeline
from logsig.records import Origin, RawRecord
from tests.unit.matchers.catalog.builtin_support import builtin_catalog, builtin_engine

CORPUS = Path(__file__).parents[3] / "data" / "corpus"


_catalog = builtin_catalog
_engine = builtin_engine


def _excerpts() -> list[dict[str, object]]:
    return [json.loads(line) for line in (CORPUS / "real_logs.jsonl").read_text(encoding="utf-8").splitlines()]


def _expected() -> dict[str, str | None]:
    table: dict[str, str | None] = {}
    for path in sorted(CORPUS.glob("expected-*.yaml")):
        table.update(yaml.safe_load(path.read_text(encoding="utf-8")))
    return table


def _primary(line: str) -> str | None:
    """The primary signature of ``line`` decoded as a plain record (ANSI codes removed)."""
    pipeline = Pipeline(_engine(), load_settings(decode={"multiline": {"enabled": False}}).decode)
    step = pipeline.process([RawRecord(value=line.encode(), origin=Origin(file="corpus", line_number=1))], 0.0)
    return step.detections[0].incident.signature.id if step.detections else None


class TestBuiltinCatalog:
    def test_catalog_is_broad(self) -> None:
        """The catalog has at least 80 signatures over every domain."""
        sigs = _catalog().signatures
        assert len(sigs) >= 80
        assert {"llm", "cuda", "nccl", "gpu", "k8s", "host"} <= {s.domain for s in sigs}

    @pytest.mark.parametrize("sig_id", sorted(s.id for s in load_catalog().signatures))
    def test_signature_passes_its_examples(self, sig_id: str) -> None:
        """Each signature matches its real example lines and none of its near misses."""
        sig = _catalog().by_id()[sig_id]
        assert len(sig.examples.match) >= 1, "a signature needs real example lines"
        assert [] == example_failures(sig, _engine())

    def test_every_excerpt_is_in_the_table(self) -> None:
        """The expected-primary table covers every excerpt of the corpus."""
        assert {str(e["id"]) for e in _excerpts()} == set(_expected())

    @pytest.mark.parametrize("excerpt", _excerpts(), ids=lambda e: str(e["id"]))
    def test_key_line_names_the_expected_signature(self, excerpt: dict[str, object]) -> None:
        """The excerpt's key line is detected, with the table's signature as primary."""
        lines = excerpt["lines"]
        assert isinstance(lines, list)
        key_line = lines[int(str(excerpt["key_line_index"]))]
        assert _expected()[str(excerpt["id"])] == _primary(key_line)

    def test_no_benign_line_yields_an_incident(self) -> None:
        """No line of the benign corpus raises an incident (a start-up banner only names the server)."""
        lines = [json.loads(x)["line"] for x in (CORPUS / "benign_lines.jsonl").read_text().splitlines()]
        pipeline = Pipeline(_engine(), load_settings(decode={"multiline": {"enabled": False}}).decode)
        records = [RawRecord(value=line.encode(), origin=Origin(file="benign", line_number=n))
                   for n, line in enumerate(lines, start=1)]
        hits = {d.event.message: d.incident.signature.id for d in pipeline.process(records, 0.0).detections}
        assert {} == hits

    def test_transition_links_name_known_signatures(self) -> None:
        """Every transition-graph link points at a signature in the catalog."""
        ids = set(_catalog().by_id())
        dangling = {(s.id, link) for s in _catalog().signatures
                    for link in (*s.transition_graph.leads_to, *s.transition_graph.preceded_by,
                                 *s.transition_graph.frequently_confused_with) if link not in ids}
        assert set() == dangling
