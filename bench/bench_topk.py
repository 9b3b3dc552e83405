"""Peak memory of the unclassified top-K on a stream of distinct error lines, against a dict of counts.

    .venv/bin/python bench/bench_topk.py [--lines 1000000] [--capacity 1000]

Every line is distinct (random words, so each has its own template and fingerprint): the worst
case for any per-template table. Each variant runs in its own child process over the same
seeded stream and reports its peak RSS (``ru_maxrss``):

- ``idle``: imports and the line generator only (the floor);
- ``dict``: a plain ``dict`` of counts per fingerprint (what an unbounded table costs at least);
- ``topk``: ``logsig.discovery.topk.TopK`` (count, first/last seen, example line, pods).

Lines carry no digits or ids, so ``template(line) == line`` (checked on the first 1,000); each
line is fingerprinted with ``fingerprint_of_template`` as the daemon does after templating.
Prints peak RSS, growth over ``idle``, the ratio of growths, and CPU microseconds per line.
"""

from __future__ import annotations

import argparse
import random
import resource
import string
import subprocess
import sys
import time
from collections.abc import Iterator

from logsig.discovery.topk import TopK
from logsig.group.template import fingerprint_of_template, template

PODS = [f"vllm-llama3-8b-6d9f7c8b5-{suffix}" for suffix in ("x2k4q", "b7rtz", "m9wpl", "q4hcn")]
VARIANTS = ("idle", "dict", "topk")


def error_lines(n: int, seed: int = 1) -> Iterator[str]:
    """``n`` distinct error lines made of random lowercase words, deterministic for ``seed``."""
    rng = random.Random(seed)
    letters = string.ascii_lowercase
    for _ in range(n):
        words = ["".join(rng.choices(letters, k=rng.randint(4, 10))) for _ in range(4)]
        yield f"RuntimeError: {words[0]} {words[1]} failed in {words[2]}_{words[3]}"


def run(variant: str, lines: int, capacity: int) -> None:
    """Feed the stream to one variant and print ``variant peak_kib cpu_seconds tracked``."""
    for line in error_lines(1000):
        assert template(line) == line, line
    started = time.process_time()
    tracked = 0
    if variant == "dict":
        counts: dict[str, int] = {}
        for line in error_lines(lines):
            fp = fingerprint_of_template(line)
            counts[fp] = counts.get(fp, 0) + 1
        tracked = len(counts)
    elif variant == "topk":
        topk = TopK(capacity)
        for i, line in enumerate(error_lines(lines)):
            topk.add(fingerprint_of_template(line), line, line=line, pod=PODS[i % 4], seen_at=float(i),
                     signature_id="generic/python-exception")
        tracked = len(topk)
    else:
        for line in error_lines(lines):
            fingerprint_of_template(line)
    cpu = time.process_time() - started
    print(variant, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, f"{cpu:.3f}", tracked)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--capacity", type=int, default=1000)
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.variant:
        run(args.variant, args.lines, args.capacity)
        return
    results = {}
    for variant in VARIANTS:
        out = subprocess.run([sys.executable, __file__, "--variant", variant, "--lines", str(args.lines),
                              "--capacity", str(args.capacity)], check=True, capture_output=True, text=True)
        name, peak, cpu, tracked = out.stdout.split()
        results[name] = (int(peak), float(cpu), int(tracked))
    report(results, args.lines, args.capacity)


def report(results: dict[str, tuple[int, float, int]], lines: int, capacity: int) -> None:
    """Print the table: peak RSS MiB, growth over idle, tracked entries, CPU us per line."""
    idle = results["idle"][0]
    print(f"{lines:,} distinct error lines, TopK capacity {capacity:,}")
    print(f"{'variant':8} {'peak RSS MiB':>13} {'growth MiB':>11} {'tracked':>10} {'us/line':>8}")
    for name, (peak, cpu, tracked) in results.items():
        print(f"{name:8} {peak / 1024:13.1f} {(peak - idle) / 1024:11.1f} {tracked:10,} {cpu / lines * 1e6:8.2f}")
    grow_dict = results["dict"][0] - idle
    grow_topk = max(results["topk"][0] - idle, 1)
    print(f"dict growth / topk growth: {grow_dict / grow_topk:.1f}x")


if __name__ == "__main__":
    main()
