"""The pre-deploy gate: each broken signature fails ``catalog check`` naming file, id and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from logsig.cli import main
from logsig.matchers.authoring.gate import PLACEHOLDER, builtin_benign, gate_problems
from logsig.matchers.catalog.loader import load_catalog

CORPUS = Path(__file__).parents[3] / "data" / "corpus"
GOOD = {
    "id": "site/vllm-widget-failed",
    "signature": "RuntimeError: widget failed on rank 0",
    "regex": r"RuntimeError: widget failed on rank (?P<rank>\d+)",
    "category": "runtime_error",
    "root_cause": "The widget could not start.",
    "workarounds": [{"action": "Restart the widget", "how": "kubectl rollout restart", "success_rate": 0.5}],
}


def _write(tmp_path: Path, **changes: object) -> Path:
    record = {**GOOD, **changes}
    record = {k: v for k, v in record.items() if v is not None}
    path = tmp_path / "site.yaml"
    path.write_text(yaml.safe_dump(record), encoding="utf-8")
    return path


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["catalog", "check", *args])
    return code, capsys.readouterr().out


class TestGateProblems:
    def test_a_good_record_passes(self, tmp_path: Path) -> None:
        """A complete record with a specific regex has no problem."""
        catalog = load_catalog([_write(tmp_path)], builtin=False, rules=False)
        assert [] == gate_problems(catalog, builtin_benign())

    def test_the_builtin_catalog_passes(self) -> None:
        """Every shipped signature passes the gate against the built-in benign sample."""
        assert [] == gate_problems(load_catalog(), builtin_benign())

    @pytest.mark.parametrize(("changes", "field", "words"), [
        ({"regex": r"(?:widget)?"}, "regex", "matches an empty string"),
        ({"regex": r"\w"}, "regex", "benign lines"),
        ({"root_cause": None}, "root_cause", "missing"),
        ({"root_cause": "  "}, "root_cause", "missing"),
        ({"category": None}, "category", "missing"),
        ({"category": "widget_error"}, "category", "not in the vocabulary"),
        ({"id": "WidgetFailed"}, "id", "<domain>/<slug>"),
        ({"id": "site/Widget Failed"}, "id", "<domain>/<slug>"),
        ({"workaround": [{"action": "x"}]}, "workaround", "did you mean 'workarounds'"),
        ({"exmaples": {"match": ["x"]}}, "exmaples", "did you mean 'examples'"),
        ({"root_casue": "x"}, "root_casue", "did you mean 'root_cause'"),
        ({"root_cause": f"{PLACEHOLDER}"}, "root_cause", "placeholder"),
        ({"workarounds": [{"action": "a", "how": PLACEHOLDER}]}, "workarounds[0].how", "placeholder"),
    ])
    def test_each_broken_record_is_named(self, tmp_path: Path, changes: dict[str, object],
                                          field: str, words: str) -> None:
        """The problem names the file, the record id and the field, and says what is wrong."""
        path = _write(tmp_path, **changes)
        catalog = load_catalog([path], builtin=False, rules=False)
        problems = gate_problems(catalog, builtin_benign())
        sig_id = str(changes.get("id", GOOD["id"]))
        assert [(str(path), sig_id, field)] == [(p.file, p.record_id, p.field) for p in problems]
        assert words in problems[0].message

    def test_unknown_fields_far_from_known_ones_are_kept(self, tmp_path: Path) -> None:
        """A new field that resembles no field of the format is allowed (the format may grow)."""
        catalog = load_catalog([_write(tmp_path, owner_team="inference-sre", root_cause_fr="x")], builtin=False, rules=False)
        assert [] == gate_problems(catalog, builtin_benign())


class TestCheckCommand:
    def test_no_path_checks_the_builtin_catalog(self, capsys: pytest.CaptureFixture[str]) -> None:
        """``catalog check`` with no path gates the built-in catalog."""
        code, out = _check(capsys)
        assert (0, f"ok: {len(load_catalog().signatures)} signatures\n") == (code, out)

    def test_a_broken_record_fails_with_file_id_and_field(self, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
        """Exit 1, and the output line names file, id and field."""
        path = _write(tmp_path, category="widget_error")
        code, out = _check(capsys, str(path))
        assert 1 == code
        assert f"{path}: site/vllm-widget-failed: category: 'widget_error' is not in the vocabulary" in out

    def test_a_directory_without_catalog_files_fails(self, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
        """An empty catalog directory is a mistake (a wrong mount), not an empty catalog."""
        (tmp_path / "README.txt").write_text("not a catalog", encoding="utf-8")
        code, out = _check(capsys, str(tmp_path))
        assert 1 == code
        assert f"{tmp_path}: directory holds no catalog file" in out

    def test_an_override_of_a_builtin_id_is_reported(self, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
        """A user record with a built-in id passes, with a warning naming both files."""
        path = _write(tmp_path, id="cuda/torch-oom", regex=r"CUDA out of memory\. Tried to allocate")
        code, out = _check(capsys, str(path))
        assert 0 == code
        assert f"warning: {path}: cuda/torch-oom: overrides the built-in signature" in out

    def test_extra_benign_lines_are_used(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """Lines given with --benign are checked too."""
        path = _write(tmp_path)
        benign = tmp_path / "benign.txt"
        line = "RuntimeError: widget failed on rank 3 (expected during the drill)\n"
        benign.write_text(line * (2 * len(builtin_benign())), encoding="utf-8")
        code, out = _check(capsys, str(path), "--benign", str(benign))
        assert 1 == code
        assert "benign lines" in out


class TestEveryProblemIsListed:
    def test_a_file_that_does_not_parse_hides_no_other_file(self, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
        """A YAML parse error is listed with the missing and misspelt fields of the other files; exit 1."""
        (tmp_path / "broken.yaml").write_text("id: site/x\nregex: [unclosed\n", encoding="utf-8")
        bare = {k: v for k, v in GOOD.items() if k not in ("root_cause", "category")}
        (tmp_path / "bare.yaml").write_text(yaml.safe_dump({**bare, "id": "site/bare"}), encoding="utf-8")
        misspelt = {**bare, "id": "site/misspelt", "catagory": "runtime_error", "rootcause": "x",
                    "workaround": [{"action": "x"}]}
        (tmp_path / "misspelt.yaml").write_text(yaml.safe_dump(misspelt), encoding="utf-8")
        code, out = _check(capsys, str(tmp_path))
        listed = {(Path(line.split(": ")[0].removeprefix("  - ")).name, *line.split(": ")[1:3])
                  for line in out.splitlines() if line.startswith("  - ")}
        assert (1, {("broken.yaml", "cannot read", "while parsing a flow sequence"),
                    ("bare.yaml", "site/bare", "root_cause"), ("bare.yaml", "site/bare", "category"),
                    ("misspelt.yaml", "site/misspelt", "root_cause"), ("misspelt.yaml", "site/misspelt", "category"),
                    ("misspelt.yaml", "site/misspelt", "catagory"), ("misspelt.yaml", "site/misspelt", "rootcause"),
                    ("misspelt.yaml", "site/misspelt", "workaround")}) == (code, listed)

    def test_a_duplicate_id_hides_no_other_problem_nor_warning(self, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
        """A duplicate id is listed with another file's bad id, and the override warning is still printed."""
        for name in ("a.yaml", "b.yaml"):
            (tmp_path / name).write_text(yaml.safe_dump(GOOD), encoding="utf-8")
        (tmp_path / "c.yaml").write_text(yaml.safe_dump({**GOOD, "id": "WidgetFailed"}), encoding="utf-8")
        (tmp_path / "d.yaml").write_text(yaml.safe_dump({**GOOD, "id": "cuda/torch-oom"}), encoding="utf-8")
        code, out = _check(capsys, str(tmp_path))
        assert (1, True, True, True) == (
            code, f"{tmp_path / 'b.yaml'}: site/vllm-widget-failed: id: duplicate id" in out,
            f"{tmp_path / 'c.yaml'}: WidgetFailed: id: id is not <domain>/<slug>" in out,
            f"warning: {tmp_path / 'd.yaml'}: cuda/torch-oom: overrides the built-in signature" in out)

    def test_a_record_the_model_rejects_still_has_its_regex_checked(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A missing signature hides not that the same record's regex does not compile."""
        path = _write(tmp_path, signature=None, regex="broken (unclosed")
        code, out = _check(capsys, str(path))
        fields = [line.split(": ")[2] for line in out.splitlines() if line.startswith("  - ")]
        assert (1, ["signature", "regex"]) == (code, fields)

    def test_dead_symbolic_links_are_each_named(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A looping and a dangling link in a catalog directory are each listed, with the good file loaded."""
        (tmp_path / "good.yaml").write_text(yaml.safe_dump(GOOD), encoding="utf-8")
        (tmp_path / "loop.yaml").symlink_to(tmp_path / "loop.yaml")
        (tmp_path / "gone.yaml").symlink_to(tmp_path / "missing.yaml")
        code, out = _check(capsys, str(tmp_path))
        listed = [line for line in out.splitlines() if line.startswith("  - ")]
        assert (1, [f"  - {tmp_path / 'gone.yaml'}: cannot read: dangling symbolic link (its target "
                    f"{tmp_path / 'missing.yaml'} does not exist)",
                    f"  - {tmp_path / 'loop.yaml'}: cannot read: symbolic link loop"]) == (code, listed)

    def test_an_unsafe_regex_hides_no_missing_field_of_its_record(self, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
        """An exponential regex is listed with the same record's missing root cause and category."""
        path = _write(tmp_path, regex="^(a+)+(?=c)", root_cause=None, category=None)
        code, out = _check(capsys, str(path))
        fields = [line.split(": ")[2] for line in out.splitlines() if line.startswith("  - ")]
        assert (1, ["root_cause", "category", "regex"]) == (code, fields)


class TestSiteBenignLines:
    def test_a_regex_matching_a_site_benign_line_fails(self, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
        """``INFO`` matching 26 of the site's 43 benign lines fails, naming the signature, the count and the first."""
        path = _write(tmp_path, regex="INFO")
        benign = tmp_path / "benign.txt"
        lines = [f"INFO 12-01 10:00:{i:02d} [engine.py:1] Avg prompt throughput: {i} tokens/s" for i in range(26)]
        lines += [f"DEBUG 12-01 10:01:{i:02d} [engine.py:2] heartbeat {i}" for i in range(17)]
        benign.write_text("\n".join(lines) + "\n", encoding="utf-8")
        code, out = _check(capsys, str(path), "--benign", str(benign))
        assert 1 == code
        assert (f"{path}: site/vllm-widget-failed: regex: matches 26 of 43 of the site's benign lines, "
                f"which must never page; the first: {lines[0]!r}") in out

    def test_a_regex_matching_no_site_benign_line_passes(self, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
        """A specific regex passes alongside the site's benign lines it does not match."""
        path = _write(tmp_path)
        benign = tmp_path / "benign.txt"
        benign.write_text("INFO 12-01 10:00:00 [engine.py:1] widget ready on rank 0\n", encoding="utf-8")
        assert (0, "ok: 1 signatures\n") == _check(capsys, str(path), "--benign", str(benign))


class TestBuiltinBenignSample:
    def test_it_holds_every_benign_corpus_line(self) -> None:
        """The shipped sample is the benign corpus (kept in sync by this test)."""
        corpus = {json.loads(line)["line"] for line in (CORPUS / "benign_lines.jsonl").open(encoding="utf-8")}
        assert corpus <= set(builtin_benign())
