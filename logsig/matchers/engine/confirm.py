"""Phase two: one signature's own regex on one candidate message, for its span and captures.

Why RE2 (``google-re2``) here: it finds the same leftmost-first match and submatches as Python's
backtracking ``re`` in time linear in the message, so no line can make it backtrack. Its RE2
object is compiled on first use and then kept (an exact Unicode class costs about 2 ms to
compile, so compiling all of a 5,000-signature catalog up front would cost seconds of start-up),
or ahead of it by :meth:`Confirmer.warm`, which the daemon calls in slices between batches.
It is called through ``re2._re2`` on UTF-8 bytes:
the public wrapper spends about 20 us per call re-encoding the text and mapping offsets, five
times the search itself; byte offsets are mapped to characters here only for non-ASCII text.

The guarded fallback is Python ``re`` on a bounded window: the first and last
:data:`FALLBACK_WINDOW_CHARS` characters of the message (the head is searched first). It runs:

- every candidate of a signature RE2 cannot run (back-references, look-around, ...: reported
  by ``logsig catalog lint``), because rejecting them would drop known failures from the
  catalog, and a bounded window keeps a polynomial backtracker bounded per message;
- the candidates RE2 could answer differently (:attr:`Translation.caveats`): non-ASCII messages
  for an undecided Unicode ``\\b``, messages ending in ``\\n`` for a non-MULTILINE ``$``, the
  empty message for ``\\B``.

A window bounds a polynomial backtracker, not an exponential one: catalogs whose fallback
regexes have nested unbounded repeats are refused at load (see :mod:`logsig.matchers.engine.engine`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import re2

from logsig.matchers.regex.translate import EMPTY_TEXT, END_NEWLINE, UNICODE_BOUNDARY, Translation

_UNANCHORED = re2._Anchor.UNANCHORED
FALLBACK_WINDOW_CHARS = 4096
"""Characters from each end of a message that the guarded fallback searches."""
RE2_MAX_MEM = 64 << 20
"""RE2's memory budget per regex (``RE2::Options::max_mem``; RE2's default 8 MiB). Most of it goes
to the DFA's state cache, filled lazily as texts reach new states; when the cache runs out RE2
answers the same with its NFA, tens of times slower. Several generic signatures (Unicode classes
under bounded repeats) ran out at 8 MiB: over their candidates in the benchmark stream
``generic/python-exception`` took 85.9 ms at 8 MiB, 2.0 ms at 64 MiB; ``generic/error-log-record``
19.5 and 0.5 ms; ``generic/error-message`` 23.8 and 7.9 ms."""

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Found:
    """A match in a text: ``span`` and ``groups`` (name -> span, None if it did not take part)."""

    span: Span
    groups: Mapping[str, Span | None]


class Confirmer:
    """Phase two for one signature. ``python``: the compiled catalog regex, compiled on first
    use when not given (only the guarded fallback needs it; ``re.compile`` of a thousand regexes
    costs a quarter of a second at start-up).

    Shared by every Engine of the same catalog; its lazy compiles are idempotent, and RE2
    objects may be searched from several threads.
    """

    def __init__(self, translation: Translation, python: re.Pattern[str] | None = None) -> None:
        self.translation = translation
        self._python = python
        self._re2: Any = None
        self.re2_error: str | None = None

    @property
    def python(self) -> re.Pattern[str]:
        """The catalog regex compiled by Python ``re`` (on first use)."""
        if self._python is None:
            self._python = re.compile(self.translation.source)
        return self._python

    def compile_re2(self) -> bool:
        """Compile the RE2 pattern now; False (and ``re2_error`` set) if RE2 rejects it."""
        pattern = self.translation.re2
        if self._re2 is None and pattern is not None and self.re2_error is None:
            options = re2.Options()
            options.log_errors = False
            options.max_mem = RE2_MAX_MEM
            compiled = re2._re2.RE2(pattern.encode(), options)
            if compiled.ok():
                self._re2 = compiled
            else:
                self.re2_error = compiled.error().decode(errors="replace")
        return self._re2 is not None

    def warm(self) -> None:
        """Compile now what a first candidate would otherwise compile: the RE2 pattern, and the
        Python one when some message may reach the guarded fallback (a caveat, or RE2 rejects it)."""
        if not self.compile_re2() or self.translation.caveats:
            _ = self.python

    def uses_fallback(self, text: str) -> bool:
        """Whether ``text`` goes to the guarded fallback instead of RE2."""
        caveats = self.translation.caveats
        if not caveats:
            return not self.compile_re2()
        if UNICODE_BOUNDARY in caveats and not text.isascii():
            return True
        if END_NEWLINE in caveats and text.endswith("\n"):
            return True
        if EMPTY_TEXT in caveats and not text:
            return True
        return not self.compile_re2()

    def search(self, text: str, data: bytes) -> Found | None:
        """The first match in ``text`` (``data``: its UTF-8) with ``re.search`` semantics."""
        if self.uses_fallback(text):
            return self._search_python(text)
        spans = self._re2.Match(_UNANCHORED, data, 0, len(data))
        if spans[0][0] < 0:
            return None
        if len(data) != len(text):
            spans = _char_spans(data, spans)
        groups = {name: _span(spans[i]) for i, name in enumerate(self.translation.captures, 1)}
        return Found(spans[0], groups)

    def _search_python(self, text: str) -> Found | None:
        size = FALLBACK_WINDOW_CHARS
        found = _python_found(self.python.search(text[:size]), 0)
        if found is None and len(text) > size:
            offset = len(text) - size
            found = _python_found(self.python.search(text[offset:]), offset)
        return found


def _char_spans(data: bytes, spans: list[Span]) -> list[Span]:
    """Byte offsets into UTF-8 ``data`` as character offsets."""
    chars = {o: len(data[:o].decode("utf-8")) for span in spans for o in span if o >= 0}
    return [(chars[a], chars[b]) if a >= 0 else (a, b) for a, b in spans]


def _span(span: Span) -> Span | None:
    return None if span[0] < 0 else span


def _python_found(found: re.Match[str] | None, offset: int) -> Found | None:
    if found is None:
        return None
    groups = {name: _shift(found.span(name), offset) for name in found.re.groupindex}
    start, end = found.span()
    return Found((start + offset, end + offset), groups)


def _shift(span: Span, offset: int) -> Span | None:
    return None if span[0] < 0 else (span[0] + offset, span[1] + offset)
