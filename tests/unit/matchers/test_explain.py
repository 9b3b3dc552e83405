"""``explain`` and ``render``: matches, and where the nearest non-matching regexes stop."""

from __future__ import annotations

from logsig.matchers.explain import Explanation, Matched, NearMiss, explain, near_miss, render
from logsig.matchers.regex_pieces import Alternative, alternatives
from logsig.matchers.signature import Signature

OOM = Signature(id="cuda/oom", signature="s",
                regex=r"CUDA out of memory\. Tried to allocate (?P<size>\d+ [KMG]iB)")
DEAD = Signature(id="llm/dead", signature="s", regex=r"EngineDeadError|MQEngineDeadError: (?P<why>.+)")
XID = Signature(id="gpu/xid", signature="s", regex=r"NVRM: Xid \(PCI:(?P<bus>[0-9a-f:]+)\): 79")


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
        assert Explanation(line, (Matched("cuda/oom", (2, 46), {"size": "20 MiB"}),), ()) == result

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
            "match  llm/dead  span 44-59  captures {'why': None}",
            "near   cuda/oom  38/39 pieces match (line 0-38): 'CUDA out of memory\\\\. Tried to allocate '",
            "       stops at 38, expected '(?P<size>\\\\d+ [KMG]iB)'",
            "        of memory. Tried to allocate lots; EngineDeadError",
            "                                     ^",
        ] == text.splitlines()

    def test_render_without_matches_says_so(self) -> None:
        """A line nothing matches says so."""
        assert "line: 'ok'\nno signature matches" == render(explain("ok", [OOM], nearest=3))
