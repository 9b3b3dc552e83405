"""Backoff between retries of a connect or send (sources, sinks).

:func:`retry_forever` retries with tenacity: exponential backoff with jitter
(``wait_exponential_jitter``: 0.5 s, 1 s, 2 s, ... plus up to 0.5 s of jitter, capped), until the
action succeeds or the daemon stops. :func:`backoff_delays` is the plain capped doubling the Kafka
sink uses between partial re-sends of a batch.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import structlog
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    retry_if_not_exception_type,
    wait_exponential_jitter,
)
from tenacity.stop import stop_base

from logsig.errors import LogsigError

log = structlog.get_logger("logsig.kafka")
INITIAL_SECONDS = 0.5
JITTER_SECONDS = 0.5


def backoff_delays(maximum: float, initial: float = INITIAL_SECONDS) -> Callable[[], float]:
    """A function returning the next exponential backoff delay (seconds), capped at ``maximum``."""
    state = {"delay": initial / 2}

    def next_delay() -> float:
        state["delay"] = min(maximum, state["delay"] * 2)
        return state["delay"]

    return next_delay


class _StopWhen(stop_base):
    """Stop retrying once ``is_stopping()`` is true."""

    def __init__(self, is_stopping: Callable[[], bool]) -> None:
        self.is_stopping = is_stopping

    def __call__(self, retry_state: RetryCallState) -> bool:
        return self.is_stopping()


async def retry_forever(action: Callable[[], Awaitable[None]], what: str, maximum: float,
                        is_stopping: Callable[[], bool], sleep: Callable[[float], Awaitable[None]],
                        on_failure: Callable[[BaseException], None] | None = None) -> bool:
    """Run ``action`` until it succeeds, logging each failure (with the delay) and backing off.

    ``on_failure`` is told each error (the runner shows the last one on ``/readyz``). Returns False
    if ``is_stopping()`` became true before it succeeded.
    """
    def before_sleep(state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome is not None else None
        delay = state.next_action.sleep if state.next_action is not None else 0.0
        log.warning(f"{what} failed; retrying", error=_describe(error), retry_in_seconds=round(delay, 2))
        if on_failure is not None and error is not None:
            on_failure(error)

    async def attempt() -> None:
        if is_stopping():
            raise _Stopped
        await action()

    retrying = AsyncRetrying(
        # aiokafka raises many unrelated types on connect
        retry=retry_if_exception_type(Exception) & retry_if_not_exception_type(_Stopped),
        wait=wait_exponential_jitter(multiplier=INITIAL_SECONDS, max=maximum, jitter=JITTER_SECONDS),
        stop=_StopWhen(is_stopping), sleep=sleep, before_sleep=before_sleep, reraise=True)
    try:
        await retrying(attempt)
    except Exception:  # only reached once stopping; the last error was logged
        return False
    return True


class _Stopped(Exception):
    """Raised instead of trying again once the daemon stops."""


def _describe(error: BaseException | None) -> str:
    """The error's own message when it has one (a SinkError naming topics), else its repr."""
    if error is None:
        return ""
    return str(error) if isinstance(error, LogsigError) else repr(error)
