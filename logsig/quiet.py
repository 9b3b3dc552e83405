"""What a log line says of itself that makes it no failure, whatever signature matched it (pure).

The pipeline drops these matches before it raises incidents (:func:`logsig.pipeline.quiet`), and
``logsig catalog lint`` does the same before it counts a signature's benign matches, so that both
agree on what a benign line raises.
"""

from __future__ import annotations

import re

from logsig.decode.text import line_level
from logsig.matchers.engine.engine import Match

_QUIET_LEVELS = frozenset({"trace", "debug", "info"})
"""Levels at which a record says of itself that it is not a failure: the generic tier stays quiet."""

_ADVICE = re.compile(r"To silence this warning|(?:^|[\s:|\]])If you (?:get|see|encounter|hit|run into) ")
"""A line that tells how to silence it or what to do if an error appears is advice or a warning, not a
failure (SGLang's "... To silence this warning, specify --disable-custom-all-reduce", bitsandbytes'
"If you get `CUDA error: invalid device function` errors, ...")."""

_RELOGGED = re.compile(r"\| (?:ERROR|WARNING) \| (?:stderr|stdout) \| (?P<inner>.*)")
"""FastChat's controller and workers log every line their children print on stderr at ERROR
(``2024-01-04 11:10:35 | ERROR | stderr | <child line>``): the child line's own level counts."""

_INNER_LEVEL = re.compile(r"^[\d\-:,. ]*\b(DEBUG|INFO|WARNING)\b|^\s*\[?(?:DEBUG|INFO|WARNING)[\]:]")

_IGNORED = re.compile(r"(?:^|[\s:|\]])(?:Ignored|Ignoring|[Ww]ill ignore(?: the)?) error\b")
"""A line that says it ignores the error it reports and goes on is no failure (huggingface_hub's
"Ignored error while writing tree cache file ...", "Could not cache non-existence of file. Will
ignore error and continue. Error: [Errno 13] ...")."""


def quiet_matches(message: str, level: str | None, matches: list[Match]) -> list[Match]:
    """``matches`` of ``message`` less what the line itself says is no failure: every match on an
    advice line (see ``_ADVICE``); generic-tier matches when ``level`` (a record's level field, else
    the level its header names, :func:`~logsig.decode.text.line_level`) is trace, debug or info, or
    when a child's line re-logged at ERROR has its own lower level, or when the line says it ignores
    the error (see ``_IGNORED``)."""
    if _ADVICE.search(message):
        return []
    level = level or line_level(message)
    relogged = _RELOGGED.search(message)
    lower_inner = relogged is not None and _INNER_LEVEL.search(relogged.group("inner")) is not None
    if level in _QUIET_LEVELS or lower_inner or _IGNORED.search(message):
        return [m for m in matches if m.signature.tier != "generic"]
    return matches
