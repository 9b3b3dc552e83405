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

_WARNING_CLASSES = frozenset({"generic/warning-failure", "generic/limit-exceeded", "generic/process-died"})
"""The generic classes a WARNING record can raise: a warning is not a failure unless it carries the
error it caught (an exception's class, an ``error=`` field), says a request was dropped for its size
(vLLM's scheduler logs ``Input prompt (N tokens) is too long and exceeds limit of M`` at WARNING and
ignores the request) or that a process exited with a failure code (Ollama's ``level=WARN ...
msg="server crash 13 - exit code 2 - respawning"``, see ``_EXIT_CODE``); any other class stays
quiet on it (Ollama's ``level=WARN ... amdgpu version file missing: ... no such file or directory``)."""

_EXIT_CODE = re.compile(r"[Ee]xit(?:ed)? ?(?:[Cc]ode|status)|exitcode|exitCode")
"""What a WARNING record's ``generic/process-died`` match must name to count: the exit code or status
of the process (Ray's ``WARNING worker.py:1072 -- A worker died or was killed while executing task``
is printed at every exit of some programs, ray-project/ray#8000, and names none)."""

_ADVICE = re.compile(r"To silence this warning|(?:^|[\s:|\]])If you (?:get|see|encounter|hit|run into) ")
"""A line that tells how to silence it or what to do if an error appears is advice or a warning, not a
failure (SGLang's "... To silence this warning, specify --disable-custom-all-reduce", bitsandbytes'
"If you get `CUDA error: invalid device function` errors, ...")."""

_RELOGGED = re.compile(r"\| (?:ERROR|WARNING) \| (?:stderr|stdout) \| (?P<inner>.*)")
"""FastChat's controller and workers log every line their children print on stderr at ERROR
(``2024-01-04 11:10:35 | ERROR | stderr | <child line>``): the child line's own level counts."""

_INNER_LEVEL = re.compile(r"^[\d\-:,. ]*\b(DEBUG|INFO|WARNING)\b|^\s*\[?(?:DEBUG|INFO|WARNING)[\]:]")

_ECHOED = re.compile(r"(?:Received request|Generated response) [^\s:]+: |(?:Receive|Receive OpenAI|Finish): obj=")
"""Request logs that echo a request's or a response's text, which users and models write: vLLM's
``Received request <id>: prompt: '...', params: ...`` and ``Generated response <id>: output: ...``
(``vllm/entrypoints/logger.py``, ``RequestLogger``; on by default before 0.6, ``--enable-log-requests``
since), SGLang's ``Receive: obj=GenerateReqInput(text=...)``, ``Receive OpenAI: obj=...`` and
``Finish: obj=..., out={...}`` (``--log-requests``). A failure's words inside that text are content,
not a failure of the server: matches from there to the end of the line are dropped."""

_HINT = re.compile(r"(?:CUDA|HIP) kernel errors might be asynchronously reported at some other API call"
                   r"|For debugging consider passing (?:CUDA_LAUNCH_BLOCKING|AMD_SERIALIZE_KERNEL)="
                   r"|Compile with `TORCH_USE_(?:CUDA|HIP)_DSA` to enable device-side assertions")
"""The lines PyTorch appends to every CUDA or HIP error's message (``c10/cuda/CUDAException.cpp``,
``c10_cuda_check_implementation``): on a line of their own (a traceback assembled without them, or
multi-line assembly off) they are advice, not a second failure."""

_IGNORED = re.compile(r"(?:^|[\s:|\]])(?:Ignored|Ignoring|[Ww]ill ignore(?: the)?) error\b")
"""A line that says it ignores the error it reports and goes on is no failure (huggingface_hub's
"Ignored error while writing tree cache file ...", "Could not cache non-existence of file. Will
ignore error and continue. Error: [Errno 13] ...")."""


def quiet_matches(message: str, level: str | None, matches: list[Match]) -> list[Match]:
    """``matches`` of ``message`` less what the line itself says is no failure: every match on an
    advice line (see ``_ADVICE``) or on PyTorch's hint lines alone (``_HINT``), every match inside
    request text a request log echoes (``_ECHOED``); generic-tier matches when ``level`` (a record's level field, else
    the level its header names, :func:`~logsig.decode.text.line_level`) is trace, debug or info, or
    when a child's line re-logged at ERROR has its own lower level, or when the line says it ignores
    the error (see ``_IGNORED``); at warning, those of a class that does not count there
    (``_WARNING_CLASSES``)."""
    if _ADVICE.search(message):
        return []
    matches = _outside(message, matches)
    level = level or line_level(message)
    relogged = _RELOGGED.search(message)
    lower_inner = relogged is not None and _INNER_LEVEL.search(relogged.group("inner")) is not None
    if level in _QUIET_LEVELS or lower_inner or _IGNORED.search(message):
        return [m for m in matches if m.signature.tier != "generic"]
    if level == "warning":
        return [m for m in matches if m.signature.tier != "generic" or _counts_on_warning(message, m)]
    return matches


def _counts_on_warning(message: str, match: Match) -> bool:
    """Whether a generic ``match`` on a WARNING record counts: a class of ``_WARNING_CLASSES``, and
    for a process death one that names its exit code (``_EXIT_CODE``)."""
    if match.signature.id == "generic/process-died":
        return _EXIT_CODE.search(message, match.span[0], match.span[1]) is not None
    return match.signature.id in _WARNING_CLASSES


def _outside(message: str, matches: list[Match]) -> list[Match]:
    """``matches`` less those that start inside request or response text a request log echoes, or
    on a PyTorch hint: from the echo's start (``_ECHOED``'s end) or the hint's to the end of its line."""
    if not matches or not any(word in message for word in _SPOTS):
        return matches
    spans = [(found.end(), _line_end(message, found.end())) for found in _ECHOED.finditer(message)]
    spans += [(found.start(), _line_end(message, found.end())) for found in _HINT.finditer(message)]
    return [m for m in matches if not any(start <= m.span[0] < end for start, end in spans)]


_SPOTS = ("Receive", "Generated response", "Finish", "kernel errors", "For debugging", "Compile with")


def _line_end(message: str, at: int) -> int:
    end = message.find("\n", at)
    return len(message) if end < 0 else end
