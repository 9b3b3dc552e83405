"""Run ``logsig run`` as a real subprocess for integration tests, and read what it exposes."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

READY_TIMEOUT_S = 60.0


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http_get(url: str, timeout: float = 5.0) -> tuple[int, str]:
    """``(status, body)`` of a GET; connection errors give status 0."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except (urllib.error.URLError, OSError):
        return 0, ""


@dataclass
class DaemonProcess:
    """A running ``logsig run``; ``port`` serves /metrics, /healthz and /readyz."""

    process: subprocess.Popen[bytes]
    port: int
    log_path: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def metrics(self) -> str:
        return http_get(f"{self.base_url}/metrics")[1]

    def wait_ready(self, timeout_s: float = READY_TIMEOUT_S) -> None:
        """Poll /readyz until it answers 200; raise with the daemon's log otherwise."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"logsig exited with {self.process.returncode}:\n{self.log()}")
            if http_get(f"{self.base_url}/readyz", timeout=1.0)[0] == 200:
                return
            time.sleep(0.1)
        raise AssertionError(f"logsig not ready in {timeout_s}s:\n{self.log()}")

    def wait_metric(self, name: str, at_least: float, timeout_s: float = 60.0, **labels: str) -> None:
        """Poll /metrics until the sum of ``name`` samples with ``labels`` reaches ``at_least``."""
        deadline = time.monotonic() + timeout_s
        while metric_value(self.metrics(), name, **labels) < at_least:
            assert self.process.poll() is None, self.log()
            assert time.monotonic() < deadline, f"{name} did not reach {at_least}:\n{self.log()}"
            time.sleep(0.1)

    def terminate(self, timeout_s: float = 60.0) -> int:
        """SIGTERM and wait; returns the exit code."""
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=timeout_s)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-6000:]


def start_daemon(tmp_path: Path, settings: dict[str, Any], name: str = "logsig") -> DaemonProcess:
    """Write ``settings`` (merged over test defaults) to a file and start ``logsig run`` on it."""
    port = free_port()
    merged = {"http": {"host": "127.0.0.1", "port": port}, "logging": {"format": "json"}, **settings}
    config = tmp_path / f"{name}.yaml"
    config.write_text(yaml.safe_dump(merged))
    log_path = tmp_path / f"{name}.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOGSIG_")}
    with log_path.open("ab") as log:
        process = subprocess.Popen([sys.executable, "-m", "logsig", "run", "--config", str(config)],
                                   stdout=log, stderr=subprocess.STDOUT, env=env)
    return DaemonProcess(process, port, log_path)


def metric_value(text: str, name: str, **labels: str) -> float:
    """Sum of samples of ``name`` whose labels include ``labels`` in Prometheus text ``text``."""
    from prometheus_client.parser import text_string_to_metric_families

    total = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                total += sample.value
    return total
