"""``logsig catalog check|test|lint|list|show|warm|draft`` and ``logsig explain``: tools for signature authors.

Every catalog sub-command given no PATH works on the built-in catalog.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from logsig.cli import draft as draft_cmd
from logsig.cli.common import add_cache_arg
from logsig.cli.warm import cmd_warm
from logsig.errors import CatalogError
from logsig.matchers.catalog.loader import Catalog, load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.matchers.engine.hazards import fallback_route
from logsig.matchers.regex.translate import translate
from logsig.matchers.signature import Signature
from logsig.severity import signature_severity


def add_parsers(sub: Any, add_catalog_args: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add the ``catalog`` and ``explain`` sub-commands to ``sub``."""
    catalog = sub.add_parser("catalog", help="check, test, lint, list and show signatures")
    csub = catalog.add_subparsers(dest="catalog_command", required=True)
    check = csub.add_parser("check", help="the pre-deploy gate: exit 1 listing every problem "
                                          "(the built-in catalog when no PATH)")
    check.add_argument("paths", nargs="*", type=Path)
    check.add_argument("--benign", type=Path, action="append", default=[],
                       help="file of a site's benign lines (one per line), none of which a signature may match "
                            "(repeatable; the built-in benign sample is checked too)")
    for name, text in (("test", "run every signature's examples"), ("lint", "find catalog smells"),
                       ("list", "one line per signature: id, servers, category, severity, examples")):
        cmd = csub.add_parser(name, help=text + " (the built-in catalog when no PATH)")
        cmd.add_argument("paths", nargs="*", type=Path, help="catalog files or directories, alone")
        add_catalog_args(cmd)
    show = csub.add_parser("show", help="print one signature as the engine sees it (YAML)")
    show.add_argument("id", help="signature id, e.g. llm/vllm-cuda-oom-during-prefill")
    show.add_argument("paths", nargs="*", type=Path, help="catalog files or directories, alone (default: built-in)")
    add_catalog_args(show)
    warm = csub.add_parser("warm", help="compile the catalog run would load into the on-disk compile cache")
    warm.add_argument("--config", type=Path, help="settings YAML file (catalog and matching sections)")
    add_catalog_args(warm)
    add_cache_arg(warm)
    draft_cmd.add_parser(csub)
    lint = csub.choices["lint"]
    lint.add_argument("--benign", type=Path, action="append", default=[],
                      help="file of benign lines (one per line) no signature may match (repeatable)")
    explain = sub.add_parser("explain", help="why a line does or does not match")
    explain.add_argument("line", help="the log line, or - to read lines from stdin")
    explain.add_argument("--nearest", type=_count, default=3, metavar="N",
                         help="non-matching signatures to explain, nearest first (0 or more; "
                              "only those matching at least half of their pieces)")
    add_catalog_args(explain)


def _count(text: str) -> int:
    """A whole number of 0 or more, for argparse (whose message names the option)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def _load(args: argparse.Namespace) -> Catalog:
    """The catalog of the positional ``paths`` alone, or else the built-in one (unless ``--no-builtin``) with
    the ``--catalog`` paths over it, as ``scan`` and ``run`` load them; drafts allowed: the check rules are
    not applied."""
    paths: list[Path] = [*args.paths, *(Path(p) for p in args.catalog)]
    return load_catalog(paths, builtin=not args.paths and not args.no_builtin, rules=False)


def cmd_check(args: argparse.Namespace) -> int:
    """The pre-deploy gate; exit 1 printing every problem (file, record id, field, reason).

    The problems are those :func:`~logsig.matchers.authoring.gate.check` finds: every file and
    record is checked, one problem hiding none of the others. They are the problems for which
    ``scan``, ``run`` and a reload refuse the catalog; overrides of built-in ids are warnings.
    """
    from logsig.matchers.authoring.gate import check

    paths: list[Path] = args.paths
    site = [line for path in args.benign for line in path.read_text(encoding="utf-8").splitlines() if line]
    report = check(paths, site)
    for warning in report.warnings:
        print(f"warning: {warning}")
    if report.errors:
        print(CatalogError(report.errors))
        return 1
    print(f"ok: {len(report.catalog.signatures)} signatures")
    return 0


LIST_COLUMNS = ("ID", "SERVERS", "CATEGORY", "SEVERITY", "EXAMPLES")


def list_rows(catalog: Catalog) -> list[tuple[str, ...]]:
    """One row per signature, sorted by id: id, servers, category, severity, match/no-match examples."""
    return [(sig.id, ",".join(sig.servers) or "-", sig.category or "-", signature_severity(sig),
             f"{len(sig.examples.match)}/{len(sig.examples.no_match)}")
            for sig in sorted(catalog.signatures, key=lambda s: s.id)]


def cmd_list(args: argparse.Namespace) -> int:
    """Print :func:`list_rows` as aligned columns under a header, then the count."""
    rows = [LIST_COLUMNS, *list_rows(_load(args))]
    widths = [max(len(row[i]) for row in rows) for i in range(len(LIST_COLUMNS))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    print(f"{len(rows) - 1} signatures")
    return 0


def engine_view(sig: Signature, file: str | None) -> dict[str, object]:
    """The record as loaded plus what the engine derives: file, severity, phase-one and phase-two regexes."""
    translation = translate(sig.regex)
    engine = {"prefilter": translation.prefilter, "re2": translation.re2, "captures": list(translation.captures),
              "fallback": fallback_route(translation)}
    return {**sig.to_record(), "file": file, "severity": signature_severity(sig), "engine": engine}


def cmd_show(args: argparse.Namespace) -> int:
    """Print :func:`engine_view` of signature ``args.id`` as YAML; an unknown id is bad usage: exit 2
    naming the closest ids (or pointing at ``catalog list`` when none is close)."""
    catalog = _load(args)
    sig = catalog.by_id().get(args.id)
    if sig is None:
        close = difflib.get_close_matches(args.id, list(catalog.by_id()), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else "; logsig catalog list shows every id"
        print(f"no signature {args.id!r} in the catalog{hint}", file=sys.stderr)
        return 2
    view = engine_view(sig, catalog.files.get(sig.id))
    sys.stdout.write(yaml.safe_dump(view, sort_keys=False, allow_unicode=True, width=120))
    return 0


def example_failures(sig: Signature, engine: Engine) -> list[str]:
    """Diff lines for the examples of ``sig`` that ``engine`` gets wrong (empty when all pass)."""
    out = []
    for line in sig.examples.match:
        if sig.id not in {m.signature.id for m in engine.match(line)}:
            out.append(f"  - should match, did not: {line!r}")
    for line in sig.examples.no_match:
        if sig.id in {m.signature.id for m in engine.match(line)}:
            out.append(f"  + should not match, did: {line!r}")
    return out


def cmd_test(args: argparse.Namespace) -> int:
    """Run every signature's examples; exit 1 with a diff naming each failing signature and line."""
    catalog = _load(args)
    engine = Engine(catalog.signatures)
    failed, examples = 0, 0
    for sig in catalog.signatures:
        examples += len(sig.examples.match) + len(sig.examples.no_match)
        diff = example_failures(sig, engine)
        if diff:
            failed += 1
            print(f"FAIL {sig.id} ({catalog.files.get(sig.id, '?')})")
            print("\n".join(diff))
    total = len(catalog.signatures)
    print(f"{total - failed} passed, {failed} failed ({examples} examples)")
    return 1 if failed else 0


def cmd_lint(args: argparse.Namespace) -> int:
    """Report catalog smells; exit 1 when any finding is an error or the catalog does not load."""
    from logsig.matchers.authoring.lint import lint_catalog

    try:
        catalog = _load(args)
    except CatalogError as error:
        print(error)
        return 1
    benign: list[str] = []
    for path in args.benign:
        benign.extend(path.read_text(encoding="utf-8").splitlines())
    findings = lint_catalog(catalog.signatures, benign)
    for finding in findings:
        field = f" {finding.field}:" if finding.field else ""
        print(f"{finding.severity}: {finding.signature_id}:{field} {finding.message}")
    errors = sum(1 for f in findings if f.severity == "error")
    print(f"{len(catalog.signatures)} signatures: {errors} errors, {len(findings) - errors} warnings")
    return 1 if errors else 0


def cmd_explain(args: argparse.Namespace) -> int:
    """Explain each line: the signatures that match and why the nearest others do not."""
    from logsig.matchers.authoring.explain import explain, render

    paths = [Path(p) for p in args.catalog]
    catalog = load_catalog(paths, builtin=not args.no_builtin, rules=False)
    lines = sys.stdin.read().splitlines() if args.line == "-" else [args.line]
    for line in lines:
        print(render(explain(line, catalog.signatures, nearest=args.nearest)))
    return 0


def _cmd_catalog(args: argparse.Namespace) -> int:
    commands = {"check": cmd_check, "test": cmd_test, "lint": cmd_lint, "list": cmd_list, "show": cmd_show,
                "warm": cmd_warm, "draft": draft_cmd.cmd_draft}
    return commands[args.catalog_command](args)


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {"catalog": _cmd_catalog, "explain": cmd_explain}
