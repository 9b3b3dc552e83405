"""Character sets with Python ``re`` semantics, written out for RE2 and Hyperscan.

A set is :data:`Ranges`: sorted, disjoint, non-adjacent ``(first, last)`` code point pairs.

The meaning of every class follows CPython's ``re`` for ``str`` patterns (``Lib/re/_compiler.py``
and ``Modules/_sre/sre.c``), computed from the running interpreter's own predicates so that the
Unicode version is the one ``re`` uses:

- ``\\d`` is ``str.isdecimal``, ``\\w`` is ``str.isalnum() or "_"``, ``\\s`` is ``str.isspace``;
  under ``re.ASCII`` they are ``[0-9]``, ``[a-zA-Z0-9_]`` and ``[ \\t\\n\\r\\f\\v]``;
- under ``re.IGNORECASE`` a character ``x`` matches a cased literal ``c`` when
  ``lower(x) in {lower(c)} | _EXTRA_CASES[lower(c)]`` (``_sre.unicode_tolower``), and a class
  when ``lower(x)`` is in the class with its literals lowered (``_optimize_charset``).

:func:`re2_class` writes a set exactly; :func:`prefilter_class` writes a superset that keeps the
ASCII part exact and widens any non-ASCII part to all non-ASCII code points, which keeps
Hyperscan databases small (Unicode classes compiled exactly cost seconds at 5,000 patterns).
Surrogates (U+D800..U+DFFF) never occur in UTF-8 text and are left out when writing.
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]
import bisect
import functools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from re._casefix import _EXTRA_CASES  # type: ignore[import-not-found]

Ranges = tuple[tuple[int, int], ...]
"""A code point set: sorted, disjoint, non-adjacent ``(first, last)`` pairs."""

MAX_CODE_POINT = 0x10FFFF
EVERYTHING: Ranges = ((0, MAX_CODE_POINT),)
NON_ASCII: Ranges = ((0x80, MAX_CODE_POINT),)
_SURROGATES = (0xD800, 0xDFFF)
_ASCII_CLASSES = {"digit": "0123456789", "space": " \t\n\r\f\v",
                  "word": "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"}


def normalize(pairs: Iterable[tuple[int, int]]) -> Ranges:
    """Sort and merge ``pairs`` into :data:`Ranges`."""
    out: list[tuple[int, int]] = []
    for first, last in sorted(pairs):
        if out and first <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], last))
        else:
            out.append((first, last))
    return tuple(out)


def of_points(points: Iterable[int]) -> Ranges:
    """The set of the given code points."""
    return normalize((p, p) for p in points)


def union(*sets: Ranges) -> Ranges:
    """The union of ``sets``."""
    return normalize(pair for ranges in sets for pair in ranges)


def complement(ranges: Ranges) -> Ranges:
    """Every code point not in ``ranges``."""
    out, start = [], 0
    for first, last in ranges:
        if first > start:
            out.append((start, first - 1))
        start = last + 1
    if start <= MAX_CODE_POINT:
        out.append((start, MAX_CODE_POINT))
    return tuple(out)


def contains(ranges: Ranges, point: int) -> bool:
    """Whether ``point`` is in ``ranges``."""
    index = bisect.bisect_right(ranges, (point, MAX_CODE_POINT)) - 1
    return index >= 0 and ranges[index][0] <= point <= ranges[index][1]


def _where(predicate: Callable[[str], bool]) -> Ranges:
    return of_points(p for p in range(MAX_CODE_POINT + 1) if predicate(chr(p)))


@functools.cache
def category(name: str, *, ascii_only: bool) -> Ranges:
    """``\\d`` (``"digit"``), ``\\w`` (``"word"``) or ``\\s`` (``"space"``) as ``re`` reads them."""
    if ascii_only:
        return of_points(ord(c) for c in _ASCII_CLASSES[name])
    predicates: dict[str, Callable[[str], bool]] = {
        "digit": str.isdecimal, "space": str.isspace,
        "word": lambda c: c.isalnum() or c == "_"}
    return _where(predicates[name])


@dataclass(frozen=True)
class _CaseTables:
    """Lowering as ``re`` does it, indexed for range queries.

    changed: ``(x, lower(x))`` for every x that lowering changes, sorted by x; by_lower: the same
    pairs as ``(lower(x), x)``, sorted; unchanged: the code points lowering keeps; cased: those
    with case (``_sre.unicode_iscased``).
    """

    changed: tuple[tuple[int, int], ...]
    by_lower: tuple[tuple[int, int], ...]
    unchanged: Ranges
    cased: Ranges


@functools.cache
def _case_tables(ascii_only: bool) -> _CaseTables:
    """Built once per mode by scanning every code point (about 0.1 s for Unicode)."""
    if ascii_only:
        changed = tuple((p, p + 32) for p in range(0x41, 0x5B))
        cased: Ranges = ((0x41, 0x5A), (0x61, 0x7A))
    else:
        lower = _sre.unicode_tolower
        changed = tuple((p, lower(p)) for p in range(MAX_CODE_POINT + 1) if lower(p) != p)
        cased = of_points(p for p in range(MAX_CODE_POINT + 1) if _sre.unicode_iscased(p))
    unchanged = complement(of_points(p for p, _ in changed))
    return _CaseTables(changed, tuple(sorted((low, p) for p, low in changed)), unchanged, cased)


def _pairs_within(pairs: tuple[tuple[int, int], ...], ranges: Ranges) -> Iterator[int]:
    """The second item of every pair whose first item is in ``ranges`` (``pairs`` sorted)."""
    for first, last in ranges:
        start = bisect.bisect_left(pairs, (first, -1))
        end = bisect.bisect_right(pairs, (last, MAX_CODE_POINT + 1))
        for index in range(start, end):
            yield pairs[index][1]


def _lowered(ranges: Ranges, ascii_only: bool) -> Ranges:
    """``{lower(x) : x in ranges}`` plus ``_EXTRA_CASES`` of each result (Unicode only)."""
    tables = _case_tables(ascii_only)
    images = of_points(_pairs_within(tables.changed, ranges))
    out = union(_intersect(ranges, tables.unchanged), images)
    if ascii_only:
        return out
    extra = [x for low, xs in _EXTRA_CASES.items() if contains(out, low) for x in xs]
    return union(out, of_points(extra))


def _preimage(lowered: Ranges, ascii_only: bool) -> Ranges:
    """``{x : lower(x) in lowered}``."""
    tables = _case_tables(ascii_only)
    kept = _intersect(lowered, tables.unchanged)
    return union(kept, of_points(_pairs_within(tables.by_lower, lowered)))


def _intersect(left: Ranges, right: Ranges) -> Ranges:
    return complement(union(complement(left), complement(right)))


def is_cased(ranges: Ranges, *, ascii_only: bool) -> bool:
    """Whether any code point of ``ranges`` has case (``_sre.unicode_iscased``)."""
    return bool(_intersect(ranges, _case_tables(ascii_only).cased))


@functools.lru_cache(maxsize=8192)
def fold(members: Ranges, categories: Ranges = (), *, ascii_only: bool) -> Ranges:
    """The characters a literal or class matches under ``re.IGNORECASE``.

    members: the literals and ranges written in the pattern; categories: its ``\\d\\w\\s``
    parts, which ``re`` tests on the lowered character without lowering them. Memoised: a
    ``(?i)`` catalog folds the same few letters and classes over and over.
    """
    if not is_cased(members, ascii_only=ascii_only):
        return union(members, categories)
    return _preimage(union(_lowered(members, ascii_only), categories), ascii_only)


@functools.lru_cache(maxsize=4096)
def escape(point: int) -> str:
    """One code point in RE2 syntax: itself if an ASCII word character, else ``\\x{...}``."""
    char = chr(point)
    if char.isascii() and (char.isalnum() or char == "_"):
        return char
    return f"\\x{{{point:x}}}"


def _without_surrogates(first: int, last: int) -> list[tuple[int, int]]:
    low, high = _SURROGATES
    out = [(first, min(last, low - 1)), (max(first, high + 1), last)]
    return [(a, b) for a, b in out if a <= b]


@functools.lru_cache(maxsize=4096)
def re2_class(ranges: Ranges) -> str:
    """``ranges`` as an exact RE2 class (a bare character when it is one code point)."""
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return escape(ranges[0][0])
    parts = [escape(a) if a == b else f"{escape(a)}-{escape(b)}"
             for first, last in ranges for a, b in _without_surrogates(first, last)]
    return "[" + "".join(parts) + "]" if parts else NEVER


NEVER = "[^\\x{0}-\\x{10ffff}]"
"""An RE2 class that matches nothing."""
WIDE_BYTES = "[\\x80-\\xff]"
"""Any byte of a multi-byte UTF-8 character (prefilter patterns are byte patterns)."""


@functools.lru_cache(maxsize=4096)
def utf8_escape(point: int) -> str:
    """One code point as its UTF-8 bytes in Hyperscan byte syntax (ASCII word chars bare)."""
    char = chr(point)
    if char.isascii() and (char.isalnum() or char == "_"):
        return char
    return "".join(f"\\x{byte:02x}" for byte in char.encode("utf-8", "surrogatepass"))


@functools.lru_cache(maxsize=4096)
def prefilter_class(ranges: Ranges, *, repeated: bool = False, exact_up_to: int = 8) -> str:
    """A Hyperscan byte pattern matching at least one character of ``ranges``.

    The ASCII part is exact; up to ``exact_up_to`` non-ASCII code points are written as their
    UTF-8 bytes, more as ``[\\x80-\\xff]+``. With ``repeated`` (the class is the body of an
    unbounded repeat) the result is a single byte class, ASCII part plus ``\\x80-\\xff``.
    """
    narrow = _intersect(ranges, ((0, 0x7F),))
    wide = _intersect(ranges, NON_ASCII)
    ascii_part = "".join(f"\\x{a:02x}" if a == b else f"\\x{a:02x}-\\x{b:02x}" for a, b in narrow)
    if repeated:
        return "[" + ascii_part + ("\\x80-\\xff" if wide else "") + "]"
    options = ["[" + ascii_part + "]"] if narrow else []
    points = sum(b - a + 1 for a, b in wide)
    if points > exact_up_to:
        options.append(WIDE_BYTES + "+")
    else:
        options.extend(utf8_escape(p) for a, b in wide for p in range(a, b + 1))
    if not options:
        return "[^\\x00-\\xff]"
    return options[0] if len(options) == 1 else "(?:" + "|".join(options) + ")"
