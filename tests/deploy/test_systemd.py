"""Checks of deploy/systemd/logsig.service: systemd-analyze accepts it, its hardening scores well,
and it restarts on failure and waits longer than logsig's drain when stopping."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

from logsig.config import Settings
from tests.deploy.support import DEPLOY, run_tool

UNIT = DEPLOY / "systemd" / "logsig.service"
EXEC = "/opt/logsig/bin/logsig"
MAX_EXPOSURE = 2.0


def directives() -> dict[str, list[str]]:
    """``{key: [values]}`` of the unit's ``Key=value`` lines, in order."""
    found: dict[str, list[str]] = {}
    for line in UNIT.read_text(encoding="utf-8").splitlines():
        if "=" in line and not line.lstrip().startswith(("#", ";")):
            key, value = line.split("=", 1)
            found.setdefault(key.strip(), []).append(value.strip())
    return found


def installed_copy(tmp_path: Path) -> Path:
    """The unit with ExecStart pointing at an installed logsig (systemd-analyze checks it exists)."""
    logsig = shutil.which("logsig", path=str(Path(sys.executable).parent)) or shutil.which("logsig") or "/bin/true"
    path = tmp_path / UNIT.name
    path.write_text(UNIT.read_text(encoding="utf-8").replace(EXEC, logsig), encoding="utf-8")
    return path


def seconds(value: str) -> float:
    """A systemd time span such as ``40``, ``40s`` or ``1min`` in seconds."""
    units = {"": 1, "s": 1, "sec": 1, "min": 60, "m": 60, "h": 3600}
    return sum(float(n) * units[u] for n, u in re.findall(r"(\d+(?:\.\d+)?)\s*([a-z]*)", value))


class TestUnit:
    def test_systemd_analyze_verify_reports_nothing(self, systemd_analyze: str, tmp_path: Path) -> None:
        """systemd-analyze verify accepts the unit without a warning."""
        result = run_tool(systemd_analyze, "verify", str(installed_copy(tmp_path)))
        assert (0, "") == (result.returncode, result.stdout + result.stderr)

    def test_hardening_exposure_is_low(self, systemd_analyze: str, tmp_path: Path) -> None:
        """systemd-analyze security rates the unit's exposure at 2.0 or less (of 10)."""
        result = run_tool(systemd_analyze, "security", "--offline=yes", str(installed_copy(tmp_path)))
        found = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", result.stdout)
        assert found is not None, result.stdout + result.stderr
        assert float(found.group(1)) <= MAX_EXPOSURE

    def test_runs_unprivileged_on_a_read_only_system(self) -> None:
        """A dynamic user, strict system protection and no new privileges."""
        unit = directives()
        assert (["yes"], ["strict"], ["yes"], [""]) == (
            unit["DynamicUser"], unit["ProtectSystem"], unit["NoNewPrivileges"], unit["CapabilityBoundingSet"])

    def test_restarts_on_failure_and_outwaits_the_drain(self) -> None:
        """Restart=on-failure, and TimeoutStopSec exceeds logsig's default shutdown_timeout_seconds."""
        unit = directives()
        drain = Settings.model_fields["shutdown_timeout_seconds"].default
        assert (["on-failure"], True) == (unit["Restart"], seconds(unit["TimeoutStopSec"][0]) > drain)

    def test_starts_logsig_with_the_settings_file(self) -> None:
        """ExecStart runs `logsig run --config /etc/logsig/logsig.yaml`."""
        assert [f"{EXEC} run --config /etc/logsig/logsig.yaml"] == directives()["ExecStart"]
