"""Split a Python regex into its top-level alternatives and their pieces, as source text.

A piece is one atom (literal character, escape, class, group, ``.``, anchor) with its
quantifier. Joining the first ``k`` pieces of an alternative (after the leading global flags)
gives a valid regex, which is what ``logsig explain`` grows to find where a regex stops matching.
Syntax follows Python ``re`` (``Lib/re/_parser.py``): escapes such as ``\\x41``, ``\\u0041``,
``\\N{DASH}`` and back-references ``\\12`` are one atom; ``{m,n}``, ``?``, ``+`` after a
quantifier make it lazy or possessive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_GLOBAL_FLAGS = re.compile(r"\(\?[aiLmsux]+\)")
_QUANTIFIER = re.compile(r"(?:[*+?]|\{\d*(?:,\d*)?\})[?+]?")
_ESCAPE = re.compile(r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}]*\}|0[0-7]{0,2}|"
                     r"[1-9]\d?|.)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Alternative:
    """One top-level alternative: ``flags`` (leading global flags, e.g. ``(?i)``) and ``pieces``."""

    flags: str
    pieces: tuple[str, ...]

    def prefix(self, count: int) -> str:
        """The regex of the first ``count`` pieces (with the flags)."""
        return self.flags + "".join(self.pieces[:count])


def alternatives(regex: str) -> list[Alternative]:
    """The top-level alternatives of ``regex`` split into pieces."""
    flags = ""
    while found := _GLOBAL_FLAGS.match(regex, len(flags)):
        flags = regex[:found.end()]
    out: list[list[str]] = [[]]
    i = len(flags)
    while i < len(regex):
        if regex[i] == "|":
            out.append([])
            i += 1
            continue
        end = _atom_end(regex, i)
        quantifier = _QUANTIFIER.match(regex, end)
        if quantifier is not None and not _is_literal_brace(regex, end, quantifier):
            end = quantifier.end()
        out[-1].append(regex[i:end])
        i = end
    return [Alternative(flags, tuple(pieces)) for pieces in out]


def _is_literal_brace(regex: str, end: int, quantifier: re.Match[str]) -> bool:
    """``{`` that ``re`` reads as a literal (``{}`` or ``{,}`` has no count)."""
    return regex[end] == "{" and not any(c.isdigit() for c in quantifier.group())


def _atom_end(regex: str, i: int) -> int:
    char = regex[i]
    if char == "\\":
        found = _ESCAPE.match(regex, i)
        return found.end() if found else len(regex)
    if char == "[":
        return _class_end(regex, i)
    if char == "(":
        return _group_end(regex, i)
    return i + 1


def _class_end(regex: str, i: int) -> int:
    i += 2 if regex.startswith("[^", i) else 1
    if regex[i:i + 1] == "]":
        i += 1
    while i < len(regex) and regex[i] != "]":
        i += 2 if regex[i] == "\\" else 1
    return min(i + 1, len(regex))


def _group_end(regex: str, i: int) -> int:
    depth = 0
    while i < len(regex):
        char = regex[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":
            i = _class_end(regex, i)
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        i += 1
        if depth == 0:
            return i
    return len(regex)
