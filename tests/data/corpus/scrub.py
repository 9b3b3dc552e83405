"""Copy the real-log corpus into the repository with personal details replaced.

Usage: ``python tests/data/corpus/scrub.py SRC_DIR [DEST_DIR]``

Reads ``real_logs.jsonl`` (excerpts: ``lines``) and ``benign_lines.jsonl`` (``line``) from
SRC_DIR and writes the scrubbed files to DEST_DIR (default: this script's folder). Only the
log text and the notes are rewritten; ids, kinds, source_url, dates and versions are kept.
The rules are idempotent (scrubbing a scrubbed file changes nothing):

- home folders: ``/home/<name>/``, ``/Users/<name>/``, ``C:\\Users\\<name>\\`` -> ``user``
  (service accounts such as ``jenkins`` or ``runner`` are kept, they are log facts);
- e-mail addresses -> ``<email>``;
- public IPv4 addresses -> ``10.0.0.<n>`` (the same address always gets the same n; private,
  loopback and unspecified addresses and dotted version numbers are kept);
- host names in syslog prefixes (``Oct 04 13:19:39 <host> prog[pid]:``), NCCL prefixes
  (``<host>:<pid>:<tid> [dev]``) and ``hostname=`` fields -> ``node-<n>`` unless already
  generic (``host``, ``node01``, ``runner-pod``, ...).
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import re
import sys
from pathlib import Path
from typing import Any

FILES = ("real_logs.jsonl", "benign_lines.jsonl")
KEEP_ACCOUNTS = frozenset({"user", "jenkins", "runner", "ubuntu", "root", "venv", "ec2-user"})
GENERIC_HOST = re.compile(
    r"^(?:host|node|localhost|llm|runner-pod|runner|worker|ddp-worker|g)[-_]?\d*$"
    r"|^(?:host|node|worker)-?\d+(?:-\d+)?$",
    re.IGNORECASE,
)
HOME = re.compile(r"(?P<pre>/home/|/Users/|[A-Za-z]:\\{1,2}Users\\{1,2})(?P<name>[^/\\\s\"']+)")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}\b")
IPV4 = re.compile(r"(?<![\w.])(\d{1,3}(?:\.\d{1,3}){3})(?![\w.]*\d)")
SYSLOG_HOST = re.compile(
    r"(?P<pre>\b(?:[A-Z][a-z]{2}|\d{1,2}月) +\d{1,2} \d{2}:\d{2}:\d{2} )(?P<host>[\w.-]+)"
    r"(?P<post> [\w.@/-]+(?:\[\d+\])?:)"
)
NCCL_HOST = re.compile(r"(?P<pre>(?:^|[\s\]]))(?P<host>[A-Za-z][\w.-]*)(?P<post>:\d+:\d+ \[\d+\])")
HOSTNAME_FIELD = re.compile(r"(?P<pre>hostname(?:=|\"\s*:\s*\"))(?P<host>[\w.-]+)(?P<post>)")


class Scrubber:
    """Rewrites one text at a time; keeps the host-name mapping across calls."""

    def __init__(self) -> None:
        self.hosts: dict[str, str] = {}

    def text(self, value: str) -> str:
        """The text with every rule of the module docstring applied."""
        value = HOME.sub(self._home, value)
        value = EMAIL.sub("<email>", value)
        value = IPV4.sub(self._ip, value)
        for pattern in (SYSLOG_HOST, NCCL_HOST, HOSTNAME_FIELD):
            value = pattern.sub(self._host, value)
        return value

    def _home(self, match: re.Match[str]) -> str:
        name = match.group("name")
        keep = name.lower() in KEEP_ACCOUNTS
        return match.group("pre") + (name if keep else "user")

    def _ip(self, match: re.Match[str]) -> str:
        text = match.group(1)
        before = match.string[max(0, match.start() - 12) : match.start()].lower()
        if "version" in before or before.endswith(("v", "got ")):
            return text
        try:
            address = ipaddress.IPv4Address(text)
        except ValueError:
            return text
        if not address.is_global:
            return text
        digest = hashlib.sha256(text.encode()).digest()
        return f"10.0.0.{2 + digest[0] % 250}"

    def _host(self, match: re.Match[str]) -> str:
        host = match.group("host")
        if GENERIC_HOST.match(host):
            return match.group(0)
        alias = self.hosts.setdefault(host, f"node-{len(self.hosts) + 1}")
        return match.group("pre") + alias + match.group("post")


def scrub_record(record: dict[str, Any], scrubber: Scrubber) -> dict[str, Any]:
    """The record with ``lines``/``line``/``notes`` scrubbed; other fields unchanged."""
    out = dict(record)
    if "lines" in out:
        out["lines"] = [scrubber.text(line) for line in out["lines"]]
    if "line" in out:
        out["line"] = scrubber.text(out["line"])
    if isinstance(out.get("notes"), str):
        out["notes"] = scrubber.text(out["notes"])
    return out


def scrub_file(source: Path, dest: Path, scrubber: Scrubber) -> int:
    """Scrub one JSONL file; returns the number of records written."""
    records = [json.loads(row) for row in source.read_text("utf-8").splitlines() if row.strip()]
    rows = [json.dumps(scrub_record(r, scrubber), ensure_ascii=False) for r in records]
    dest.write_text("\n".join(rows) + "\n", "utf-8")
    return len(rows)


def main(argv: list[str]) -> int:
    """Entry point; returns the exit status."""
    if len(argv) not in (2, 3):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    source_dir = Path(argv[1])
    dest_dir = Path(argv[2]) if len(argv) == 3 else Path(__file__).resolve().parent
    scrubber = Scrubber()
    for name in FILES:
        count = scrub_file(source_dir / name, dest_dir / name, scrubber)
        print(f"{name}: {count} records")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
