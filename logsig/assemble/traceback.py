"""Lines of Python tracebacks: per-line prefixes and what each line is.

Prefixes removed from every line of an assembled traceback (repeated, in any order):

- vLLM process tags ``(EngineCore_DP0 pid=279) ``, ``(VllmWorker rank=5 pid=3073) ``;
  torch ``[rank0]: ``; docker compose ``[llama-cpp] | `` (these three also name the process:
  lines of different processes of one container are assembled apart);
- vLLM headers ``ERROR 04-09 05:39:54 [core.py:390] `` (and the old ``core.py:390] `` form),
  written on every line by vLLM's ``NewLineFormatter``;
- SGLang ``[2025-03-29 18:18:34 TP0] ``, Python ``logging`` ``2025-03-08 02:04:48,693 - name -
  INFO - ``, FastChat ``2024-04-27 10:13:05 | ERROR | stderr | ``, syslog ``Oct 16 02:07:00 ``;
- NCCL's ``host:pid:tid [device] `` before ``NCCL``, and uvicorn's ``INFO:     ``: never part of
  a traceback, they are told apart so that such a line does not join one printed without them.

A prefix's identity is its text without clock times, so that the lines of one log record
(the same header) are recognised even when a logger stamps each line separately.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import NamedTuple

START_MARK = "Traceback (most recent call last):"
_CHAIN_MARKS = (
    "During handling of the above exception",
    "The above exception was the direct cause",
)

_PREFIX = re.compile(
    r"(?P<proc>\([^()]*pid=\d+\) |\[rank\d+\]: ?|\[[\w.-]+\] \| )"
    r"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? "
    r"\[?[^\]\s]+:\d+\[?\] ?"
    r"|\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?: (?:DP|TP|PP|EP|CP)\d+)*\] "
    r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - [\w.]+ - [A-Z]+ - "
    r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \| [A-Z]+ \| [\w.-]+ \| "
    r"|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d "
    r"|[\w.-]+:\d+:\d+ \[\d+\] (?=NCCL )"
    r"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):\s+(?=\S)"
)
_NOTES = (
    "CUDA kernel errors might be asynchronously reported",
    "HIP kernel errors might be asynchronously reported",
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=",
    "For debugging consider passing AMD_SERIALIZE_KERNEL=",
    "Compile with `TORCH_USE_CUDA_DSA`",
    "Compile with `TORCH_USE_HIP_DSA`",
)
"""The lines PyTorch appends to every CUDA or HIP error's message, unindented after the exception
line (``c10/cuda/CUDAException.cpp``)."""
_CLOCK = re.compile(r"\d\d:\d\d:\d\d(?:[.,]\d+)?")
_EXCEPTION = re.compile(r"[A-Za-z_][\w.]*(?:\([\w.]*\))?(?::|\s*$)")
"""What CPython's ``traceback.format_exception_only`` prints last: the exception's qualified name,
then ``: message`` if it has one (``KeyError: 'x'``, ``AssertionError``, Ray's
``ray.exceptions.RayTaskError(ValueError): ...``)."""
_MAX_PREFIXES = 4


class Kind(Enum):
    """What a line (without its prefix) is within a traceback."""

    START = "start"  # ends with "Traceback (most recent call last):"
    FRAME = "frame"  # indented: File lines, source lines, carets, exception-group bars
    CHAIN = "chain"  # "During handling of the above exception ..." / "The above exception ..."
    NOTE = "note"  # a line a library appends to its exceptions' messages (PyTorch's CUDA hints)
    BLANK = "blank"
    OTHER = "other"  # the exception line, its message's further lines, or unrelated text


class Line(NamedTuple):
    """One line split into its prefix and body, and classified."""

    prefix: str
    identity: str
    proc: str
    body: str
    kind: Kind


def split_line(text: str) -> Line:
    """Split ``text`` into prefix and body (see the module docstring) and classify the body."""
    pos = 0
    proc = ""
    for _ in range(_MAX_PREFIXES):
        found = _PREFIX.match(text, pos)
        if found is None or found.end() == pos:
            break
        if not proc and found.group("proc"):
            proc = found.group("proc").strip()
        pos = found.end()
    prefix, body = text[:pos], text[pos:]
    identity = _CLOCK.sub("", prefix) if prefix else ""
    return Line(prefix, identity, proc, body, classify(body))


def classify(body: str) -> Kind:
    """The kind of a line body (its prefix already removed)."""
    if not body or body.isspace():
        return Kind.BLANK
    if body.rstrip().endswith(START_MARK):
        return Kind.START
    if body[0] in " \t" or body.startswith('File "'):
        return Kind.FRAME
    if body.startswith(_CHAIN_MARKS):
        return Kind.CHAIN
    if body.startswith(_NOTES):
        return Kind.NOTE
    return Kind.OTHER


def is_frame_file(body: str) -> bool:
    """Whether ``body`` is a ``File "...", line N, in f`` frame line."""
    return body.lstrip().startswith('File "')


def is_exception_line(body: str) -> bool:
    """Whether ``body`` has the shape of an exception line (``Name: message`` or ``Name``), as
    opposed to another program's output interleaved with the traceback."""
    return _EXCEPTION.match(body) is not None


def final_exception(lines: list[str] | tuple[str, ...]) -> str | None:
    """The final exception line of traceback text split in lines (no prefixes), or None.

    It is the first unindented line after each block of frames, or the line right after it when
    only that one has an exception's shape (the first was interleaved output); the last such line
    wins.
    """
    found = None
    in_frames = maybe = False
    for body in lines:
        kind = classify(body)
        if kind is Kind.START:
            in_frames = True
        elif kind is Kind.FRAME:
            in_frames = in_frames or is_frame_file(body)
        elif kind is Kind.OTHER and (in_frames or (maybe and is_exception_line(body))):
            found, maybe = body, in_frames and not is_exception_line(body)
            in_frames = False
        else:
            maybe = False
    return found
