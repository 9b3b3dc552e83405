"""Checks of the Kafka addresses and topics, made when the settings load (before any connection).

``bootstrap_servers`` is read as the Kafka clients read it (aiokafka ``collect_hosts``): entries
separated by commas, each ``host``, ``host:port``, ``[IPv6]`` or ``[IPv6]:port`` (a bare IPv6
address without port is taken whole). A topic logsig writes to (``output_topic``,
``dead_letter_topic``, ``line_topic``) must not be one it reads (``topics``): its own events would
come back as log lines and match again, without end.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from logsig.config import KafkaSettings

OUTPUT_TOPIC_SETTINGS = ("output_topic", "dead_letter_topic", "line_topic")


def bootstrap_problems(servers: str) -> list[str]:
    """Problems of a ``bootstrap_servers`` value, one per bad entry (empty: every entry is usable)."""
    if not servers.strip():
        return ["is empty; give one or more host:port entries separated by commas, e.g. kafka-0:9092"]
    problems = []
    for index, entry in enumerate(servers.split(",")):
        problem = _entry_problem(entry.strip())
        if problem:
            problems.append(f"entry {index + 1} {entry.strip()!r}: {problem}")
    return problems


def _entry_problem(entry: str) -> str | None:
    """What is wrong with one ``host[:port]`` entry, or None."""
    if not entry:
        return "is empty (a stray comma?)"
    if any(c.isspace() for c in entry):
        return "contains a space; entries are host:port separated by commas"
    if entry.count(":") > 1 and not entry.startswith("[") and not _is_ipv6(entry):
        return "is not host:port (an IPv6 address goes in brackets: [::1]:9092)"
    host, port = _split(entry)
    if not host:
        return "has no host; write host:port"
    if port is None:
        return None
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        return f"port {port!r} is not a number from 1 to 65535"
    return None


def _split(entry: str) -> tuple[str, str | None]:
    """``(host, port)`` of an entry; port None when absent."""
    if entry.startswith("["):
        host, bracket, rest = entry[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return "", None
        return host, rest[1:] if rest else None
    if entry.count(":") > 1:
        return entry, None
    host, colon, port = entry.partition(":")
    return host, port if colon else None


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def topic_problems(kafka: KafkaSettings) -> list[str]:
    """One problem per topic logsig would both write (output, dead-letter, line topic) and read."""
    inputs = set(kafka.topics)
    problems = []
    for name in OUTPUT_TOPIC_SETTINGS:
        topic = getattr(kafka, name)
        if topic is not None and topic in inputs:
            problems.append(f"{name} {topic!r} is also in topics: logsig would read its own events back as "
                            "log lines; give it a topic it does not consume")
    return problems
