"""Case folding of code point sets as Python ``re`` reads ``(?i)`` (``logsig.matchers.regex.charsets``)."""

from __future__ import annotations

import re

import pytest

from logsig.matchers.regex import charsets

_MAX = charsets.MAX_CODE_POINT


def _matched_by_re(pattern: str, flags: int) -> charsets.Ranges:
    """Every code point (surrogates included) that ``pattern`` fully matches, by brute force."""
    compiled = re.compile(pattern, flags)
    return charsets.of_points(p for p in range(_MAX + 1) if compiled.fullmatch(chr(p)))


class TestFold:
    @pytest.mark.parametrize(("pattern", "members"), [
        ("k", ((ord("k"), ord("k")),)),
        ("[s-t]", ((ord("s"), ord("t")),)),
        ("\u03a3", ((0x3A3, 0x3A3),)),
        ("[\u0400-\u04ff]", ((0x400, 0x4FF),)),
    ])
    def test_fold_is_the_set_re_matches_under_ignorecase(self, pattern: str, members: charsets.Ranges) -> None:
        """Folding a literal or range gives exactly the code points ``re`` matches with IGNORECASE."""
        assert _matched_by_re(pattern, re.IGNORECASE) == charsets.fold(members, ascii_only=False)

    def test_ascii_fold_is_the_set_re_matches_under_ascii_ignorecase(self) -> None:
        """Under ``re.ASCII`` only ASCII letters fold (K does not reach the Kelvin sign)."""
        members = ((ord("k"), ord("k")),)
        assert _matched_by_re("k", re.IGNORECASE | re.ASCII) == charsets.fold(members, ascii_only=True)

    def test_fold_keeps_categories_unlowered(self) -> None:
        """A class with ``\\d`` folds its literals and adds the digits as they are."""
        digits = charsets.category("digit", ascii_only=False)
        assert _matched_by_re(r"[a\d]", re.IGNORECASE) == charsets.fold(((97, 97),), digits, ascii_only=False)

    def test_fold_is_memoised(self) -> None:
        """Folding the same set again is answered from the memo, not computed again."""
        members = ((0x1E9E, 0x1E9E),)
        first = charsets.fold(members, ascii_only=False)
        hits = charsets.fold.cache_info().hits
        again = charsets.fold(members, ascii_only=False)
        assert (first, hits + 1) == (again, charsets.fold.cache_info().hits)
