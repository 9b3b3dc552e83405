"""The HTML report of `logsig scan --report` in real headless Chromium (Debian's, driven by
Playwright): it renders offline, the timeline plot is drawn with one trace per signature, every
section is filled, and a screenshot is taken. Chromium or Playwright missing: fails when CI=true,
skips otherwise (tests/deploy/support.py)."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from logsig.cli import main
from tests.deploy.support import missing
from tests.report.sample import sample_lines

VIEWPORT = {"width": 1280, "height": 1400}


@pytest.fixture(scope="module")
def browser() -> Any:
    """A headless Chromium (the ``chromium`` executable on PATH) launched through Playwright."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("playwright is not installed; install it with: pip install playwright")
    path = shutil.which("chromium")
    if path is None:
        missing("chromium not found on PATH; install it with: apt-get install chromium")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=path, headless=True, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The six-hour sample (tests/report/sample.py) as a log file."""
    logs = tmp_path_factory.mktemp("sample") / "sample.log"
    logs.write_text("\n".join(sample_lines()) + "\n", encoding="utf-8")
    return logs


@pytest.fixture(scope="module")
def report(sample: Path) -> Path:
    """The report of the sample."""
    report = sample.with_name("report.html")
    assert 0 == main(["scan", "--report", str(report), str(sample)])
    return report


@pytest.fixture(scope="module")
def primaries(sample: Path) -> set[str]:
    """The primary signatures of the incidents ``logsig scan`` writes for the sample (JSON lines)."""
    out = subprocess.run([sys.executable, "-m", "logsig", "scan", "--no-progress", str(sample)],
                         capture_output=True, text=True, check=True).stdout
    return {json.loads(line)["signature"]["id"] for line in out.splitlines()}


@pytest.fixture(scope="module")
def page(browser: Any, report: Path) -> Any:
    """The report opened in a page that records every request other than the file itself."""
    page = browser.new_page(viewport=VIEWPORT)
    page.requests_made = []
    page.on("request", lambda request: page.requests_made.append(request.url))
    page.goto(report.resolve().as_uri())
    page.wait_for_selector("#timeline .main-svg")
    yield page
    page.close()


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    assert b"\x89PNG\r\n\x1a\n" == data[:8]
    width, height = struct.unpack(">II", data[16:24])
    return width, height


class TestReportInChromium:
    def test_it_loads_nothing_from_the_network(self, page: Any, report: Path) -> None:
        """The only request is the file itself: plotly.js and styles are inlined."""
        assert [report.resolve().as_uri()] == page.requests_made

    def test_the_timeline_has_one_bar_trace_per_signature(self, page: Any, primaries: set[str]) -> None:
        """plotly drew the chart: one bar trace per signature listed in the top-signatures table, one
        row per primary signature of the scan's incidents."""
        traces = page.locator("#timeline .barlayer .trace").count()
        signatures = page.locator("table.signatures tbody tr").count()
        assert (len(primaries), len(primaries)) == (traces, signatures)

    def test_every_signature_has_its_group_with_advice(self, page: Any, primaries: set[str]) -> None:
        """Each incident group shows root cause and at least one ranked workaround."""
        groups = page.locator("section.group")
        workarounds = [groups.nth(i).locator("ol.workarounds li").count() for i in range(groups.count())]
        assert (len(primaries), True) == (groups.count(), all(n >= 1 for n in workarounds))

    def test_unclassified_templates_are_listed_with_their_generic_signature(self, page: Any) -> None:
        """The unclassified table lists masked templates, each with the generic signature that matched."""
        rows = page.locator("table.templates tbody tr")
        generic = {rows.nth(i).locator("td").nth(2).inner_text() for i in range(rows.count())}
        templates = {rows.nth(i).locator("td").nth(1).inner_text() for i in range(rows.count())}
        assert ({"generic/python-exception"}, True) == (
            generic, "AttributeError: '<STR>' object has no attribute '<STR>'" in templates)

    def test_a_screenshot_is_taken(self, page: Any, tmp_path: Path) -> None:
        """A PNG of the viewport is written, at the viewport's size."""
        shot = page.screenshot(path=str(tmp_path / "report.png"))
        assert ((VIEWPORT["width"], VIEWPORT["height"]), shot) == (
            png_size((tmp_path / "report.png").read_bytes()), (tmp_path / "report.png").read_bytes())
