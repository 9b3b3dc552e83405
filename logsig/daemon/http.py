"""HTTP endpoint: ``/metrics`` (Prometheus text format), ``/healthz`` (alive), ``/readyz`` (ready, or
503 with the reason), ``/status`` (JSON: readiness, totals, lag, incident groups; ``logsig top``),
``/unclassified`` (the top unclassified templates, JSON).

``GET /unclassified?limit=N`` (default 100) answers ``{"total", "tracked", "capacity", "templates"}``
with the templates most frequent first (fields: :func:`logsig.discovery.unclassified.template_json`);
``GET /unclassified/<fingerprint>`` answers one template, 404 when it is not tracked. A ``limit``
that is not a whole number of 1 or more is a 400.
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Callable

import orjson
from aiohttp import web
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from logsig.discovery.unclassified import Unclassified

DEFAULT_LIMIT = 100


class HttpServer:
    """Serves the endpoints on ``host:port``; ``ready()`` returns None when ready, else the reason."""

    def __init__(self, registry: CollectorRegistry, ready: Callable[[], str | None], host: str, port: int,
                 status: Callable[[], dict[str, object]] | None = None,
                 unclassified: Unclassified | None = None) -> None:
        self._registry, self._ready, self._status = registry, ready, status
        self._unclassified = unclassified or Unclassified()
        self.host, self.port = host, port
        self._runner: web.AppRunner | None = None

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/readyz", self._readyz)
        if self._status is not None:
            app.router.add_get("/status", self._status_json)
        app.router.add_get("/unclassified", self._top)
        app.router.add_get("/unclassified/{fingerprint}", self._one)
        return app

    async def _top(self, request: web.Request) -> web.Response:
        text = request.query.get("limit", str(DEFAULT_LIMIT))
        if not text.isdigit() or int(text) < 1:
            return _json({"error": f"limit must be a whole number of 1 or more, not {text!r}"}, status=400)
        return _json(self._unclassified.view(int(text)))

    async def _one(self, request: web.Request) -> web.Response:
        fingerprint = request.match_info["fingerprint"]
        found = self._unclassified.get(fingerprint)
        if found is None:
            return _json({"error": f"template {fingerprint!r} is not tracked"}, status=404)
        return _json(found)

    async def _metrics(self, request: web.Request) -> web.Response:
        """Prometheus text, or OpenMetrics when the scraper asks for it; gzip when accepted."""
        encoder, content_type = choose_encoder(request.headers.get("Accept", ""))
        response = web.Response(body=encoder(self._registry), headers={"Content-Type": content_type})
        response.enable_compression()
        return response

    async def _healthz(self, _: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    async def _readyz(self, _: web.Request) -> web.Response:
        reason = self._ready()
        if reason is None:
            return web.Response(text="ready\n")
        return web.Response(status=503, text=f"not ready: {reason}\n")

    async def _status_json(self, _: web.Request) -> web.Response:
        assert self._status is not None
        return web.Response(body=orjson.dumps(self._status()), content_type="application/json")

    async def start(self) -> None:
        """Listen. Raises: OSError if the port cannot be bound."""
        self._runner = web.AppRunner(self._app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None)
        if self.port == 0 and sockets:
            self.port = int(sockets[0].getsockname()[1])

    async def stop(self) -> None:
        """Stop listening."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


def listen_error(host: str, port: int, error: OSError) -> str:
    """Why ``host:port`` could not be listened on, naming the setting to change: ``http.host`` when the
    address does not resolve (``socket.gaierror``) or is not this machine's (EADDRNOTAVAIL), else ``http.port``
    (in use, or not allowed)."""
    bad_host = isinstance(error, socket.gaierror) or error.errno == errno.EADDRNOTAVAIL
    return f"cannot listen on {host}:{port}: {error.strerror or error} (set {'http.host' if bad_host else 'http.port'})"


def _json(body: object, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(body), status=status, content_type="application/json")
