"""``logsig catalog draft``: a signature skeleton from example lines or an unclassified template.

Lines come from stdin (one example per line), or with ``--template FINGERPRINT`` from the top
unclassified templates: ``--from`` names the daemon (``http://host:9464``, read at
``/unclassified/<fingerprint>``) or a file written by ``logsig scan --unclassified`` (JSON lines).
The record is written as YAML to stdout (or ``--output``); exit 1 when the regex does not keep the
draft's promises (:func:`logsig.matchers.authoring.draft.draft_problems`), 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from logsig.errors import ConfigError
from logsig.matchers.authoring.draft import draft_problems, draft_record

HTTP_TIMEOUT_SECONDS = 10.0
TEXT_TABLE = re.compile(r"^\d+ unclassified lines, \d+ templates tracked")
"""The first line of ``scan --unclassified --format text`` (:func:`logsig.sinks.stdout.write_unclassified`)."""
HEADER = ("# Drafted by `logsig catalog draft`: edit the id (<domain>/<slug>), the category, root cause,\n"
          "# workarounds and dead ends (every '<fill in>'), add near misses to examples.no_match, then\n"
          "# run `logsig catalog check` and `logsig catalog test` on this file.\n")


def add_parser(csub: Any) -> None:
    """Add ``draft`` to the ``catalog`` sub-commands."""
    draft = csub.add_parser("draft", help="write a signature skeleton from example lines (stdin) or an "
                                          "unclassified template (--template)")
    draft.add_argument("--template", metavar="FINGERPRINT", help="the fingerprint of an unclassified template")
    draft.add_argument("--from", dest="source", metavar="URL|FILE",
                       help="where the template is: the daemon's base URL, or a `scan --unclassified` output file")
    draft.add_argument("--output", "-o", type=Path, metavar="FILE", help="write the record here (default: stdout)")


EXPECTED = ("expected the JSON lines `logsig scan --unclassified FILE` writes: one object per template with "
            "fingerprint, template and example")
_FIELDS = ("fingerprint", "template", "example")


def _entry_from_file(path: Path, fingerprint: str) -> dict[str, Any] | None:
    """The entry of ``fingerprint`` in a ``scan --unclassified`` file, None if it is not there.

    Raises:
        ConfigError: the file cannot be read, or a line is not such an entry (the message says
            which line, and what was expected).
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read it ({getattr(error, 'strerror', None) or error}); {EXPECTED}") from None
    for number, text in enumerate(lines, 1):
        if text.strip():
            entry = _entry(path, number, text)
            if entry["fingerprint"] == fingerprint:
                return entry
    return None


def _entry(path: Path, number: int, text: str) -> dict[str, Any]:
    """One line of a ``scan --unclassified`` file as its entry; ConfigError when it is not one."""
    try:
        entry = json.loads(text)
    except ValueError:
        hint = " (this is `--format text` output: scan again without it)" if TEXT_TABLE.match(text) else ""
        raise ConfigError(f"{path}:{number}: not JSON{hint}; {EXPECTED}") from None
    if not isinstance(entry, dict) or any(key not in entry for key in _FIELDS):
        found = (f"keys {', '.join(sorted(map(str, entry)))}" if isinstance(entry, dict)
                 else f"a JSON {type(entry).__name__}")
        raise ConfigError(f"{path}:{number}: not a template entry (found {found}); {EXPECTED}")
    return dict(entry)


def _entry_from_daemon(base: str, fingerprint: str) -> dict[str, Any] | None:
    url = f"{base.rstrip('/')}/unclassified/{fingerprint}"
    try:
        with urllib.request.urlopen(url, timeout=HTTP_TIMEOUT_SECONDS) as response:
            return dict(json.loads(response.read()))
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return None
        raise ConfigError(f"{url}: HTTP {error.code}") from error
    except (urllib.error.URLError, OSError) as error:
        raise ConfigError(f"{url}: {error}") from error


def template_entry(source: str, fingerprint: str) -> dict[str, Any]:
    """The tracked template ``fingerprint`` from a daemon URL or a scan output file.

    Raises:
        ConfigError: the source cannot be read or does not track that fingerprint.
    """
    if source.startswith(("http://", "https://")):
        entry = _entry_from_daemon(source, fingerprint)
    else:
        entry = _entry_from_file(Path(source), fingerprint)
    if entry is None:
        raise ConfigError(f"{source}: no unclassified template with fingerprint {fingerprint!r}")
    return entry


def cmd_draft(args: argparse.Namespace) -> int:
    """Draft; exit 0, 1 when the regex fails its checks, 2 on bad input."""
    if args.source and args.template is None:
        raise ConfigError(f"--from {args.source} needs --template FINGERPRINT (a fingerprint of that source; "
                          f"without --template the examples are read from stdin)")
    if args.template is not None:
        if not args.source:
            raise ConfigError("--template needs --from (the daemon's URL or a `scan --unclassified` file)")
        entry = template_entry(args.source, args.template)
        record = draft_record([str(entry["example"])], template_text=str(entry["template"]))
    else:
        lines = [line.rstrip("\r\n") for line in sys.stdin if line.strip()]
        if not lines:
            raise ConfigError("no example lines on stdin (or give --template FINGERPRINT --from URL|FILE)")
        record = draft_record(lines)
    text = HEADER + yaml.safe_dump(record, sort_keys=False, allow_unicode=True, width=1000)
    if args.output is not None:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    problems = draft_problems(record)
    for problem in problems:
        print(f"logsig: draft: {problem}", file=sys.stderr)
    return 1 if problems else 0
