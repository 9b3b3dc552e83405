"""Phase-one patterns split into expressions without top-level alternation (``regex.distribute``)."""

from __future__ import annotations

import re
from re import _parser  # type: ignore[attr-defined]

import hyperscan
import pytest

from logsig.matchers.regex.distribute import alternatives
from logsig.matchers.regex.translate import translate

LINES = ["WARN x a", "ERR b", "xERR a", "WARN  a", "Error: x", "ValueError: y", "a |  error: z", "x:error: ",
         "abx..y", "cdxy", "acx y", "[W] Failed to bind: err=1",
         "WARNING 12-01 10:00:00 Failed to x: with ValueError: y", "- WARNING - q error: z err=2", "none"]
REGEXES = [r"(?:ab|cd)x.*y", r"(?:^|\s)(?:WARN|ERR) (?:a|b)", r"(?:^|[:|]\s{0,4})(?:Error|error): \S",
           r"(?:\[W\] |- WARNING - |WARNING \d\d-\d\d \d\d:\d\d:\d\d)[^\n]{0,400}?(?:Failed to [a-z]|[A-Za-z] error:)"
           r"[^\n]{0,300}?(?: with [A-Z][A-Za-z]{2,40}Error:|[^A-Za-z]err=\S)"]


def _lines_matched(patterns: tuple[str, ...]) -> set[int]:
    """Indices of ``LINES`` in which one of ``patterns`` (Hyperscan, multi-line) has a match."""
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(expressions=[p.encode() for p in patterns], ids=[0] * len(patterns), elements=len(patterns),
                     flags=[hyperscan.HS_FLAG_MULTILINE] * len(patterns))
    buffer = "\n".join(LINES).encode()
    ends: list[int] = []
    database.scan(buffer, match_event_handler=lambda _i, _f, end, _fl, _c: ends.append(end))
    return {buffer[:end].count(b"\n") for end in ends}


class TestAlternatives:
    def test_alternation_heading_a_tail_is_split(self) -> None:
        """``(?:ab|cd)x.*y`` is written as one expression per alternative, each with the tail."""
        span = r"[\x00-\x09\x0b-\x7f\x80-\xff]*"
        assert (f"abx{span}y", f"cdx{span}y") == translate(r"(?:ab|cd)x.*y").prefilter_parts

    def test_alternatives_are_split_before_trimming(self) -> None:
        """A nullable edge (``(?:^|:)``) is split, not dropped: each part keeps its anchor or class."""
        assert (r"^WARN\x20[\x61-\x62]", r"^ERR\x20[\x61-\x62]", r"\x3aWARN\x20[\x61-\x62]",
                r"\x3aERR\x20[\x61-\x62]") == translate(r"(?:^|:)(?:WARN|ERR) (?:a|b)").prefilter_parts

    def test_count_stays_within_the_limit(self) -> None:
        """Alternations whose product would pass the limit are kept whole."""
        tree = _parser.parse(r"(?:ab|cd|ef)(?:gh|ij|kl)")
        assert [3, 9] == [len(alternatives(tree.state, list(tree), limit)) for limit in (8, 9)]

    def test_unsplit_regex_has_its_prefilter_as_only_part(self) -> None:
        """Without alternation the one part is the prefilter pattern itself."""
        translation = translate(r"EngineDeadError")
        assert (translation.prefilter,) == translation.prefilter_parts

    @pytest.mark.parametrize("regex", REGEXES)
    def test_parts_match_within_the_whole_pattern_and_beyond_re(self, regex: str) -> None:
        """The parts match in no line the single pattern misses, and in every line ``re`` matches."""
        translation = translate(regex)
        whole, parts = _lines_matched((str(translation.prefilter),)), _lines_matched(translation.prefilter_parts)
        python = {i for i, line in enumerate(LINES) if re.search(regex, line)}
        assert (True, True) == (parts <= whole, python <= parts)

    def test_split_before_trimming_is_narrower(self) -> None:
        """``(?:^|[:|]\\s{0,4})Error: `` no longer matches ``ValueError: y``, which ``Error: `` alone did."""
        translation = translate(r"(?:^|[:|]\s{0,4})(?:Error|error): \S")
        assert ({4, 5, 6}, {4, 6}) == (_lines_matched((str(translation.prefilter),)) & {4, 5, 6},
                                       _lines_matched(translation.prefilter_parts) & {4, 5, 6})
