"""The metadata guard: a sender loop that asks for metadata without pause sends few requests."""

import asyncio

from logsig.sinks.kafka.guard import MetadataGuard


class _Client:
    """The two aiokafka client methods the guard wraps: an update that fails at once (broker down)."""

    def __init__(self) -> None:
        self.forced = 0

    def force_metadata_update(self) -> "asyncio.Future[bool]":
        self.forced += 1
        return asyncio.ensure_future(self._metadata_update(None, set()))

    async def _metadata_update(self, _cluster: object, _topics: object) -> bool:
        return False


class TestMetadataGuard:
    async def test_busy_sender_loop_is_bounded(self) -> None:
        """A loop awaiting updates back to back for 0.5 s starts at most 4 of them at a 0.2 s floor."""
        client = _Client()
        guard = MetadataGuard(client, min_interval_seconds=0.2).install()
        loop = asyncio.get_running_loop()
        end, turns = loop.time() + 0.5, 0
        while loop.time() < end:
            await client.force_metadata_update()
            turns += 1
        assert (True, True) == (client.forced <= 4, turns <= 8)
        assert client.forced == guard.requests

    async def test_first_update_is_not_delayed(self) -> None:
        """The first refresh goes straight to the client."""
        client = _Client()
        guard = MetadataGuard(client, min_interval_seconds=60.0).install()
        await client.force_metadata_update()
        assert (1, 1) == (client.forced, guard.requests)

    async def test_requests_are_counted(self) -> None:
        """Each Metadata request the client sends calls ``on_request`` once."""
        client, seen = _Client(), []
        MetadataGuard(client, min_interval_seconds=0.0, on_request=lambda: seen.append(1)).install()
        for _ in range(3):
            await client.force_metadata_update()
        assert 3 == len(seen)
