"""The reload's answer from the child process: pickled in slices, read back whole and in order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logsig.config import CatalogSettings
from logsig.daemon import compile_process
from logsig.daemon.compile_process import prepare, unpickle


class TestUnpickle:
    def test_slices_give_back_every_signature_in_catalog_order(
            self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Five signatures in slices of two are three parts after the head, read back as the same catalog."""
        monkeypatch.setattr(compile_process, "SLICE_SIGNATURES", 2)
        path = tmp_path / "site.json"
        path.write_text(json.dumps([{"id": f"site/s{i}", "signature": f"s{i}", "regex": f"s{i}x", "category": "runtime_error", "root_cause": "It broke."} for i in range(5)]))
        settings = CatalogSettings(builtin=False, paths=[path], cache_max_entries=0)
        expected = prepare(settings, 65536)
        parts = compile_process._pickled(prepare, settings, 65536)
        assert (4, expected) == (len(parts), unpickle(parts))

    def test_no_parts_is_an_error(self) -> None:
        """An empty answer is refused with a ValueError, not read as an empty catalog."""
        with pytest.raises(ValueError, match="no answer"):
            unpickle([])
