"""The corpus by part: every written-from excerpt names its kind; no benign line of either part pages.

The held-out parts (``tests/data/corpus/heldout``, ``heldout-fresh``) are never printed here: its assertion reports a
count only, so that no signature is tuned from its lines (see ``add_excerpts.py``).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
import yaml

from logsig.config import load_settings
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.pipeline import Pipeline
from logsig.records import Origin, RawRecord

CORPUS = Path(__file__).parents[3] / "data" / "corpus"


def _read(name: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in (CORPUS / name).read_text(encoding="utf-8").splitlines() if line]


@cache
def _engine() -> Engine:
    return Engine(load_catalog().signatures)


def _primaries(lines: list[str]) -> list[str]:
    pipeline = Pipeline(_engine(), load_settings(decode={"multiline": {"enabled": False}}).decode)
    records = [RawRecord(value=line.encode(), origin=Origin(file="corpus", line_number=n))
               for n, line in enumerate(lines, start=1)]
    return [d.incident.signature.id for d in pipeline.process(records, 0.0).detections]


def _exact() -> dict[str, str | None]:
    """The exact expected-primary tables (``expected-*.yaml``): excerpt id -> signature id."""
    table: dict[str, str | None] = {}
    for path in sorted(CORPUS.glob("expected-*.yaml")):
        table.update(yaml.safe_load(path.read_text(encoding="utf-8")))
    return table


def _kinds() -> dict[str, list[str]]:
    return yaml.safe_load((CORPUS / "kinds.yaml").read_text(encoding="utf-8"))


class TestWrittenFromPart:
    def test_the_kinds_table_names_only_catalog_signatures(self) -> None:
        """Every signature id in ``kinds.yaml`` is in the built-in catalog."""
        known = {sig.id for sig in load_catalog().signatures}
        assert set() == {i for ids in _kinds().values() for i in ids or []} - known

    def test_every_kind_is_in_the_kinds_table(self) -> None:
        """Each kind of the written-from part says which signatures name it (``[]``: none should)."""
        assert set() == {str(e["kind"]) for e in _read("real_logs.jsonl")} - set(_kinds())

    @pytest.mark.parametrize("excerpt", _read("real_logs.jsonl"), ids=lambda e: str(e["id"]))
    def test_key_line_is_detected_with_the_right_kind(self, excerpt: dict[str, object]) -> None:
        """The key line raises an incident whose primary names the excerpt's kind (or, where the key
        line carries no failure text of its own, the generic record the exact table names)."""
        lines = excerpt["lines"]
        assert isinstance(lines, list)
        exact = _exact().get(str(excerpt["id"]))
        right = [*_kinds()[str(excerpt["kind"])], *([exact] if exact and exact.startswith("generic/") else [])]
        found = _primaries([lines[int(str(excerpt["key_line_index"]))]])
        if right:
            assert found[:1] and found[0] in right, f"{found} not in {right}"
        else:
            assert [] == found


class TestBenignLines:
    @pytest.mark.parametrize("name", ["benign_lines.jsonl", "heldout/benign_lines.jsonl",
                                      "heldout-fresh/benign_lines.jsonl", "heldout-fresh/second/benign_lines.jsonl",
                                      "heldout-fresh/third/benign_lines.jsonl",
                                      "heldout-fresh/fourth/benign_lines.jsonl",
                                      "heldout-fresh/fifth/benign_lines.jsonl"])
    def test_no_benign_line_raises_an_incident(self, name: str) -> None:
        """Not one benign line of either part raises an incident (the held-out count only is shown)."""
        lines = [str(b["line"]) for b in _read(name)]
        assert len(lines) > 100
        raised = len(_primaries(lines))
        assert 0 == raised, f"{raised} of {len(lines)} benign lines of {name} raised an incident"
