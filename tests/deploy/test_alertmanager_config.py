"""Checks of deploy/alertmanager/alertmanager.yml: amtool accepts it, every alert of rules.yml
routes to the receiver its severity and category call for, and the inhibit rules name real
alerts and labels those alerts carry."""

from __future__ import annotations

import re

import pytest

from tests.deploy.support import DEPLOY, alerts, fired_label_sets, load_yaml, run_tool

CONFIG = DEPLOY / "alertmanager" / "alertmanager.yml"
MATCHER = re.compile(r'^(\w+)(=~|=|!=|!~)"([^"]*)"$')

# Where each alert must go: pager for hardware faults and critical alerts, ticket for
# configuration errors, chat for warnings. A new alert must be added here.
EXPECTED_RECEIVER = {
    "LogsigGpuHardwareFault": "pager",
    "LogsigGpuOomBurst": "pager",
    "LogsigOomCrashLoop": "chat",
    "LogsigNcclTimeout": "chat",
    "LogsigEngineDead": "chat",
    "LogsigEngineDeadCascade": "pager",
    "LogsigConfigurationError": "ticket",
    "LogsigDown": "pager",
    "LogsigReplicaDown": "chat",
    "LogsigNoPartitionsAssigned": "pager",
    "LogsigNotConsuming": "pager",
    "LogsigConsumerLagGrowing": "chat",
    "LogsigDeadLetters": "chat",
    "LogsigIncidentsDropped": "chat",
    "LogsigDeliveryBlocked": "pager",
    "LogsigCatalogReloadFailing": "ticket",
}


def route(amtool: str, labels: dict[str, str]) -> str:
    """The receiver(s) amtool routes ``labels`` to, as amtool prints them."""
    args = [f"{key}={value}" for key, value in sorted(labels.items())]
    result = run_tool(amtool, "config", "routes", "test", f"--config.file={CONFIG}", *args)
    assert 0 == result.returncode, result.stderr
    return result.stdout.strip()


def alertnames(matchers: list[str]) -> set[str]:
    """The alerts of rules.yml selected by ``matchers``, judged on alertname and static labels."""
    def holds(name: str, matcher: str) -> bool:
        found = MATCHER.match(matcher)
        assert found is not None, matcher
        label, op, value = found.groups()
        actual = name if label == "alertname" else alerts()[name].get("labels", {}).get(label, "")
        fits = re.fullmatch(value, actual) is not None if "~" in op else actual == value
        return fits != op.startswith("!")
    return {name for name in alerts() if all(holds(name, m) for m in matchers)}


class TestAlertmanagerConfig:
    def test_amtool_check_config_passes(self, amtool: str) -> None:
        """amtool accepts the configuration."""
        result = run_tool(amtool, "check-config", str(CONFIG))
        assert 0 == result.returncode, result.stdout + result.stderr

    def test_every_alert_has_an_expected_receiver(self) -> None:
        """The routing table of this test covers exactly the alerts of rules.yml."""
        assert sorted(alerts()) == sorted(EXPECTED_RECEIVER)

    def test_every_fired_alert_routes_to_its_receiver(self, amtool: str) -> None:
        """Each label set the promtool tests fire reaches the receiver its alert calls for."""
        routed = {(labels["alertname"], route(amtool, labels))
                  for label_sets in fired_label_sets().values() for labels in label_sets}
        expected = {(name, EXPECTED_RECEIVER[name]) for name in fired_label_sets()}
        assert expected == routed

    @pytest.mark.parametrize(("labels", "receiver"), [
        ({"category": "hardware_error", "severity": "warning"}, "pager"),
        ({"category": "configuration_error", "severity": "warning"}, "ticket"),
        ({"severity": "critical", "category": "configuration_error"}, "pager"),
        ({"alertname": "SomethingElse"}, "chat"),
    ])
    def test_category_and_severity_decide_the_receiver(self, amtool: str, labels: dict[str, str],
                                                       receiver: str) -> None:
        """Hardware pages at any severity; critical pages before configuration tickets; the rest chats."""
        assert receiver == route(amtool, labels)

    def test_receivers_are_placeholder_webhooks(self) -> None:
        """Receivers are webhooks to .invalid URLs, to be replaced per site."""
        config = load_yaml(CONFIG)
        urls = [hook["url"] for rec in config["receivers"] for hook in rec.get("webhook_configs", [])]
        assert (3, True) == (len(urls), all(".example.invalid/" in url for url in urls))


class TestInhibitRules:
    def test_hardware_fault_inhibits_engine_dead_in_the_same_namespace(self) -> None:
        """A hardware fault hides the engine-dead alert of its cluster and namespace."""
        rules = load_yaml(CONFIG)["inhibit_rules"]
        hits = [rule["equal"] for rule in rules
                if alertnames(rule["source_matchers"]) == {"LogsigGpuHardwareFault"}
                and "LogsigEngineDead" in alertnames(rule["target_matchers"])]
        assert [["cluster", "namespace"]] == hits

    def test_every_rule_names_real_alerts_that_carry_the_equal_labels(self) -> None:
        """Source and target select alerts of rules.yml, and both carry every `equal` label."""
        fired = fired_label_sets()
        problems = []
        for rule in load_yaml(CONFIG)["inhibit_rules"]:
            sources, targets = alertnames(rule["source_matchers"]), alertnames(rule["target_matchers"])
            if not sources or not targets:
                problems.append(f"{rule['source_matchers']} -> {rule['target_matchers']}: no alert")
            for name in sources | targets:
                problems += [f"{name} lacks {label}" for labels in fired[name]
                             for label in rule["equal"] if label not in labels]
        assert [] == problems
