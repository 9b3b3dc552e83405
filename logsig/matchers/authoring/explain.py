"""``logsig explain``: why a line does or does not match, for signature authors (pure).

:func:`explain` reports the signatures that match (span and captures, from the engine) and
which of them is primary (the first of :func:`logsig.enrich.rank`, as an incident
would name it). For the signatures that do not match it finds where their regex stops: the
longest prefix of a top-level alternative that still matches somewhere in the line (found by
bisection, since a longer prefix only matches where a shorter one does), the piece where it
stops and the position in the line where that piece was expected. Nearness is the share of the
alternative's pieces that matched; only misses at least :data:`MIN_NEARNESS` near are kept,
the ``nearest`` of them, nearest first. Prefixes are searched as the engine searches (RE2, or
the guarded fallback on a window), so a prefix of a linear-time regex runs in linear time.
:func:`render` writes it for a terminal.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from logsig.enrich import rank
from logsig.matchers.engine.confirm import Confirmer
from logsig.matchers.engine.engine import Engine
from logsig.matchers.regex.pieces import Alternative, alternatives
from logsig.matchers.regex.translate import translate
from logsig.matchers.signature import Signature

CONTEXT_CHARS = 30
"""Characters of the line shown on each side of a stop position."""
MIN_NEARNESS = 0.5
"""Least share of an alternative's pieces that must match for a miss to be shown: below half,
the matching prefix is a fragment (``'ll'``, 2/9 pieces) that says nothing about the line."""


@dataclass(frozen=True, slots=True)
class Matched:
    """A signature that matches: ``span`` and ``captures`` as ``re.Match`` gives them."""

    signature_id: str
    span: tuple[int, int]
    captures: Mapping[str, str | None]


@dataclass(frozen=True, slots=True)
class NearMiss:
    """A signature that does not match, and where it stops.

    matched: the regex prefix that still matches; span: where it matches in the line (its end
    is where ``stops_at``, the next piece and the literal text after it, was expected);
    pieces: ``(matched, total)`` pieces of the alternative.
    """

    signature_id: str
    matched: str
    stops_at: str
    span: tuple[int, int]
    pieces: tuple[int, int]

    @property
    def nearness(self) -> float:
        """Share of the alternative's pieces that matched, in [0, 1]."""
        return self.pieces[0] / self.pieces[1] if self.pieces[1] else 0.0


@dataclass(frozen=True, slots=True)
class Explanation:
    """The line, its matches (catalog order), the primary match's id (None when nothing
    matches) and its nearest misses (nearest first, none of them a matching signature)."""

    line: str
    matches: tuple[Matched, ...]
    primary: str | None
    near_misses: tuple[NearMiss, ...]


def explain(line: str, signatures: Sequence[Signature], nearest: int = 3) -> Explanation:
    """Explain ``line`` against ``signatures``, keeping up to ``nearest`` misses at least
    :data:`MIN_NEARNESS` near.

    Raises ``re.error`` for a regex that does not parse, ``ValueError`` if ``nearest < 0``.
    """
    if nearest < 0:
        raise ValueError(f"nearest must be 0 or more, not {nearest}")
    found = Engine(signatures).match(line)
    matched_ids = {m.signature.id for m in found}
    misses = [miss for sig in signatures if sig.id not in matched_ids
              if (miss := near_miss(line, sig)) is not None and miss.nearness >= MIN_NEARNESS]
    misses.sort(key=lambda miss: -miss.nearness)
    primary = rank(found)[0].signature.id if found else None
    return Explanation(line, tuple(Matched(m.signature.id, m.span, m.captures) for m in found),
                       primary, tuple(misses[:nearest]))


def near_miss(line: str, sig: Signature) -> NearMiss | None:
    """Where ``sig`` stops on ``line``: its best alternative; None if not even a piece matches."""
    best: NearMiss | None = None
    for alternative in alternatives(sig.regex):
        miss = _stop(line, sig.id, alternative)
        if miss is not None and (best is None or miss.nearness > best.nearness):
            best = miss
    return best


def _stop(line: str, sig_id: str, alternative: Alternative) -> NearMiss | None:
    low, high = 0, len(alternative.pieces)  # prefix `low` matches; `high + 1` pieces never tried
    while low < high:
        middle = (low + high + 1) // 2
        if _search(alternative.prefix(middle), line) is not None:
            low = middle
        else:
            high = middle - 1
    span = _search(alternative.prefix(low), line)
    if low == 0 or low == len(alternative.pieces) or span is None:
        return None
    return NearMiss(sig_id, alternative.prefix(low), _expected(alternative.pieces[low:]), span,
                    (low, len(alternative.pieces)))


def _search(regex: str, line: str) -> tuple[int, int] | None:
    """Span of the first match of ``regex`` in ``line``, searched as the engine would."""
    confirmer = _confirmer(regex)
    if confirmer is None:
        return None
    text = line if line.isascii() else _without_surrogates(line)
    found = confirmer.search(text, text.encode("utf-8"))
    return None if found is None else found.span


@functools.lru_cache(maxsize=4096)
def _confirmer(regex: str) -> Confirmer | None:
    """Phase two for ``regex``; None if it does not parse (a prefix cut inside a reference)."""
    try:
        return Confirmer(translate(regex), re.compile(regex))
    except re.error:
        return None


def _without_surrogates(line: str) -> str:
    """Lone surrogates as U+FFFD, one character for one, as the engine matches them."""
    return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in line)


def _expected(rest: Sequence[str]) -> str:
    """The first piece and the literal characters that follow it."""
    out = [rest[0]]
    for piece in rest[1:]:
        if len(piece) != 1 or piece in "^$.()[]{}*+?|\\":
            break
        out.append(piece)
    return "".join(out)


def render(explanation: Explanation) -> str:
    """The explanation as terminal lines: matches, then each near miss with a caret under the line."""
    line = explanation.line
    out = [f"line: {line!r}"]
    if not explanation.matches:
        out.append("no signature matches" if explanation.near_misses else
                   "no signature matches, and none matches half of its pieces")
    for match in explanation.matches:
        role = "  (primary)" if match.signature_id == explanation.primary else ""
        out.append(f"match  {match.signature_id}{role}  span {match.span[0]}-{match.span[1]}  "
                   f"captures {dict(match.captures)}")
    for miss in explanation.near_misses:
        start, end = miss.span
        out.append(f"near   {miss.signature_id}  {miss.pieces[0]}/{miss.pieces[1]} pieces match "
                   f"(line {start}-{end}): {miss.matched!r}")
        out.append(f"       stops at {end}, expected {miss.stops_at!r}")
        out.extend(_caret(line, end))
    return "\n".join(out)


def _caret(line: str, position: int) -> list[str]:
    left = max(0, position - CONTEXT_CHARS)
    snippet = line[left:position + CONTEXT_CHARS].replace("\n", " ").replace("\t", " ")
    return ["       " + snippet, "       " + " " * (position - left) + "^"]
