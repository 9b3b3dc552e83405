"""Against the broker of ``make broker-start``: create the default topics, then run or feed logsig.

``python deploy/local/local_run.py topics``   creates inference-logs, logsig-incidents and
                                              logsig-dead-letters (3, 1 and 1 partitions) if missing;
``python deploy/local/local_run.py config``   writes ``.cache/local.yaml`` (deploy/logsig.example.yaml
                                              with the local broker's address) and prints its path;
``python deploy/local/local_run.py produce FILE``  sends each line of FILE as one record.

The broker's address is read from ``.cache/kafka-run/bootstrap`` (written by ``make broker-start``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import yaml
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

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
    await admin.start()
    try:
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
    producer = AIOKafkaProducer(bootstrap_servers=address, enable_idempotence=True, acks="all")
    await producer.start()
    try:
        lines = path.read_bytes().splitlines()
        for line in lines:
            await producer.send("inference-logs", line)
        await producer.flush()
        return len(lines)
    finally:
        await producer.stop()


def main(argv: list[str] | None = None) -> int:
    """Command line entry; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("topics")
    sub.add_parser("config")
    feed = sub.add_parser("produce")
    feed.add_argument("file", type=Path)
    args = parser.parse_args(argv)
    address = bootstrap()
    if args.command == "topics":
        created = asyncio.run(create_topics(address))
        print(f"created: {', '.join(created)}" if created else "topics already exist")
    elif args.command == "config":
        print(write_config(address))
    else:
        print(f"sent {asyncio.run(produce(address, args.file))} records to inference-logs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
