"""The incident event: what logsig emits when a signature matches (``schema_version`` 2).

Serialised with orjson (:meth:`Incident.to_json`). Its JSON Schema is printed by ``logsig schema``
and committed as ``logsig/schema/incident-v{SCHEMA_VERSION}.json``; a test keeps the two equal.
Versioning rule (docs/incident.md): a new optional field or a new enum value keeps the version; a
field removed, renamed, retyped, made required or changed in meaning raises it, and the schema of
every earlier version stays committed beside it.

Version 2: events describe incident groups (``status``, ``group``, ``caused_by``); ``event_id``
identifies a group's event (group, status, occurrence count), no longer a log record.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

from logsig.severity import Severity

SCHEMA_VERSION: Literal[2] = 2


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SignatureRef(_Frozen):
    """The primary signature: ``title`` a short human title (the record's ``title``, else derived from
    the id), ``example`` the record's example line (its ``signature`` text), both in the chosen locale
    where the record has a translation (:mod:`logsig.localize`)."""

    id: str
    title: str
    example: str | None = None
    category: str
    subcategory: str | None = None
    domain: str
    error_code: str | None = None
    confidence: float | None = None
    fix_success_rate: float | None = None
    resolvable: str | None = None
    official_doc_url: str | None = None


class WorkaroundOut(_Frozen):
    """A workaround, as in the catalog; incidents list them by ``success_rate``, highest first."""

    action: str
    how: str
    success_rate: float
    condition: str
    sources: list[str]


class DeadEndOut(_Frozen):
    """A fix that does not work; ``action`` is empty when the catalog gives none."""

    action: str
    why_fails: str
    fail_rate: float
    condition: str
    sources: list[str]


class MatchOut(_Frozen):
    """The matched line, the ``[start, end)`` character span of the primary signature's match in
    the message, the named captures as printed, and ``values``: the captures parsed to numbers in
    base units (bytes, tokens, seconds; see ``logsig.matchers.catalog.captures``). Captures and values come
    from every matching signature, the primary's first, so a generic primary still carries the
    numbers a more detailed signature read off the same line. ``line`` and ``matched_text`` are cut
    to 4,096 characters (``truncated`` then says so) so an incident always fits a Kafka record.
    ``repaired``: bytes of the record that were not UTF-8 are U+FFFD in the text (``docs/decoding.md``)."""

    line: str
    span: tuple[int, int]
    matched_text: str
    captures: dict[str, str | None]
    values: dict[str, int | float]
    truncated: bool = False
    repaired: bool = False


class SourceOut(_Frozen):
    """Where the log line came from: Kafka coordinates (``timestamp`` is the record timestamp,
    RFC 3339 UTC) or a file and 1-based line number, plus Kubernetes coordinates when known."""

    topic: str | None = None
    partition: int | None = None
    offset: int | None = None
    timestamp: datetime | None = None
    key: str | None = None
    file: str | None = None
    line_number: int | None = None
    cluster: str | None = None
    namespace: str | None = None
    pod: str | None = None
    container: str | None = None
    node: str | None = None
    stream: str | None = None


class ServerOut(_Frozen):
    """The inference server the stream runs, as far as logsig learnt it (:mod:`logsig.servers`):
    ``evidence`` is ``banner`` (its start-up line), ``image``, ``container`` or ``label``;
    ``signature_covers`` whether the primary signature's ``versions`` cover ``version``."""

    name: str
    version: str | None = None
    evidence: str
    signature_covers: Literal["yes", "no", "unknown"] = "unknown"


class TransitionsOut(_Frozen):
    """Signature ids this failure tends to cause, follow, or be confused with."""

    leads_to: list[str] = Field(default_factory=list)
    preceded_by: list[str] = Field(default_factory=list)
    frequently_confused_with: list[str] = Field(default_factory=list)


class GroupOut(_Frozen):
    """The incident group an event reports: one signature, one line template, one stream.

    ``key`` is stable across restarts and replicas (``<signature id>|<stream>|<fingerprint>``);
    ``occurrences`` counts the matching lines so far; ``first_seen``/``last_seen`` are log times
    (the record time where the line has none, RFC 3339); ``pods`` and ``sources`` (``topic/partition``
    or a file) list the first distinct values seen, ``pods_more``/``sources_more`` count the rest.
    """

    key: str
    occurrences: int
    first_seen: datetime
    last_seen: datetime
    pods: list[str] = Field(default_factory=list)
    pods_more: int = 0
    sources: list[str] = Field(default_factory=list)
    sources_more: int = 0


class CauseOut(_Frozen):
    """The earlier group on the same stream whose signature the catalog says leads to this one."""

    key: str
    signature_id: str


Status = Literal["opened", "updated", "resolved"]
"""A group's lifecycle: ``opened`` at its first occurrence, ``updated`` as the count grows,
``resolved`` after ``grouping.quiet_seconds`` without a new occurrence."""


class Incident(_Frozen):
    """One detected failure. A grouped event (``status`` set) has ``event_id`` = hash of the group
    key, the group's first occurrence, the status and the occurrence count; a per-line event
    (``status`` null) has the hash of its record and signature. Either way a redelivered or replayed
    event keeps its id, so consumers can drop duplicates.

    ``tier`` says how well the failure is known: ``specific`` (a signature for this failure) or
    ``generic`` (only a signature for its class matched: an unclassified failure). ``template`` is
    ``match.line`` with its variable parts masked and ``fingerprint`` its hash (16 hex characters),
    equal for the same failure on another pod, rank or day (``logsig.group.template``)."""

    schema_version: Literal[2] = SCHEMA_VERSION
    event_id: str
    detected_at: datetime
    log_timestamp: datetime | None = None
    level: str | None = None
    severity: Severity = Field("error", description="warning, error or critical, from the signature (logsig.severity).")
    signature: SignatureRef
    root_cause: str
    workarounds: list[WorkaroundOut]
    dead_ends: list[DeadEndOut]
    transitions: TransitionsOut
    also_matched: list[str] = Field(default_factory=list)
    match: MatchOut
    context: list[str] = Field(
        default_factory=list,
        description="The lines of a multi-line event (a traceback), at most 65,536 characters in all.")
    source: SourceOut
    server: ServerOut | None = Field(
        default=None, description="The stream's inference server; null when neither a banner nor metadata named it.")
    status: Status | None = Field(None, description="Null on a per-line event.")
    group: GroupOut | None = None
    caused_by: CauseOut | None = None
    tier: Literal["specific", "generic"] = "specific"
    fingerprint: str = Field(default="", description="BLAKE2b-64 (16 hex) of template.")
    template: str = Field(default="", description="match.line with numbers, ids, paths, times... masked.")

    def to_json(self) -> bytes:
        """The event as compact JSON bytes (orjson; datetimes RFC 3339 with ``Z``-free ``+00:00``)."""
        return orjson.dumps(self.model_dump(mode="json"))


def incident_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of :class:`Incident`."""
    schema = Incident.model_json_schema()
    schema["$id"] = f"https://logsig.dev/schema/incident-v{SCHEMA_VERSION}.json"
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
