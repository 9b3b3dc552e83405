"""The pure core wired together: decode -> assemble -> match -> enrich (no I/O).

Both the daemon (:mod:`logsig.daemon.runner`) and offline mode (:mod:`logsig.scan`) push
batches (:class:`~logsig.batch.RecordBatch`) through one :class:`Pipeline` and hand what comes out
to their sinks and to telemetry. A batch is looked at as a whole first (:mod:`logsig.glance`): only
the records that may produce something take the full path, record by record and in order; the
others are counted as events and left as values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from logsig.assemble.assembler import Assembler, stream_key
from logsig.batch import RecordBatch, batch_of_records
from logsig.decode import decode_record
from logsig.decode.result import DecodeResult
from logsig.decode.settings import DecodeSettings
from logsig.decode.text import line_level
from logsig.enrich import build_incident
from logsig.glance import Looker
from logsig.glance import walk as _walk
from logsig.incident import Incident
from logsig.matchers.engine.engine import Engine, Match
from logsig.quiet import quiet_matches
from logsig.records import DecodeFailure, LogEvent, RawRecord
from logsig.redact import Redactor
from logsig.servers import StreamServers, from_banner


@dataclass(frozen=True, slots=True)
class Detection:
    """An incident with the event it came from and every signature that matched."""

    incident: Incident
    event: LogEvent
    matches: tuple[Match, ...]


@dataclass
class StepResult:
    """What one step produced: detections, undecodable records, counts for telemetry.

    truncated: records cut at ``decode.max_record_bytes`` plus messages matched on a bounded
    window because they were longer than ``matching.max_message_bytes``; lines: after the
    grouping stage (:mod:`logsig.group.stage`), the per-line detections, while ``detections``
    holds the group events (None before grouping or without it); repaired: records whose text had
    bytes that are not UTF-8, decoded as U+FFFD and matched (:func:`logsig.decode.text.repaired_text`).
    """

    detections: list[Detection] = field(default_factory=list)
    failures: list[DecodeFailure] = field(default_factory=list)
    events: int = 0
    truncated: int = 0
    lines: list[Detection] | None = None
    repaired: int = 0

    @property
    def matched(self) -> list[Detection]:
        """One detection per matching line: ``lines`` after grouping, else ``detections``."""
        return self.detections if self.lines is None else self.lines


_RECORD_LEVELS = {"error": "ERROR", "critical": "CRITICAL"}
"""Event levels (``LogEvent.level``) that make a record a failure report, and the header word they are matched with."""


def _has_failure(matches: list[Match]) -> bool:
    return any(m.signature.role != "banner" for m in matches)


def _shifted(match: Match, shift: int, length: int) -> Match:
    """``match`` with its span moved ``shift`` characters left onto a message of ``length``
    characters; a match that begins in the level word spans the whole message."""
    start, end = match.span
    span = (0, length) if start < shift else (start - shift, end - shift)
    return Match(match.signature, span, match.captures)


def quiet(event: LogEvent, matches: list[Match]) -> list[Match]:
    """``matches`` less what the record itself says is no failure (:func:`logsig.quiet.quiet_matches`),
    the record's level being its fields' or else its header's."""
    return quiet_matches(event.message, event.level, matches)


def _utcnow() -> datetime:
    return datetime.now(UTC)


class Pipeline:
    """Decode, assemble multi-line events, match and enrich.

    engine: the compiled catalog (swap it with :meth:`replace_engine` on reload);
    settings: the decode settings; clock: wall clock for ``detected_at`` (injected in tests);
    redactor: masks secrets in every incident and dead letter (:mod:`logsig.redact`; default: the
    default kinds); locale: the language of the incidents' texts (:mod:`logsig.localize`).
    """

    def __init__(self, engine: Engine, settings: DecodeSettings,
                 clock: Callable[[], datetime] = _utcnow, redactor: Redactor | None = None,
                 locale: str = "en") -> None:
        self.engine = engine
        self.redactor = redactor or Redactor()
        self.locale = locale
        self.settings = settings
        self.assembler = Assembler(settings)
        self.servers = StreamServers()
        self._clock = clock
        self._looker = Looker()

    def replace_engine(self, engine: Engine) -> None:
        """Match with ``engine`` from now on (catalog reload)."""
        self.engine = engine

    def process(self, records: Sequence[RawRecord], now: float) -> StepResult:
        """Decode and match ``records``; ``now`` is a monotonic clock in seconds."""
        return self.process_batch(batch_of_records(records), now)

    def process_batch(self, batch: RecordBatch, now: float) -> StepResult:
        """Decode and match ``batch``, the same as record by record; ``now``: monotonic seconds."""
        result = StepResult()
        envelopes = [self.settings.envelope_for(run.topic) for run in batch.runs]
        limit = min(self.settings.max_record_bytes, self.settings.max_value_bytes, self.engine.max_message_bytes)
        seen = self._looker.look(batch, self.engine, limit, envelopes)
        ready: list[LogEvent] = []
        fed = 0
        for index in _walk(batch, sorted(seen.special | seen.candidates), self.assembler, seen):
            self._feed(decode_record(batch.record(index), self.settings), now, ready, result)
            fed += 1
        result.events += len(batch) - fed
        ready.extend(self.assembler.flush_idle(now))
        self._match(ready, result)
        return result

    def _feed(self, decoded: DecodeResult, now: float, ready: list[LogEvent], result: StepResult) -> None:
        if decoded.failure is not None:
            result.failures.append(self.redactor.failure(decoded.failure))
        result.truncated += int(decoded.truncated)
        result.repaired += int(decoded.repaired)
        for event in decoded.events:
            ready.extend(self.assembler.feed(event, now))

    def flush_idle(self, now: float) -> StepResult:
        """Match the multi-line groups idle for longer than the timeout."""
        return self._matched(self.assembler.flush_idle(now))

    def flush_all(self) -> StepResult:
        """Match every open multi-line group (shutdown)."""
        return self._matched(self.assembler.flush_all())

    def flush_partitions(self, partitions: set[tuple[str, int]]) -> StepResult:
        """Match the open groups of revoked ``partitions``."""
        return self._matched(self.assembler.flush_partitions(partitions))

    def held_offsets(self) -> dict[tuple[str, int], int]:
        """Lowest offset per (topic, partition) still held in an open multi-line group."""
        return self.assembler.held_offsets()

    def _matched(self, events: list[LogEvent]) -> StepResult:
        result = StepResult()
        self._match(events, result)
        return result

    def _match(self, events: list[LogEvent], result: StepResult) -> None:
        result.events += len(events)
        if not events:
            return
        detected_at = self._clock()
        truncated_before = self.engine.truncated_messages
        batches = self.engine.match_batch([e.message for e in events])
        self._match_record_levels(events, batches)
        for i, event in enumerate(events):
            if batches[i]:
                batches[i] = quiet(event, batches[i])
        result.truncated += self.engine.truncated_messages - truncated_before
        for event, matches in zip(events, batches, strict=True):
            if matches:
                self._detect(event, matches, detected_at, result)

    def _match_record_levels(self, events: list[LogEvent], batches: list[list[Match]]) -> None:
        """Give the generic tier the level a record's fields name when its text does not.

        A JSON record (TGI ``--json-output``, llama.cpp, zap, an OTLP severity) at error or critical
        level whose message matched no failure signature and carries no level header of its own is
        matched again as ``"ERROR <message>"``; its generic matches (the ERROR-record class) are
        kept, spans mapped back onto the message (the whole message for a match in the level word).
        Specific signatures see only the message.
        """
        todo = [i for i, (event, found) in enumerate(zip(events, batches, strict=True))
                if event.level in _RECORD_LEVELS and not _has_failure(found) and line_level(event.message) is None]
        if not todo:
            return
        texts = [f"{_RECORD_LEVELS[str(events[i].level)]} {events[i].message}" for i in todo]
        for i, text, found in zip(todo, texts, self.engine.match_batch(texts), strict=True):
            shift = len(text) - len(events[i].message)
            length = len(events[i].message)
            batches[i] = [*batches[i], *(_shifted(m, shift, length) for m in found if m.signature.tier == "generic")]

    def _detect(self, event: LogEvent, matches: list[Match], detected_at: datetime, result: StepResult) -> None:
        """Banners tell the stream's server; any other match makes an incident."""
        stream = stream_key(event)[:-1]  # stdout and stderr of one container run one server
        failures = []
        for match in matches:
            if match.signature.role == "banner":
                info = from_banner(match.signature, match.captures)
                if info is not None:
                    self.servers.saw_banner(stream, info)
            else:
                failures.append(match)
        if failures:
            server = self.servers.server(stream, event.source)
            incident = self.redactor.incident(build_incident(event, failures, detected_at, server, self.locale))
            result.detections.append(Detection(incident, event, tuple(failures)))
