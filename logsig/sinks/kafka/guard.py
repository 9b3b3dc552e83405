"""A floor under the interval between cluster metadata refreshes of an aiokafka client.

aiokafka's sender (``aiokafka/producer/sender.py``, ``Sender._sender_routine``, aiokafka 0.14) asks
for a metadata update on every turn of its loop while a partition it holds records for has no known
leader, and turns again as soon as the update returns. When the broker is down (the update fails at
once) or the output topic was deleted (the answer says so at once), that is a busy loop: a full core
and 1,700-3,300 Metadata requests a second for the whole outage. :class:`MetadataGuard` replaces the
client's ``force_metadata_update`` so that a real update starts at most once per
``min_interval_seconds``; a call in between gets a future that resolves (False: not updated) when
the interval has passed, so the sender waits instead of spinning. It also counts the Metadata
requests the client really sends (``requests``), for ``logsig_kafka_metadata_requests_total``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

METADATA_MIN_INTERVAL_SECONDS = 0.2
"""At most five metadata refreshes a second from one client (aiokafka's own retry_backoff_ms is 100)."""


class MetadataGuard:
    """Installed on an ``AIOKafkaClient`` (``producer.client``); see the module docstring.

    on_request: called once per Metadata request the client sends (a counter's ``inc``).
    """

    def __init__(self, client: Any, min_interval_seconds: float = METADATA_MIN_INTERVAL_SECONDS,
                 on_request: Callable[[], None] | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.min_interval_seconds = min_interval_seconds
        self.requests = 0
        self._client = client
        self._on_request = on_request
        self._clock = clock
        self._next = float("-inf")
        self._force: Callable[[], Awaitable[bool]] = client.force_metadata_update
        self._update: Callable[..., Awaitable[bool]] = client._metadata_update  # aiokafka's request sender

    def install(self) -> MetadataGuard:
        """Put the guard in front of the client's metadata refreshes; returns self."""
        self._client.force_metadata_update = self.force_metadata_update
        self._client._metadata_update = self._counted_update
        return self

    def force_metadata_update(self) -> Awaitable[bool]:
        """Start a refresh unless one started less than the interval ago; then wait out the rest."""
        now = self._clock()
        wait = self._next - now
        if wait <= 0:
            self._next = now + self.min_interval_seconds
            return self._force()
        return asyncio.ensure_future(asyncio.sleep(wait, result=False))

    async def _counted_update(self, *args: Any, **kwargs: Any) -> bool:
        self.requests += 1
        if self._on_request is not None:
            self._on_request()
        return await self._update(*args, **kwargs)
