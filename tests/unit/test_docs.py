"""The documentation holds together: links resolve, metrics are documented, examples run."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from logsig.cli import main
from logsig.records import FAILURE_REASONS
from logsig.telemetry import Metrics

ROOT = Path(__file__).parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
UPSTREAM_PAGES = {"docs/specification.md"}  # opentelemetry-proto's, cited by logsig.decode.otlp
METRIC_CLASSES = {"Counter", "Gauge", "Histogram", "Summary", "Info", "Enum"}

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
_MARKUP = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_NOT_SLUG = re.compile(r"[^\w\- ]")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(text: str) -> list[str]:
    """The lines of a Markdown page outside fenced code blocks."""
    out, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            out.append(line)
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: rendered text, lower case, punctuation dropped, spaces to hyphens."""
    text = _MARKUP.sub(r"\1", heading)
    text = _CODE_SPAN.sub(lambda m: m.group(2), text).replace("*", "")
    return _NOT_SLUG.sub("", text.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading anchor of a page, repeated headings numbered ``-1``, ``-2`` as GitHub does."""
    seen: dict[str, int] = {}
    out = set()
    for line in prose_lines(text):
        match = _HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def link_targets(text: str) -> list[str]:
    """Targets of the inline and reference links of a page, outside code."""
    out = []
    for line in prose_lines(text):
        plain = _CODE_SPAN.sub("", line)
        out.extend(m.group(1) for m in _INLINE_LINK.finditer(plain))
        reference = _REFERENCE.match(plain)
        if reference:
            out.append(reference.group(1))
    return out


def broken_links(page: Path) -> list[str]:
    """The relative links of ``page`` whose file or ``#anchor`` does not exist."""
    out = []
    for target in link_targets(page.read_text(encoding="utf-8")):
        if _SCHEME.match(target):
            continue
        path, _, fragment = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            out.append(f"{target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest.read_text(encoding="utf-8")):
            out.append(f"{target}: no such anchor")
    return out


def documented_metrics() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Rows of the table in docs/metrics.md: exposed name -> (type, fixed labels)."""
    rows = {}
    for line in (DOCS / "metrics.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        name = re.fullmatch(r"`(logsig_\w+)`", cells[0]) if len(cells) >= 3 else None
        if name:
            labels = tuple(re.findall(r"`([a-z_]+)`", cells[2]))
            rows[name.group(1)] = (cells[1], labels)
    return rows


def registered_metrics() -> dict[str, tuple[str, tuple[str, ...]]]:
    """What :class:`Metrics` registers: exposed name -> (type, labels), no source labels."""
    registry = CollectorRegistry()
    Metrics(registry, source_labels=())
    out = {}
    for collector in registry._collector_to_names:
        kind, name = collector._type, collector._name  # type: ignore[attr-defined]
        exposed = f"{name}_total" if kind == "counter" else name
        out[exposed] = (kind, tuple(collector._labelnames))  # type: ignore[attr-defined]
    return out


def constructed_metric_names() -> set[str]:
    """Names passed to a prometheus_client metric constructor anywhere under logsig/, as exposed."""
    out = set()
    for path in (ROOT / "logsig").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)):
                continue
            func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if func in METRIC_CLASSES and isinstance(node.args[0].value, str):
                out.add(node.args[0].value + ("_total" if func == "Counter" else ""))
    return out


def cited_sources() -> list[Path]:
    """The code and test data that cite the docs: logsig/**/*.py, bench/*.py, tests/data/envelopes/*.json."""
    return [*(ROOT / "logsig").rglob("*.py"), *(ROOT / "bench").glob("*.py"),
            *(ROOT / "tests/data/envelopes").glob("*.json")]


def record_format_sections() -> set[str]:
    """Section numbers of docs/record-formats.md: ``"2"`` for ``## 2. ...``, ``"2.5"`` for ``### 2.5 ...``."""
    text = (DOCS / "record-formats.md").read_text(encoding="utf-8")
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.?\s", text, re.MULTILINE))


def unresolved_citations(path: Path) -> list[str]:
    """Citations ``docs/<page>.md`` and ``docs/record-formats.md §N.M`` in ``path`` that name nothing."""
    text = path.read_text(encoding="utf-8")
    pages = set(re.findall(r"docs/[\w-]+\.md", text)) - UPSTREAM_PAGES
    out = [f"{path.name}: {page}" for page in sorted(pages) if not (ROOT / page).exists()]
    sections = record_format_sections()
    for cited in re.findall(r"record-formats\.md(?:``)? ((?:§[\d.]+(?:, )?)+)", text):
        out.extend(f"{path.name}: {s}" for s in re.findall(r"§(\d+(?:\.\d+)?)", cited) if s not in sections)
    return out


def first_yaml_block(text: str) -> str:
    """The body of the first ```yaml fenced block of a page."""
    match = re.search(r"^```yaml\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    assert match is not None, "no yaml block"
    return match.group(1)


class TestSlug:
    def test_code_and_punctuation_are_dropped(self) -> None:
        """Backticks, parentheses and colons vanish and spaces become hyphens."""
        assert "settings-decode-section" == slug("Settings (`decode` section)")

    def test_section_numbers_lose_their_dots(self) -> None:
        """A numbered heading keeps its digits without the dot."""
        assert "25-fluent-bit-format-msgpack" == slug("2.5 Fluent Bit `format msgpack`")

    def test_underscores_and_hyphens_stay(self) -> None:
        """Word characters and hyphens are kept as written, in lower case."""
        assert "on-call-max_lines" == slug("On-call MAX_LINES")

    def test_repeated_headings_are_numbered(self) -> None:
        """The second and third headings of the same text get -1 and -2."""
        assert {"a", "a-1", "a-2"} == anchors("# A\n## A\n### A\n")

    def test_headings_in_code_blocks_are_not_anchors(self) -> None:
        """A shell comment inside a fence is not a heading."""
        assert {"real"} == anchors("# Real\n```sh\n# in another shell\n```\n")


class TestLinks:
    @pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
    def test_every_relative_link_resolves(self, page: Path) -> None:
        """Every relative link and #anchor of README.md and docs/*.md points at something that exists."""
        assert [] == broken_links(page)

    def test_a_broken_link_is_reported(self, tmp_path: Path) -> None:
        """A missing file and a missing anchor are both found; links in code are ignored."""
        (tmp_path / "b.md").write_text("# Here\n", encoding="utf-8")
        page = tmp_path / "a.md"
        page.write_text("[x](b.md#here) [y](b.md#gone) [z](c.md) `[q](d.md)`\n```\n[w](e.md)\n```\n",
                        encoding="utf-8")
        assert ["b.md#gone: no such anchor", "c.md: no such file"] == broken_links(page)

    def test_citations_in_code_and_test_data_resolve(self) -> None:
        """Every docs/*.md page and record-formats section cited by the code and the envelope fixtures exists."""
        assert [] == [problem for path in cited_sources() for problem in unresolved_citations(path)]

    def test_a_wrong_citation_is_reported(self, tmp_path: Path) -> None:
        """A missing page and a missing section are both found, an existing section is not."""
        path = tmp_path / "x.json"
        path.write_text('{"reference": "docs/record-formats.md §2.5, §99.1", "see": "docs/nowhere.md"}', encoding="utf-8")
        assert ["x.json: docs/nowhere.md", "x.json: 99.1"] == unresolved_citations(path)

    def test_the_readme_links_every_page_of_docs(self) -> None:
        """Each docs/*.md page is reachable from the README."""
        linked = {target.partition("#")[0] for target in link_targets((ROOT / "README.md").read_text())}
        assert {f"docs/{p.name}" for p in DOCS.glob("*.md")} <= linked

    def test_the_readme_stays_a_front_page(self) -> None:
        """README.md stays a front page (about 8 KB, at most 10 KB); the long sections live in docs/."""
        assert len((ROOT / "README.md").read_bytes()) <= 10_000


class TestMetricsDoc:
    def test_every_registered_metric_is_documented_with_its_type_and_labels(self) -> None:
        """docs/metrics.md lists exactly the metrics Metrics registers, each with its type and labels."""
        assert registered_metrics() == documented_metrics()

    def test_every_metric_constructed_in_the_code_is_documented(self) -> None:
        """A metric created anywhere under logsig/ has a row in docs/metrics.md."""
        assert set() == constructed_metric_names() - set(documented_metrics())

    def test_the_failure_reasons_are_the_codes(self) -> None:
        """The failure reasons docs/metrics.md lists are FAILURE_REASONS, in order."""
        text = (DOCS / "metrics.md").read_text(encoding="utf-8")
        section = text[text.index("## Failure reasons"):text.index("## Logs")]
        listed = [r for r in re.findall(r"`([a-z0-9_]+)`", section) if r != "reason" and not r.startswith("logsig_")]
        assert list(FAILURE_REASONS) == listed


class TestSignatureExample:
    def test_first_example_is_short_yaml(self) -> None:
        """The first signature example in docs/signatures.md is a YAML record of at most 30 lines."""
        lines = first_yaml_block((DOCS / "signatures.md").read_text(encoding="utf-8")).splitlines()
        assert "id: " == lines[0][:4]
        assert len(lines) <= 30

    def test_first_example_passes_check_and_test(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """`logsig catalog check` and `logsig catalog test` accept the example record."""
        path = tmp_path / "example.yaml"
        path.write_text(first_yaml_block((DOCS / "signatures.md").read_text(encoding="utf-8")), encoding="utf-8")
        assert (0, 0) == (main(["catalog", "check", str(path)]), main(["catalog", "test", str(path)]))
