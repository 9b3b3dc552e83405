"""Compiled matcher: runs a whole catalog against log messages in one pass.

Interface used by the pipeline (pure, no I/O):

- ``Engine(signatures, max_message_bytes=65536)`` compiles a catalog;
- ``Engine.match(message) -> list[Match]`` returns every matching signature, in catalog order;
- ``Engine.match_batch(messages) -> list[list[Match]]`` does the same for a batch;
- ``Engine.phase_two_seconds`` (signature id -> cumulative seconds spent confirming it) and
  ``Engine.truncated_messages`` (messages matched on a bounded window) for telemetry.

Two phases. Phase one (:mod:`logsig.matchers.engine.prefilter`, Vectorscan) scans the whole batch once
and names, per message, the signatures that can match; its cost hardly grows with the catalog.
Phase two (:mod:`logsig.matchers.engine.confirm`, RE2) runs only those signatures' own regexes for the
span and named captures. Answers are those of Python ``re.search`` on the message (the
catalog's regex syntax); see :mod:`logsig.matchers.regex.translate` for how that is kept.

A message longer than ``max_message_bytes`` (UTF-8) is matched on its first and last
``max_message_bytes // 2`` bytes (cut at character boundaries; the head's match wins) and
counted in ``truncated_messages``. Lone surrogates (not valid UTF-8) are matched as U+FFFD;
spans and captures still index the original message.

Safety rule (enforced by :func:`~logsig.matchers.catalog.loader.load_catalog`, hence ``catalog
check``, ``run``, ``scan`` and reloads; the Engine itself does not check): a signature whose
regex has nested unbounded repeats (``(a+)+``, ``(\\w+\\s?)*``, ``(.*x){12}``) and reaches the
backtracking fallback for some messages (not linear-time, RE2 rejects it, or a caveat for
non-ASCII messages or messages ending in a newline) is a catalog problem: such a regex can
take exponential time even on the fallback's window (``^(a+)+(?=c)`` took 81 s on a
31-character line). Fallback signatures without that shape (a simple look-ahead) load, and
``catalog lint`` warns about them. The rule: :func:`logsig.matchers.engine.hazards.backtracking_hazard`.

Compiling is cached by a fingerprint of (id, regex) pairs, the limits and the libraries'
versions: an Engine built again for an unchanged catalog (a reload) reuses the compiled
databases, and with ``cache`` (a :class:`~logsig.matchers.engine.store.CompileCache`) the next
process reads them from disk instead of compiling (:mod:`.compiled`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from logsig.matchers.engine.compiled import Compiled, compile_catalog
from logsig.matchers.engine.confirm import Found
from logsig.matchers.engine.store import CompileCache
from logsig.matchers.signature import Signature


@dataclass(frozen=True, slots=True)
class Match:
    """One signature matching one message.

    span: ``(start, end)`` character offsets into the message, as ``re.Match.span()``;
    captures: the named groups as ``re.Match.groupdict()`` (None for a group that did not take part).
    """

    signature: Signature
    span: tuple[int, int]
    captures: Mapping[str, str | None]


class _Texts:
    """What is matched for a batch: per text, its string, its UTF-8 and where it came from.

    Usually one text per message, the message itself; a message over the byte limit gives a
    head window in its place and a tail window after the last message; lone surrogates become
    U+FFFD (one character for one, so offsets hold).
    """

    def __init__(self, messages: Sequence[str], limit: int) -> None:
        self.strings: Sequence[str] = messages
        self.tails: list[tuple[int, int]] = []
        try:
            self.data = list(map(str.encode, messages))
        except UnicodeEncodeError:
            self.data = []
        if len(self.data) != len(messages) or (self.data and max(map(len, self.data)) > limit):
            self._rebuild(messages, limit)

    def _rebuild(self, messages: Sequence[str], limit: int) -> None:
        strings, self.data = [], []
        tails: list[tuple[str, bytes]] = []
        for index, message in enumerate(messages):
            text, data = _utf8(message)
            if len(data) > limit:
                (text, data, _), (tail, tail_data, offset) = _windows(data, len(message), limit // 2)
                tails.append((tail, tail_data))
                self.tails.append((index, offset))
            strings.append(text)
            self.data.append(data)
        self.strings = strings + [tail for tail, _ in tails]
        self.data.extend(data for _, data in tails)

    def where(self, index: int) -> tuple[int, int]:
        """``(message index, character offset in it)`` of text ``index``."""
        count = len(self.strings) - len(self.tails)
        return (index, 0) if index < count else self.tails[index - count]


class Engine:
    """A catalog compiled for matching. Raises ``re.error`` if a regex does not parse.

    cache: where compiled catalogs are kept between processes (None: memory only).

    One thread at a time per Engine (it owns one Vectorscan scratch space); Engines built for
    the same catalog share the compiled form and may run in different threads.
    """

    def __init__(self, signatures: Sequence[Signature], *, max_message_bytes: int = 65536,
                 cache: CompileCache | None = None) -> None:
        self.signatures = tuple(signatures)
        self.max_message_bytes = max_message_bytes
        self.phase_two_seconds: dict[str, float] = {sig.id: 0.0 for sig in self.signatures}
        self.truncated_messages = 0
        self.compiled: Compiled = compile_catalog(
            [(sig.id, sig.regex) for sig in self.signatures], max_message_bytes, cache)
        self._scratch = self.compiled.prefilter.scratch()
        self._warmed = 0

    def warm(self, budget_seconds: float) -> bool:
        """Compile phase two's regexes ahead of their first candidate, for about ``budget_seconds``
        (one slice; call again to go on); True once every signature's are compiled.

        Phase two compiles a signature's RE2 object on its first candidate (about 2 ms, up to
        tens of ms for an exact Unicode class), which lands on the first occurrence of a failure:
        the one whose incident opens a group. A daemon warms in slices between batches instead.
        """
        deadline = time.perf_counter() + budget_seconds
        confirmers = self.compiled.confirmers
        while self._warmed < len(confirmers):
            confirmers[self._warmed].warm()
            self._warmed += 1
            if time.perf_counter() >= deadline:
                break
        return self._warmed >= len(confirmers)

    def match(self, message: str) -> list[Match]:
        """Every signature whose regex matches ``message`` (``re.search`` semantics)."""
        return self.match_batch([message])[0]

    def match_batch(self, messages: Sequence[str]) -> list[list[Match]]:
        """``[self.match(m) for m in messages]``, with one phase-one scan for the batch."""
        texts = _Texts(messages, self.max_message_bytes)
        self.truncated_messages += len(texts.tails)
        candidates = self.compiled.prefilter.scan(texts.data, self._scratch)
        always = self.compiled.prefilter.always
        if always:
            for index in range(len(texts.data)):
                candidates.setdefault(index, set()).update(always)
        found: dict[int, dict[int, Match]] = {}
        for index in sorted(candidates):
            message, offset = texts.where(index)
            matches = found.setdefault(message, {})
            for signature in sorted(candidates[index] - matches.keys()):
                hit = self._confirm(signature, texts.strings[index], texts.data[index])
                if hit is not None:
                    matches[signature] = _match(self.signatures[signature], hit, offset,
                                                messages[message])
        out: list[list[Match]] = [[] for _ in messages]
        for message, matches in found.items():
            out[message] = [matches[i] for i in sorted(matches)]
        return out

    def prefilter_ends(self, buffer: bytes) -> list[int]:
        """End offsets of phase one's matches in ``buffer`` (UTF-8 texts joined with ``\n``): a text
        with none, when ``compiled.prefilter.always`` is empty, matches no signature."""
        return self.compiled.prefilter.ends(buffer, self._scratch)

    def _confirm(self, signature: int, text: str, data: bytes) -> Found | None:
        confirmer = self.compiled.confirmers[signature]
        confirmer.compile_re2()
        started = time.perf_counter()
        hit = confirmer.search(text, data)
        self.phase_two_seconds[self.signatures[signature].id] += time.perf_counter() - started
        return hit


def _utf8(message: str) -> tuple[str, bytes]:
    """``(text, its UTF-8)``; lone surrogates become U+FFFD, one character for one."""
    try:
        return message, message.encode("utf-8")
    except UnicodeEncodeError:
        text = "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in message)
        return text, text.encode("utf-8")


def _windows(data: bytes, length: int, half: int) -> list[tuple[str, bytes, int]]:
    """``(text, UTF-8, offset)`` of the head and tail windows, each at most ``half`` bytes."""
    head = data[:half].decode("utf-8", "ignore")
    tail = data[len(data) - half:].decode("utf-8", "ignore")
    return [(head, head.encode(), 0), (tail, tail.encode(), length - len(tail))]


def _match(sig: Signature, hit: Found, offset: int, message: str) -> Match:
    start, end = hit.span
    captures = {name: None if span is None else message[span[0] + offset:span[1] + offset]
                for name, span in hit.groups.items()}
    return Match(sig, (start + offset, end + offset), captures)
