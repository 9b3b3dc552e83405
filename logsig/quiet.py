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

_CAUGHT = re.compile(r"\b(?:[Ff]ailed|[Cc]ould not|[Cc]ouldn't|[Uu]nable to)\b[^\n]{0,300}?[.,;:] ?"
                     r"(?:Exception|Error|Reason|Cause)(?: was)?: ")
"""A WARNING record that reports the exception its program caught, after saying what failed, and goes on:
the exception's text is the program's report of a failure it recovered from, not one of its own (LMDeploy's
``- WARNING - ... AutoConfig.from_pretrained failed for <path>. Exception: <the exception>``, logged by
``lmdeploy/turbomind/supported_models.py`` before it falls back to its PyTorch engine)."""

_UNDETECTED = re.compile(r"\b(?:[Uu]nable to|[Cc]ould not|[Cc]ouldn't|[Cc]annot|[Ff]ailed to) (?:auto-?)?"
                         r"(?:detect|determine|infer|guess)\b[^\n]{0,120}?[,;.:] *(?:[Pp]lease |[Yy]ou (?:may|must|"
                         r"should|can) (?:need to )?)?(?:set|specify|pass|provide|choose|select)\b")
"""A line that could not detect a setting and asks for it to be set is advice, not a failure (koboldcpp's
"Unable to detect VRAM, please set layers manually."): the program goes on with a default."""

_TERMINAL = re.compile(r"tcgetpgrp failed: Not a tty|(?:^|[\s:])(?:stty|tput|mesg|tcsetattr|ioctl)\b[^\n]{0,80}?: "
                       r"Inappropriate ioctl for device|(?:^|[\s:])\w*sh: (?:no job control in this shell|"
                       r"cannot set terminal process group \(-?\d+\): Inappropriate ioctl for device)"
                       r"|mesg: ttyname failed")
"""What a shell or terminal tool prints when it runs without a terminal (a container's ``bash -i``, a
job's ``stty`` in a profile script): job control and terminal settings are off, nothing failed."""

_EXAMPLE = re.compile(r"(?:\b(?:[Ee]rror|[Ff]ailure|[Ee]xception|[Mm]essage|[Ii]ssue|[Pp]roblem|[Cc]rashe|[Ww]arning)"
                      r"s? like"
                      r"|\bsuch as|\be\.g\.,?|\bfor (?:example|instance),?)\s*[:(]?\s*[`'\"]")
"""Advice that quotes the error it warns of as an example (vLLM's "This can cause fd limit errors like
`OSError: [Errno 24] Too many open files`"): the quoted error has not happened; matches from the quote
to the end of the line are dropped."""

_WORD = re.compile(r"[A-Za-z]{2,}")
_NO_WORD = re.compile(r"\b(?:TRACE|DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|CRITICAL|FATAL)\b"
                      r"|\d{4}-\d\d-\d\d[T ][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?")
"""Level words and times: a record that has nothing else has no message (``ERROR 2024-03-20T12:09:36Z {}``)."""


def quiet_matches(message: str, level: str | None, matches: list[Match]) -> list[Match]:
    """``matches`` of ``message`` less what the line itself says is no failure: every match on an
    advice line (see ``_ADVICE``) or on PyTorch's hint lines alone (``_HINT``), every match inside
    request text a request log echoes (``_ECHOED``); generic-tier matches when ``level`` (a record's level field, else
    the level its header names, :func:`~logsig.decode.text.line_level`) is trace, debug or info, or
    when a child's line re-logged at ERROR has its own lower level, or when the line says it ignores
    the error (see ``_IGNORED``), asks for a setting it could not detect (``_UNDETECTED``) or has no
    word besides levels and times (``_NO_WORD``); at warning, those of a class that does not count there
    (``_WARNING_CLASSES``), and any match inside the exception a warning reports it caught (``_CAUGHT``).
    A record's own header (behind a collector's severity too) wins over its fields' level. Every match
    on a shell's terminal noise (``_TERMINAL``) and from a quoted example error on (``_EXAMPLE``) is dropped."""
    if _ADVICE.search(message) or _TERMINAL.search(message):
        return []
    matches = _outside(message, matches)
    level = line_level(message) or level
    relogged = _RELOGGED.search(message)
    lower_inner = relogged is not None and _INNER_LEVEL.search(relogged.group("inner")) is not None
    if (level in _QUIET_LEVELS or lower_inner or _IGNORED.search(message) or _UNDETECTED.search(message)
            or not _WORD.search(_NO_WORD.sub(" ", message))):
        return [m for m in matches if m.signature.tier != "generic"]
    if level == "warning":
        caught = _CAUGHT.search(message)
        return [m for m in matches if (m.signature.tier != "generic" or _counts_on_warning(message, m))
                and (caught is None or m.span[0] < caught.end())]
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
    spans += [(found.start(), _line_end(message, found.end())) for found in _EXAMPLE.finditer(message)]
    spans += [(found.start(), _line_end(message, found.end())) for found in _HINT.finditer(message)]
    return [m for m in matches if not any(start <= m.span[0] < end for start, end in spans)]


_SPOTS = ("Receive", "Generated response", "Finish", "kernel errors", "For debugging", "Compile with", "like",
          "such as", "e.g.", "for example", "for instance")


def _line_end(message: str, at: int) -> int:
    end = message.find("\n", at)
    return len(message) if end < 0 else end
