"""Start-up to first match: the built-in catalog alone against +1,000 signatures, warm and cold compile cache.

Each run is a whole ``logsig scan`` process over a one-line file holding a real failure line; the
figure is the wall time from the process start to its first incident on stdout (interpreter
start, imports, settings, catalog load and compile or cache read, first match). Four
configurations, interleaved round by round so that the shared machine's load hits them alike:

- ``builtin warm``: the built-in catalog, its compiled form in the cache (the baseline);
- ``builtin cold``: the built-in catalog, an empty cache directory;
- ``+1000 warm`` / ``+1000 cold``: the built-in catalog plus 1,000 generated signatures
  (``bench/gen_catalog.py`` variants, ten files of 100 records), cache warm or empty.

Prints the median and the fastest run of each, then the ratios of medians against ``builtin
warm``. Usage: ``python bench/bench_startup.py [--rounds 7] [--extra 1000]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gen_catalog import catalog  # noqa: E402

from logsig.matchers.catalog.loader import load_catalog  # noqa: E402

LINE = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB"
FILE_RECORDS = 100


def write_extra(folder: Path, extra: int) -> Path:
    """``extra`` generated signatures (none of them built-in ids) as files of FILE_RECORDS records."""
    builtin = load_catalog().signatures
    records = [sig.to_record() for sig in catalog(len(builtin) + extra, list(builtin))[len(builtin):]]
    folder.mkdir(parents=True, exist_ok=True)
    for start in range(0, len(records), FILE_RECORDS):
        chunk = records[start:start + FILE_RECORDS]
        (folder / f"extra-{start // FILE_RECORDS:03d}.json").write_text(json.dumps(chunk), encoding="utf-8")
    return folder


def first_match_seconds(args: list[str]) -> float:
    """Wall time from starting ``logsig scan ARGS`` to its first line on stdout."""
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "logsig", "scan", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdout is not None
    line = process.stdout.readline()
    elapsed = time.perf_counter() - started
    process.stdout.read()
    if process.wait() != 0 or not line:
        raise SystemExit(f"logsig scan {' '.join(args)} found no incident")
    return elapsed


def main() -> None:
    """Run the four configurations ``--rounds`` times, interleaved, and print figures and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--extra", type=int, default=1000)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        log = folder / "one.log"
        log.write_text(LINE + "\n", encoding="utf-8")
        extra = write_extra(folder / "extra", options.extra)
        plus = f"+{options.extra}"
        catalogs = {"builtin": [], plus: ["--catalog", str(extra)]}
        for name, args in catalogs.items():
            subprocess.run([sys.executable, "-m", "logsig", "catalog", "warm", *args, "--cache-dir",
                            str(folder / f"warm-{name}")], check=True, stdout=subprocess.DEVNULL)
        times: dict[str, list[float]] = {}
        for _ in range(options.rounds):
            for name, args in catalogs.items():
                times.setdefault(f"{name} warm", []).append(
                    first_match_seconds([str(log), *args, "--cache-dir", str(folder / f"warm-{name}")]))
                cold = folder / "cold"
                shutil.rmtree(cold, ignore_errors=True)
                times.setdefault(f"{name} cold", []).append(
                    first_match_seconds([str(log), *args, "--cache-dir", str(cold)]))
    report(times, plus)


def report(times: dict[str, list[float]], plus: str) -> None:
    """Median and fastest run per configuration, then ratios of medians to ``builtin warm``."""
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"start-up to first match, {len(times['builtin warm'])} runs each (seconds)")
    print(f"  {'configuration':<16}{'median':>8}{'fastest':>9}")
    for name in ("builtin warm", "builtin cold", f"{plus} warm", f"{plus} cold"):
        print(f"  {name:<16}{medians[name]:>8.2f}{min(times[name]):>9.2f}")
    base = medians["builtin warm"]
    print(f"{plus} warm / builtin warm: {medians[f'{plus} warm'] / base:.2f}  (goal <= 1.5)")
    print(f"{plus} cold / builtin warm: {medians[f'{plus} cold'] / base:.2f}")
    print(f"builtin cold / builtin warm: {medians['builtin cold'] / base:.2f}")
    print(f"{plus} warm / builtin cold: {medians[f'{plus} warm'] / medians['builtin cold']:.2f}")


if __name__ == "__main__":
    main()
