"""``explain`` and ``render``: matches, and where the nearest non-matching regexes stop."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from logsig.cli import main
from logsig.matchers.authoring.explain import Explanation, Matched, NearMiss, explain, near_miss, render
from logsig.matchers.regex.pieces import Alternative, alternatives
from logsig.matchers.signature import Signature

OOM = Signature(id="cuda/oom", signature="s",
                regex=r"CUDA out of memory\. Tried to allocate (?P<size>\d+ [KMG]iB)")
DEAD = Signature(id="llm/dead", signature="s", regex=r"EngineDeadError|MQEngineDeadError: (?P<why>.+)")
XID = Signature(id="gpu/xid", signature="s", regex=r"NVRM: Xid \(PCI:(?P<bus>[0-9a-f:]+)\): 79")
FRAGMENT = Signature(id="llm/load", signature="s", regex=r"llama_model_load: error loading model")
GENERIC = Signature(id="cuda/any", signature="s", regex=r"CUDA (?P<what>.+)", priority=-1)


class TestAlternatives:
    def test_pieces_of_each_alternative(self) -> None:
        """Top-level ``|`` splits alternatives; groups, classes, escapes and quantifiers stay whole."""
        assert [Alternative("(?i)", ("a", "(?:b|c)+?", r"\d{2,}", "[]|]", r"\x41")),
                Alternative("(?i)", ("z",))] == alternatives(r"(?i)a(?:b|c)+?\d{2,}[]|]\x41|z")

    def test_literal_braces_are_their_own_pieces(self) -> None:
        """``{}`` without a count is literal in ``re`` and is not taken as a quantifier."""
        assert [Alternative("", ("a", "{", "}"))] == alternatives("a{}")


class TestExplain:
    def test_matching_signature_reports_span_and_captures(self) -> None:
        """A matching signature is listed with the span and captures of ``re``."""
        line = "x CUDA out of memory. Tried to allocate 20 MiB"
        result = explain(line, [OOM, XID], nearest=0)
        assert Explanation(line, (Matched("cuda/oom", (2, 46), {"size": "20 MiB"}),), "cuda/oom", ()) == result

    def test_primary_is_the_first_ranked_match(self) -> None:
        """Of several matches, the one enrichment ranks first is primary, whatever the catalog order."""
        result = explain("CUDA out of memory. Tried to allocate 20 MiB", [GENERIC, OOM], nearest=0)
        assert (["cuda/any", "cuda/oom"], "cuda/oom") == (
            [m.signature_id for m in result.matches], result.primary)

    def test_nothing_matching_has_no_primary(self) -> None:
        """A line no signature matches has no primary."""
        assert explain("all good", [OOM], nearest=3).primary is None

    def test_fragments_are_not_near_misses(self) -> None:
        """A miss whose matching prefix is under half its pieces ('ll' of a long literal) is not listed."""
        line = "x CUDA out of memory. Tried to allocate 20 MiB"
        assert (2, 37) == near_miss(line, FRAGMENT).pieces  # type: ignore[union-attr]
        assert () == explain(line, [OOM, FRAGMENT], nearest=3).near_misses

    @pytest.mark.parametrize(("regex", "kept"), [("abcd", True), ("abcde", False)])
    def test_half_the_pieces_is_near(self, regex: str, kept: bool) -> None:
        """A miss matching exactly half of its pieces is listed; just under half is not."""
        sig = Signature(id="t/ab", signature="s", regex=regex)
        assert kept == bool(explain("xab", [sig], nearest=3).near_misses)

    def test_negative_nearest_is_an_error(self) -> None:
        """A negative count of near misses is refused."""
        with pytest.raises(ValueError, match="nearest must be 0 or more"):
            explain("x", [OOM], nearest=-1)

    def test_prefixes_are_searched_in_linear_time(self) -> None:
        """A prefix that Python re would backtrack on for seconds ((a+)+b on 26 a's) is searched by RE2."""
        sig = Signature(id="t/nested", signature="s", regex=r"(a+)+b(c)d")
        started = time.process_time()
        miss = near_miss("a" * 26, sig)
        assert (NearMiss("t/nested", "(a+)+", "b", (0, 26), (1, 4)), True) == (
            miss, time.process_time() - started < 1.0)

    def test_near_miss_names_the_piece_and_position_where_it_stops(self) -> None:
        """The longest matching prefix, the expected piece and the position are reported."""
        line = "RuntimeError: CUDA out of memory. Tried to allocate lots"
        assert NearMiss("cuda/oom", r"CUDA out of memory\. Tried to allocate ",
                        r"(?P<size>\d+ [KMG]iB)", (14, 52), (38, 39)) == near_miss(line, OOM)

    def test_best_alternative_is_used(self) -> None:
        """Of several alternatives, the one with the largest share of pieces matched is reported."""
        sig = Signature(id="cuda/launch", signature="s", regex=r"CUDA fatal|CUDA error: (?P<what>\w+) failed")
        assert NearMiss("cuda/launch", r"CUDA error: (?P<what>\w+) ", "failed", (0, 19), (14, 20)) == near_miss(
            "CUDA error: launch ok", sig)

    def test_no_piece_matching_is_not_a_near_miss(self) -> None:
        """A regex whose first piece is absent from the line is not near."""
        assert near_miss("all good", XID) is None

    def test_nearest_first_and_limited(self) -> None:
        """Near misses are sorted by the share of pieces matched and cut to ``nearest``."""
        line = "NVRM: Xid (PCI:0000:3b:00): 13 CUDA out"
        result = explain(line, [OOM, XID, DEAD], nearest=1)
        assert ["gpu/xid"] == [miss.signature_id for miss in result.near_misses]


class TestRender:
    def test_render_shows_matches_misses_and_a_caret(self) -> None:
        """The terminal text lists the match, the miss and a caret under the stop position."""
        line = "CUDA out of memory. Tried to allocate lots; EngineDeadError"
        text = render(explain(line, [OOM, DEAD], nearest=3))
        assert [
            f"line: {line!r}",
            "match  llm/dead  (primary)  span 44-59  captures {'why': None}",
            "near   cuda/oom  38/39 pieces match (line 0-38): 'CUDA out of memory\\\\. Tried to allocate '",
            "       stops at 38, expected '(?P<size>\\\\d+ [KMG]iB)'",
            "        of memory. Tried to allocate lots; EngineDeadError",
            "                                     ^",
        ] == text.splitlines()

    def test_render_without_matches_says_so(self) -> None:
        """A line nothing matches, with no signature near, says both."""
        assert "line: 'ok'\nno signature matches, and none matches half of its pieces" == render(
            explain("ok", [OOM], nearest=3))

    def test_render_of_a_matching_line_has_no_fragments(self) -> None:
        """A matching line is followed by its matches only, not by fragments of other signatures."""
        line = "x CUDA out of memory. Tried to allocate 20 MiB"
        assert [f"line: {line!r}",
                "match  cuda/oom  (primary)  span 2-46  captures {'size': '20 MiB'}",
                "match  cuda/any  span 2-46  captures {'what': 'out of memory. Tried to allocate 20 MiB'}",
                ] == render(explain(line, [OOM, GENERIC, FRAGMENT, XID], nearest=3)).splitlines()


class TestExplainCommand:
    def test_negative_nearest_is_a_usage_error(self, capsys: pytest.CaptureFixture[str]) -> None:
        """``--nearest -1`` exits 2 with argparse's message naming the option."""
        with pytest.raises(SystemExit) as caught:
            main(["explain", "--nearest", "-1", "x"])
        assert (2, "argument --nearest: must be 0 or more, not -1") == (
            caught.value.code, capsys.readouterr().err.splitlines()[-1].split("error: ", 1)[1])

    def test_explain_names_the_primary(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """``logsig explain`` on a site catalog marks the primary match."""
        path = tmp_path / "c.yaml"
        path.write_text("- id: t/one\n  signature: s\n  regex: boom\n"
                        "- id: t/two\n  signature: s\n  regex: 'big boom'\n")
        assert 0 == main(["explain", "--no-builtin", "--catalog", str(path), "a big boom"])
        assert ["match  t/one  span 6-10  captures {}", "match  t/two  (primary)  span 2-10  captures {}"] == (
            capsys.readouterr().out.splitlines()[1:])
