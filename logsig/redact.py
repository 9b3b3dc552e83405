"""Redaction: secrets masked before any text leaves logsig (pure: no I/O).

Every text logsig writes passes through one :class:`Redactor`: incident events (the matched line
and text, captures, context, template, source key), dead letters (value, key and detail), the
Alertmanager alerts made from those incidents, and logsig's own logs (a structlog processor,
:mod:`logsig.log`). A secret becomes ``[REDACTED:<kind>]``; what names it (a header name, the user
of a URL, ``password=``) stays, so the line still says what happened. Each redaction is counted
per kind in :attr:`Redactor.counts` (exported as ``logsig_redactions_total{kind}``).

Kinds, in the order they are applied (``redaction.kinds`` selects them; ``email`` and ``ip`` are
off by default):

- ``private_key``: a PEM private key block (``-----BEGIN ... PRIVATE KEY-----`` to its END line,
  or to the end of the text when cut), and a line of exactly 64 base64 characters (a PEM body line,
  RFC 7468, seen alone when a traceback is cut inside a key);
- ``authorization``: the value of an ``Authorization``/``Proxy-Authorization`` header, any scheme;
- ``bearer``: a ``Bearer <token>`` anywhere else;
- ``url_password``: the password of ``scheme://user:password@host`` (RFC 3986 userinfo);
- ``hf_token``: Hugging Face access tokens, ``hf_`` (or ``hf_oauth_``) and 30 or more letters and digits;
- ``api_key``: OpenAI-style ``sk-...`` keys (``sk-proj-``, ``sk-ant-`` ...), 20 or more characters;
- ``aws_access_key``: AWS access key ids (``AKIA``/``ASIA`` ... and 16 upper-case letters or digits)
  and the value of ``aws_secret_access_key``;
- ``secret_value``: the value of ``password``, ``passwd``, ``secret``, ``token``, ``api_key``,
  ``apikey`` (with any ``<word>_`` prefix: ``HF_TOKEN``, ``OPENAI_API_KEY``, ``client_secret``) as
  ``key=value`` or ``key: value``, and of the flags ``--api-key``, ``--token``, ``--password``,
  ``--secret`` (``--hf-token``...) followed by a value;
- ``email``: e-mail addresses; ``ip``: IPv4 addresses.

``redaction.patterns`` adds regular expressions of your own (kind ``custom``); a whole match is masked.
Sources: RFC 6750 (Bearer), RFC 7235 (Authorization), RFC 3986 (userinfo), RFC 7468 (PEM labels),
AWS IAM identifier prefixes, Hugging Face ``huggingface_hub`` token format.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from logsig.incident import Incident
from logsig.records import DecodeFailure
from logsig.redact_scan import Clear

Kind = Literal["private_key", "authorization", "bearer", "url_password", "hf_token", "api_key",
               "aws_access_key", "secret_value", "email", "ip", "custom"]
KINDS: tuple[str, ...] = ("private_key", "authorization", "bearer", "url_password", "hf_token", "api_key",
                          "aws_access_key", "secret_value", "email", "ip", "custom")
DEFAULT_KINDS = [k for k in KINDS if k not in ("email", "ip", "custom")]
_SECRET_KEYS = r"(?:password|passwd|secret|token|api_key|apikey|api-key)"

# (kind, pattern, the group kept before the secret or 0 for none)
_RULES: tuple[tuple[str, str, int], ...] = (
    ("private_key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|.*)",
     0),
    ("private_key", r"(?m)^\s*[A-Za-z0-9+/]{64}\s*$", 0),
    ("authorization", r"(?i)(\b(?:proxy-)?authorization\b(?:\\?[\"'])?\s*[:=]\s*(?:\\?[\"'])?)"
                      r"(?:(?:bearer|basic|token|digest)\s+)?"
                      r"[^\s\"',;}\\]+", 1),
    ("bearer", r"(?i)(\bbearer\s+)[A-Za-z0-9\-._~+/]{8,}=*", 1),
    ("url_password", r"(\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s/:@\"']+:)[^\s@/\"']+(?=@)", 1),
    ("hf_token", r"\bhf_(?:oauth_)?[A-Za-z0-9]{30,}\b", 0),
    ("api_key", r"\bsk-(?:[a-z]+-)?[A-Za-z0-9_\-]{20,}", 0),
    ("aws_access_key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"
                       r"|(?i:(\baws_secret_access_key\b(?:\\?[\"'])?\s*[:=]\s*(?:\\?[\"'])?))[A-Za-z0-9/+=]{40}", 1),
    ("secret_value", r"(?i)(\b(?:[a-z0-9]+_)*" + _SECRET_KEYS + r"\b(?:\\?[\"'])?\s*[:=]\s*(?:\\?[\"'])?)(?!\[REDACTED)"
                     r"[^\s\"',;&}\])\\]{3,}", 1),
    ("secret_value", r"(?i)(--(?:[a-z0-9]+-)*(?:api-key|token|password|secret)\s+(?:\\?[\"'])?)(?!\[REDACTED)"
                     r"[^\s\"'\\]{3,}", 1),
    ("email", r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}\b", 0),
    ("ip", r"\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\b", 0),
)


class RedactionSettings(BaseModel):
    """What is masked before text leaves logsig (the ``redaction`` section of the settings)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(True, description="Mask secrets in events, dead letters, alerts and logs.")
    kinds: list[Kind] = Field(default_factory=lambda: list(DEFAULT_KINDS),  # type: ignore[arg-type]
                              description="Kinds of secret masked (email and ip are off by default).")
    patterns: list[str] = Field(default_factory=list,
                                description="Extra regular expressions whose matches are masked (kind custom).")


class Redactor:
    """Masks secrets (see the module docstring); ``counts`` are redactions per kind so far."""

    def __init__(self, settings: RedactionSettings | None = None) -> None:
        self.settings = settings or RedactionSettings()
        self.counts: Counter[str] = Counter()
        chosen = set(self.settings.kinds) if self.settings.enabled else set()
        rules = [(k, p, g) for k, p, g in _RULES if k in chosen]
        if self.settings.enabled:
            rules.extend(("custom", p, 0) for p in self.settings.patterns)
        self._text = [(kind, re.compile(p, re.S), g) for kind, p, g in rules]
        self._bytes = [(kind, re.compile(p.encode(), re.S), g) for kind, p, g in rules]
        # custom patterns may use syntax Vectorscan reads otherwise (``{,3}``): then every text is redacted in full
        self._clear = Clear(() if self.settings.patterns else tuple(p for _, p, _ in rules))

    def text(self, value: str) -> str:
        """``value`` with every secret masked."""
        if self._clear.text(value):
            return value
        for kind, pattern, keep in self._text:
            value = pattern.sub(_masker(kind, keep, self.counts), value)
        return value

    def data(self, value: bytes) -> bytes:
        """``value`` (any encoding that writes ASCII as ASCII) with every secret masked."""
        if self._clear.data(value):
            return value
        for kind, pattern, keep in self._bytes:
            value = pattern.sub(_byte_masker(kind, keep, self.counts), value)
        return value

    def lines(self, lines: Iterable[str]) -> list[str]:
        """Lines masked as one text, so a secret spread over lines (a PEM key) is masked whole."""
        return self.text("\n".join(lines)).split("\n")

    def incident(self, incident: Incident) -> Incident:
        """``incident`` with its texts masked (the same object when nothing was masked)."""
        if not self._text:
            return incident
        m = incident.match
        match = m.model_copy(update={
            "line": self.text(m.line), "matched_text": self.text(m.matched_text),
            "captures": {k: None if v is None else self.text(v) for k, v in m.captures.items()}})
        key = incident.source.key
        source = incident.source.model_copy(update={"key": None if key is None else self.text(key)})
        return incident.model_copy(update={"match": match, "source": source, "template": self.text(incident.template),
                                           "context": self.lines(incident.context) if incident.context else []})

    def failure(self, failure: DecodeFailure) -> DecodeFailure:
        """``failure`` with its record's value and key and its detail masked."""
        if not self._bytes:
            return failure
        record = failure.record
        masked = replace(record, value=None if record.value is None else self.data(record.value),
                         key=None if record.key is None else self.data(record.key))
        return replace(failure, record=masked, detail=self.text(failure.detail))


def _masker(kind: str, keep: int, counts: Counter[str]) -> Callable[[re.Match[str]], str]:
    def mask(match: re.Match[str]) -> str:
        counts[kind] += 1
        kept = (match.group(keep) or "") if keep else ""
        return kept + f"[REDACTED:{kind}]"
    return mask


def _byte_masker(kind: str, keep: int, counts: Counter[str]) -> Callable[[re.Match[bytes]], bytes]:
    def mask(match: re.Match[bytes]) -> bytes:
        counts[kind] += 1
        kept = (match.group(keep) or b"") if keep else b""
        return kept + f"[REDACTED:{kind}]".encode()
    return mask
