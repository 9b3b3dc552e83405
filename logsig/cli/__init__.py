"""The ``logsig`` command line: run, scan, schema, config show, catalog check|test|lint|list|show|warm, explain, top.

Exit codes: 0 success; 1 a check found problems (catalog check/test/lint); 2 bad usage, settings
or catalog (the message says which key, file or record).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

import orjson
import yaml

from logsig import __version__
from logsig.cli import catalog as catalog_cmd
from logsig.cli import scan as scan_cmd
from logsig.cli import top as top_cmd
from logsig.cli.common import add_cache_arg, add_catalog_args, with_catalog_args
from logsig.config import load_settings, masked_dump
from logsig.errors import LogsigError
from logsig.incident import incident_json_schema

DESCRIPTION = "Match known failures in LLM inference-server logs: run (Kafka daemon), scan (files), catalog tools."
EPILOG = """exit codes:
  0  success
  1  a check found problems (catalog check, test, lint), or scan --fail-on found incidents
  2  bad usage, settings or catalog (the message names the key, file or record)

settings: --config FILE (YAML), overridden by LOGSIG_<SECTION>__<KEY> environment variables,
e.g. LOGSIG_KAFKA__BOOTSTRAP_SERVERS; "logsig config show" prints the effective settings."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="logsig", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"logsig {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the daemon: Kafka in, incidents out")
    run.add_argument("--config", type=Path, help="settings YAML file")
    add_catalog_args(run)
    add_cache_arg(run)
    scan_cmd.add_parser(sub, add_catalog_args)
    sub.add_parser("schema", help="print the incident event's JSON Schema")
    config = sub.add_parser("config", help="settings")
    config_sub = config.add_subparsers(dest="config_command", required=True)
    show = config_sub.add_parser("show", help="print the effective settings, secrets masked")
    show.add_argument("--config", type=Path, help="settings YAML file")
    catalog_cmd.add_parsers(sub, add_catalog_args)
    top_cmd.add_parser(sub)
    return parser


def _cmd_scan(args: argparse.Namespace) -> int:
    return scan_cmd.cmd_scan(args)


def _cmd_run(args: argparse.Namespace) -> int:
    from logsig.daemon.runner import run_daemon

    return run_daemon(with_catalog_args(load_settings(args.config), args))


def _cmd_schema(_: argparse.Namespace) -> int:
    sys.stdout.buffer.write(orjson.dumps(incident_json_schema(), option=orjson.OPT_INDENT_2) + b"\n")
    return 0


def _cmd_config(args: argparse.Namespace) -> int:
    settings = load_settings(args.config)
    sys.stdout.write(yaml.safe_dump(masked_dump(settings), sort_keys=False))
    return 0


COMMANDS = {"scan": _cmd_scan, "run": _cmd_run, "schema": _cmd_schema, "config": _cmd_config,
            "top": top_cmd.cmd_top, **catalog_cmd.COMMANDS}


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: object = None, line: str | None = None) -> None:
    """Print a warning (an unknown LOGSIG_ variable, ...) as ``logsig: warning: MESSAGE`` on stderr."""
    print(f"logsig: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``logsig`` console script; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return COMMANDS[args.command](args)
    except LogsigError as error:
        print(f"logsig: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
