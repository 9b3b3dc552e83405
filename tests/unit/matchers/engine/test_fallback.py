"""Signatures outside the linear engines, caveat messages and prefilter failures stay correct."""

from __future__ import annotations

import re

import pytest

from logsig.matchers.engine.confirm import FALLBACK_WINDOW_CHARS
from logsig.matchers.engine.engine import Engine
from logsig.matchers.regex.translate import END_NEWLINE, UNICODE_BOUNDARY, translate
from logsig.matchers.signature import Signature


def _sig(regex: str, sig_id: str = "t/sig") -> Signature:
    return Signature(id=sig_id, signature="s", regex=regex)


def _same_as_re(regex: str, messages: list[str]) -> None:
    results = Engine([_sig(regex)]).match_batch(messages)
    for message, matches in zip(messages, results, strict=True):
        found = re.search(regex, message)
        expected = [] if found is None else [(found.span(), found.groupdict())]
        assert expected == [(m.span, dict(m.captures)) for m in matches], message


class TestNonLinearSignatures:
    @pytest.mark.parametrize(("regex", "feature"), [
        (r"(?P<word>\w+) \1 again", "backreference"),
        (r"(?<=GPU )(?P<n>\d+) lost", "lookbehind"),
        (r"Xid (?!13)(?P<xid>\d+)", "negative lookahead"),
        (r"(?>a+)b", "atomic group"),
        (r"a++b", "possessive quantifier"),
        (r"(a)?(?(1)b|c)", "conditional group"),
        (r"x{1001}", "repeat count above 1000"),
    ])
    def test_feature_is_reported(self, regex: str, feature: str) -> None:
        """A construct RE2 lacks is named in ``unsupported`` and leaves no RE2 pattern."""
        translation = translate(regex)
        assert ((feature,), None) == (translation.unsupported, translation.re2)

    @pytest.mark.parametrize("regex", [
        r"(?P<word>\w+) \1 again", r"(?<=GPU )(?P<n>\d+) lost", r"Xid (?!13)(?P<xid>\d+)",
        r"(?>a+)b", r"a++b", r"(a)?(?(1)b|c)",
    ])
    def test_fallback_gives_the_answers_of_re(self, regex: str) -> None:
        """Each such signature still gets the answers of ``re`` on short messages."""
        _same_as_re(regex, ["oops oops again", "GPU 3 lost", "Xid 13 Xid 79", "aaab", "ab b c",
                            "nothing here", ""])

    def test_fallback_searches_only_the_bounded_window(self) -> None:
        """Past the window's head and tail, a fallback signature does not see the text."""
        regex = r"(?<=GPU )lost"
        middle = "x" * FALLBACK_WINDOW_CHARS + "GPU lost" + "y" * FALLBACK_WINDOW_CHARS
        tail = "x" * (2 * FALLBACK_WINDOW_CHARS) + "GPU lost"
        engine = Engine([_sig(regex)])
        assert [[], [(len(tail) - 4, len(tail))]] == [
            [m.span for m in r] for r in engine.match_batch([middle, tail])]


class TestCaveats:
    def test_unicode_word_boundary_is_exact_on_non_ascii_text(self) -> None:
        """``\\b`` next to a non-ASCII letter follows ``re`` (Unicode words), not RE2 (ASCII)."""
        assert UNICODE_BOUNDARY in translate(r"\bOOMKilled\b").caveats
        _same_as_re(r"\bOOMKilled\b", ["éOOMKilled", "OOMKilledé", "é OOMKilled ", "OOMKilled", "µOOMKilled"])

    def test_boundary_between_known_characters_needs_no_fallback(self) -> None:
        """A ``\\b`` between a digit and a colon is decided when translating."""
        translation = translate(r"error (?P<code>\d+)\b:")
        assert frozenset() == translation.caveats
        _same_as_re(r"error (?P<code>\d+)\b:", ["error 12:", "error 12x:", "error ١٢:"])

    def test_dollar_before_final_newline(self) -> None:
        """A non-MULTILINE ``$`` also matches before a final newline, as in ``re``."""
        assert END_NEWLINE in translate(r"failed$").caveats
        _same_as_re(r"failed$", ["it failed\n", "it failed", "it failed\n\n", "failed\nok"])

    @pytest.mark.parametrize("regex", [r"(?m)^Error: (?P<x>.+)$", r"(?s)begin.+end", r"\Aok\Z"])
    def test_line_and_string_anchors(self, regex: str) -> None:
        """MULTILINE, DOTALL and string anchors keep their ``re`` meaning in multi-line events."""
        _same_as_re(regex, ["x\nError: boom\ny", "begin\nmid\nend", "ok", "ok\n", "x\nok"])


class TestPrefilterGaps:
    def test_regex_matching_empty_is_a_candidate_everywhere(self) -> None:
        """A regex that can match an empty string has no prefilter and matches every message."""
        engine = Engine([_sig(r"(?P<n>\d*)")])
        assert (None, ((0, 0), (0, 2))) == (
            engine.compiled.translations[0].prefilter,
            tuple(r[0].span for r in engine.match_batch(["abc", "42x"])))

    def test_pattern_hyperscan_rejects_is_isolated(self) -> None:
        """A pattern Hyperscan cannot compile is reported and the others keep their prefilter."""
        engine = Engine([_sig(r"[^\s\S]", "t/never"), _sig(r"EngineDeadError", "t/dead")])
        prefilter = engine.compiled.prefilter
        assert ((0,), [0]) == (prefilter.always, list(prefilter.failures))
        assert [["t/dead"], []] == [[m.signature.id for m in r]
                                    for r in engine.match_batch(["EngineDeadError", "x"])]
