"""The template of a log line (its variable parts masked) and the template's fingerprint.

``template(text)`` replaces every variable part of a line with a placeholder in angle brackets, so
that the same failure printed on another pod, rank, host or day gives the same template, and
``fingerprint(text)`` is a short stable hash of that template (BLAKE2b, 8-byte digest, 16 lowercase
hex characters). Both are pure, deterministic across processes and releases of Python (no
``hash()``), and cost one regex pass over the line (the rules are compiled once, as one
alternation; at each position the first rule that matches wins, in the order below).

Masking rules, in order (placeholder: what it replaces; example):

- ANSI escape sequences are removed, runs of whitespace become one space, the ends are trimmed.
- ``<TS>``: timestamps. ISO 8601 / RFC 3339 with ``T`` or a space, fraction and zone
  (``2024-04-25T18:30:30.049+02:00``); dates ``YYYY-MM-DD``, ``YYYY/MM/DD``; TensorRT
  ``MM/DD/YYYY-HH:MM:SS``; vLLM ``MM-DD HH:MM:SS``; times ``HH:MM:SS[.frac]``; syslog
  ``[Www ]Mmm DD HH:MM:SS[ YYYY]``; the glog / c10d header ``E0816 16:43:33.649`` (the level letter
  stays: ``E<TS>``); llama.cpp ``--log-prefix`` times ``3.49.305.569`` before a level letter.
- ``<HOST>``: the host of a journald / syslog line (``<TS> <HOST> ident[<NUM>]:``) and of an NCCL
  line (``g148:14937:69361 [0]`` becomes ``<HOST>:<NUM>:<NUM> [<NUM>]``).
- ``<URL>``: ``scheme://`` up to whitespace or a quote (``http://10.0.0.1:8000/health``).
- ``<UUID>``: RFC 4122 UUIDs in any case (``652c9ad3-a61d-4e6d-ad7f-b9aa98c42c0d``).
- ``<PCI>``: PCI addresses ``[domain:]bus:device[.function]`` (``0000:43:00.0``; NVRM's
  ``PCI:0000:3b:00:`` too).
- ``<IP>``: IPv4 (a ``:port`` becomes ``:<NUM>``) and IPv6 addresses (``fd00::ff22``).
- ``<PATH>``: absolute, home (``~/``) or relative (``./``) paths with two or more separators, and
  Windows paths (``D:\\a\\s\\cuda_call.cc``); a trailing ``:line`` becomes ``:<NUM>``.
- ``<ADDR>``: ``0x`` hexadecimal numbers (addresses, masks, handles: ``0x7f1928e6e060``).
- ``-<POD>``: Kubernetes generated name suffixes: a ReplicaSet hash and pod suffix
  (``-5cc594fd46-hg5rw``) or a five-character suffix (``-6w58s``) in the alphabet
  ``bcdfghjklmnpqrstvwxz2456789`` with at least one letter.
- ``<HEX>``: hexadecimal runs of 8 or more characters with a digit and a letter (request ids,
  container and image ids, hashes, Docker short ids).
- ``<SIZE>``: a number with a size unit (``B``, ``K``/``KB``/``KiB`` ... ``PiB``, ``bytes``: ``9866.00 MiB``).
- ``<DUR>``: a number with a duration unit, Go compounds included (``816.071µs``, ``2m30s``).
- ``<NUM>``: any other number standing alone (not glued to a letter or ``_``): integers, decimals,
  versions (``v4.44`` keeps its ``v``), pids, ports, counts, exit codes, line numbers, ``6.15x``.
  Ranks and device indexes glued to ``rank``/``Rank``/``TP``/``DP``/``PP``/``EP``/``CUDA``/``ROCm``/
  ``GPU``/``cuda``/``gpu``, and device names' indexes (``nvidia3``, Habana's ``hl2``, DRM's ``card1``
  and ``renderD128``, ``accel0``) (``[rank1]:``, ``TP7``, ``EngineCore_DP0``, ``CUDA1``) and the count of a
  Kubernetes event ``(x5 over 9s)`` are numbers too.
- ``<STR>``: a quoted value (``'...'``, ``"..."``, backticks) without whitespace that is not a JSON
  key (``'mllama'``); a quoted value that is one masked part keeps that placeholder (``"<PATH>"``).

Words glued to digits stay as they are (``float16``, ``sm_120``, ``python3``, ``CUDA0``), and so do
quoted texts with spaces (the message of a Go slog ``error="..."``): they name what failed.
Input longer than ``MAX_TEMPLATE_CHARS`` is cut first, so the cost per line is bounded.

Sources: RFC 3339; Go ``time.Duration.String``; Kubernetes ``apimachinery/pkg/util/rand``
(``SafeEncodeString`` alphabet) and the ReplicaSet/Job naming in ``kube-controller-manager``;
glog ``LogMessage`` header; NCCL ``debug.cc`` prefix ``host:pid:tid [dev]``.
"""

from __future__ import annotations

import re
from hashlib import blake2b

__all__ = ["MAX_TEMPLATE_CHARS", "PLACEHOLDERS", "fingerprint", "fingerprint_of_template", "template"]

MAX_TEMPLATE_CHARS = 4096
"""Characters of a line that are templated (the incident's ``line`` is cut to the same length)."""

PLACEHOLDERS = ("TS", "HOST", "URL", "UUID", "PCI", "IP", "PATH", "ADDR", "POD", "HEX", "SIZE", "DUR", "NUM", "STR")
"""Every placeholder name ``template`` can write, as ``<NAME>``."""

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_TIME = r"\d{1,2}:\d\d:\d\d(?:[.,]\d+)?"
_ZONE = r"(?:Z|[+-]\d\d:?\d\d)?"
_K8S = "bcdfghjklmnpqrstvwxz2456789"
_HEXDIGITS = "0-9a-fA-F"
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_SIZE_UNIT = r"(?:[KMGTP]i?B|[kK]B|B|bytes?|[KMGT])"
_DUR_UNIT = r"(?:ns|us|µs|μs|ms|s|m|h)"

_RULES: tuple[tuple[str, str], ...] = (
    ("SYSLOG", rf"(?:{_DAY} )?{_MONTH} +\d{{1,2}} {_TIME} (?P<syshost>[\w.-]+)(?= [\w./-]+(?:\[\d+\])?: )"),
    ("TS", rf"(?<![\w.])(?:"
           rf"\d{{4}}-\d\d-\d\d(?:[T ]{_TIME}{_ZONE})?"
           rf"|\d{{4}}/\d\d/\d\d(?: {_TIME})?"
           rf"|\d\d/\d\d/\d{{4}}-{_TIME}"
           rf"|(?:{_DAY} )?{_MONTH} +\d{{1,2}} {_TIME}(?: \d{{4}})?"
           rf"|(?:\d\d-\d\d )?{_TIME}{_ZONE}"
           rf"|\d+\.\d\d\.\d{{3}}\.\d{{3}}(?= [DIWE] )"
           rf")(?![\w.])"),
    ("WORD", r"[A-Za-z_]{2,}+(?![\w:/.\\-])"),
    ("SPACE", r"\s+"),
    ("GLOG", rf"(?<![\w.])(?P<glevel>[IWEF])\d{{3,4}} {_TIME}(?![\w.])"),
    ("NCCL", r"(?<![\w.:-])[\w.-]+:\d+:\d+(?= \[\d+\] )"),
    ("URL", r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"`<>]+"),
    ("UUID", rf"(?<![A-Za-z0-9])[{_HEXDIGITS}]{{8}}-(?:[{_HEXDIGITS}]{{4}}-){{3}}[{_HEXDIGITS}]{{12}}(?![\w-])"),
    ("PCI", rf"(?<![\w])(?:[{_HEXDIGITS}]{{4,8}}:)?[{_HEXDIGITS}]{{2}}:[{_HEXDIGITS}]{{2}}\.[0-7](?![\w])"
            rf"|(?<![\w])[{_HEXDIGITS}]{{4,8}}:[{_HEXDIGITS}]{{2}}:[{_HEXDIGITS}]{{2}}(?![\w]|:\w)"),
    ("IP", rf"(?<![\w.:])(?:{_OCTET}\.){{3}}{_OCTET}(?![\w.])"
           rf"|(?<![\w:])(?=[{_HEXDIGITS}:]*[{_HEXDIGITS}])(?=[{_HEXDIGITS}:]*::|(?:[{_HEXDIGITS}]{{1,4}}:){{7}})"
           rf"[{_HEXDIGITS}:]{{3,39}}(?![\w:])"),
    ("PATH", r"(?<![\w.:/\\>-])(?:~|\.{1,2})?(?:/[\w.+@%~=,-]+){2,}/?"
             r"|(?<![\w])[A-Za-z]:\\[\w.+@%~=,-]*(?:\\[\w.+@%~=,-]*)+"),
    ("ADDR", rf"(?<![\w.])0[xX][{_HEXDIGITS}]+(?![\w.])"),
    ("POD", rf"-(?:[{_K8S}]{{6,10}}-)?(?=[{_K8S}]*[a-z])[{_K8S}]{{5}}(?![\w-])"),
    ("HEX", rf"(?<![\w.])(?=[{_HEXDIGITS}]*\d)(?=[{_HEXDIGITS}]*[a-fA-F])[{_HEXDIGITS}]{{8,}}(?![\w.])"),
    ("SIZE", rf"(?<![\w.])\d+(?:\.\d+)? ?{_SIZE_UNIT}(?![\w])"),
    ("DUR", rf"(?<![\w.])(?:\d+(?:\.\d+)?{_DUR_UNIT})+(?![\w])"),
    ("RANK", r"(?<![A-Za-z])(?P<rank>rank|Rank|RANK|TP|DP|PP|EP|\(x|CUDA|ROCm|GPU|Vulkan|SYCL|NPU|XPU|cuda|gpu"
             r"|nvidia|hl|card|renderD|accel)"
             r"(?P<rsep>[=:]? ?)\d+(?![\w.])"),
    ("NUM", r"(?<![\w.])(?P<vee>v)?\d+(?:\.\d+)*(?P<times>x)?(?![\w])"),
    ("STR", r"(?<![\w'\"`])(?P<quote>['\"`])(?P<inner>[^\s'\"`]{0,200})(?P=quote)(?!\s*:)"),
)
"""(name, pattern) in priority order; ``_PATTERN`` is their alternation. ``WORD`` (plain words, kept)
and ``SPACE`` (one space) only let the scan skip ahead: one callback per word instead of every rule
tried at every character."""

_PATTERN = re.compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in _RULES))
_ONLY_MASKED = re.compile(r"(?=[^<]*<[A-Z]+>)(?:<[A-Z]+>|[^\w<>])+")
"""Placeholders and punctuation only (``[<SIZE>]``): kept as is, so templating stays idempotent."""


def _replace(m: re.Match[str]) -> str:
    """The placeholder text for the rule that matched ``m``."""
    kind = m.lastgroup
    if kind == "WORD":
        return m.group()
    if kind == "SPACE":
        return " "
    if kind in _RULE_TEXT:
        return _RULE_TEXT[kind]
    groups = m.groupdict()
    if kind == "SYSLOG":
        return "<TS> <HOST>"
    if kind == "GLOG":
        return f"{groups['glevel']}<TS>"
    if kind == "NCCL":
        return "<HOST>:<NUM>:<NUM>"
    if kind == "RANK":
        return f"{groups['rank']}{groups['rsep']}<NUM>"
    if kind == "NUM":
        return f"{groups['vee'] or ''}<NUM>{groups['times'] or ''}"
    return _quoted(groups["quote"], groups["inner"])


_RULE_TEXT = {
    "TS": "<TS>",
    "URL": "<URL>",
    "UUID": "<UUID>",
    "PCI": "<PCI>",
    "IP": "<IP>",
    "PATH": "<PATH>",
    "ADDR": "<ADDR>",
    "POD": "-<POD>",
    "HEX": "<HEX>",
    "SIZE": "<SIZE>",
    "DUR": "<DUR>",
}


def _quoted(quote: str, inner: str) -> str:
    """A quoted value: its masked form when that is masked parts and punctuation only, else ``<STR>``."""
    masked = _PATTERN.sub(_replace, inner)
    if _ONLY_MASKED.fullmatch(masked):
        return f"{quote}{masked}{quote}"
    return f"{quote}<STR>{quote}"


def template(text: str) -> str:
    """``text`` with its variable parts masked (rules in the module docstring); never raises.

    >>> template("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9866.00 MiB on device 1")
    'ggml_backend_cuda_buffer_type_alloc_buffer: allocating <SIZE> on device <NUM>'
    """
    text = text[:MAX_TEMPLATE_CHARS]
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    return _PATTERN.sub(_replace, text).strip()


def fingerprint_of_template(template_text: str) -> str:
    """16 lowercase hex characters: BLAKE2b (8-byte digest) of ``template_text`` in UTF-8."""
    return blake2b(template_text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def fingerprint(text: str) -> str:
    """The fingerprint of ``template(text)``: equal for lines that differ only in masked parts."""
    return fingerprint_of_template(template(text))
