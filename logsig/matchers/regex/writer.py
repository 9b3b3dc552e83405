"""Write a parsed Python regex (``re._parser`` tree) in RE2 or Hyperscan syntax.

:class:`Re2Writer` writes an RE2 pattern with the same answers as Python ``re`` (match, span and
named captures); constructs RE2 lacks are recorded in ``unsupported`` and the output is then
unusable. :class:`PrefilterWriter` writes a Hyperscan pattern that matches at least every
message the Python regex matches (a superset: assertions dropped, back-references replaced by a
copy of their group, big classes widened); it is compiled with ``HS_FLAG_MULTILINE`` and
``HS_FLAG_UTF8``.

Every class is written out as code points (:mod:`logsig.matchers.regex.charsets`), so neither engine's
own reading of ``\\d``, ``\\w``, ``.`` or case-insensitivity is relied on. Flags are followed
as ``Lib/re/_compiler.py`` does (``_combine_flags``, ``AT_MULTILINE``, ``AT_UNICODE``).
"""

from __future__ import annotations

import functools
import re
from abc import ABC, abstractmethod
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

from logsig.matchers.regex import charsets
from logsig.matchers.regex.charsets import Ranges

IGNORECASE, MULTILINE, DOTALL = int(re.IGNORECASE), int(re.MULTILINE), int(re.DOTALL)
ASCII, LOCALE, UNICODE = int(re.ASCII), int(re.LOCALE), int(re.UNICODE)
"""The ``re`` flags as plain ints (``int & RegexFlag`` goes through ``enum`` and is slow)."""

Item = tuple[Any, Any]
"""One ``(opcode, argument)`` node of a ``re._parser.SubPattern``."""

NEVER = charsets.NEVER
RE2_MAX_REPEAT = 1000
"""RE2 rejects counted repetitions above 1000 (``re2/parse.cc``, ``kMaxRepeat``)."""
PREFILTER_MAX_REPEAT = 16
"""Bounded repeats above this are widened to unbounded in the prefilter (cheaper DFA)."""

_CATEGORIES = {
    sre.CATEGORY_DIGIT: ("digit", False), sre.CATEGORY_NOT_DIGIT: ("digit", True),
    sre.CATEGORY_SPACE: ("space", False), sre.CATEGORY_NOT_SPACE: ("space", True),
    sre.CATEGORY_WORD: ("word", False), sre.CATEGORY_NOT_WORD: ("word", True),
}


def combine_flags(flags: int, add: int, remove: int) -> int:
    """Flags inside ``(?add-remove:...)`` (``re._compiler._combine_flags``)."""
    type_flags = ASCII | LOCALE | UNICODE
    if add & type_flags:
        flags &= ~type_flags
    return (flags | add) & ~remove


@functools.lru_cache(maxsize=64)
def _category(code: Any, flags: int) -> Ranges:
    name, negated = _CATEGORIES[code]
    ranges = charsets.category(name, ascii_only=bool(flags & ASCII))
    return charsets.complement(ranges) if negated else ranges


def char_set(op: Any, av: Any, flags: int) -> Ranges | None:
    """The characters one LITERAL / NOT_LITERAL / ANY / IN node matches; None for other nodes."""
    ascii_only, nocase = bool(flags & ASCII), bool(flags & IGNORECASE)
    if op in (sre.LITERAL, sre.NOT_LITERAL):
        point = charsets.of_points([av])
        ranges = charsets.fold(point, ascii_only=ascii_only) if nocase else point
        return ranges if op is sre.LITERAL else charsets.complement(ranges)
    if op is sre.ANY:
        return charsets.EVERYTHING if flags & DOTALL else charsets.complement(((10, 10),))
    if op is sre.IN:
        return _class_set(tuple(av), flags & (ASCII | IGNORECASE))
    if op is sre.CATEGORY:
        return _category(av, flags)
    return None


@functools.lru_cache(maxsize=4096)
def _class_set(items: tuple[Item, ...], flags: int) -> Ranges:
    members: list[tuple[int, int]] = []
    categories: list[Ranges] = []
    negate = False
    for op, av in items:
        if op is sre.NEGATE:
            negate = True
        elif op is sre.LITERAL:
            members.append((av, av))
        elif op is sre.RANGE:
            members.append(av)
        elif op is sre.CATEGORY:
            categories.append(_category(av, flags))
    own, extra = charsets.normalize(members), charsets.union(*categories)
    if flags & IGNORECASE:
        ranges = charsets.fold(own, extra, ascii_only=bool(flags & ASCII))
    else:
        ranges = charsets.union(own, extra)
    return charsets.complement(ranges) if negate else ranges


def quantifier(low: int, high: int, lazy: bool) -> str:
    """``*``, ``+``, ``?`` or ``{m,n}`` for ``low..high`` (``high`` MAXREPEAT = unbounded)."""
    unbounded = high == sre.MAXREPEAT
    text = {(0, True): "*", (1, True): "+"}.get((low, unbounded))
    if text is None:
        text = "?" if (low, high) == (0, 1) else (
            f"{{{low},}}" if unbounded else f"{{{low}}}" if low == high else f"{{{low},{high}}}")
    return text + ("?" if lazy else "")


class Writer(ABC):
    """Shared walk over the tree; subclasses decide classes, anchors and unsupported nodes."""

    def __init__(self, groups: dict[int, str]) -> None:
        self.group_names = groups
        self.unsupported: list[str] = []
        self.caveats: set[str] = set()
        self.captures: list[str] = []
        self.group_trees: dict[int, tuple[list[Item], int]] = {}

    def sequence(self, items: list[Item], flags: int) -> str:
        """The concatenation of ``items`` under ``flags``."""
        return "".join(self.node(items, i, flags) for i in range(len(items)))

    def node(self, items: list[Item], index: int, flags: int) -> str:
        """One node; ``items`` and ``index`` give its neighbours (for ``\\b``)."""
        op, av = items[index]
        if op is sre.LITERAL and not flags & IGNORECASE:
            return self.literal(av)
        ranges = char_set(op, av, flags)
        if ranges is not None:
            return self.char_class(ranges, op, av, flags)
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            return self.repeat(op, av, flags)
        if op is sre.SUBPATTERN:
            group, add, remove, sub = av
            inner = combine_flags(flags, add, remove)
            if group:
                self.group_trees.setdefault(group, (list(sub), inner))
            return self.open_group(group) + self.sequence(list(sub), inner) + ")"
        if op is sre.BRANCH:
            return "(?:" + "|".join(self.sequence(list(alt), flags) for alt in av[1]) + ")"
        if op is sre.AT:
            return self.anchor(av, items, index, flags)
        return self.other(op, av, flags)

    def literal(self, point: int) -> str:
        """One case-sensitive literal character."""
        return charsets.escape(point)

    def char_class(self, ranges: Ranges, op: Any, av: Any, flags: int) -> str:
        """A class for ``ranges``."""
        return charsets.re2_class(ranges)

    def repeat(self, op: Any, av: Any, flags: int) -> str:
        """A repeat node."""
        low, high, sub = av
        return "(?:" + self.sequence(list(sub), flags) + ")" + quantifier(
            low, high, op is sre.MIN_REPEAT)

    def open_group(self, group: int | None) -> str:
        """The opening of a group (its contents and ``)`` follow)."""
        return "(?:"

    @abstractmethod
    def anchor(self, code: Any, items: list[Item], index: int, flags: int) -> str:
        """An AT node."""

    @abstractmethod
    def other(self, op: Any, av: Any, flags: int) -> str:
        """Assertions, back-references, conditionals and atomic groups."""


UNICODE_BOUNDARY = "unicode_boundary"
"""Caveat: ``\\b``/``\\B`` whose sides are not known; RE2's (ASCII, per byte) is exact on ASCII text."""
END_NEWLINE = "end_newline"
"""Caveat: ``$`` outside MULTILINE, which ``re`` also matches before a final ``\\n``."""
EMPTY_TEXT = "empty_text"
"""Caveat: ``\\B``, which ``re`` never matches in an empty string and RE2 does."""


def edge_set(item: Item, flags: int, *, last: bool) -> Ranges | None:
    """The characters ``item`` can start (or, with ``last``, end) with; None if unknown."""
    op, av = item
    ranges = char_set(op, av, flags)
    if ranges is not None:
        return ranges
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT) and av[0] >= 1 and av[2]:
        sub = list(av[2])
        return edge_set(sub[-1 if last else 0], flags, last=last)
    if op is sre.SUBPATTERN and av[3]:
        sub = list(av[3])
        return edge_set(sub[-1 if last else 0], combine_flags(flags, av[1], av[2]), last=last)
    return None


def _is_word(ranges: Ranges | None) -> bool | None:
    if ranges is None:
        return None
    word = charsets.category("word", ascii_only=False)
    inside = charsets.complement(charsets.union(charsets.complement(ranges),
                                                charsets.complement(word)))
    return True if inside == ranges else False if not inside else None


def static_boundary(items: list[Item], index: int, flags: int) -> bool | None:
    """Whether a word boundary lies between ``items[index-1]`` and ``items[index+1]``.

    None when either side is unknown (first or last node, or a node of mixed characters).
    """
    if index == 0 or index == len(items) - 1:
        return None
    left = _is_word(edge_set(items[index - 1], flags, last=True))
    right = _is_word(edge_set(items[index + 1], flags, last=False))
    return None if left is None or right is None else left != right


class Re2Writer(Writer):
    """Exact RE2 syntax; named groups become ``(?P<gN>...)`` in order (``captures``)."""

    def repeat(self, op: Any, av: Any, flags: int) -> str:
        """Greedy and lazy repeats; possessive ones and counts above 1000 are unsupported, and so
        is a named capture inside a repeat whose body can match empty: RE2 and ``re`` then report
        different iterations' captures (``(?:(?P<g>\\D*))*`` on ``':'``)."""
        low, high, body = av
        if op is sre.POSSESSIVE_REPEAT:
            self.unsupported.append("possessive quantifier")
        if low > RE2_MAX_REPEAT or (high != sre.MAXREPEAT and high > RE2_MAX_REPEAT):
            self.unsupported.append(f"repeat count above {RE2_MAX_REPEAT}")
        if high > 1 and body.getwidth()[0] == 0 and self._captures_in(body):
            self.unsupported.append("capture in a repeat that can match empty")
        return super().repeat(op, av, flags)

    def _captures_in(self, items: Any) -> bool:
        """Whether ``items`` (a parsed sub-pattern) holds a named group at any depth."""
        for code, av in items:
            if code is sre.SUBPATTERN and av[0] in self.group_names:
                return True
            for part in av if isinstance(av, (tuple, list)) else ():
                if isinstance(part, _parser.SubPattern) and self._captures_in(part):
                    return True
                if isinstance(part, list) and any(isinstance(x, _parser.SubPattern) and self._captures_in(x)
                                                  for x in part):
                    return True
        return False

    def open_group(self, group: int | None) -> str:
        """Named groups capture, numbered in opening order; the others do not (names only)."""
        name = self.group_names.get(group) if group else None
        if name is None:
            return "(?:"
        self.captures.append(name)
        return f"(?P<g{len(self.captures)}>"

    def anchor(self, code: Any, items: list[Item], index: int, flags: int) -> str:
        """``^ $ \\A \\Z \\b \\B`` with ``re``'s meaning."""
        multiline = bool(flags & MULTILINE)
        if code is sre.AT_BEGINNING:
            return "(?m:^)" if multiline else "\\A"
        if code is sre.AT_BEGINNING_STRING:
            return "\\A"
        if code is sre.AT_END_STRING:
            return "\\z"
        if code is sre.AT_END:
            if multiline:
                return "(?m:$)"
            self.caveats.add(END_NEWLINE)
            return "\\z"
        return self._boundary(code is sre.AT_BOUNDARY, items, index, flags)

    def _boundary(self, wanted: bool, items: list[Item], index: int, flags: int) -> str:
        if not flags & ASCII:
            known = static_boundary(items, index, flags)
            if known is not None:
                return "" if known == wanted else NEVER
        if not wanted:
            # RE2's \B also holds between the bytes of one UTF-8 character, and in an empty text
            self.caveats.update((EMPTY_TEXT, UNICODE_BOUNDARY))
        elif not flags & ASCII:
            self.caveats.add(UNICODE_BOUNDARY)
        return "\\b" if wanted else "\\B"

    def other(self, op: Any, av: Any, flags: int) -> str:
        """Look-around, back-references, conditionals, atomic groups: recorded as unsupported."""
        if op in (sre.ASSERT, sre.ASSERT_NOT):
            kind = "lookbehind" if av[0] < 0 else "lookahead"
            self.unsupported.append(kind if op is sre.ASSERT else "negative " + kind)
        else:
            self.unsupported.append({sre.GROUPREF: "backreference",
                                     sre.GROUPREF_EXISTS: "conditional group",
                                     sre.ATOMIC_GROUP: "atomic group"}.get(op, str(op)))
        return ""
