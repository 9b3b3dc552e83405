"""Capture values parsed by the naming convention."""

import pytest

from logsig.matchers.catalog.captures import capture_values, parse_bytes, parse_seconds


class TestParse:
    @pytest.mark.parametrize(("text", "expected"), [
        ("2.00 GiB", 2 * 1024**3), ("512 MiB", 512 * 1024**2), ("0 bytes", 0), ("1.5 GB", 1_500_000_000),
        ("79.15 GiB", round(79.15 * 1024**3)), ("1,024 KiB", 1024 * 1024), ("huge", None), ("3 parsecs", None),
    ])
    def test_bytes(self, text: str, expected: int | None) -> None:
        """Sizes use binary factors for IEC units and decimal for SI units."""
        assert expected == parse_bytes(text)

    @pytest.mark.parametrize(("text", "expected"), [
        ("600000 milliseconds", 600.0), ("1800s", 1800.0), ("30 sec", 30.0), ("2 minutes", 120.0), ("soon", None),
    ])
    def test_seconds(self, text: str, expected: float | None) -> None:
        """Durations are converted to seconds."""
        assert expected == parse_seconds(text)

    def test_values_by_name(self) -> None:
        """Only captures whose names follow the convention and parse get values."""
        captures = {"requested_bytes": "1 KiB", "prompt_tokens": "4096", "xid": "79", "gpu_name": "H100",
                    "gpu_index": None, "limit_tokens": "many"}
        assert {"requested_bytes": 1024, "prompt_tokens": 4096, "xid": 79} == capture_values(captures)

    def test_scaled_bare_numbers_get_base_unit_names(self) -> None:
        """_ms, _mib and _gib captures become _seconds and _bytes values."""
        captures = {"timeout_ms": "1800000", "free_gib": "19.77", "chunk_mib": "2"}
        assert {"timeout_seconds": 1800.0, "free_bytes": round(19.77 * 1024**3), "chunk_bytes": 2 * 1024**2} == (
            capture_values(captures))
