"""The text form of ``logsig scan``: one block per group when it opens, one line when it ends."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsig.cli import main


class TestTextFormat:
    def test_a_group_is_shown_once_and_its_end_in_one_line(self, tmp_path: Path,
                                                            capsysbinary: pytest.CaptureFixture[bytes]) -> None:
        """Two OOM lines of one file: one opened block, then one resolved line counting both."""
        path = tmp_path / "oom.log"
        path.write_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n" * 2,
                        encoding="utf-8")
        assert 0 == main(["scan", "--format", "text", str(path)])
        out = capsysbinary.readouterr().out.decode()
        assert 1 == out.count("[error] cuda/torch-oom")
        assert f"  resolved: cuda/torch-oom  {path}:2  2 occurrence(s)\n" in out
