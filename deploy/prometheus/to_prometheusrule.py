"""Write deploy/kubernetes/base/prometheusrule.yaml from deploy/prometheus/rules.yml, and copy
rules.yml and deploy/grafana/logsig-dashboard.json into the Helm chart (deploy/helm/logsig/files/:
Helm reads only files inside the chart).

The PrometheusRule (prometheus-operator, ``monitoring.coreos.com/v1``) carries the rule file's
``groups`` unchanged in ``spec.groups``; tests/deploy/test_prometheus.py fails when the two differ.

Usage: ``python deploy/prometheus/to_prometheusrule.py [--check]``; ``--check`` exits 1 when the
file on disk is not what this script would write.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

DEPLOY = Path(__file__).resolve().parent.parent
RULES = DEPLOY / "prometheus" / "rules.yml"
TARGET = DEPLOY / "kubernetes" / "base" / "prometheusrule.yaml"
CHART_FILES = DEPLOY / "helm" / "logsig" / "files"
CHART_COPIES = {RULES: CHART_FILES / "rules.yml",
                DEPLOY / "grafana" / "logsig-dashboard.json": CHART_FILES / "logsig-dashboard.json"}
HEADER = (
    "# Generated from deploy/prometheus/rules.yml by deploy/prometheus/to_prometheusrule.py;\n"
    "# edit rules.yml and rerun the script. Prometheus selects PrometheusRules by label\n"
    "# (ruleSelector): add the label your Prometheus expects, e.g. release: kube-prometheus-stack.\n"
)


class _BlockDumper(yaml.SafeDumper):
    """A SafeDumper that writes multi-line strings as ``|`` blocks, as rules.yml does."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str)


def prometheus_rule(groups: list[dict[str, Any]]) -> dict[str, Any]:
    """The PrometheusRule object holding ``groups`` (the rule file's list of rule groups)."""
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": "logsig", "labels": {"app.kubernetes.io/name": "logsig"}},
        "spec": {"groups": groups},
    }


def render(rules_path: Path = RULES) -> str:
    """The text of prometheusrule.yaml for the rule file at ``rules_path``."""
    groups = yaml.safe_load(rules_path.read_text(encoding="utf-8"))["groups"]
    body = yaml.dump(prometheus_rule(groups), Dumper=_BlockDumper, sort_keys=False, width=200)
    return HEADER + body


def outputs() -> dict[Path, bytes]:
    """Every file this script writes, with the content it writes."""
    return {TARGET: render().encode("utf-8"), **{copy: source.read_bytes() for source, copy in CHART_COPIES.items()}}


def main(argv: list[str]) -> int:
    """Write the targets (exit 0), or with ``--check`` compare them (exit 1 naming each stale one)."""
    if "--check" in argv:
        stale = [path for path, data in outputs().items() if not path.is_file() or path.read_bytes() != data]
        for path in stale:
            print(f"{path} is stale: run python {Path(__file__).name}", file=sys.stderr)
        return 1 if stale else 0
    for path, data in outputs().items():
        path.write_bytes(data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
