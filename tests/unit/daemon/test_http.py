"""The daemon's HTTP endpoint, served on 127.0.0.1: /unclassified answers the top templates as JSON."""

from __future__ import annotations

import socket
from typing import Any

import aiohttp
import pytest
from prometheus_client import CollectorRegistry

from logsig.daemon.http import HttpServer, listen_error
from logsig.decode.settings import DecodeSettings
from logsig.discovery.unclassified import Unclassified
from logsig.matchers.engine.engine import Engine
from logsig.matchers.signature import GENERIC_PRIORITY, Signature
from logsig.pipeline import Pipeline
from logsig.testing import make_record

GENERIC = Signature(id="generic/t", signature="s", regex=r"\w+Error: ", priority=GENERIC_PRIORITY)


def _view(*lines: str) -> Unclassified:
    view = Unclassified()
    step = Pipeline(Engine([GENERIC]), DecodeSettings()).process([make_record(x, i) for i, x in enumerate(lines)], 0.0)
    view.observe(step.detections)
    return view


async def _get(server: HttpServer, path: str) -> tuple[int, str, Any]:
    async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{server.port}{path}") as response:
        return response.status, response.content_type, await response.json()


class TestUnclassifiedEndpoint:
    """GET /unclassified and /unclassified/<fingerprint>."""

    async def test_top_templates_as_json(self) -> None:
        """The endpoint lists the templates most frequent first, with the view's totals, up to ?limit."""
        server = HttpServer(CollectorRegistry(), lambda: None, "127.0.0.1", 0,
                            unclassified=_view("KeyError: 'a'", "ValueError: bad 1", "ValueError: bad 2"))
        await server.start()
        try:
            status, kind, body = await _get(server, "/unclassified?limit=1")
        finally:
            await server.stop()
        assert (200, "application/json", 3, 2, ["ValueError: bad <NUM>"], [2]) == (
            status, kind, body["total"], body["tracked"], [t["template"] for t in body["templates"]],
            [t["count"] for t in body["templates"]])

    async def test_one_template_and_unknown_fingerprint(self) -> None:
        """A tracked fingerprint answers its template; an unknown one is a 404 naming it."""
        view = _view("ValueError: bad 1")
        fingerprint = view.view()["templates"][0]["fingerprint"]
        server = HttpServer(CollectorRegistry(), lambda: None, "127.0.0.1", 0, unclassified=view)
        await server.start()
        try:
            found = await _get(server, f"/unclassified/{fingerprint}")
            missing = await _get(server, "/unclassified/0000000000000000")
        finally:
            await server.stop()
        assert (200, "ValueError: bad 1") == (found[0], found[2]["example"])
        assert (404, "template '0000000000000000' is not tracked") == (missing[0], missing[2]["error"])

    async def test_bad_limit_is_a_400(self) -> None:
        """A limit that is not a whole number of 1 or more is refused with a message."""
        server = HttpServer(CollectorRegistry(), lambda: None, "127.0.0.1", 0)
        await server.start()
        try:
            status, _, body = await _get(server, "/unclassified?limit=0")
        finally:
            await server.stop()
        assert (400, "limit must be a whole number of 1 or more, not '0'") == (status, body["error"])


class TestListenError:
    async def test_a_host_that_does_not_resolve_names_http_host(self) -> None:
        """A listen address that is no host name says to set http.host, not http.port."""
        server = HttpServer(CollectorRegistry(), lambda: None, "not a host", 0)
        with pytest.raises(OSError) as raised:
            await server.start()
        message = listen_error("not a host", 0, raised.value)
        assert (True, True) == (message.startswith("cannot listen on not a host:0: "),
                                message.endswith(" (set http.host)"))

    async def test_a_port_in_use_names_http_port(self) -> None:
        """A port another socket holds says to set http.port."""
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            server = HttpServer(CollectorRegistry(), lambda: None, "127.0.0.1", port)
            with pytest.raises(OSError) as raised:
                await server.start()
            await server.stop()
        message = listen_error("127.0.0.1", port, raised.value)
        assert (True, True) == (message.startswith(f"cannot listen on 127.0.0.1:{port}: "),
                                message.endswith("address already in use (set http.port)"))
