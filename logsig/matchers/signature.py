"""The signature record: one known failure, its regex and what to do about it.

The format is the catalog's seed record (``builtin/llm/vllm-cuda-oom-during-prefill.json``):
every field of it is typed here, and fields this model does not know are kept (``extra="allow"``)
so that a record round-trips unchanged through :meth:`Signature.to_record`.

logsig adds four optional fields of its own:

- ``priority`` (int, default 0): when several signatures match one message, the highest
  priority is the incident's primary signature (see ``logsig.enrich``); a priority of
  :data:`GENERIC_PRIORITY` or lower puts a signature in the generic tier (:attr:`Signature.tier`);
- ``servers`` (list of str): the inference servers or layers whose logs print the message
  (``vllm``, ``sglang``, ``tgi``, ``trtllm``, ``triton``, ``ollama``, ``llamacpp``, ``pytorch``,
  ``nccl``, ``nvidia-driver``, ``k8s``);
- ``examples`` (``{"match": [...], "no_match": [...]}``): real lines the regex must match and
  near misses it must not; run by ``logsig catalog test``;
- ``role`` (``incident``, the default, or ``banner``): a banner matches the line a server prints
  once at start-up (its first ``servers`` entry names the server, a ``version`` capture its
  release); it never raises an incident, it tells :mod:`logsig.servers` what the stream runs.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Rate = float
"""A fraction in [0, 1]."""

CATEGORIES: tuple[str, ...] = (
    "resource_error",
    "hardware_error",
    "configuration_error",
    "compatibility_error",
    "network_error",
    "runtime_error",
    "input_error",
    "dependency_error",
    "scheduling_error",
)
"""The documented category vocabulary (``logsig catalog lint`` warns on others)."""

GENERIC_PRIORITY = -100
"""Signatures at this priority or lower name a class of failure, not one message: the generic tier.

They are primary only when nothing specific matches (specific catch-alls and cascades use -5 and
-10); the built-in family is ``builtin/generic/`` (domain ``generic``)."""

Tier = Literal["specific", "generic"]
"""``specific``: a signature for one known failure; ``generic``: a class of failure (see above)."""

ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_.-]*/[a-z0-9][a-z0-9_.-]*$")
"""Signature ids are ``<domain>/<slug>``, lower case."""


class _Part(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class Version(_Part):
    """A version the message applies to, e.g. ``vllm==0.4.3``."""

    version: str
    introduced: str | None = None
    deprecated: str | None = None
    removed: str | None = None
    behavior_change: str | None = None
    status: str | None = None


class DeadEnd(_Part):
    """A fix people try that does not work. ``action`` may be empty; it is never invented."""

    action: str = ""
    why_fails: str = ""
    fail_rate: float = Field(default=0.0, ge=0.0, le=1.0)
    condition: str = ""
    sources: list[str] = Field(default_factory=list)


class Workaround(_Part):
    """A fix that works, with its success rate in [0, 1] and a concrete ``how``."""

    action: str = ""
    how: str = ""
    success_rate: float = Field(default=0.0, ge=0.0, le=1.0)
    condition: str = ""
    sources: list[str] = Field(default_factory=list)


class TransitionGraph(_Part):
    """Links to other signature ids: what this failure causes, follows, and is confused with."""

    leads_to: list[str] = Field(default_factory=list)
    preceded_by: list[str] = Field(default_factory=list)
    frequently_confused_with: list[str] = Field(default_factory=list)


class Examples(_Part):
    """Lines a signature must match (``match``) and near misses it must not (``no_match``)."""

    match: list[str] = Field(default_factory=list)
    no_match: list[str] = Field(default_factory=list)


class Signature(BaseModel):
    """One catalog record. Raises pydantic ``ValidationError`` on a malformed record."""

    model_config = ConfigDict(extra="allow", frozen=True)

    id: str
    signature: str
    regex: str
    domain: str = ""
    category: str = ""
    subcategory: str | None = None
    root_cause: str = ""
    root_cause_type: str | None = None
    versions: list[Version] = Field(default_factory=list)
    os_specific: dict[str, Any] = Field(default_factory=dict)
    dead_ends: list[DeadEnd] = Field(default_factory=list)
    workarounds: list[Workaround] = Field(default_factory=list)
    transition_graph: TransitionGraph = Field(default_factory=TransitionGraph)
    official_doc_url: str | None = None
    official_doc_section: str | None = None
    error_code: str | None = None
    verification_tier: str | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    fix_success_rate: float | None = Field(default=None, ge=0.0, le=1.0)
    resolvable: str | None = None
    first_seen: date | None = None
    last_confirmed: date | None = None
    last_updated: date | None = None
    evidence_count: int | None = None
    tags: list[str] = Field(default_factory=list)
    locale: str | None = None
    aliases: list[str] = Field(default_factory=list)
    signature_zh: str | None = None
    root_cause_zh: str | None = None
    workarounds_zh: list[str] = Field(default_factory=list)
    priority: int = 0
    servers: list[str] = Field(default_factory=list)
    examples: Examples = Field(default_factory=Examples)
    role: Literal["incident", "banner"] = "incident"

    @field_validator("regex")
    @classmethod
    def _regex_not_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("regex is empty")
        return value

    @field_validator("resolvable", mode="before")
    @classmethod
    def _yaml_yes_no(cls, value: Any) -> Any:
        """YAML 1.1 reads an unquoted ``yes``/``no`` as a boolean; take it back as the word."""
        if isinstance(value, bool):
            return "yes" if value else "no"
        return value

    @property
    def tier(self) -> Tier:
        """``generic`` when ``priority <= GENERIC_PRIORITY``, else ``specific``."""
        return "generic" if self.priority <= GENERIC_PRIORITY else "specific"

    @property
    def domain_name(self) -> str:
        """``domain``, or the ``<domain>`` part of the id when the record leaves it out."""
        return self.domain or self.id.partition("/")[0]

    @property
    def translations(self) -> dict[str, dict[str, Any]]:
        """Translated fields by locale: ``{"zh": {"signature": ..., "root_cause": ...}}``.

        Collected from every field named ``<field>_<locale>`` (two-letter locale), typed or extra.
        """
        out: dict[str, dict[str, Any]] = {}
        for name, value in self.to_record().items():
            base, _, locale = name.rpartition("_")
            if base and len(locale) == 2 and locale.isalpha() and value not in (None, [], ""):
                out.setdefault(locale, {})[base] = value
        return out

    def to_record(self) -> dict[str, Any]:
        """The record as it was loaded (set fields only, extras kept), JSON-ready."""
        return self.model_dump(mode="json", exclude_unset=True)
