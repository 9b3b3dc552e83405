"""Exponential backoff between retries of a connect or send (sources, sinks)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import structlog

log = structlog.get_logger("logsig.kafka")


def backoff_delays(maximum: float, initial: float = 0.5) -> Callable[[], float]:
    """A function returning the next exponential backoff delay (seconds), capped at ``maximum``."""
    state = {"delay": initial / 2}

    def next_delay() -> float:
        state["delay"] = min(maximum, state["delay"] * 2)
        return state["delay"]

    return next_delay


async def retry_forever(action: Callable[[], Awaitable[None]], what: str, maximum: float,
                        is_stopping: Callable[[], bool], sleep: Callable[[float], Awaitable[None]]) -> bool:
    """Run ``action`` until it succeeds, logging and backing off between failures.

    Returns False if ``is_stopping()`` became true before it succeeded.
    """
    next_delay = backoff_delays(maximum)
    while not is_stopping():
        try:
            await action()
            return True
        except Exception as error:  # aiokafka raises many unrelated types on connect
            delay = next_delay()
            log.warning(f"{what} failed; retrying", error=repr(error), retry_in_seconds=delay)
            await sleep(delay)
    return False
