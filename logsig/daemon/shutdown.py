"""The bound on a stop: a drain ends within ``shutdown_timeout_seconds``, and at once on a second signal.

:class:`StopDeadline` holds the daemon's run in an ``asyncio.timeout_at`` scope without a deadline
until the first stop request (SIGTERM/SIGINT); from then it allows ``shutdown_timeout_seconds`` less
:meth:`StopDeadline.abort_seconds`, and a second request ends it now. When the scope expires,
whatever the drain awaited (acknowledgements from a broker that went away, the offset commit, the
group leave, the producer's flush) is cancelled; the runner then closes its parts without waiting
on the broker, within :meth:`StopDeadline.abort_seconds`. Nothing is committed by that cut: offsets
are committed only after what they produced was acknowledged, so the records after the last commit
are read again after a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

ABORT_SECONDS = 1.0
"""Longest time given to closing the parts once the drain was cut short (at most a quarter of the timeout)."""


class StopDeadline:
    """The deadline of a stop: none while serving, ``timeout_seconds`` after the first request, now after the second."""

    def __init__(self, timeout_seconds: float) -> None:
        self.timeout_seconds = timeout_seconds
        self.requests = 0
        self._deadline: float | None = None
        self._scope: asyncio.Timeout | None = None
        self._last: asyncio.Timeout | None = None

    def abort_seconds(self) -> float:
        """Seconds kept for closing the parts after a cut drain: :data:`ABORT_SECONDS`, at most a quarter."""
        return min(ABORT_SECONDS, self.timeout_seconds / 4)

    def request(self) -> int:
        """Count a stop request and move the deadline (first: the timeout from now; later: now).
        Returns how many requests there were (1 for the first)."""
        self.requests += 1
        loop = asyncio.get_running_loop()
        if self.requests == 1:
            self._deadline = loop.time() + max(0.0, self.timeout_seconds - self.abort_seconds())
        else:
            self._deadline = loop.time()
        if self._scope is not None and not self._scope.expired():
            self._scope.reschedule(self._deadline)
        return self.requests

    def expired(self) -> bool:
        """True if the last scope ended because its deadline passed (the drain was cut short)."""
        return self._last is not None and self._last.expired()

    def reason(self) -> str:
        """Why the drain was cut short: a second signal, or the timeout passing."""
        if self.requests > 1:
            return "a second stop signal"
        return f"shutdown_timeout_seconds ({self.timeout_seconds:g} s) passed"

    @contextlib.asynccontextmanager
    async def bounded(self) -> AsyncIterator[None]:
        """A scope cancelled at the deadline (raising TimeoutError out of it; see :meth:`expired`)."""
        async with asyncio.timeout_at(self._deadline) as scope:
            self._scope = self._last = scope
            try:
                yield
            finally:
                self._scope = None
