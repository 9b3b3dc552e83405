"""The on-disk compile cache: entries verified, damaged or stale ones rebuilt, writes atomic and bounded."""

from __future__ import annotations

import os
from pathlib import Path

import msgpack
import pytest

from logsig.matchers.engine import compiled as compiled_module
from logsig.matchers.engine import store as store_module
from logsig.matchers.engine.engine import Engine, Match
from logsig.matchers.engine.store import MAGIC, CompileCache
from logsig.matchers.signature import Signature


def _sig(regex: str, sig_id: str) -> Signature:
    return Signature.model_validate({"id": sig_id, "signature": "s", "regex": regex})


SIGNATURES = [
    _sig(r"CUDA out of memory\. Tried to allocate (?P<requested>[\d.]+ [KMG]iB)", "t/oom"),
    _sig(r"(?i)nccl watchdog timeout: (?P<op>\w+)", "t/nccl"),
    _sig(r"Killed process (?P<pid>\d+)(?= \()", "t/killed"),
    _sig(r"(?:EngineCore died)?", "t/always"),
    _sig(r"Xid \d+ \S+ ÜBER", "t/unicode"),
]
LINES = [
    "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0)",
    "[rank0]: NCCL WATCHDOG TIMEOUT: AllReduce after 600000 ms",
    "Out of memory: Killed process 4242 (python3) total-vm:123kB",
    "INFO 12:00:01 engine step done",
    "NVRM: Xid 79 PCI ÜBER",
]


def _matches(engine: Engine) -> list[list[tuple[str, tuple[int, int], dict[str, str | None]]]]:
    def one(found: list[Match]) -> list[tuple[str, tuple[int, int], dict[str, str | None]]]:
        return [(m.signature.id, m.span, dict(m.captures)) for m in found]
    return [one(found) for found in engine.match_batch(LINES)]


def _fresh_engine(cache: CompileCache) -> Engine:
    """An Engine built as a new process would: nothing in the memory cache."""
    compiled_module.clear_cache()
    return Engine(SIGNATURES, cache=cache)


def _entry(cache: CompileCache) -> Path:
    (entry,) = cache.entries()
    return entry


@pytest.fixture
def cache(tmp_path: Path) -> CompileCache:
    """A compile cache in a temporary directory, holding the entry of SIGNATURES."""
    cache = CompileCache(tmp_path / "compiled", max_entries=4)
    _fresh_engine(cache)
    return cache


@pytest.fixture(scope="module")
def expected() -> list[list[tuple[str, tuple[int, int], dict[str, str | None]]]]:
    """The matches of SIGNATURES on LINES, compiled without any cache."""
    compiled_module.clear_cache()
    return _matches(Engine(SIGNATURES))


def _rewrite_payload(entry: Path, change: dict[str, object]) -> None:
    """Change fields of the entry's payload and re-sign it, so only the payload check can catch it."""
    import hashlib

    data = msgpack.unpackb(entry.read_bytes()[len(MAGIC) + 32:], raw=False, strict_map_key=False)
    payload = msgpack.packb({**data, **change}, use_bin_type=True)
    entry.write_bytes(MAGIC + hashlib.sha256(payload).digest() + payload)


class TestCompileCatalogOnDisk:
    def test_second_process_reads_the_entry_with_the_same_matches(self, cache: CompileCache,
                                                                  expected: list[object]) -> None:
        """A warm cache is read instead of compiled, and matches exactly as the compiled catalog."""
        engine = _fresh_engine(cache)
        assert (True, expected) == (engine.compiled.from_disk, _matches(engine))

    @pytest.mark.parametrize("offset", [0, len(MAGIC) + 3, len(MAGIC) + 40, -1])
    def test_flipped_byte_is_rebuilt_with_the_same_matches(self, cache: CompileCache, expected: list[object],
                                                           offset: int) -> None:
        """One flipped byte anywhere (magic, digest, payload) makes the entry a miss; it is rebuilt and rewritten."""
        entry = _entry(cache)
        data = bytearray(entry.read_bytes())
        data[offset] ^= 0x5A
        entry.write_bytes(bytes(data))
        rebuilt = _fresh_engine(cache)
        assert (False, expected, True) == (rebuilt.compiled.from_disk, _matches(rebuilt),
                                           _fresh_engine(cache).compiled.from_disk)

    @pytest.mark.parametrize("keep", [0, 10, len(MAGIC) + 32, -100])
    def test_truncated_entry_is_rebuilt(self, cache: CompileCache, expected: list[object], keep: int) -> None:
        """An entry cut short (as by a crash or a full disk) is a miss and is rebuilt."""
        entry = _entry(cache)
        entry.write_bytes(entry.read_bytes()[:keep])
        rebuilt = _fresh_engine(cache)
        assert (False, expected) == (rebuilt.compiled.from_disk, _matches(rebuilt))

    def test_changed_library_version_is_a_miss(self, cache: CompileCache, expected: list[object],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
        """Another hyperscan version gives another key: compiled again, a second entry written."""
        other = {**compiled_module.versions(), "hyperscan": "0.0.0-other"}
        monkeypatch.setattr(compiled_module, "versions", lambda: other)
        rebuilt = _fresh_engine(cache)
        assert (False, expected, 2) == (rebuilt.compiled.from_disk, _matches(rebuilt), len(cache.entries()))

    def test_stale_entry_under_the_current_key_is_rebuilt(self, cache: CompileCache, expected: list[object]) -> None:
        """An entry recording other versions (renamed or copied in) is not trusted, even with a valid digest."""
        entry = _entry(cache)
        _rewrite_payload(entry, {"versions": {**compiled_module.versions(), "python": "3.0.0"}})
        rebuilt = _fresh_engine(cache)
        assert (False, expected) == (rebuilt.compiled.from_disk, _matches(rebuilt))

    def test_entry_of_other_regexes_is_rebuilt(self, cache: CompileCache, expected: list[object]) -> None:
        """An entry whose translations are not the catalog's regexes is not used."""
        entry = _entry(cache)
        data = msgpack.unpackb(entry.read_bytes()[len(MAGIC) + 32:], raw=False, strict_map_key=False)
        _rewrite_payload(entry, {"translations": list(reversed(data["translations"]))})
        rebuilt = _fresh_engine(cache)
        assert (False, expected) == (rebuilt.compiled.from_disk, _matches(rebuilt))

    def test_damaged_database_is_rebuilt(self, cache: CompileCache, expected: list[object]) -> None:
        """A Vectorscan database that does not deserialise (re-signed, so only hyperscan can tell) is rebuilt."""
        entry = _entry(cache)
        _rewrite_payload(entry, {"database": b"\x00" * 64})
        rebuilt = _fresh_engine(cache)
        assert (False, expected) == (rebuilt.compiled.from_disk, _matches(rebuilt))


class TestCompileCache:
    def test_write_then_read_gives_the_payload_and_leaves_no_temporary_file(self, tmp_path: Path) -> None:
        """An entry reads back as written; the directory holds the entry file only."""
        cache = CompileCache(tmp_path / "c")
        cache.write("ab" * 32, b"payload")
        assert (b"payload", ["ab" * 32 + store_module.SUFFIX]) == (
            cache.read("ab" * 32), sorted(p.name for p in (tmp_path / "c").iterdir()))

    def test_least_recently_used_entries_beyond_the_bound_are_pruned(self, tmp_path: Path) -> None:
        """With room for two, writing a third removes the entry used longest ago (a read counts as a use)."""
        cache = CompileCache(tmp_path, max_entries=2)
        for age, key in enumerate(["a", "b"]):
            cache.write(key, key.encode())
            os.utime(cache.path(key), ns=(10**18 + age, 10**18 + age))
        cache.read("a")
        cache.write("c", b"c")
        assert ["a", "c"] == sorted(p.stem for p in cache.entries())

    def test_unwritable_directory_is_reported_and_matching_still_works(self, tmp_path: Path,
                                                                       expected: list[object]) -> None:
        """A cache directory that cannot be created records why; the catalog is compiled all the same."""
        blocker = tmp_path / "file"
        blocker.write_text("not a directory")
        cache = CompileCache(blocker / "compiled")
        engine = _fresh_engine(cache)
        assert (expected, True) == (_matches(engine), "cannot write the compile cache" in (cache.last_error or ""))
