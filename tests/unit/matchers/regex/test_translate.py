"""Translation of catalog regexes for the two phases (``regex_compat.translate``)."""

from __future__ import annotations

import pytest

from logsig.matchers.regex.translate import translate


class TestPrefilterPattern:
    @pytest.mark.parametrize(("regex", "prefilter"), [
        (r"error: (?P<reason>.*)", r"error\x3a\x20"),
        (r"\s*Killed process (?P<pid>\d+)", r"Killed\x20process\x20(?:[\x30-\x39\x80-\xff]{1,4})"),
        (r"(?:^|\W)EngineDeadError|EngineCore died", r"(?:EngineDeadError|EngineCore\x20died)"),
        (r"size (?P<n>\d{2,5})x", r"size\x20(?:[\x30-\x39\x80-\xff]{2,})x"),
    ])
    def test_edges_are_trimmed_and_classes_widened(self, regex: str, prefilter: str) -> None:
        """Nullable edges go, edge repeats shrink to their minimum, repeated classes become bytes.

        ``\\d`` repeated ``n`` times is at most ``4n`` bytes; counts above 16 become unbounded.
        """
        assert prefilter == translate(regex).prefilter

    def test_string_anchors_become_line_anchors(self) -> None:
        """``\\A``/``$`` hold at every message edge of a joined batch as ``^``/``$``."""
        assert r"^Error\x3a\x20x$" == translate(r"\AError: x$").prefilter

    def test_backreference_becomes_a_copy_of_its_group(self) -> None:
        """A back-reference matches at least what its group's pattern matches."""
        assert r"(?:[\x61]{1})\x3d(?:[\x61]+)" == translate(r"(?P<w>a+)=(?P=w)").prefilter

    def test_non_ascii_literal_is_written_as_utf8_bytes(self) -> None:
        """A literal character is its UTF-8 bytes (the prefilter scans bytes)."""
        assert r"\xc2\xb5s" == translate("µs").prefilter


class TestRe2Pattern:
    def test_named_groups_are_numbered_in_opening_order(self) -> None:
        """RE2 groups follow the order of their opening parentheses; numbered groups do not capture."""
        translation = translate(r"(?P<outer>a(?P<inner>b))(c)")
        assert ("(?P<g1>a(?P<g2>b))(?:c)", ("outer", "inner")) == (translation.re2, translation.captures)

    def test_ignorecase_literal_is_the_class_re_matches(self) -> None:
        """``(?i)k`` also matches the Kelvin sign, as in ``re``; written as an explicit class."""
        assert r"[Kk\x{212a}]" == translate("(?i)k").re2

    def test_dot_excludes_only_newline(self) -> None:
        """``.`` is every code point but ``\\n`` (surrogates left out of UTF-8 text)."""
        assert r"[\x{0}-\x{9}\x{b}-\x{d7ff}\x{e000}-\x{10ffff}]" == translate(".").re2
