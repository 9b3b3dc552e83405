"""catalog list, catalog show, catalog check without a path, plain-text help, warnings on stderr."""

import argparse
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from logsig.cli import _parser, main
from logsig.matchers.catalog.loader import load_catalog

SEED_ID = "llm/vllm-cuda-oom-during-prefill"
SITE_RECORD = ("id: k8s/site-puller\nsignature: 'puller: checksum mismatch'\nregex: 'puller: checksum mismatch "
               "for (?P<object>\\S+)'\ncategory: dependency_error\nroot_cause: 'The puller fetched a corrupt object.'\nservers: [k8s]\n"
               "examples: {match: ['puller: checksum mismatch for s3://m/a'], no_match: ['puller: ok']}\n")


class TestCatalogList:
    def test_lists_every_builtin_signature_with_its_columns(self, capsys: pytest.CaptureFixture[str]) -> None:
        """One line per built-in signature under the header, then the count."""
        assert 0 == main(["catalog", "list"])
        lines = capsys.readouterr().out.splitlines()
        total = len(load_catalog().signatures)
        assert (["ID", "SERVERS", "CATEGORY", "SEVERITY", "EXAMPLES"], total + 2, f"{total} signatures") == (
            lines[0].split(), len(lines), lines[-1])

    def test_a_site_file_row_shows_server_category_severity_examples(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A given file is listed alone, with its servers, category, derived severity and example counts."""
        path = tmp_path / "site.yaml"
        path.write_text(SITE_RECORD)
        assert 0 == main(["catalog", "list", str(path)])
        assert ["k8s/site-puller", "k8s", "dependency_error", "error", "1/1"] == (
            capsys.readouterr().out.splitlines()[1].split())


    def test_a_catalog_option_lists_the_site_file_with_the_builtin_catalog(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """``catalog list --catalog PATH`` lists the built-in signatures and the site one."""
        path = tmp_path / "site.yaml"
        path.write_text(SITE_RECORD)
        assert 0 == main(["catalog", "list", "--catalog", str(path)])
        lines = capsys.readouterr().out.splitlines()
        assert (f"{len(load_catalog().signatures) + 1} signatures", True) == (
            lines[-1], any(line.startswith("k8s/site-puller ") for line in lines))


class TestCatalogShow:
    def test_shows_the_record_and_the_engines_view(self, capsys: pytest.CaptureFixture[str]) -> None:
        """The seed record is printed as YAML with its file, severity and both phases' regexes."""
        assert 0 == main(["catalog", "show", SEED_ID])
        shown = yaml.safe_load(capsys.readouterr().out)
        record = load_catalog().by_id()[SEED_ID].to_record()
        assert (record, "error", True, True, None) == (
            {k: v for k, v in shown.items() if k not in {"file", "severity", "engine"}}, shown["severity"],
            shown["file"].endswith("llm/vllm-cuda-oom-during-prefill.json"), bool(shown["engine"]["re2"]),
            shown["engine"]["fallback"])

    def test_captures_of_a_site_signature_are_listed(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """The engine view names the regex's capture groups."""
        path = tmp_path / "site.yaml"
        path.write_text(SITE_RECORD)
        assert 0 == main(["catalog", "show", "k8s/site-puller", str(path)])
        assert ["object"] == yaml.safe_load(capsys.readouterr().out)["engine"]["captures"]

    def test_a_catalog_option_adds_a_site_file_to_the_builtin_one(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """``--catalog PATH``, as scan and run take it, shows a site signature and still the built-in ones."""
        path = tmp_path / "site.yaml"
        path.write_text(SITE_RECORD)
        site = main(["catalog", "show", "k8s/site-puller", "--catalog", str(path)])
        site_file = yaml.safe_load(capsys.readouterr().out)["file"]
        builtin = main(["catalog", "show", SEED_ID, "--catalog", str(path)])
        assert (0, str(path), 0, SEED_ID) == (site, site_file, builtin, yaml.safe_load(capsys.readouterr().out)["id"])

    def test_no_builtin_with_a_catalog_option_shows_only_that_file(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """``--catalog PATH --no-builtin`` knows no built-in id."""
        path = tmp_path / "site.yaml"
        path.write_text(SITE_RECORD)
        code = main(["catalog", "show", SEED_ID, "--catalog", str(path), "--no-builtin"])
        assert (2, True) == (code, capsys.readouterr().err.startswith(f"no signature {SEED_ID!r} in the catalog"))

    def test_unknown_id_names_close_ones(self, capsys: pytest.CaptureFixture[str]) -> None:
        """An id not in the catalog is bad usage: exit 2 suggesting the closest ids."""
        code = main(["catalog", "show", "llm/vllm-cuda-oom-during-prefil"])
        assert (2, True) == (code, capsys.readouterr().err.startswith(
            "no signature 'llm/vllm-cuda-oom-during-prefil' in the catalog; did you mean "
            "llm/vllm-cuda-oom-during-prefill"))

    def test_unknown_id_without_close_ones_points_at_the_list(self, capsys: pytest.CaptureFixture[str]) -> None:
        """An id like no other exits 2 and points at ``catalog list``."""
        code = main(["catalog", "show", "nope/nope"])
        assert (2, "no signature 'nope/nope' in the catalog; logsig catalog list shows every id\n") == (
            code, capsys.readouterr().err)


class TestCatalogCheck:
    def test_without_a_path_checks_the_builtin_catalog(self, capsys: pytest.CaptureFixture[str]) -> None:
        """catalog check with no PATH validates the built-in catalog, like test and lint."""
        assert 0 == main(["catalog", "check"])
        assert f"ok: {len(load_catalog().signatures)} signatures\n" == capsys.readouterr().out


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from _parsers(child)


class TestHelp:
    def test_no_help_text_carries_markup(self) -> None:
        """No command's help has reST or Sphinx markup (double backquotes, :role:)."""
        marked = [p.prog for p in _parsers(_parser()) if "``" in p.format_help() or ":class:" in p.format_help()
                  or ":func:" in p.format_help()]
        assert [] == marked

    def test_top_level_help_lists_exit_codes(self) -> None:
        """logsig --help explains the exit codes and the settings variables in plain text."""
        text = _parser().format_help()
        assert (True, True) == ("exit codes:\n  0  success" in text, "LOGSIG_<SECTION>__<KEY>" in text)


class TestWarnings:
    def test_unknown_variable_warning_is_one_plain_line(
            self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
        """An unrelated LOGSIG_ variable prints 'logsig: warning: ...' on stderr and the command runs."""
        monkeypatch.setenv("LOGSIG_COLOUR", "blue")
        assert 0 == main(["config", "show"])
        assert ("logsig: warning: environment variable LOGSIG_COLOUR names no setting and is ignored (settings are "
                "LOGSIG_<SECTION>__<KEY>, e.g. LOGSIG_KAFKA__BOOTSTRAP_SERVERS)\n") == capsys.readouterr().err


class TestCatalogWarm:
    def test_warm_compiles_then_finds_the_entry_cached(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """The first warm compiles into --cache-dir; the next (a new process) finds the same entry already cached."""
        from logsig.matchers.engine.compiled import clear_cache

        site = tmp_path / "site.yaml"
        site.write_text(SITE_RECORD, encoding="utf-8")
        argv = ["catalog", "warm", "--no-builtin", "--catalog", str(site), "--cache-dir", str(tmp_path / "cache")]
        clear_cache()
        first = (main(argv), capsys.readouterr().out)
        clear_cache()
        second = (main(argv), capsys.readouterr().out)
        entries = sorted(p.name for p in (tmp_path / "cache").iterdir())
        assert (0, "1 signatures compiled", 0, f"1 signatures already cached: {tmp_path / 'cache' / entries[0]}\n",
                1) == (first[0], first[1].split(" in ")[0], second[0], second[1], len(entries))

    def test_warm_with_the_cache_off_is_a_usage_error(self, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
        """With catalog.cache_max_entries 0 there is nothing to warm: exit 2 saying why."""
        monkeypatch.setenv("LOGSIG_CATALOG__CACHE_MAX_ENTRIES", "0")
        assert (2, "logsig: the compile cache is off (catalog.cache_max_entries is 0)\n") == (
            main(["catalog", "warm"]), capsys.readouterr().err)

    def test_default_cache_dir_is_under_the_user_cache_directory(self, monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
        """Without a setting, compiled catalogs go to $XDG_CACHE_HOME/logsig/compiled."""
        from logsig.config import load_settings

        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
        assert tmp_path / "logsig" / "compiled" == load_settings().catalog.cache_dir
