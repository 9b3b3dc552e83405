"""Compiled matcher: runs a whole catalog against log messages.

Interface used by the pipeline (pure, no I/O):

- ``Engine(signatures, max_message_bytes=65536)`` compiles a catalog;
- ``Engine.match(message) -> list[Match]`` returns every matching signature, in catalog order;
- ``Engine.match_batch(messages) -> list[list[Match]]`` does the same for a batch.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

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


class Engine:
    """A catalog compiled for matching (first version: one Python ``re`` per signature)."""

    def __init__(self, signatures: Sequence[Signature], *, max_message_bytes: int = 65536) -> None:
        self.signatures = tuple(signatures)
        self.max_message_bytes = max_message_bytes
        self._compiled = [(sig, re.compile(sig.regex)) for sig in self.signatures]
        self.phase_two_seconds: dict[str, float] = {}
        self.truncated_messages = 0

    def match(self, message: str) -> list[Match]:
        """Every signature whose regex matches ``message`` (``re.search`` semantics)."""
        out = []
        for sig, pattern in self._compiled:
            found = pattern.search(message)
            if found is not None:
                out.append(Match(sig, found.span(), found.groupdict()))
        return out

    def match_batch(self, messages: Sequence[str]) -> list[list[Match]]:
        """``[self.match(m) for m in messages]``."""
        return [self.match(m) for m in messages]
