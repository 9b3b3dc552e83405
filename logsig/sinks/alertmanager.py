"""The Alertmanager sink: each incident becomes an alert posted to ``{url}/api/v2/alerts``.

The alert (Alertmanager API v2 ``postableAlert``, see alertmanager's ``api/v2/openapi.yaml``):

- labels, the alert's identity: ``alertname`` (the signature id in CamelCase,
  ``llm/vllm-cuda-oom-during-prefill`` -> ``LlmVllmCudaOomDuringPrefill``), ``signature_id``,
  ``category``, ``severity`` (the incident's, :mod:`logsig.severity`), and ``cluster``, ``namespace``,
  ``pod``, ``node`` when the record named them; for an unclassified incident (only a generic
  signature matched) also ``tier="generic"`` and its ``fingerprint``, so two different unknown
  failures are two alerts. The same failure in the same pod gives the same labels, so Alertmanager
  keeps one alert and every repeated match only refreshes it;
- annotations: ``summary`` (signature id and the line as logged, cut to 200 characters: the real
  numbers and names, where the catalog's ``signature`` text is only an example), ``description``
  (root cause), ``workaround``
  (the ``how`` of the workaround with the highest success rate), ``doc_url``, ``event_id`` and
  ``matched_line`` (the line that matched, cut to :data:`MAX_LINE_CHARS`); empty ones are left out;
- ``startsAt``: the incident's ``detected_at``; ``endsAt``: ``resolve_after_seconds`` after the
  match was offered, so the alert resolves by itself once the failure stops being logged, or the
  moment of the offer for a group's ``resolved`` event (the group went quiet: the alert ends now);
  a group event also carries the ``occurrences`` annotation (the group's count so far).

Delivery: :meth:`AlertmanagerSink.offer` never blocks. It puts the alert in a pending map keyed by
labels; a repeat of a pending alert replaces it (newest annotations and ``endsAt``) instead of
queueing again. A new alert beyond ``queue_size`` pending is dropped, counted in
``logsig_incidents_dropped_total{sink="alertmanager", reason="queue_full"}`` and logged at most once
per :attr:`Pacing.drop_log_interval_seconds`. One worker posts batches of up to
:attr:`Pacing.batch_max_alerts`, retrying connection errors, timeouts, 429 and 5xx answers
``max_retries`` times with exponential backoff and jitter (tenacity); a batch still failing (or
refused with another 4xx) is counted with reason ``post_failed``, what is still pending when
:meth:`AlertmanagerSink.stop`'s drain bound passes with reason ``shutdown``. Delivered incidents count in
``logsig_incidents_emitted_total{sink="alertmanager"}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice
from typing import Any

import aiohttp
import orjson
import structlog
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_result,
    stop_after_attempt,
    wait_exponential_jitter,
)

from logsig.config import AlertmanagerSettings
from logsig.incident import Incident
from logsig.pipeline import StepResult
from logsig.sinks import Outcome
from logsig.telemetry import Metrics

log = structlog.get_logger("logsig.alertmanager")

SINK = "alertmanager"
DROP_REASONS = ("queue_full", "post_failed", "shutdown")
MAX_LINE_CHARS = 1000
_WORD = re.compile(r"[A-Za-z0-9]+")

Alert = dict[str, Any]
LabelKey = tuple[tuple[str, str], ...]


def alert_name(signature_id: str) -> str:
    """``signature_id`` in CamelCase: ``gpu/xid-79-fallen-off-bus`` -> ``GpuXid79FallenOffBus``."""
    return "".join(word[0].upper() + word[1:] for word in _WORD.findall(signature_id))


def alert_labels(incident: Incident) -> dict[str, str]:
    """The identity of ``incident``'s alert (see the module docstring); no empty values."""
    sig, source = incident.signature, incident.source
    labels = {"alertname": alert_name(sig.id), "signature_id": sig.id, "category": sig.category,
              "severity": incident.severity,
              "cluster": source.cluster, "namespace": source.namespace, "pod": source.pod, "node": source.node}
    if incident.tier == "generic":
        labels |= {"tier": "generic", "fingerprint": incident.fingerprint}
    return {key: value for key, value in labels.items() if value}


SUMMARY_CHARS = 200


def alert_annotations(incident: Incident) -> dict[str, str]:
    """What a person reading the alert needs: title, root cause, best workaround, doc, event id, line."""
    top = max(incident.workarounds, key=lambda w: w.success_rate, default=None)
    summary = f"{incident.signature.id}: {incident.match.line[:SUMMARY_CHARS]}"
    annotations = {"summary": summary, "description": incident.root_cause,
                   "workaround": (top.how or top.action) if top else None,
                   "doc_url": incident.signature.official_doc_url, "event_id": incident.event_id,
                   "matched_line": incident.match.line[:MAX_LINE_CHARS],
                   "occurrences": str(incident.group.occurrences) if incident.group else None}
    return {key: value for key, value in annotations.items() if value}


def to_alert(incident: Incident, ends_at: datetime) -> Alert:
    """The API v2 ``postableAlert`` of ``incident``, ending at ``ends_at`` (UTC)."""
    return {"labels": alert_labels(incident), "annotations": alert_annotations(incident),
            "startsAt": incident.detected_at.astimezone(UTC).isoformat(),
            "endsAt": ends_at.astimezone(UTC).isoformat()}


@dataclass(frozen=True)
class Pacing:
    """Timings of the sink, in seconds (tests shorten them)."""

    backoff_base_seconds: float = 0.5
    backoff_max_seconds: float = 30.0
    post_interval_seconds: float = 0.5
    drain_timeout_seconds: float = 10.0
    drop_log_interval_seconds: float = 10.0
    batch_max_alerts: int = 100


@dataclass
class _Pending:
    alert: Alert
    incidents: int = 1


@dataclass
class _Failure:
    error: str
    retriable: bool


class AlertmanagerSink:
    """Posts incidents to Alertmanager in the background; ``offer`` never blocks.

    ``clock`` gives Unix seconds (for ``endsAt``), ``monotonic`` the time of rate-limited logs.
    A downstream :class:`logsig.sinks.Sink`: it counts what it posts and drops itself.
    """

    name = SINK

    def __init__(self, settings: AlertmanagerSettings, metrics: Metrics, pacing: Pacing | None = None,
                 clock: Callable[[], float] = time.time, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.settings, self.pacing = settings, pacing or Pacing()
        self.endpoint = settings.url.rstrip("/") + "/api/v2/alerts"
        self._clock, self._monotonic = clock, monotonic
        self._pending: dict[LabelKey, _Pending] = {}
        self._in_flight: list[_Pending] = []
        self._wake, self._stopping = asyncio.Event(), asyncio.Event()
        self._worker: asyncio.Task[None] | None = None
        self._session: aiohttp.ClientSession | None = None
        self._full_logged_at, self._full_unlogged = float("-inf"), 0
        self._emitted = metrics.incidents.labels(sink=SINK)
        self._dropped = {reason: metrics.incidents_dropped.labels(sink=SINK, reason=reason) for reason in DROP_REASONS}

    def pending(self) -> int:
        """Alerts waiting to be posted (repeats of one alert count once)."""
        return len(self._pending)

    async def start(self) -> None:
        """Open the HTTP client and start the worker."""
        timeout = aiohttp.ClientTimeout(total=self.settings.timeout_seconds)
        self._session = aiohttp.ClientSession(timeout=timeout, headers={"Content-Type": "application/json"})
        self._worker = asyncio.create_task(self._run(), name="alertmanager-sink")
        log.info("alertmanager sink started", endpoint=self.endpoint, queue_size=self.settings.queue_size)

    async def deliver(self, step: StepResult, give_up: Callable[[], bool],
                      sleep: Callable[[float], Awaitable[None]]) -> list[Outcome]:
        """Offer every incident of ``step`` (never waits for the post); one outcome each, accepted."""
        for detection in step.detections:
            self.offer(detection.incident)
        return [Outcome("incident", d, True) for d in step.detections]

    def offer(self, incident: Incident) -> None:
        """Queue ``incident``'s alert, merged into a pending one with the same labels, or drop it if full."""
        after = 0.0 if incident.status == "resolved" else self.settings.resolve_after_seconds
        ends_at = datetime.fromtimestamp(self._clock() + after, UTC)
        alert = to_alert(incident, ends_at)
        key: LabelKey = tuple(sorted(alert["labels"].items()))
        pending = self._pending.get(key)
        if pending is not None:
            pending.alert.update(annotations=alert["annotations"], endsAt=alert["endsAt"])
            pending.incidents += 1
        elif len(self._pending) >= self.settings.queue_size:
            self._queue_full()
        else:
            self._pending[key] = _Pending(alert)
            self._wake.set()

    async def stop(self) -> None:
        """Post what is pending for at most ``drain_timeout_seconds``, then count the rest as dropped."""
        self._stopping.set()
        self._wake.set()
        if self._worker is not None:
            _, running = await asyncio.wait({self._worker}, timeout=self.pacing.drain_timeout_seconds)
            for task in running:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        left = sum(p.incidents for p in [*self._in_flight, *self._pending.values()])
        self._in_flight, self._pending = [], {}
        if left:
            self._dropped["shutdown"].inc(left)
            log.error("alertmanager sink stopped with incidents unposted; dropped", incidents=left,
                      drain_timeout_seconds=self.pacing.drain_timeout_seconds)
        if self._session is not None:
            await self._session.close()
        log.info("alertmanager sink stopped")

    async def _run(self) -> None:
        while self._pending or not self._stopping.is_set():
            if not self._pending:
                self._wake.clear()
                await self._wake.wait()
                continue
            await self._deliver(self._take())
            if len(self._pending) < self.pacing.batch_max_alerts:
                await self._pause(self.pacing.post_interval_seconds)

    def _take(self) -> list[_Pending]:
        keys = list(islice(self._pending, self.pacing.batch_max_alerts))
        self._in_flight = [self._pending.pop(key) for key in keys]
        return self._in_flight

    async def _deliver(self, batch: list[_Pending]) -> None:
        body = orjson.dumps([p.alert for p in batch])
        incidents = sum(p.incidents for p in batch)
        retrying = self._retrying()
        failure: _Failure | None = await retrying(self._post, body)
        self._in_flight = []
        if failure is None:
            self._emitted.inc(incidents)
            return
        log.error("alertmanager post failed; incidents dropped", endpoint=self.endpoint, alerts=len(batch),
                  incidents=incidents, attempts=retrying.statistics.get("attempt_number", 1), error=failure.error)
        self._dropped["post_failed"].inc(incidents)

    def _retrying(self) -> AsyncRetrying:
        """tenacity: ``max_retries`` more tries of a retriable failure, exponential backoff with jitter."""
        def before_sleep(state: RetryCallState) -> None:
            failure = state.outcome.result() if state.outcome is not None else None
            log.debug("alertmanager post failed; retrying", attempt=state.attempt_number,
                      error=failure.error if failure is not None else None)

        base, maximum = self.pacing.backoff_base_seconds, self.pacing.backoff_max_seconds
        return AsyncRetrying(
            stop=stop_after_attempt(self.settings.max_retries + 1),
            wait=wait_exponential_jitter(multiplier=base, max=maximum, jitter=base),
            retry=retry_if_result(lambda failure: failure is not None and failure.retriable),
            retry_error_callback=lambda state: state.outcome.result() if state.outcome is not None else None,
            before_sleep=before_sleep)

    async def _post(self, body: bytes) -> _Failure | None:
        assert self._session is not None, "start() first"
        try:
            async with self._session.post(self.endpoint, data=body) as response:
                if response.status < 300:
                    return None
                text = (await response.text())[:200]
                retriable = response.status == 429 or response.status >= 500
                return _Failure(f"HTTP {response.status}: {text}", retriable)
        except (aiohttp.ClientError, TimeoutError) as error:
            return _Failure(f"{type(error).__name__}: {error}", True)

    async def _pause(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), timeout=seconds)

    def _queue_full(self) -> None:
        """Count one dropped incident; log the drops at most once per drop_log_interval_seconds."""
        self._dropped["queue_full"].inc()
        self._full_unlogged += 1
        now = self._monotonic()
        if now - self._full_logged_at >= self.pacing.drop_log_interval_seconds:
            log.error("alertmanager queue full; incidents dropped", dropped=self._full_unlogged,
                      queue_size=self.settings.queue_size)
            self._full_logged_at, self._full_unlogged = now, 0
