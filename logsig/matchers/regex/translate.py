"""Catalog regexes (Python ``re`` syntax) translated for the two matching phases.

:func:`translate` parses a signature's regex with Python's own parser (``re._parser``, so the
syntax accepted is exactly ``re``'s) and writes it twice:

- ``re2``: an RE2 pattern with the same answers as ``re.search`` (match, span, named captures),
  run in phase two. None when the regex uses what a linear-time engine cannot do
  (``unsupported``: back-references, look-around, conditionals, atomic groups, possessive
  quantifiers, repeat counts above 1000); such a signature runs on the guarded fallback.
- ``prefilter``: a Hyperscan pattern matching at least every message the regex matches, run in phase
  one as ``prefilter_parts``: the same written as up to 64 expressions without top-level alternation
  (:mod:`logsig.matchers.regex.distribute`), each trimmed as below. At both ends, inside groups and
  alternatives too, parts that can match empty are dropped and an edge ``X{m,n}`` becomes ``X{m}``
  (whether a match exists does not change), which keeps Hyperscan from reporting a match at every
  offset of a ``.*`` tail. None when nothing is left (the regex can match an empty string): the
  signature is then a candidate for every message.

``caveats`` names the messages for which RE2 may answer differently from ``re``
(:data:`~logsig.matchers.regex.writer.UNICODE_BOUNDARY`: non-ASCII messages;
:data:`~logsig.matchers.regex.writer.END_NEWLINE`: messages ending in ``\\n``;
:data:`~logsig.matchers.regex.writer.EMPTY_TEXT`: the empty message); the engine sends those
messages to the guarded fallback for that signature.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

from logsig.matchers.regex import charsets
from logsig.matchers.regex.charsets import Ranges
from logsig.matchers.regex.distribute import alternatives
from logsig.matchers.regex.writer import (
    EMPTY_TEXT,
    END_NEWLINE,
    PREFILTER_MAX_REPEAT,
    UNICODE_BOUNDARY,
    Item,
    Re2Writer,
    Writer,
    char_set,
    quantifier,
)

__all__ = ["EMPTY_TEXT", "END_NEWLINE", "UNICODE_BOUNDARY", "Translation", "translate"]


@dataclass(frozen=True, slots=True)
class Translation:
    """A regex written for both phases; see the module docstring for each field.

    captures: the named groups in RE2 group order (RE2 group ``i`` is ``captures[i - 1]``).
    """

    source: str
    re2: str | None
    prefilter: str | None
    captures: tuple[str, ...]
    unsupported: tuple[str, ...]
    caveats: frozenset[str]
    prefilter_parts: tuple[str, ...] = ()

    @property
    def linear(self) -> bool:
        """Whether phase two runs this regex on RE2 (linear time)."""
        return self.re2 is not None


class PrefilterWriter(Writer):
    """Hyperscan byte syntax matching a superset of the UTF-8 encoded matches.

    Compiled with ``HS_FLAG_MULTILINE`` only: byte patterns compile and scan several times
    faster than ``HS_FLAG_UTF8`` ones, and a non-ASCII class part becomes ``[\\x80-\\xff]+``.
    """

    def literal(self, point: int) -> str:
        """The character's UTF-8 bytes."""
        return charsets.utf8_escape(point)

    def char_class(self, ranges: Ranges, op: Any, av: Any, flags: int) -> str:
        """A class through :func:`charsets.prefilter_class`."""
        return charsets.prefilter_class(ranges)

    def repeat(self, op: Any, av: Any, flags: int) -> str:
        """Every repeat greedy, large counts widened; a repeated class is one byte class.

        ``C{m,n}`` of a class with non-ASCII characters becomes ``B{m,4n}`` of its byte class
        ``B``: ``n`` characters are at most ``4n`` UTF-8 bytes (a superset, and far cheaper for
        Hyperscan than repeating a multi-byte alternation).
        """
        low, high, sub = av
        body = list(sub)
        ranges = char_set(body[0][0], body[0][1], flags) if len(body) == 1 else None
        if ranges is not None:
            wide = bool(ranges) and ranges[-1][1] >= 0x80
            if high != sre.MAXREPEAT and wide:
                high *= 4
            low, high = _widened(low, high)
            return charsets.prefilter_class(ranges, repeated=True) + quantifier(low, high, False)
        low, high = _widened(low, high)
        return super().repeat(sre.MAX_REPEAT, (low, high, sub), flags)

    def anchor(self, code: Any, items: list[Item], index: int, flags: int) -> str:
        """Line anchors (a superset of the string anchors); word boundaries dropped."""
        if code in (sre.AT_BEGINNING, sre.AT_BEGINNING_STRING):
            return "^"
        if code in (sre.AT_END, sre.AT_END_STRING):
            return "$"
        return ""

    def other(self, op: Any, av: Any, flags: int) -> str:
        """Look-around dropped, a back-reference replaced by its group's pattern."""
        if op is sre.GROUPREF:
            sub, group_flags = self.group_trees[av]
            return "(?:" + self.sequence(sub, group_flags) + ")"
        if op is sre.GROUPREF_EXISTS:
            alternatives = [av[1], av[2] if av[2] is not None else []]
            return "(?:" + "|".join(self.sequence(list(alt), flags) for alt in alternatives) + ")"
        if op is sre.ATOMIC_GROUP:
            return "(?:" + self.sequence(list(av), flags) + ")"
        return ""


def _widened(low: int, high: int) -> tuple[int, int]:
    """Counts above :data:`PREFILTER_MAX_REPEAT` widened (``{500}`` -> ``{16,}``)."""
    if high != sre.MAXREPEAT and high > PREFILTER_MAX_REPEAT:
        high = sre.MAXREPEAT
    return min(low, PREFILTER_MAX_REPEAT), high


def _min_width(state: Any, item: Item) -> int:
    return int(_parser.SubPattern(state, [item]).getwidth()[0])


def _trim(state: Any, items: list[Item]) -> list[Item]:
    """``items`` without what search-existence does not need, at both ends (see module doc)."""
    return _trim_side(state, _trim_side(state, list(items), last=False), last=True)


def _trim_side(state: Any, items: list[Item], *, last: bool) -> list[Item]:
    """Drop nullable edge items (anchors kept) and shorten the edge item; a superset."""
    edge = -1 if last else 0
    while items:
        if items[edge][0] is not sre.AT and _min_width(state, items[edge]) == 0:
            items.pop(edge)
            continue
        shortened = _shorten(state, items[edge], last=last)
        if shortened is None:
            items.pop(edge)
            continue
        items[edge] = shortened
        break
    return items


def _shorten(state: Any, item: Item, *, last: bool) -> Item | None:
    """``item`` with its own edge trimmed; None if it can then match empty."""
    op, av = item
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        return sre.MAX_REPEAT, (av[0], av[0], av[2])
    if op is sre.SUBPATTERN:
        body = _trim_side(state, list(av[3]), last=last)
        return (op, (av[0], av[1], av[2], _parser.SubPattern(state, body))) if body else None
    if op is sre.BRANCH:
        alternatives = [_trim_side(state, list(alt), last=last) for alt in av[1]]
        if not all(alternatives):
            return None
        return op, (av[0], [_parser.SubPattern(state, alt) for alt in alternatives])
    return item


@functools.lru_cache(maxsize=8192)
def translate(pattern: str) -> Translation:
    """Translate one catalog regex. Raises ``re.error`` when Python cannot parse it."""
    tree = _parser.parse(pattern)
    flags = int(tree.state.flags)
    names = {index: name for name, index in tree.state.groupdict.items()}
    exact = Re2Writer(names)
    re2_pattern = exact.sequence(list(tree), flags)
    narrow = PrefilterWriter(names)
    narrow.sequence(list(tree), flags)  # registers every group for back-references
    trimmed = _trim(tree.state, list(tree))
    prefilter = narrow.sequence(trimmed, flags) if trimmed else None
    if trimmed and _parser.SubPattern(tree.state, trimmed).getwidth()[0] == 0:
        prefilter = None
    parts = _parts(narrow, tree.state, list(tree), flags) if prefilter else ()
    return Translation(
        source=pattern,
        re2=None if exact.unsupported else re2_pattern,
        prefilter=prefilter or None,
        captures=tuple(exact.captures),
        unsupported=tuple(dict.fromkeys(exact.unsupported)),
        caveats=frozenset(exact.caveats),
        prefilter_parts=parts or ((prefilter,) if prefilter else ()),
    )


def _parts(writer: PrefilterWriter, state: Any, tree: list[Item], flags: int) -> tuple[str, ...]:
    """The prefilter as expressions without top-level alternation: the parts of ``tree``, split before
    trimming (so ``(?:^|[:|])Error: `` keeps ``^`` and ``[:|]`` before ``Error``), each trimmed;
    empty if a part trims to nothing (then the one trimmed pattern is used)."""
    parts = [_trim(state, list(part)) for part in alternatives(state, tree)]
    if not all(parts) or any(_parser.SubPattern(state, part).getwidth()[0] == 0 for part in parts):
        return ()
    return tuple(dict.fromkeys(writer.sequence(part, flags) for part in parts))
