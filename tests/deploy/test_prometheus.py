"""Checks of deploy/prometheus: promtool, the unit tests' coverage, runbooks, selectors, and the
PrometheusRule copy in deploy/kubernetes/base."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

from logsig.matchers.catalog.loader import load_catalog
from tests.deploy.support import (
    DEPLOY,
    K8S_BASE,
    RULE_TESTS,
    RULES,
    alerts,
    load_yaml,
    recording_rules,
    rule_groups,
    rule_test_cases,
    run_tool,
)

RUNBOOKS = DEPLOY / "prometheus" / "runbooks.md"
RUNBOOK_BASE = "https://git.example.com/logsig/blob/main/deploy/prometheus/runbooks.md"
PROMETHEUS_RULE = K8S_BASE / "prometheusrule.yaml"
DURATION = re.compile(r"^(0|(\d+y)?(\d+w)?(\d+d)?(\d+h)?(\d+m)?(\d+s)?(\d+ms)?)$")
MATCHER = re.compile(r'(\w+)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')
SELECTOR = re.compile(r"\{([^}]*)\}")


def _generator() -> ModuleType:
    path = DEPLOY / "prometheus" / "to_prometheusrule.py"
    spec = importlib.util.spec_from_file_location("to_prometheusrule", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def selectors(expr: str) -> list[list[tuple[str, str, str]]]:
    """The label matchers of each ``{...}`` selector in ``expr``: ``[[(label, op, value)]]``."""
    return [MATCHER.findall(body) for body in SELECTOR.findall(expr)]


def selected(expr: str, labels: dict[str, str]) -> bool:
    """True if any selector of ``expr`` matches ``labels`` (PromQL semantics: anchored regexes)."""
    def holds(label: str, op: str, value: str) -> bool:
        actual = labels.get(label, "")
        return {"=": actual == value, "!=": actual != value,
                "=~": re.fullmatch(value, actual) is not None,
                "!~": re.fullmatch(value, actual) is None}[op]
    return any(all(holds(*m) for m in sel) for sel in selectors(expr))


def catalog_labels() -> dict[str, dict[str, str]]:
    """``{signature id: its counter labels}`` for the built-in catalog."""
    return {sig.id: {"signature_id": sig.id, "category": sig.category, "domain": sig.domain}
            for sig in load_catalog().signatures}


class TestRuleFile:
    def test_promtool_check_rules_passes(self, promtool: str) -> None:
        """promtool accepts rules.yml: valid YAML, PromQL and templates."""
        result = run_tool(promtool, "check", "rules", str(RULES))
        assert (0, "") == (result.returncode, result.stderr), result.stdout

    def test_promtool_unit_tests_pass(self, promtool: str) -> None:
        """Every promtool unit test under deploy/prometheus/tests passes."""
        result = run_tool(promtool, "test", "rules", *(str(p) for p in RULE_TESTS))
        assert 0 == result.returncode, result.stdout + result.stderr

    def test_every_alert_has_a_firing_case_and_a_quiet_case(self) -> None:
        """Each alert is tested firing and tested staying silent."""
        fires: set[str] = set()
        quiet: set[str] = set()
        for case in rule_test_cases():
            (fires if case.get("exp_alerts") else quiet).add(case["alertname"])
        names = set(alerts())
        assert (names, names) == (fires & names, quiet & names)

    def test_unit_tests_name_only_existing_alerts(self) -> None:
        """No unit test checks an alert that rules.yml does not define (it would pass vacuously)."""
        assert set() == {case["alertname"] for case in rule_test_cases()} - set(alerts())

    def test_every_alert_has_a_severity_and_the_three_annotations(self) -> None:
        """Alerts carry severity critical|warning and summary, description, runbook_url."""
        problems = [name for name, rule in alerts().items()
                    if rule.get("labels", {}).get("severity") not in {"critical", "warning"}
                    or set(rule.get("annotations", {})) != {"summary", "description", "runbook_url"}]
        assert [] == problems

    def test_runbook_urls_point_at_the_alerts_heading(self) -> None:
        """runbook_url is runbooks.md#<alertname lower-cased>, and that heading exists."""
        headings = re.findall(r"^## (\w+)$", RUNBOOKS.read_text(encoding="utf-8"), flags=re.M)
        urls = {name: rule["annotations"]["runbook_url"] for name, rule in alerts().items()}
        assert {name: f"{RUNBOOK_BASE}#{name.lower()}" for name in alerts()} == urls
        assert sorted(alerts()) == sorted(headings)

    def test_rule_names_follow_the_recording_convention(self) -> None:
        """Recorded series are named level:metric:operation (Prometheus recording-rule practice)."""
        bad = [name for name in recording_rules() if not re.fullmatch(r"[a-z_]+:logsig_[a-z_]+:[a-z0-9_]+", name)]
        assert [] == bad


class TestSelectors:
    """The label selectors in rules.yml against the signatures the catalog really ships."""

    def test_oom_selector_takes_the_catalogs_oom_signatures_only(self) -> None:
        """The OOM rule selects resource errors named for memory, not other memory errors."""
        expr = recording_rules()["cluster_namespace_signature:logsig_signature_matches_oom:increase5m"]
        labels = catalog_labels()
        chosen = {sig_id for sig_id, lab in labels.items() if selected(expr, lab)}
        assert {"llm/vllm-cuda-oom-during-prefill", "cuda/torch-oom"} <= chosen
        assert "cuda/illegal-memory-access" not in chosen
        assert all(labels[sig_id]["category"] == "resource_error" for sig_id in chosen)

    def test_hardware_selector_takes_hardware_errors_of_any_domain_only(self) -> None:
        """The hardware rule selects every hardware_error (Xid, ECC, launch failure), nothing else."""
        expr = recording_rules()["cluster_namespace_signature:logsig_signature_matches_hardware:increase5m"]
        labels = catalog_labels()
        chosen = {sig_id for sig_id, lab in labels.items() if selected(expr, lab)}
        assert {"gpu/xid-79-fallen-off-bus", "gpu/xid-48-double-bit-ecc", "cuda/unspecified-launch-failure"} <= chosen
        assert {sig_id for sig_id, lab in labels.items() if lab["category"] == "hardware_error"} == chosen
        assert "gpu/xid-13-graphics-exception" not in chosen

    def test_engine_dead_selector_takes_both_vllm_engine_dead_signatures(self) -> None:
        """The engine-dead rule selects the two engine-dead ids and not engine start-up failures."""
        expr = recording_rules()["cluster_namespace_signature:logsig_signature_matches_engine_dead:increase5m"]
        chosen = {sig_id for sig_id, lab in catalog_labels().items() if selected(expr, lab)}
        assert {"llm/vllm-engine-dead", "llm/vllm-async-engine-dead"} == chosen

    def test_nccl_alert_selects_the_catalogs_timeouts_and_watchdog_hangs(self) -> None:
        """LogsigNcclTimeout selects nccl-domain ids naming a timeout or the watchdog, no other NCCL error."""
        expr = alerts()["LogsigNcclTimeout"]["expr"]
        chosen = {sig_id for sig_id, lab in catalog_labels().items() if selected(expr, lab)}
        assert {"nccl/watchdog-timeout", "nccl/watchdog-heartbeat-stuck"} <= chosen
        assert {"nccl/unhandled-system-error", "nccl/ib-completion-error"}.isdisjoint(chosen)
        assert all(sig_id.startswith("nccl/") for sig_id in chosen)


class TestPrometheusRule:
    """deploy/kubernetes/base/prometheusrule.yaml is rules.yml for prometheus-operator."""

    def test_groups_equal_the_rule_file(self) -> None:
        """spec.groups holds exactly the groups of rules.yml."""
        assert rule_groups() == load_yaml(PROMETHEUS_RULE)["spec"]["groups"]

    def test_file_is_what_the_generator_writes(self) -> None:
        """The file is the generator's output (regenerate, never hand-edit)."""
        assert _generator().render() == PROMETHEUS_RULE.read_text(encoding="utf-8")

    def test_shape_follows_the_crd(self) -> None:
        """Kind, names and rule fields fit the monitoring.coreos.com/v1 PrometheusRule schema."""
        doc = load_yaml(PROMETHEUS_RULE)
        assert ("monitoring.coreos.com/v1", "PrometheusRule", "logsig") == (
            doc["apiVersion"], doc["kind"], doc["metadata"]["name"])
        assert [] == [problem for group in doc["spec"]["groups"] for problem in _group_problems(group)]


def _group_problems(group: dict[str, Any]) -> list[str]:
    problems = [] if set(group) <= {"name", "interval", "rules", "limit", "labels"} else [f"group keys {set(group)}"]
    allowed = {"record", "alert", "expr", "for", "keep_firing_for", "labels", "annotations"}
    for rule in group["rules"]:
        name = rule.get("alert") or rule.get("record")
        if not set(rule) <= allowed or ("alert" in rule) == ("record" in rule) or not isinstance(rule.get("expr"), str):
            problems.append(f"{name}: keys {sorted(rule)}")
        if not DURATION.match(str(rule.get("for", "0"))):
            problems.append(f"{name}: for {rule['for']!r}")
        for field in ("labels", "annotations"):
            if not all(isinstance(v, str) for v in rule.get(field, {}).values()):
                problems.append(f"{name}: {field} values must be strings")
    return problems


def test_rule_file_path_is_the_one_the_generator_reads() -> None:
    """The generator reads deploy/prometheus/rules.yml and writes the base's prometheusrule.yaml."""
    module = _generator()
    assert (RULES, PROMETHEUS_RULE) == (Path(module.RULES), Path(module.TARGET))
