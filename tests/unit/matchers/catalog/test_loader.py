"""Catalog loading: layers, sidecars, and problems reported all at once."""

import json
from pathlib import Path

import pytest

from logsig.cli import main
from logsig.errors import CatalogError
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine

SEED_ID = "llm/vllm-cuda-oom-during-prefill"


def _record(sig_id: str, regex: str = "boom") -> dict[str, object]:
    return {"id": sig_id, "signature": "boom", "regex": regex, "category": "runtime_error",
            "root_cause": "It broke."}


class TestLoadCatalog:
    def test_builtin_catalog_has_the_seed(self) -> None:
        """The seed signature ships in the built-in catalog."""
        assert SEED_ID in load_catalog().by_id()

    def test_directory_is_searched_recursively(self, tmp_path: Path) -> None:
        """YAML and JSON files under nested folders are loaded, one record or a list each."""
        (tmp_path / "a" / "b").mkdir(parents=True)
        (tmp_path / "a" / "one.json").write_text(json.dumps(_record("t/one")))
        (tmp_path / "a" / "b" / "two.yaml").write_text("- id: t/two\n  signature: s\n  regex: x\n  category: runtime_error\n"
                                                      "  root_cause: r\n- id: t/three\n  signature: s\n  regex: y\n"
                                                      "  category: runtime_error\n  root_cause: r\n")
        ids = {s.id for s in load_catalog([tmp_path], builtin=False).signatures}
        assert {"t/one", "t/two", "t/three"} == ids

    def test_user_record_overrides_builtin_by_id(self, tmp_path: Path) -> None:
        """A user record with a built-in id replaces the built-in record."""
        (tmp_path / "o.json").write_text(json.dumps(_record(SEED_ID, "my own regex")))
        assert "my own regex" == load_catalog([tmp_path]).by_id()[SEED_ID].regex

    def test_every_problem_is_reported_with_file_id_and_field(self, tmp_path: Path) -> None:
        """Bad regex, empty regex, bad rate and duplicate id are all listed in one error."""
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps([
            _record("t/unbalanced", "(oops"),
            _record("t/empty", ""),
            {**_record("t/rate"), "workarounds": [{"how": "x", "success_rate": 2}]},
            _record("t/dup"),
            _record("t/dup"),
        ]))
        with pytest.raises(CatalogError) as caught:
            load_catalog([tmp_path], builtin=False)
        found = {(p.record_id, p.field) for p in caught.value.problems}
        assert {("t/unbalanced", "regex"), ("t/empty", "regex"), ("t/rate", "workarounds.0.success_rate"),
                ("t/dup", "id")} == found
        assert all(p.file == str(bad) for p in caught.value.problems)

    def test_record_without_id_is_named_by_index(self, tmp_path: Path) -> None:
        """A record missing its id is reported as #index with the missing field."""
        (tmp_path / "x.yaml").write_text("- signature: s\n  regex: x\n")
        with pytest.raises(CatalogError) as caught:
            load_catalog([tmp_path], builtin=False)
        assert [("#0", "id")] == [(p.record_id, p.field) for p in caught.value.problems]

    def test_sidecar_examples_are_merged(self, tmp_path: Path) -> None:
        """A *.examples.yaml sidecar adds examples to the record it names."""
        (tmp_path / "r.json").write_text(json.dumps(_record("t/r")))
        (tmp_path / "r.examples.yaml").write_text("id: t/r\nexamples: {match: [boom!], no_match: [calm]}\n")
        sig = load_catalog([tmp_path], builtin=False).by_id()["t/r"]
        assert (["boom!"], ["calm"]) == (sig.examples.match, sig.examples.no_match)

    def test_missing_path_is_a_problem(self, tmp_path: Path) -> None:
        """A catalog path that does not exist is reported, not ignored."""
        with pytest.raises(CatalogError, match="no such file"):
            load_catalog([tmp_path / "nope"], builtin=False)

    def test_hidden_directories_are_skipped(self, tmp_path: Path) -> None:
        """A ConfigMap volume's ..data and timestamped copies do not load twice."""
        (tmp_path / "..2026_01_01").mkdir()
        (tmp_path / "..2026_01_01" / "r.json").write_text(json.dumps(_record("t/r")))
        (tmp_path / "r.json").write_text(json.dumps(_record("t/r")))
        assert ["t/r"] == [s.id for s in load_catalog([tmp_path], builtin=False).signatures]


class TestBacktrackingHazards:
    def test_exponential_fallback_regex_is_rejected(self, tmp_path: Path) -> None:
        """``^(a+)+(?=c)`` (81 s on a 31-character line) is a problem naming file, id, field and reason."""
        path = tmp_path / "site.yaml"
        path.write_text("- id: t/exp\n  signature: s\n  regex: '^(a+)+(?=c)'\n  category: runtime_error\n"
                        "  root_cause: r\n")
        with pytest.raises(CatalogError) as caught:
            load_catalog([tmp_path])
        assert [(str(path), "t/exp", "regex", "nested unbounded repeats on the backtracking fallback, "
                 "for every message (not linear-time: lookahead)")] == [
            (p.file, p.record_id, p.field, p.message.split(": can take")[0]) for p in caught.value.problems]

    def test_nested_repeat_reaching_the_fallback_through_dollar_is_rejected(self, tmp_path: Path) -> None:
        """A linear ``(a+)+$`` still reaches the fallback for messages ending in a newline, so it is refused."""
        (tmp_path / "site.json").write_text(json.dumps(_record("t/dollar", r"(a+)+$")))
        with pytest.raises(CatalogError, match=r"t/dollar: regex: .*messages ending in a newline"):
            load_catalog([tmp_path], builtin=False)

    def test_benign_lookahead_loads_and_matches(self, tmp_path: Path) -> None:
        """A fallback regex without nested repeats (a simple look-ahead) loads and matches."""
        (tmp_path / "site.json").write_text(json.dumps(_record("t/ahead", r"NCCL error(?= in rank \d+)")))
        catalog = load_catalog([tmp_path], builtin=False)
        matches = Engine(catalog.signatures).match("x NCCL error in rank 3")
        assert [("t/ahead", (2, 12))] == [(m.signature.id, m.span) for m in matches]

    def test_nested_repeat_on_re2_loads(self, tmp_path: Path) -> None:
        """Nested repeats that always run on RE2 (linear time) load."""
        (tmp_path / "site.json").write_text(json.dumps(_record("t/re2", r"boom: (?:\w+ ?)+")))
        assert ["t/re2"] == [s.id for s in load_catalog([tmp_path], builtin=False).signatures]

    def test_check_command_reports_the_hazard(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """``logsig catalog check`` exits 1 naming the file, id and field of the exponential regex."""
        path = tmp_path / "site.yaml"
        path.write_text("- id: t/exp\n  signature: s\n  regex: '^(a+)+(?=c)'\n")
        assert 1 == main(["catalog", "check", str(path)])
        assert f"{path}: t/exp: regex: nested unbounded repeats" in capsys.readouterr().out

    def test_lint_command_reports_a_catalog_that_does_not_load(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """``logsig catalog lint`` on a catalog refused at load exits 1 listing the problem."""
        path = tmp_path / "site.yaml"
        path.write_text("- id: t/exp\n  signature: s\n  regex: '^(a+)+(?=c)'\n")
        assert 1 == main(["catalog", "lint", str(path)])
        assert f"{path}: t/exp: regex: nested unbounded repeats" in capsys.readouterr().out
