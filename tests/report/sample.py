"""A deterministic sample of inference-server logs for the HTML report: six hours of Fluent Bit
records from vLLM, SGLang, TGI and Ollama pods, with known failures (catalog example lines), lines
only a generic signature matches (unclassified), and benign lines. Also renders a report to PNG
with headless Chromium: ``python -m tests.report.sample docs/report.png`` writes the README's
screenshot."""

from __future__ import annotations

import json
import os
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from logsig.matchers.catalog.loader import load_catalog

START = datetime(2026, 3, 2, 6, 0, tzinfo=UTC)
FAILURES = {
    "vllm": ["llm/vllm-cuda-oom-during-prefill", "nccl/watchdog-timeout", "gpu/xid-79-fallen-off-bus"],
    "sglang": ["llm/sglang-decode-out-of-memory"],
    "tgi": ["llm/tgi-warmup-not-enough-memory"],
    "ollama": ["llm/ollama-insufficient-system-memory"],
}
UNCLASSIFIED = ["AttributeError: 'RequestRouter' object has no attribute 'sample_{n}'",
                "ValueError: invalid literal for int() with base 10: 'x{n}'"]
BENIGN = "INFO {t} [loggers.py:80] Avg prompt throughput: {n}.0 tokens/s, Running: {n} reqs"


def _record(pod: str, line: str, moment: datetime) -> str:
    return json.dumps({"log": line, "time": moment.isoformat().replace("+00:00", "Z"),
                       "kubernetes": {"pod_name": pod, "namespace_name": "inference", "container_name": "server"}})


def sample_lines(seed: int = 7) -> list[str]:
    """The sample, one Fluent Bit record per line, in log-time order."""
    rng = random.Random(seed)
    by_id = load_catalog().by_id()
    out = []
    for minute in range(0, 360, 2):
        moment = START + timedelta(minutes=minute)
        out.append(_record("vllm-0", BENIGN.format(t=moment.isoformat(), n=rng.randint(1, 60)), moment))
        for server, ids in FAILURES.items():
            burst = 3 if server == "vllm" and 120 <= minute < 150 else 1
            for _ in range(burst):
                if rng.random() < 0.25:
                    sig = by_id[rng.choice(ids)]
                    pod = f"{server}-{rng.randint(0, 2)}"
                    out.append(_record(pod, rng.choice(sig.examples.match), moment + timedelta(seconds=rng.randint(0, 99))))
        if rng.random() < 0.2:
            line = rng.choice(UNCLASSIFIED).format(n=rng.randint(1, 9))
            out.append(_record(f"sglang-{rng.randint(0, 1)}", line, moment))
    return out


def screenshot(report: Path, png: Path, width: int = 1280, height: int = 1400) -> bytes:
    """Open ``report`` in headless Chromium (Debian's, through Playwright) and save a PNG of the top."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(report.resolve().as_uri())
            page.wait_for_selector("#timeline .main-svg")
            return page.screenshot(path=str(png), full_page=False)
        finally:
            browser.close()


def chromium_path() -> str:
    """The Chromium executable: Debian's ``chromium`` on PATH."""
    import shutil

    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise FileNotFoundError("chromium not found on PATH; install it with: apt-get install chromium")
    return found


def main(argv: list[str]) -> int:
    """Write the sample, scan it to a report, and save the report's screenshot at ``argv[0]``."""
    import tempfile

    from logsig.cli import main as logsig

    png = Path(argv[0]).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        Path("sample.log").write_text("\n".join(sample_lines()) + "\n", encoding="utf-8")
        logsig(["scan", "--report", "report.html", "sample.log"])
        screenshot(Path("report.html"), png)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
