"""Run a real single-node Apache Kafka 3.9.1 broker (KRaft) on loopback for tests and the demo.

Standard library only, usable as a script or imported by path::

    python deploy/local/kafka.py fetch                      # only fetch the jars
    python deploy/local/kafka.py start [--state-dir DIR] [--port N]   # prints 127.0.0.1:PORT
    python deploy/local/kafka.py status [--state-dir DIR]
    python deploy/local/kafka.py stop [--state-dir DIR]
    python deploy/local/kafka.py restart [--state-dir DIR]  # same port, same data: topics and offsets kept

The jars come from Maven Central through ``deploy/local/pom.xml`` into ``.cache/kafka-3.9.1/lib``
(fetched once; Maven's ``~/.m2`` caches too). One node is broker and controller at once with a
static quorum (``controller.quorum.voters``), so storage is formatted without ``--standalone``.
The state dir holds ``server.properties``, ``log4j.properties``, ``data/``, ``broker.log``, and
``bootstrap`` and ``pid`` once the broker is ready. Every ``start`` of a stopped state dir formats
fresh storage; ``restart`` runs the broker again on the state dir's own config and data (after a
crash or a ``kill -9``, as a broker restarts in production). Raises ``BrokerError`` on any failure,
with the tail of the broker log.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

KAFKA_VERSION = "3.9.1"
HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
LIB_DIR = REPO_ROOT / ".cache" / f"kafka-{KAFKA_VERSION}" / "lib"
DEFAULT_STATE_DIR = REPO_ROOT / ".cache" / "kafka-run"
COMPLETE_MARKER = ".complete"
HOST = "127.0.0.1"
JVM_OPTS = ["-Xms256m", "-Xmx512m", "-XX:+UseSerialGC", "-Djava.awt.headless=true"]
LOG4J = """\
log4j.rootLogger=WARN, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.server.KafkaRaftServer=INFO
"""


class BrokerError(RuntimeError):
    """The jars could not be fetched, or the broker failed to format, start, answer or stop."""


@dataclass(frozen=True)
class Broker:
    """A running broker: ``bootstrap`` is ``"127.0.0.1:PORT"``, ``pid`` the JVM's process id."""

    bootstrap: str
    pid: int
    state_dir: Path


_children: dict[int, subprocess.Popen[bytes]] = {}


def fetch_jars(lib_dir: Path = LIB_DIR) -> Path:
    """Copy the broker's runtime jars into ``lib_dir`` with Maven unless already complete.

    Completeness: ``lib_dir/.complete`` lists every jar of the last successful fetch and all of
    them exist. Raises BrokerError if ``mvn`` is missing or fails.
    """
    if _lib_complete(lib_dir):
        return lib_dir
    if shutil.which("mvn") is None:
        raise BrokerError("mvn not found on PATH: install Maven to fetch the Kafka jars")
    lib_dir.mkdir(parents=True, exist_ok=True)
    command = ["mvn", "-B", "-q", "-Dstyle.color=never", "-f", str(HERE / "pom.xml"),
               "dependency:copy-dependencies", "-DincludeScope=runtime",
               f"-DoutputDirectory={lib_dir}"]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BrokerError(f"maven failed ({result.returncode}):\n{_tail(result.stdout)}")
    jars = sorted(path.name for path in lib_dir.glob("*.jar"))
    (lib_dir / COMPLETE_MARKER).write_text("\n".join(jars) + "\n")
    return lib_dir


def _lib_complete(lib_dir: Path) -> bool:
    marker = lib_dir / COMPLETE_MARKER
    if not marker.is_file():
        return False
    jars = marker.read_text().split()
    return bool(jars) and all((lib_dir / jar).is_file() for jar in jars)


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def new_cluster_id() -> str:
    """Return a Kafka Uuid string: URL-safe base64 of 16 random bytes, unpadded, not led by '-'."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def server_properties(data_dir: Path, port: int, controller_port: int) -> str:
    """Return server.properties for one combined broker+controller node on loopback.

    Replication factor 1 everywhere and small internal topics; keys from Kafka 3.9.1's
    ``KafkaConfig`` and ``config/kraft/server.properties``.
    """
    broker, controller = f"PLAINTEXT://{HOST}:{port}", f"CONTROLLER://{HOST}:{controller_port}"
    settings = {
        "process.roles": "broker,controller", "node.id": "1",
        "controller.quorum.voters": f"1@{HOST}:{controller_port}",
        "listeners": f"{broker},{controller}", "advertised.listeners": broker,
        "inter.broker.listener.name": "PLAINTEXT", "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": str(data_dir), "num.partitions": "1", "default.replication.factor": "1",
        "offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "1",
        "transaction.state.log.replication.factor": "1", "transaction.state.log.min.isr": "1",
        "transaction.state.log.num.partitions": "1", "group.initial.rebalance.delay.ms": "0",
        "num.network.threads": "2", "num.io.threads": "2", "auto.create.topics.enable": "false",
    }
    return "".join(f"{key}={value}\n" for key, value in settings.items())


def _java(state_dir: Path, lib_dir: Path, *args: str) -> list[str]:
    java = shutil.which("java")
    if java is None:
        raise BrokerError("java not found on PATH: install a Java 17+ runtime")
    log_opts = [f"-Dlog4j.configuration=file:{state_dir / 'log4j.properties'}",
                f"-Dkafka.logs.dir={state_dir / 'logs'}"]
    return [java, *JVM_OPTS, *log_opts, "-cp", f"{lib_dir}/*", *args]


def _prepare(state_dir: Path, port: int, lib_dir: Path) -> Path:
    """Write fresh config and format fresh storage in ``state_dir``; return server.properties."""
    for name in ("data", "logs", "bootstrap", "pid", "broker.log"):
        path = state_dir / name
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    state_dir.mkdir(parents=True, exist_ok=True)
    config = state_dir / "server.properties"
    config.write_text(server_properties(state_dir / "data", port, free_port()))
    (state_dir / "log4j.properties").write_text(LOG4J)
    command = _java(state_dir, lib_dir, "kafka.tools.StorageTool", "format",
                    "-t", new_cluster_id(), "-c", str(config))
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BrokerError(f"storage format failed:\n{_tail(result.stdout + result.stderr)}")
    return config


def start(state_dir: Path = DEFAULT_STATE_DIR, port: int | None = None,
          timeout_s: float = 120.0, lib_dir: Path = LIB_DIR) -> Broker:
    """Start a broker for ``state_dir`` (or return the healthy one already running there).

    ``port`` is the client listener port (a free one when None); the controller port is always
    picked free. Waits up to ``timeout_s`` seconds until a Metadata request lists the broker.
    Raises BrokerError if the JVM exits or the deadline passes, with the broker log's tail.
    """
    state_dir = state_dir.resolve()
    existing = running(state_dir)
    if existing is not None:
        if _healthy(existing.bootstrap):
            return existing
        _terminate(existing.pid, timeout_s=30.0)
    config = _prepare(state_dir, port or free_port(), fetch_jars(lib_dir))
    bootstrap = f"{HOST}:{_listener_port(config)}"
    with open(state_dir / "broker.log", "wb") as log:
        process = subprocess.Popen(_java(state_dir, lib_dir, "kafka.Kafka", str(config)),
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   cwd=state_dir, start_new_session=True)
    _children[process.pid] = process
    try:
        _wait_ready(process.pid, bootstrap, state_dir, time.monotonic() + timeout_s)
    except BrokerError:
        _terminate(process.pid, timeout_s=10.0)
        raise
    (state_dir / "pid").write_text(f"{process.pid}\n")
    (state_dir / "bootstrap").write_text(f"{bootstrap}\n")
    return Broker(bootstrap, process.pid, state_dir)


def restart(state_dir: Path = DEFAULT_STATE_DIR, timeout_s: float = 120.0, lib_dir: Path = LIB_DIR) -> Broker:
    """Start the broker of ``state_dir`` again on its existing config and data (same port, topics,
    committed offsets), stopping it first if it runs. Raises BrokerError if the state dir holds no
    formatted broker, or as :func:`start` does."""
    state_dir = state_dir.resolve()
    config = state_dir / "server.properties"
    if not (config.is_file() and (state_dir / "data" / "meta.properties").is_file()):
        raise BrokerError(f"no broker state in {state_dir}: run start first")
    stop(state_dir)
    bootstrap = f"{HOST}:{_listener_port(config)}"
    with open(state_dir / "broker.log", "ab") as log:
        process = subprocess.Popen(_java(state_dir, fetch_jars(lib_dir), "kafka.Kafka", str(config)),
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   cwd=state_dir, start_new_session=True)
    _children[process.pid] = process
    try:
        _wait_ready(process.pid, bootstrap, state_dir, time.monotonic() + timeout_s)
    except BrokerError:
        _terminate(process.pid, timeout_s=10.0)
        raise
    (state_dir / "pid").write_text(f"{process.pid}\n")
    (state_dir / "bootstrap").write_text(f"{bootstrap}\n")
    return Broker(bootstrap, process.pid, state_dir)


def _listener_port(config: Path) -> int:
    for line in config.read_text().splitlines():
        if line.startswith("advertised.listeners="):
            return int(line.rsplit(":", 1)[1])
    raise BrokerError(f"no advertised.listeners in {config}")


def _wait_ready(pid: int, bootstrap: str, state_dir: Path, deadline: float) -> None:
    while time.monotonic() < deadline:
        if not _alive(pid):
            raise BrokerError(f"broker exited during start:\n{_log_tail(state_dir)}")
        if _healthy(bootstrap):
            return
        time.sleep(0.2)
    raise BrokerError(f"broker not ready at {bootstrap} in time:\n{_log_tail(state_dir)}")


def running(state_dir: Path = DEFAULT_STATE_DIR) -> Broker | None:
    """Return the broker recorded in ``state_dir`` if its JVM is alive, else None."""
    state_dir = state_dir.resolve()
    try:
        pid = int((state_dir / "pid").read_text())
        bootstrap = (state_dir / "bootstrap").read_text().strip()
    except (OSError, ValueError):
        return None
    if not (_alive(pid) and _runs_config(pid, state_dir / "server.properties")):
        return None
    return Broker(bootstrap, pid, state_dir)


def stop(state_dir: Path = DEFAULT_STATE_DIR, timeout_s: float = 30.0) -> Broker | None:
    """Stop the broker of ``state_dir``: SIGTERM, wait ``timeout_s`` seconds, then SIGKILL.

    Returns the broker that was stopped, or None if none was running.
    """
    broker = running(state_dir)
    if broker is not None:
        _terminate(broker.pid, timeout_s)
    for name in ("pid", "bootstrap"):
        (state_dir.resolve() / name).unlink(missing_ok=True)
    return broker


def _terminate(pid: int, timeout_s: float) -> None:
    for sig, wait_s in ((signal.SIGTERM, timeout_s), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        deadline = time.monotonic() + wait_s
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not _alive(pid):
            _children.pop(pid, None)
            return
    raise BrokerError(f"broker pid {pid} survived SIGKILL")


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie counts as gone; our own children are reaped)."""
    child = _children.get(pid)
    if child is not None:
        return child.poll() is None
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _runs_config(pid: int, config: Path) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"kafka.Kafka" in argv and str(config).encode() in argv


def _healthy(bootstrap: str) -> bool:
    try:
        return metadata_broker_count(bootstrap) >= 1
    except (OSError, struct.error, BrokerError):
        return False


def metadata_broker_count(bootstrap: str, timeout_s: float = 2.0) -> int:
    """Send a Metadata v1 request for no topics to ``bootstrap``; return the brokers listed.

    Wire format from the Kafka protocol guide (request header v1, MetadataRequest v1).
    Raises OSError on connection trouble, BrokerError on a mismatched correlation id.
    """
    host, port = bootstrap.rsplit(":", 1)
    client_id, correlation_id = b"logsig-local", 7
    request = struct.pack(">hhih", 3, 1, correlation_id, len(client_id)) + client_id
    request += struct.pack(">i", 0)
    with socket.create_connection((host, int(port)), timeout=timeout_s) as sock:
        sock.sendall(struct.pack(">i", len(request)) + request)
        (size,) = struct.unpack(">i", _recv_exactly(sock, 4))
        answer_id, brokers = struct.unpack_from(">ii", _recv_exactly(sock, size))
    if answer_id != correlation_id:
        raise BrokerError(f"metadata answer for correlation id {answer_id}, not {correlation_id}")
    return int(brokers)


def _recv_exactly(sock: socket.socket, size: int) -> bytes:
    chunks, missing = [], size
    while missing > 0:
        chunk = sock.recv(missing)
        if not chunk:
            raise ConnectionError("connection closed mid-answer")
        chunks.append(chunk)
        missing -= len(chunk)
    return b"".join(chunks)


def _log_tail(state_dir: Path) -> str:
    try:
        return _tail((state_dir / "broker.log").read_text(errors="replace"))
    except OSError:
        return "(no broker log)"


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])


def main(argv: list[str] | None = None) -> int:
    """Command line entry: ``fetch``, ``start``, ``status`` or ``stop``; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("fetch", help="only fetch the broker jars")
    for name in ("start", "status", "stop", "restart"):
        command = commands.add_parser(name)
        command.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR)
    commands.choices["start"].add_argument("--port", type=int, default=None)
    commands.choices["start"].add_argument("--timeout", type=float, default=120.0)
    commands.choices["restart"].add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except BrokerError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace) -> int:
    if args.command == "fetch":
        print(fetch_jars())
        return 0
    if args.command == "start":
        print(start(args.state_dir, args.port, args.timeout).bootstrap)
        return 0
    if args.command == "restart":
        print(restart(args.state_dir, args.timeout).bootstrap)
        return 0
    broker = running(args.state_dir) if args.command == "status" else stop(args.state_dir)
    if broker is None:
        print("not running")
        return 1 if args.command == "status" else 0
    verb = "running" if args.command == "status" else "stopped"
    print(f"{verb} {broker.bootstrap} pid {broker.pid}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
