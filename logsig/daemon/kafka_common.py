"""Kafka client options shared by the consumer and the producer, and reconnect backoff."""

from __future__ import annotations

import ssl
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

from logsig.config import KafkaSettings

log = structlog.get_logger("logsig.kafka")


def client_options(settings: KafkaSettings) -> dict[str, Any]:
    """aiokafka keyword arguments for bootstrap servers, client id and security."""
    options: dict[str, Any] = {
        "bootstrap_servers": settings.bootstrap_servers,
        "client_id": settings.client_id,
        "security_protocol": settings.security_protocol,
    }
    if settings.security_protocol in ("SSL", "SASL_SSL"):
        options["ssl_context"] = ssl.create_default_context(
            cafile=str(settings.ssl_cafile) if settings.ssl_cafile else None)
    if settings.security_protocol.startswith("SASL"):
        options["sasl_mechanism"] = settings.sasl_mechanism
        options["sasl_plain_username"] = settings.sasl_username
        options["sasl_plain_password"] = (
            settings.sasl_password.get_secret_value() if settings.sasl_password else None)
    return options


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
