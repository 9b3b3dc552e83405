"""Enrichment: a decoded event plus its matches becomes an :class:`Incident` (pure, no I/O).

Primary signature (when several match one message), in order:

0. a signature written for another server than the one the stream runs (:mod:`logsig.servers`)
   is never primary while any other signature matches; when it is the only match the incident is
   still raised (a failure is never dropped) and ``server.signature_covers`` says ``no``. While
   the stream's server is unknown (no banner, no telling metadata), a signature written for
   particular servers is not primary either when a specific signature that applies to every
   server matched all the text it matched (a bare torch CUDA OOM gets the torch advice, not
   vLLM's); it stays primary when it matched more (SGLang's ``Capture cuda graph failed: CUDA out
   of memory``, llama.cpp's ``ggml_backend_cuda_buffer_type_alloc_buffer``), or when only the
   generic tier matched with it;
1. the highest ``priority`` (catalog field, default 0; generic catch-alls and downstream
   consequences such as engine-dead cascades use negative values);
2. then the most specific regex: the most literal characters in the pattern (a regex that spells
   out more of the message explains more of it);
3. then catalog order.

The others are listed in ``also_matched`` (by the same order); counters count every match.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import lru_cache

from logsig import localize
from logsig.group.template import fingerprint_of_template, template
from logsig.incident import (
    DeadEndOut,
    Incident,
    MatchOut,
    ServerOut,
    SignatureRef,
    SourceOut,
    TransitionsOut,
    WorkaroundOut,
)
from logsig.matchers.catalog.captures import capture_values
from logsig.matchers.engine.engine import Match
from logsig.matchers.signature import Signature
from logsig.records import LogEvent, Origin
from logsig.servers import ServerInfo, coverage, is_foreign, signature_servers
from logsig.severity import signature_severity

MAX_LINE_CHARS = 4096
"""``match.line`` and ``match.matched_text`` are cut to this many characters."""
MAX_CONTEXT_CHARS = 65536
"""``context`` keeps whole lines, each cut to MAX_LINE_CHARS, up to this many characters in all."""

_META = re.compile(r"\\.|\[[^\]]*\]|[.^$*+?{}()|]")


@lru_cache(maxsize=65536)
def literal_length(regex: str) -> int:
    """How many literal characters ``regex`` spells out (escapes and classes removed)."""
    return len(_META.sub("", regex))


def rank(matches: Sequence[Match], server: ServerInfo | None = None) -> list[Match]:
    """``matches`` ordered primary first (see the module docstring); catalog order breaks ties.

    server: the stream's server, when known; signatures written for another one go last, and while
    it is unknown a server-specific one goes after a signature for every server that covers its span.
    """
    order = {id(m): i for i, m in enumerate(matches)}
    covering = [m.span for m in matches if _for_every_server(m.signature)] if server is None else []
    return sorted(
        matches,
        key=lambda m: (is_foreign(m.signature, server), _unconfirmed(m, covering),
                       -m.signature.priority, -literal_length(m.signature.regex), order[id(m)]),
    )


def _for_every_server(sig: Signature) -> bool:
    """A specific-tier incident signature written for no one server (torch, CUDA, NCCL, ...; not a banner)."""
    return sig.tier == "specific" and sig.role == "incident" and not signature_servers(sig)


def _unconfirmed(match: Match, covering: Sequence[tuple[int, int]]) -> bool:
    """``match`` is server-specific and one of the ``covering`` spans holds all of its text."""
    start, end = match.span
    return any(a <= start and end <= b for a, b in covering) and bool(signature_servers(match.signature))


def event_id(origin: Origin, message: str, signature_id: str, position: int = 0) -> str:
    """Deterministic id (32 hex chars of SHA-256) of a record, the event's ``position`` in it and
    a signature: unique per event, the same when the record is delivered again."""
    where = (
        f"kafka:{origin.topic}:{origin.partition}:{origin.offset}"
        if origin.topic is not None
        else f"file:{origin.file}:{origin.line_number}"
    )
    if position:
        where = f"{where}:{position}"
    digest = hashlib.sha256(f"{where}\0{signature_id}\0{message}".encode())
    return digest.hexdigest()[:32]


def _signature_ref(sig: Signature, locale: str) -> SignatureRef:
    return SignatureRef(
        id=sig.id, title=localize.title(sig, locale), example=localize.example(sig, locale),
        category=sig.category, subcategory=sig.subcategory,
        domain=sig.domain_name, error_code=sig.error_code, confidence=sig.confidence,
        fix_success_rate=sig.fix_success_rate, resolvable=sig.resolvable,
        official_doc_url=sig.official_doc_url,
    )


def _workarounds(sig: Signature, locale: str) -> list[WorkaroundOut]:
    ranked = sorted(sig.workarounds, key=lambda w: -w.success_rate)
    actions = localize.workaround_actions(sig, locale)
    return [WorkaroundOut(action=localize.action_of(w, actions), how=w.how, success_rate=w.success_rate,
                          condition=w.condition, sources=list(w.sources)) for w in ranked]


def _dead_ends(sig: Signature) -> list[DeadEndOut]:
    return [DeadEndOut(action=d.action, why_fails=d.why_fails, fail_rate=d.fail_rate,
                       condition=d.condition, sources=list(d.sources)) for d in sig.dead_ends]


def _timestamp_ms(value: int | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value / 1000, tz=UTC)


def _source(event: LogEvent) -> SourceOut:
    o, s = event.origin, event.source
    return SourceOut(
        topic=o.topic, partition=o.partition, offset=o.offset,
        timestamp=_timestamp_ms(o.timestamp_ms), key=o.key, file=o.file,
        line_number=o.line_number, cluster=s.cluster, namespace=s.namespace, pod=s.pod,
        container=s.container, node=s.node, stream=s.stream,
    )


def _cut(text: str) -> tuple[str, bool]:
    return (text, False) if len(text) <= MAX_LINE_CHARS else (text[:MAX_LINE_CHARS] + "…", True)


def bounded_context(lines: Sequence[str]) -> list[str]:
    """``lines`` with each cut to MAX_LINE_CHARS and the whole to MAX_CONTEXT_CHARS (last line kept)."""
    out: list[str] = []
    budget = MAX_CONTEXT_CHARS
    for line in lines:
        cut, _ = _cut(line)
        if len(cut) > budget:
            out.append(f"… {len(lines) - len(out)} more lines")
            break
        out.append(cut)
        budget -= len(cut)
    return out


def merged_captures(ranked: Sequence[Match]) -> dict[str, str | None]:
    """Named captures of every match, the primary's first (a name keeps its first non-empty text)."""
    out: dict[str, str | None] = {}
    for match in ranked:
        for name, text in match.captures.items():
            if out.get(name) is None:
                out[name] = text
    return out


def _match_out(event: LogEvent, ranked: Sequence[Match]) -> MatchOut:
    start, end = ranked[0].span
    line, line_cut = _cut(event.line or event.message)
    text, text_cut = _cut(event.message[start:end])
    captures = merged_captures(ranked)
    return MatchOut(line=line, span=(start, end), matched_text=text, captures=captures,
                    values=capture_values(captures), truncated=line_cut or text_cut, repaired=event.repaired)


def build_incident(event: LogEvent, matches: Sequence[Match], detected_at: datetime,
                   server: ServerInfo | None = None, locale: str = "en") -> Incident:
    """The incident for ``event`` given its (non-empty) ``matches``; ``detected_at`` is injected;
    ``server``: the stream's inference server, when known (ranks the matches, fills ``server``);
    ``locale``: the language of the human texts, English where the record has no translation.

    Raises:
        ValueError: if ``matches`` is empty.
    """
    if not matches:
        raise ValueError("build_incident needs at least one match")
    ranked = rank(matches, server)
    primary, others = ranked[0], ranked[1:]
    sig = primary.signature
    graph = sig.transition_graph
    match = _match_out(event, ranked)
    masked = template(match.line)
    return Incident(
        event_id=event_id(event.origin, event.message, sig.id, event.position),
        detected_at=detected_at,
        log_timestamp=event.timestamp,
        level=event.level,
        severity=signature_severity(sig),
        signature=_signature_ref(sig, locale),
        root_cause=localize.root_cause(sig, locale),
        workarounds=_workarounds(sig, locale),
        dead_ends=_dead_ends(sig),
        transitions=TransitionsOut(leads_to=list(graph.leads_to), preceded_by=list(graph.preceded_by),
                                   frequently_confused_with=list(graph.frequently_confused_with)),
        also_matched=[m.signature.id for m in others],
        match=match,
        context=bounded_context(event.context),
        source=_source(event),
        server=_server(server, sig),
        tier=sig.tier,
        fingerprint=fingerprint_of_template(masked),
        template=masked,
    )


def _server(server: ServerInfo | None, sig: Signature) -> ServerOut | None:
    if server is None:
        return None
    return ServerOut(name=server.name, version=server.version, evidence=server.evidence,
                     signature_covers=coverage(sig, server))
