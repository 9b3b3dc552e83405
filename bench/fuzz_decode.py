"""Fuzz the decode stage: 10^6 generated hostile records (logsig.fuzz) through ``decode_record``.

    python bench/fuzz_decode.py [--records 1000000] [--seed 0]

Prints records per kind, failures per reason, crashes (exceptions out of decode_record: must be 0)
and records a second, against a baseline of the same count of valid Fluent Bit lines decoded in the
same run (the ratio is what to compare across machines). Bombs are generated smaller than in the
daemon test (decode.max_value_bytes and max_events_per_record scaled down with them) to keep the
run short; they take the same paths.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

import orjson

from logsig.decode import DecodeSettings, decode_record
from logsig.fuzz import OOM, fuzz_records
from logsig.records import Origin, RawRecord


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    settings = DecodeSettings(max_value_bytes=64 * 1024, max_events_per_record=100)
    kinds, reasons, crashes, fuzz_s = Counter[str](), Counter[str](), 0, 0.0
    for i, fuzzed in enumerate(fuzz_records(args.records, args.seed, bomb_bytes=65 * 1024, bomb_events=101)):
        kinds[fuzzed.kind] += 1
        start = time.perf_counter()
        record = RawRecord(fuzzed.value, Origin(topic="fuzz", partition=0, offset=i), fuzzed.key, fuzzed.headers)
        try:
            result = decode_record(record, settings)
        except Exception:  # the point of the bench: count what escapes
            crashes += 1
            continue
        finally:
            fuzz_s += time.perf_counter() - start
        reasons[result.failure.reason if result.failure else "decoded"] += 1
    value = orjson.dumps({"log": OOM, "stream": "stderr"})
    start = time.perf_counter()
    for i in range(args.records):
        decode_record(RawRecord(value, Origin(topic="fuzz", partition=0, offset=i)), settings)
    base_s = time.perf_counter() - start
    print(f"records: {args.records} (seed {args.seed}); per kind: {dict(sorted(kinds.items()))}")
    print(f"outcomes: {dict(sorted(reasons.items()))}")
    print(f"crashes: {crashes}")
    print(f"fuzzed: {args.records / fuzz_s:,.0f} records/s; valid Fluent Bit lines: {args.records / base_s:,.0f} "
          f"records/s; fuzzed/valid time ratio {fuzz_s / base_s:.2f}")


if __name__ == "__main__":
    main()
