"""Against the broker of ``make broker-start``: create the default topics, then run or feed logsig.

``python deploy/local/local_run.py topics``   creates inference-logs, logsig-incidents and
                                              logsig-dead-letters (3, 1 and 1 partitions) if missing;
``python deploy/local/local_run.py config``   writes ``.cache/local.yaml`` (deploy/logsig.example.yaml
                                              with the local broker's address) and prints its path;
``python deploy/local/local_run.py produce FILE``  sends each line of FILE as one record.

The broker's address is read from ``.cache/kafka-run/bootstrap`` (written by ``make broker-start``),
or given with ``--bootstrap-server HOST:PORT``. A broker that cannot be reached, or a FILE that
cannot be read, is one line on stderr and exit 1.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path

import yaml
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaError

ROOT = Path(__file__).resolve().parents[2]
STATE = ROOT / ".cache" / "kafka-run"
TOPICS = {"inference-logs": 3, "logsig-incidents": 1, "logsig-dead-letters": 1}


def bootstrap() -> str:
    """The running local broker's ``host:port``; exits with a hint when there is none."""
    path = STATE / "bootstrap"
    if not path.is_file():
        raise SystemExit("no local broker: run `make broker-start` first")
    return path.read_text().strip()


async def create_topics(address: str) -> list[str]:
    """Create the missing default topics; returns the names created."""
    admin = AIOKafkaAdminClient(bootstrap_servers=address)
    try:
        await admin.start()
        missing = [name for name in TOPICS if name not in set(await admin.list_topics())]
        if missing:
            await admin.create_topics([NewTopic(name, TOPICS[name], 1) for name in missing])
        return missing
    finally:
        await admin.close()


def write_config(address: str) -> Path:
    """``.cache/local.yaml``: the example settings pointed at ``address``."""
    settings = yaml.safe_load((ROOT / "deploy" / "logsig.example.yaml").read_text())
    settings["kafka"]["bootstrap_servers"] = address
    settings["http"]["host"] = "127.0.0.1"
    path = ROOT / ".cache" / "local.yaml"
    path.write_text(yaml.safe_dump(settings, sort_keys=False))
    return path


async def produce(address: str, path: Path) -> int:
    """Send each line of ``path`` to inference-logs; returns the count."""
    lines = path.read_bytes().splitlines()
    producer = AIOKafkaProducer(bootstrap_servers=address, enable_idempotence=True, acks="all")
    try:
        await producer.start()
        for line in lines:
            await producer.send("inference-logs", line)
        await producer.flush()
        return len(lines)
    finally:
        await producer.stop()


def main(argv: list[str] | None = None) -> int:
    """Command line entry; returns the exit code (1 when the broker or FILE cannot be used)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap-server", metavar="HOST:PORT",
                        help="the broker (default: the one `make broker-start` wrote to .cache/kafka-run/bootstrap)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("topics")
    sub.add_parser("config")
    feed = sub.add_parser("produce")
    feed.add_argument("file", type=Path)
    args = parser.parse_args(argv)
    address = args.bootstrap_server or bootstrap()
    logging.getLogger("aiokafka").addHandler(logging.NullHandler())  # its connection errors: the one line below
    try:
        print(_run(args, address))
    except KafkaError as error:
        print(f"local_run: {args.command}: cannot reach the Kafka broker at {address} ({type(error).__name__}); "
              f"is it running? start it with `make broker-start`", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"local_run: {args.command}: cannot read {error.filename}: {error.strerror}", file=sys.stderr)
        return 1
    return 0


def _run(args: argparse.Namespace, address: str) -> str:
    """Run one command; returns what to print."""
    if args.command == "topics":
        created = asyncio.run(create_topics(address))
        return f"created: {', '.join(created)}" if created else "topics already exist"
    if args.command == "config":
        return str(write_config(address))
    return f"sent {asyncio.run(produce(address, args.file))} records to inference-logs"


if __name__ == "__main__":
    sys.exit(main())
