"""HTTP endpoint: ``/metrics`` (Prometheus text format), ``/healthz`` (alive), ``/readyz`` (ready, or
503 with the reason), ``/status`` (JSON: readiness, totals, lag, incident groups; ``logsig top``)."""

from __future__ import annotations

from collections.abc import Callable

import orjson
from aiohttp import web
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder


class HttpServer:
    """Serves the endpoints on ``host:port``; ``ready()`` returns None when ready, else the reason."""

    def __init__(self, registry: CollectorRegistry, ready: Callable[[], str | None], host: str, port: int,
                 status: Callable[[], dict[str, object]] | None = None) -> None:
        self._registry, self._ready, self._status = registry, ready, status
        self.host, self.port = host, port
        self._runner: web.AppRunner | None = None

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/readyz", self._readyz)
        if self._status is not None:
            app.router.add_get("/status", self._status_json)
        return app

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
