"""``logsig catalog check|test|lint`` and ``logsig explain``: tools for signature authors."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from logsig.errors import CatalogError
from logsig.matchers.catalog.loader import Catalog, load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.matchers.signature import Signature


def add_parsers(sub: Any, add_catalog_args: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add the ``catalog`` and ``explain`` sub-commands to ``sub``."""
    catalog = sub.add_parser("catalog", help="check, test and lint signature catalogs")
    csub = catalog.add_subparsers(dest="catalog_command", required=True)
    check = csub.add_parser("check", help="the pre-deploy gate: exit 1 listing every problem "
                                          "(the built-in catalog when no PATH)")
    check.add_argument("paths", nargs="*", type=Path)
    check.add_argument("--benign", type=Path, action="append", default=[],
                       help="file of benign lines (one per line) added to the built-in benign sample (repeatable)")
    for name, text in (("test", "run every signature's examples"), ("lint", "find catalog smells")):
        cmd = csub.add_parser(name, help=text + " (the built-in catalog when no PATH)")
        cmd.add_argument("paths", nargs="*", type=Path)
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


def _load(paths: list[Path]) -> Catalog:
    return load_catalog(paths, builtin=not paths)


def cmd_check(args: argparse.Namespace) -> int:
    """The pre-deploy gate; exit 1 printing every problem (file, record id, field, reason).

    The problems are those of :func:`load_catalog` (record model, regexes that do not compile or
    could backtrack exponentially, duplicate ids) and of
    :func:`~logsig.matchers.authoring.gate.gate_problems` (missing root cause or category, ids,
    misspelt fields, placeholders, regexes matching the empty string or the benign sample), plus
    directories holding no catalog file. Overrides of built-in ids are reported as notes.
    """
    from logsig.matchers.authoring.gate import builtin_benign, empty_paths, gate_problems, overrides

    paths: list[Path] = args.paths
    try:
        builtin = load_catalog([], builtin=True)
        catalog = load_catalog(paths, builtin=False) if paths else builtin
    except CatalogError as error:
        print(error)
        return 1
    benign = builtin_benign() + [line for path in args.benign
                                 for line in path.read_text(encoding="utf-8").splitlines() if line]
    problems = empty_paths(paths) + gate_problems(catalog, benign)
    for note in overrides(builtin, catalog) if paths else []:
        print(f"note: {note}")
    if problems:
        print(CatalogError(problems))
        return 1
    print(f"ok: {len(catalog.signatures)} signatures")
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
    catalog = _load(args.paths)
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
        catalog = _load(args.paths)
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
    catalog = load_catalog(paths, builtin=not args.no_builtin)
    lines = sys.stdin.read().splitlines() if args.line == "-" else [args.line]
    for line in lines:
        print(render(explain(line, catalog.signatures, nearest=args.nearest)))
    return 0


def _cmd_catalog(args: argparse.Namespace) -> int:
    return {"check": cmd_check, "test": cmd_test, "lint": cmd_lint}[args.catalog_command](args)


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {"catalog": _cmd_catalog, "explain": cmd_explain}
