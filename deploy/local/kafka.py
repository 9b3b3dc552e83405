"""Run a real single-node Apache Kafka 3.9.1 broker (KRaft) on loopback for tests and the demo.

Standard library only, usable as a script or imported by path::

    python deploy/local/kafka.py fetch                      # only fetch the jars
    python deploy/local/kafka.py start [--state-dir DIR] [--port N]   # prints 127.0.0.1:PORT
    python deploy/local/kafka.py status [--state-dir DIR]
    python deploy/local/kafka.py stop [--state-dir DIR]
    python deploy/local/kafka.py restart [--state-dir DIR]  # same port, same data: topics and offsets kept
    python deploy/local/kafka.py cluster-start [--state-dir DIR] [--nodes 3]   # prints host:port,...
    python deploy/local/kafka.py cluster-kill --node N      # SIGKILL one node (data kept)
    python deploy/local/kafka.py cluster-restart-node --node N   # start it again on its data
    python deploy/local/kafka.py cluster-status | cluster-stop
    python deploy/local/kafka.py start-secure --mode sasl_ssl|mtls --keystore PEM --truststore PEM
                                            # passwords from KAFKA_KEY_PASSWORD, KAFKA_SCRAM_PASSWORD

The jars come from Maven Central through ``deploy/local/pom.xml`` into ``.cache/kafka-3.9.1/lib``
(fetched once; Maven's ``~/.m2`` caches too). One node is broker and controller at once with a
static quorum (``controller.quorum.voters``), so storage is formatted without ``--standalone``.
The state dir holds ``server.properties``, ``log4j.properties``, ``data/``, ``broker.log``, and
``bootstrap`` and ``pid`` once the broker is ready. Every ``start`` of a stopped state dir formats
fresh storage; ``restart`` runs the broker again on the state dir's own config and data (after a
crash or a ``kill -9``, as a broker restarts in production). Raises ``BrokerError`` on any failure,
with the tail of the broker log.

The cluster (``start_cluster``, default state dir ``.cache/kafka-cluster``) runs N combined
broker+controller nodes in ``node1`` .. ``nodeN`` under its state dir, one static quorum, replication
factor N and ``min.insync.replicas`` N-1 for every topic, the internal ones included.

``start_secure`` (``start-secure``) adds a secured client listener to the single node: SASL_SSL with
SCRAM-SHA-512 users, or SSL requiring client certificates (mTLS), from PEM files you give it; the
loopback PLAINTEXT listener stays for readiness and inter-broker traffic.
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
    return _launch(state_dir, lib_dir, config, timeout_s, log_mode="wb")


def restart(state_dir: Path = DEFAULT_STATE_DIR, timeout_s: float = 120.0, lib_dir: Path = LIB_DIR) -> Broker:
    """Start the broker of ``state_dir`` again on its existing config and data (same port, topics,
    committed offsets), stopping it first if it runs. Raises BrokerError if the state dir holds no
    formatted broker, or as :func:`start` does."""
    state_dir = state_dir.resolve()
    config = state_dir / "server.properties"
    if not (config.is_file() and (state_dir / "data" / "meta.properties").is_file()):
        raise BrokerError(f"no broker state in {state_dir}: run start first")
    stop(state_dir)
    return _launch(state_dir, fetch_jars(lib_dir), config, timeout_s, log_mode="ab")


def _launch(state_dir: Path, jars: Path, config: Path, timeout_s: float, log_mode: str) -> Broker:
    """Run the broker of ``config`` in its own session, wait until it answers, record pid and
    address in ``state_dir``. ``log_mode`` ``wb`` starts broker.log anew, ``ab`` appends to it.
    Raises BrokerError (after stopping the process) if it is not ready within ``timeout_s``."""
    bootstrap = f"{HOST}:{_listener_port(config)}"
    with open(state_dir / "broker.log", log_mode) as log:
        process = subprocess.Popen(_java(state_dir, jars, "kafka.Kafka", str(config)),
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


# --- A 3-node KRaft cluster on loopback (failover tests) ------------------------------------------

CLUSTER_NODES = 3


@dataclass(frozen=True)
class Cluster:
    """A running cluster: one :class:`Broker` per node (node ids 1..N), all on 127.0.0.1."""

    nodes: tuple[Broker, ...]
    state_dir: Path

    @property
    def bootstrap(self) -> str:
        """Every node's client address, comma-separated (aiokafka's ``bootstrap_servers``)."""
        return ",".join(node.bootstrap for node in self.nodes)


def node_dir(state_dir: Path, node_id: int) -> Path:
    """The state dir of node ``node_id`` (1-based) of the cluster in ``state_dir``."""
    return state_dir.resolve() / f"node{node_id}"


def cluster_properties(node_id: int, data_dir: Path, port: int, voters: dict[int, int]) -> str:
    """Return server.properties of node ``node_id`` of a combined broker+controller cluster.

    ``voters`` maps each node id to its controller port (a static quorum,
    ``controller.quorum.voters``); ``port`` is this node's client listener. Replication factor
    equals the node count (internal topics included), ``min.insync.replicas`` is one less (2 of 3),
    so acks=all survives one node down. Keys from Kafka 3.9.1's ``KafkaConfig``.
    """
    replicas, min_isr = str(len(voters)), str(max(1, len(voters) - 1))
    broker, controller = f"PLAINTEXT://{HOST}:{port}", f"CONTROLLER://{HOST}:{voters[node_id]}"
    settings = {
        "process.roles": "broker,controller", "node.id": str(node_id),
        "controller.quorum.voters": ",".join(f"{n}@{HOST}:{p}" for n, p in sorted(voters.items())),
        "listeners": f"{broker},{controller}", "advertised.listeners": broker,
        "inter.broker.listener.name": "PLAINTEXT", "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": str(data_dir), "num.partitions": "1", "default.replication.factor": replicas,
        "min.insync.replicas": min_isr, "offsets.topic.replication.factor": replicas,
        "offsets.topic.num.partitions": "1", "transaction.state.log.replication.factor": replicas,
        "transaction.state.log.min.isr": min_isr, "transaction.state.log.num.partitions": "1",
        "group.initial.rebalance.delay.ms": "0", "num.network.threads": "2", "num.io.threads": "2",
        "auto.create.topics.enable": "false", "unclean.leader.election.enable": "false",
    }
    return "".join(f"{key}={value}\n" for key, value in settings.items())


def start_cluster(state_dir: Path = DEFAULT_STATE_DIR, nodes: int = CLUSTER_NODES,
                  timeout_s: float = 240.0, lib_dir: Path = LIB_DIR) -> Cluster:
    """Format and start ``nodes`` combined nodes in ``state_dir/node1..N`` (or return the running cluster).

    All nodes share one cluster id and a static quorum; every ``start_cluster`` of a stopped
    state dir formats fresh storage. Waits up to ``timeout_s`` seconds until every node's Metadata
    answer lists all nodes. Raises BrokerError if a JVM exits or the deadline passes.
    """
    existing = running_cluster(state_dir, nodes)
    if existing is not None and all(_healthy(node.bootstrap) for node in existing.nodes):
        return existing
    stop_cluster(state_dir)
    lib = fetch_jars(lib_dir)
    voters = {node_id: free_port() for node_id in range(1, nodes + 1)}
    cluster_id = new_cluster_id()
    for node_id in voters:
        _prepare_node(node_dir(state_dir, node_id), node_id, voters, cluster_id, lib)
    for node_id in voters:
        _launch_node(node_dir(state_dir, node_id), lib)
    try:
        return Cluster(tuple(_await_node(node_dir(state_dir, n), nodes, time.monotonic() + timeout_s)
                             for n in voters), state_dir.resolve())
    except BrokerError:
        stop_cluster(state_dir)
        raise


def _prepare_node(directory: Path, node_id: int, voters: dict[int, int], cluster_id: str, lib: Path) -> None:
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    config = directory / "server.properties"
    config.write_text(cluster_properties(node_id, directory / "data", free_port(), voters))
    (directory / "log4j.properties").write_text(LOG4J)
    command = _java(directory, lib, "kafka.tools.StorageTool", "format", "-t", cluster_id, "-c", str(config))
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BrokerError(f"storage format of {directory} failed:\n{_tail(result.stdout + result.stderr)}")


def _launch_node(directory: Path, lib: Path) -> int:
    """Start the JVM of the node in ``directory`` on its existing config and data; return its pid."""
    config = directory / "server.properties"
    with open(directory / "broker.log", "ab") as log:
        process = subprocess.Popen(_java(directory, lib, "kafka.Kafka", str(config)),
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   cwd=directory, start_new_session=True)
    _children[process.pid] = process
    (directory / "pid").write_text(f"{process.pid}\n")
    (directory / "bootstrap").write_text(f"{HOST}:{_listener_port(config)}\n")
    return process.pid


def _await_node(directory: Path, nodes: int, deadline: float) -> Broker:
    """Wait until the node in ``directory`` answers Metadata listing ``nodes`` brokers."""
    pid = int((directory / "pid").read_text())
    bootstrap = (directory / "bootstrap").read_text().strip()
    while time.monotonic() < deadline:
        if not _alive(pid):
            raise BrokerError(f"node {directory.name} exited during start:\n{_log_tail(directory)}")
        with contextlib.suppress(OSError, struct.error, BrokerError):
            if metadata_broker_count(bootstrap) >= nodes:
                return Broker(bootstrap, pid, directory)
        time.sleep(0.2)
    raise BrokerError(f"node {directory.name} not ready at {bootstrap} in time:\n{_log_tail(directory)}")


def running_cluster(state_dir: Path = DEFAULT_STATE_DIR, nodes: int = CLUSTER_NODES) -> Cluster | None:
    """The cluster of ``state_dir`` if every one of its ``nodes`` JVMs is alive, else None."""
    found = [running(node_dir(state_dir, node_id)) for node_id in range(1, nodes + 1)]
    alive = [broker for broker in found if broker is not None]
    return Cluster(tuple(alive), state_dir.resolve()) if len(alive) == nodes else None


def kill_node(state_dir: Path, node_id: int) -> Broker:
    """SIGKILL node ``node_id`` (a crash: no controlled shutdown); its data stays for :func:`restart_node`.

    Raises BrokerError if that node is not running.
    """
    broker = running(node_dir(state_dir, node_id))
    if broker is None:
        raise BrokerError(f"node {node_id} of {state_dir} is not running")
    with contextlib.suppress(ProcessLookupError):
        os.kill(broker.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10.0
    while _alive(broker.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    _children.pop(broker.pid, None)
    (broker.state_dir / "pid").unlink(missing_ok=True)
    return broker


def restart_node(state_dir: Path, node_id: int, nodes: int = CLUSTER_NODES, timeout_s: float = 180.0,
                 lib_dir: Path = LIB_DIR) -> Broker:
    """Start node ``node_id`` again on its existing config and data (no format); wait until it
    lists all ``nodes`` brokers. Returns the running node if it was not stopped."""
    directory = node_dir(state_dir, node_id)
    if not (directory / "server.properties").is_file():
        raise BrokerError(f"node {node_id} of {state_dir} was never started (no server.properties)")
    existing = running(directory)
    if existing is not None:
        return existing
    _launch_node(directory, fetch_jars(lib_dir))
    return _await_node(directory, nodes, time.monotonic() + timeout_s)


def stop_cluster(state_dir: Path = DEFAULT_STATE_DIR, timeout_s: float = 20.0) -> list[Broker]:
    """Stop every node of the cluster in ``state_dir``: SIGTERM to all at once, wait ``timeout_s``
    seconds, then SIGKILL the rest (the last node cannot shut down cleanly without a quorum).
    Returns the nodes that were running."""
    state_dir = state_dir.resolve()
    nodes = [broker for d in sorted(state_dir.glob("node*")) if (broker := running(d)) is not None]
    for signum, wait_s in ((signal.SIGTERM, timeout_s), (signal.SIGKILL, 10.0)):
        for broker in nodes:
            with contextlib.suppress(ProcessLookupError):
                os.kill(broker.pid, signum)
        deadline = time.monotonic() + wait_s
        while any(_alive(b.pid) for b in nodes) and time.monotonic() < deadline:
            time.sleep(0.1)
    for broker in nodes:
        if _alive(broker.pid):
            raise BrokerError(f"node pid {broker.pid} survived SIGKILL")
        _children.pop(broker.pid, None)
        for name in ("pid", "bootstrap"):
            (broker.state_dir / name).unlink(missing_ok=True)
    return nodes


def _add_cluster_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for name, text in (("cluster-start", "format and start a cluster; prints its bootstrap servers"),
                       ("cluster-status", "list the running nodes"), ("cluster-stop", "stop every node"),
                       ("cluster-kill", "SIGKILL one node"), ("cluster-restart-node", "start one node again")):
        command = commands.add_parser(name, help=text)
        command.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR.with_name("kafka-cluster"))
        command.add_argument("--nodes", type=int, default=CLUSTER_NODES)
        if name in ("cluster-kill", "cluster-restart-node"):
            command.add_argument("--node", type=int, required=True, help="node id, 1..nodes")


def _run_cluster(args: argparse.Namespace) -> int:
    if args.command == "cluster-start":
        print(start_cluster(args.state_dir, args.nodes).bootstrap)
    elif args.command == "cluster-kill":
        print(f"killed node {args.node} pid {kill_node(args.state_dir, args.node).pid}")
    elif args.command == "cluster-restart-node":
        print(restart_node(args.state_dir, args.node, args.nodes).bootstrap)
    else:
        found = (stop_cluster(args.state_dir) if args.command == "cluster-stop"
                 else [b for n in range(1, args.nodes + 1) if (b := running(node_dir(args.state_dir, n)))])
        verb = "stopped" if args.command == "cluster-stop" else "running"
        for broker in found:
            print(f"{verb} {broker.state_dir.name} {broker.bootstrap} pid {broker.pid}")
        return 0 if found or args.command == "cluster-stop" else 1
    return 0


# --- A secured broker: SASL_SSL (SCRAM-SHA-512) or mTLS (SSL with client certificates) ---------------

SECURE_MODES = ("sasl_ssl", "mtls")


@dataclass(frozen=True)
class TlsFiles:
    """PEM files of a secured broker: ``keystore`` holds the broker's private key (PKCS#8, encrypted
    with ``key_password``) followed by its certificate chain; ``truststore`` the CA certificate(s)
    that sign client certificates (mTLS) and that clients trust."""

    keystore: Path
    key_password: str
    truststore: Path


@dataclass(frozen=True)
class SecureBroker:
    """A running secured broker: ``bootstrap`` is its secured listener (what clients use); the
    loopback ``plaintext_bootstrap`` carries readiness probes and inter-broker traffic only."""

    bootstrap: str
    plaintext_bootstrap: str
    pid: int
    state_dir: Path
    mode: str


def secure_properties(mode: str, port: int, plaintext_port: int, controller_port: int, tls: TlsFiles) -> str:
    """The keys a secured broker adds to :func:`server_properties` (later keys win in a properties file).

    ``sasl_ssl``: listener ``SECURE`` is SASL_SSL with SCRAM-SHA-512 (credentials stored in the
    metadata log at format time). ``mtls``: ``SECURE`` is SSL with ``ssl.client.auth=required``. PEM
    key and trust stores (KIP-651). Keys from Kafka 3.9.1's ``KafkaConfig`` and ``SslConfigs``.
    """
    if mode not in SECURE_MODES:
        raise BrokerError(f"unknown secure mode {mode!r}; one of {', '.join(SECURE_MODES)}")
    protocol = "SASL_SSL" if mode == "sasl_ssl" else "SSL"
    plain, secured = f"PLAINTEXT://{HOST}:{plaintext_port}", f"SECURE://{HOST}:{port}"
    settings = {
        "listeners": f"{plain},CONTROLLER://{HOST}:{controller_port},{secured}",
        "advertised.listeners": f"{plain},{secured}",
        "listener.security.protocol.map": f"CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SECURE:{protocol}",
        "ssl.keystore.type": "PEM", "ssl.keystore.location": str(tls.keystore),
        "ssl.key.password": tls.key_password, "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(tls.truststore),
        "ssl.client.auth": "required" if mode == "mtls" else "none",
    }
    if mode == "sasl_ssl":
        settings |= {"listener.name.secure.sasl.enabled.mechanisms": "SCRAM-SHA-512",
                     "listener.name.secure.scram-sha-512.sasl.jaas.config":
                         "org.apache.kafka.common.security.scram.ScramLoginModule required;"}
    return "".join(f"{key}={value}\n" for key, value in settings.items())


def start_secure(state_dir: Path, mode: str, tls: TlsFiles, scram_users: dict[str, str] | None = None,
                 port: int | None = None, timeout_s: float = 120.0, lib_dir: Path = LIB_DIR) -> SecureBroker:
    """Format fresh storage and start a single-node broker whose client listener is secured.

    ``mode`` is ``sasl_ssl`` (``scram_users`` maps user name to password; stored as SCRAM-SHA-512
    credentials by ``StorageTool format --add-scram``) or ``mtls``. ``port`` is the secured
    listener (free when None). Raises BrokerError as :func:`start` does.
    """
    state_dir = state_dir.resolve()
    stop(state_dir)
    lib = fetch_jars(lib_dir)
    plaintext_port, controller_port, port = free_port(), free_port(), port or free_port()
    config = _prepare_secure(state_dir, mode, tls, scram_users or {}, (port, plaintext_port, controller_port), lib)
    with open(state_dir / "broker.log", "wb") as log:
        process = subprocess.Popen(_java(state_dir, lib, "kafka.Kafka", str(config)),
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   cwd=state_dir, start_new_session=True)
    _children[process.pid] = process
    plaintext = f"{HOST}:{plaintext_port}"
    try:
        _wait_ready(process.pid, plaintext, state_dir, time.monotonic() + timeout_s)
    except BrokerError:
        _terminate(process.pid, timeout_s=10.0)
        raise
    (state_dir / "pid").write_text(f"{process.pid}\n")
    (state_dir / "bootstrap").write_text(f"{HOST}:{port}\n")
    return SecureBroker(f"{HOST}:{port}", plaintext, process.pid, state_dir, mode)


def _prepare_secure(state_dir: Path, mode: str, tls: TlsFiles, scram_users: dict[str, str],
                    ports: tuple[int, int, int], lib: Path) -> Path:
    for name in ("data", "logs", "bootstrap", "pid", "broker.log"):
        path = state_dir / name
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    state_dir.mkdir(parents=True, exist_ok=True)
    port, plaintext_port, controller_port = ports
    config = state_dir / "server.properties"
    config.write_text(server_properties(state_dir / "data", plaintext_port, controller_port)
                      + secure_properties(mode, port, plaintext_port, controller_port, tls))
    config.chmod(0o600)
    (state_dir / "log4j.properties").write_text(LOG4J)
    scram = [arg for user, password in scram_users.items()
             for arg in ("--add-scram", f"SCRAM-SHA-512=[name={user},password={password}]")]
    command = _java(state_dir, lib, "kafka.tools.StorageTool", "format", "-t", new_cluster_id(),
                    "-c", str(config), *scram)
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BrokerError(f"storage format failed:\n{_tail(result.stdout + result.stderr)}")
    return config


def _add_secure_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = commands.add_parser("start-secure", help="start a broker whose client listener is SASL_SSL or mTLS")
    command.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR.with_name("kafka-secure"))
    command.add_argument("--mode", choices=SECURE_MODES, required=True)
    command.add_argument("--keystore", type=Path, required=True, help="PEM: encrypted key, then certificate chain")
    command.add_argument("--truststore", type=Path, required=True, help="PEM: the CA certificate(s)")
    command.add_argument("--key-password-env", default="KAFKA_KEY_PASSWORD",
                         help="environment variable holding the keystore key's password")
    command.add_argument("--scram-user", default="logsig", help="sasl_ssl: the SCRAM-SHA-512 user")
    command.add_argument("--scram-password-env", default="KAFKA_SCRAM_PASSWORD",
                         help="sasl_ssl: environment variable holding that user's password")
    command.add_argument("--port", type=int, default=None)


def _run_secure(args: argparse.Namespace) -> int:
    """``start-secure``: passwords come from environment variables, never from the command line."""
    key_password = os.environ.get(args.key_password_env)
    if not key_password:
        raise BrokerError(f"set {args.key_password_env} to the keystore key's password")
    users = {}
    if args.mode == "sasl_ssl":
        password = os.environ.get(args.scram_password_env)
        if not password:
            raise BrokerError(f"set {args.scram_password_env} to the password of SCRAM user {args.scram_user}")
        users[args.scram_user] = password
    tls = TlsFiles(args.keystore.resolve(), key_password, args.truststore.resolve())
    broker = start_secure(args.state_dir, args.mode, tls, users, args.port)
    print(f"{broker.bootstrap} ({args.mode}; loopback PLAINTEXT {broker.plaintext_bootstrap}); "
          f"stop with: stop --state-dir {args.state_dir}")
    return 0


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
    _add_cluster_commands(commands)
    _add_secure_command(commands)
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except BrokerError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace) -> int:
    if args.command.startswith("cluster-"):
        return _run_cluster(args)
    if args.command == "start-secure":
        return _run_secure(args)
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
