"""Real Prometheus and Alertmanager processes for integration tests, on free loopback ports.

The binaries come from Debian's ``prometheus`` and ``prometheus-alertmanager`` packages
(Alertmanager is ``prometheus-alertmanager`` there, ``alertmanager`` upstream). When one is missing
the test fails if ``CI=true`` and is skipped otherwise (the rule of tests/deploy/support.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.deploy.support import missing
from tests.integration.daemon_proc import free_port, http_get

READY_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 15.0


def binary(names: tuple[str, ...], package: str) -> str:
    """The path of the first of ``names`` on PATH; fails in CI / skips elsewhere if none is."""
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    missing(f"none of {', '.join(names)} found on PATH; install it with: apt-get install {package}")
    raise AssertionError("unreachable")


def alertmanager_binary() -> str:
    """Path of Alertmanager (Debian package prometheus-alertmanager); fails in CI / skips if absent."""
    return binary(("prometheus-alertmanager", "alertmanager"), "prometheus-alertmanager")


def prometheus_binary() -> str:
    """Path of the Prometheus server (Debian package prometheus); fails in CI / skips if absent."""
    return binary(("prometheus",), "prometheus")


@dataclass
class Service:
    """A running Prometheus or Alertmanager; ``base_url`` is ``http://127.0.0.1:<port>``."""

    name: str
    process: subprocess.Popen[bytes]
    port: int
    log_path: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]

    def get(self, path: str, **params: str | list[str]) -> Any:
        """GET ``path`` with query ``params`` and return the decoded JSON; fails on a non-200 answer."""
        query = urllib.parse.urlencode(params, doseq=True)
        status, body = http_get(f"{self.base_url}{path}?{query}", timeout=10.0)
        assert 200 == status, f"{self.name} GET {path} {params}: {status} {body[:500]}"
        return json.loads(body)

    def wait_ready(self, timeout_s: float = READY_TIMEOUT_S) -> None:
        """Poll ``/-/ready`` until 200; raise with the service's log otherwise."""
        deadline = time.monotonic() + timeout_s
        while http_get(f"{self.base_url}/-/ready", timeout=1.0)[0] != 200:
            assert self.process.poll() is None, f"{self.name} exited {self.process.returncode}:\n{self.log()}"
            assert time.monotonic() < deadline, f"{self.name} not ready in {timeout_s}s:\n{self.log()}"
            time.sleep(0.1)

    def stop(self) -> None:
        """Terminate, and kill if it does not exit within STOP_TIMEOUT_S."""
        self.process.terminate()
        try:
            self.process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _start(name: str, args: list[str], port: int, tmp_path: Path) -> Service:
    log_path = tmp_path / f"{name}.log"
    with log_path.open("ab") as log:
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    service = Service(name, process, port, log_path)
    try:
        service.wait_ready()
    except BaseException:
        service.stop()
        raise
    return service


@contextmanager
def alertmanager(tmp_path: Path, config: Path, exe: str) -> Iterator[Service]:
    """Alertmanager ``exe`` with ``config``, storage in ``tmp_path``, no cluster (HA) listener."""
    port = free_port()
    storage = tmp_path / "alertmanager-data"
    storage.mkdir()
    service = _start("alertmanager", [
        exe, f"--config.file={config}", f"--storage.path={storage}", f"--web.listen-address=127.0.0.1:{port}",
        "--cluster.listen-address=", "--log.level=warn"], port, tmp_path)
    try:
        yield service
    finally:
        service.stop()


def scrape_config(target: str, rule_files: list[Path], interval_s: int = 1) -> dict[str, Any]:
    """A Prometheus configuration scraping ``target`` as job ``logsig`` every ``interval_s``,
    evaluating ``rule_files`` as often (honor_labels, as docs/operations.md advises)."""
    every = f"{interval_s}s"
    return {"global": {"scrape_interval": every, "scrape_timeout": every, "evaluation_interval": every},
            "rule_files": [str(path) for path in rule_files],
            "scrape_configs": [{"job_name": "logsig", "honor_labels": True,
                                "static_configs": [{"targets": [target]}]}]}


@contextmanager
def prometheus(tmp_path: Path, config: dict[str, Any], exe: str) -> Iterator[Service]:
    """Prometheus ``exe`` with ``config`` (see :func:`scrape_config`) and its TSDB in ``tmp_path``."""
    port = free_port()
    config_path = tmp_path / "prometheus.yml"
    config_path.write_text(yaml.safe_dump(config), encoding="utf-8")
    storage = tmp_path / "prometheus-data"
    service = _start("prometheus", [
        exe, f"--config.file={config_path}", f"--storage.tsdb.path={storage}",
        f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"], port, tmp_path)
    try:
        yield service
    finally:
        service.stop()
