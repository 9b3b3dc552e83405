"""Offline checks of deploy/grafana: every panel and variable query is valid PromQL over metrics
and labels logsig exports (or rules.yml records), the layout is sound, provisioning finds it.

``dashboard_queries`` and ``substitute`` are the reusable part: they turn the dashboard into the
PromQL a Prometheus would receive, so an integration test can run each one for real.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from logsig.telemetry import Metrics
from tests.deploy.support import DEPLOY, load_yaml, recording_rules, run_tool

DASHBOARD = DEPLOY / "grafana" / "logsig-dashboard.json"
PROVISIONING = DEPLOY / "grafana" / "provisioning"

TARGET_LABELS = frozenset({"job", "instance"})
EXPORTED: dict[str, frozenset[str]] = {
    name: frozenset(labels) for name, labels in {
        "logsig_signature_matches_total": {"signature_id", "category", "domain", "cluster", "namespace",
                                           "node", "container"},
        "logsig_label_overflow_total": {"signature_id"},
        "logsig_records_consumed_total": {"topic"},
        "logsig_records_consumed_bytes_total": {"topic"},
        "logsig_records_failed_total": {"reason"},
        "logsig_dead_letters_total": {"reason"},
        "logsig_dead_letters_dropped_total": {"reason"},
        "logsig_incidents_emitted_total": {"sink"},
        "logsig_incidents_dropped_total": {"sink", "reason"},
        "logsig_messages_truncated_total": set(),
        "logsig_records_repaired_total": set(),
        "logsig_consumer_lag_records": {"topic", "partition"},
        "logsig_partitions_assigned": set(),
        "logsig_input_topics_missing": set(),
        "logsig_processing_latency_seconds_bucket": {"le", "status"},
        "logsig_processing_latency_seconds_sum": {"status"},
        "logsig_processing_latency_seconds_count": {"status"},
        "logsig_match_seconds_total": {"signature_id"},
        "logsig_catalog_signatures": set(),
        "logsig_catalog_reload_success": set(),
        "logsig_catalog_last_reload_timestamp_seconds": set(),
        "logsig_catalog_reloads_total": {"result"},
        "logsig_build_info": {"version"},
        "logsig_last_record_timestamp_seconds": set(),
        "logsig_groups_open": set(),
        "logsig_redactions_total": {"kind"},
        "logsig_groups_evicted_total": set(),
        "logsig_kafka_metadata_requests_total": set(),
        "logsig_unclassified_total": {"domain"},
        "logsig_outputs_shrunk_total": {"kind", "step"},
        "logsig_delivery_blocked": set(),
        "up": set(),
    }.items()
}
"""The metrics logsig exports (and Prometheus's ``up``) with their own labels."""

VARIABLE_VALUES: dict[str, str] = {
    "datasource": "prometheus", "cluster": ".*", "namespace": ".*", "signature": ".*",
    "__rate_interval": "2m", "__interval": "1m", "__range": "6h", "__range_s": "21600",
    "__range_ms": "21600000",
}
"""A value for every variable the dashboard may use: "All" for the template variables."""

VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\[\[(\w+)(?::\w+)?\]\]|\$(\w+)")
LABEL_VALUES = re.compile(r"^\s*label_values\((?:(?P<selector>.+),\s*)?(?P<label>\w+)\)\s*$", re.S)
QUERY_RESULT = re.compile(r"^\s*query_result\((?P<expr>.+)\)\s*$", re.S)
STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
SERIES = re.compile(r"\b(up|logsig_\w+|[a-z_]+:logsig_\w+:\w+)\b")
SELECTOR = re.compile(r"([a-zA-Z_:][\w:]*)\s*\{([^}]*)\}")
MATCHER_LABEL = re.compile(r"(\w+)\s*(?:=~|!~|!=|=)")
GROUPING = re.compile(r"\b(?:by|without)\s*\(([^)]*)\)")


@dataclass(frozen=True)
class Query:
    """One PromQL query of the dashboard, variables substituted.

    source: ``panel '<title>' <refId>`` or ``variable <name>``; expr: the PromQL; instant: an
    instant query (else a range query over the dashboard's time range); label: for a
    ``label_values`` variable, the label whose values it lists (``expr`` is then its selector).
    """

    source: str
    expr: str
    instant: bool
    label: str | None = None


def substitute(expr: str, values: Mapping[str, str] = VARIABLE_VALUES) -> str:
    """``expr`` with each Grafana variable (``$v``, ``${v}``, ``${v:fmt}``, ``[[v]]``) replaced.

    Raises: KeyError naming a variable that ``values`` lacks.
    """
    def value(match: re.Match[str]) -> str:
        return values[match.group(1) or match.group(2) or match.group(3)]
    return VARIABLE.sub(value, expr)


def _panels(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for panel in panels:
        yield panel
        yield from _panels(panel.get("panels", []))


def _cells(grid: dict[str, int]) -> list[tuple[int, int]]:
    return [(x, y) for x in range(grid["x"], grid["x"] + grid["w"]) for y in range(grid["y"], grid["y"] + grid["h"])]


def _variable_query(variable: dict[str, Any], values: Mapping[str, str]) -> Query:
    raw = variable["query"]["query"] if isinstance(variable["query"], dict) else variable["query"]
    source = f"variable {variable['name']}"
    if found := LABEL_VALUES.match(raw):
        selector = found["selector"] or '{__name__=~".+"}'
        return Query(source, substitute(selector, values), True, found["label"])
    if found := QUERY_RESULT.match(raw):
        return Query(source, substitute(found["expr"], values), True)
    return Query(source, substitute(raw, values), True)


def dashboard_queries(dashboard: dict[str, Any], values: Mapping[str, str] = VARIABLE_VALUES) -> list[Query]:
    """Every PromQL query of ``dashboard`` (panel targets, then query variables), substituted.

    Raises: KeyError naming a variable that ``values`` lacks.
    """
    queries = [
        Query(f"panel {panel.get('title', '')!r} {target.get('refId', '')}", substitute(target["expr"], values),
              bool(target.get("instant")) and not target.get("range", False))
        for panel in _panels(dashboard.get("panels", []))
        for target in panel.get("targets", []) if target.get("expr")
    ]
    variables = dashboard.get("templating", {}).get("list", [])
    return queries + [_variable_query(v, values) for v in variables if v.get("type") == "query"]


def series_labels() -> dict[str, frozenset[str]]:
    """Labels of every series a query may read: exported metrics and rules.yml's recorded series."""
    known = dict(EXPORTED)
    for name, expr in recording_rules().items():
        grouping = GROUPING.search(expr)
        if grouping:
            known[name] = frozenset(label.strip() for label in grouping.group(1).split(","))
        else:
            known[name] = next(known[s] for s in SERIES.findall(STRING.sub('""', expr)) if s in known)
    return known


def referenced_series(expr: str) -> set[str]:
    """Metric and recorded-series names in ``expr`` (quoted strings ignored)."""
    return set(SERIES.findall(STRING.sub('""', expr)))


def label_problems(expr: str, known: Mapping[str, frozenset[str]]) -> list[str]:
    """Labels ``expr`` selects on or groups by that none of its series carries."""
    bare = STRING.sub('""', expr)
    problems = []
    for name, body in SELECTOR.findall(bare):
        extra = set(MATCHER_LABEL.findall(body)) - known.get(name, frozenset()) - TARGET_LABELS - {"__name__"}
        problems += [f"{name} has no label {label}" for label in sorted(extra)]
    available = set(TARGET_LABELS).union(*(known.get(s, frozenset()) for s in referenced_series(expr)))
    for grouping in GROUPING.findall(bare):
        labels = {label.strip() for label in grouping.split(",") if label.strip()}
        problems += [f"groups by unknown label {label}" for label in sorted(labels - available)]
    return problems


@pytest.fixture(scope="module")
def dashboard() -> dict[str, Any]:
    """The dashboard JSON."""
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return loaded


class TestSubstitute:
    @pytest.mark.parametrize("expr", ['x{a=~"$cluster"}', 'x{a=~"${cluster}"}', 'x{a=~"${cluster:regex}"}',
                                      'x{a=~"[[cluster]]"}'])
    def test_every_variable_syntax_is_replaced(self, expr: str) -> None:
        """The four Grafana reference forms all become the variable's value."""
        assert 'x{a=~".*"}' == substitute(expr)

    def test_longer_builtin_names_are_not_cut_short(self) -> None:
        """$__range_s is its own variable, not $__range followed by "_s"."""
        assert "21600 6h" == substitute("$__range_s $__range")

    def test_an_unknown_variable_raises(self) -> None:
        """A variable without a value is an error, not left in the query."""
        with pytest.raises(KeyError, match="nope"):
            substitute("rate(x[$nope])")


class TestQueries:
    def test_extraction_covers_every_target_and_query_variable(self, dashboard: dict[str, Any]) -> None:
        """One query per panel target with an expression, plus one per query variable."""
        targets = sum(1 for p in _panels(dashboard["panels"]) for t in p.get("targets", []) if t.get("expr"))
        variables = sum(1 for v in dashboard["templating"]["list"] if v["type"] == "query")
        assert targets + variables == len(dashboard_queries(dashboard))

    def test_every_query_is_valid_promql(self, dashboard: dict[str, Any], promtool: str, tmp_path: Path) -> None:
        """promtool parses every substituted query (each wrapped as a recording rule)."""
        rules = [{"record": f"dashboard:query:{i}", "expr": q.expr} for i, q in enumerate(dashboard_queries(dashboard))]
        path = tmp_path / "queries.yml"
        path.write_text(json.dumps({"groups": [{"name": "dashboard", "rules": rules}]}), encoding="utf-8")
        result = run_tool(promtool, "check", "rules", str(path))
        assert 0 == result.returncode, result.stdout + result.stderr

    def test_queries_read_only_known_series(self, dashboard: dict[str, Any]) -> None:
        """Every metric or recorded series named exists in logsig's metrics or rules.yml."""
        known = series_labels()
        unknown = {(q.source, s) for q in dashboard_queries(dashboard) for s in referenced_series(q.expr) - set(known)}
        assert set() == unknown

    def test_queries_use_only_labels_their_series_have(self, dashboard: dict[str, Any]) -> None:
        """Selectors and by() clauses name labels the series they read carry."""
        known = series_labels()
        problems = [(q.source, p) for q in dashboard_queries(dashboard) for p in label_problems(q.expr, known)]
        assert [] == problems

    def test_every_exported_metric_is_shown(self, dashboard: dict[str, Any]) -> None:
        """Each metric logsig exports appears in some query (histogram via its buckets)."""
        used = set().union(*(referenced_series(q.expr) for q in dashboard_queries(dashboard)))
        unused = set(EXPORTED) - used - {"logsig_processing_latency_seconds_sum",
                                         "logsig_processing_latency_seconds_count"}
        assert set() == unused

    def test_exported_metrics_match_the_telemetry_module(self) -> None:
        """The metric names this test knows are the ones logsig.telemetry registers."""
        registry = CollectorRegistry()
        Metrics(registry)
        suffix = {"counter": "_total", "histogram": "_bucket"}
        registered = {family.name + suffix.get(family.type, "") for family in registry.collect()}
        assert {n for n in EXPORTED if not n.endswith(("_sum", "_count")) and n != "up"} == registered


class TestVariables:
    def test_datasource_cluster_namespace_and_signature_exist(self, dashboard: dict[str, Any]) -> None:
        """The dashboard has a Prometheus datasource variable and the three label variables."""
        types = {v["name"]: (v["type"], v.get("query") if v["type"] == "datasource" else None)
                 for v in dashboard["templating"]["list"]}
        assert {"datasource": ("datasource", "prometheus"), "cluster": ("query", None),
                "namespace": ("query", None), "signature": ("query", None)} == types

    def test_label_variables_list_labels_of_the_match_counter(self, dashboard: dict[str, Any]) -> None:
        """cluster, namespace and signature list labels logsig_signature_matches_total carries."""
        found = {q.source: (referenced_series(q.expr), q.label) for q in dashboard_queries(dashboard) if q.label}
        counter = {"logsig_signature_matches_total"}
        assert {"variable cluster": (counter, "cluster"), "variable namespace": (counter, "namespace"),
                "variable signature": (counter, "signature_id")} == found

    def test_query_variables_use_the_datasource_variable(self, dashboard: dict[str, Any]) -> None:
        """Variables query whatever Prometheus the datasource variable picks."""
        sources = {v["name"]: v["datasource"] for v in dashboard["templating"]["list"] if v["type"] == "query"}
        assert {name: {"type": "prometheus", "uid": "${datasource}"} for name in sources} == sources


class TestLayout:
    def test_every_panel_uses_the_datasource_variable(self, dashboard: dict[str, Any]) -> None:
        """Panels and their targets point at ${datasource}."""
        expected = {"type": "prometheus", "uid": "${datasource}"}
        wrong = [p["title"] for p in _panels(dashboard["panels"]) if p["type"] != "row"
                 and (p.get("datasource") != expected or any(t.get("datasource") != expected for t in p["targets"]))]
        assert [] == wrong

    def test_every_panel_has_a_query(self, dashboard: dict[str, Any]) -> None:
        """No panel other than a row is empty."""
        empty = [p["title"] for p in _panels(dashboard["panels"])
                 if p["type"] != "row" and not any(t.get("expr") for t in p.get("targets", []))]
        assert [] == empty

    def test_panel_ids_are_unique_and_panels_do_not_overlap(self, dashboard: dict[str, Any]) -> None:
        """Panel ids are distinct and no two grid rectangles in the 24-column grid intersect."""
        panels = list(_panels(dashboard["panels"]))
        cells = [cell for p in panels for cell in _cells(p["gridPos"])]
        assert (len(panels), len(cells), 23) == (
            len({p["id"] for p in panels}), len(set(cells)), max(x for x, _ in cells))

    def test_schema_is_current(self, dashboard: dict[str, Any]) -> None:
        """The dashboard uses the Grafana 11 schema and a fixed uid (provisioned links stay valid)."""
        assert (39, "logsig") == (dashboard["schemaVersion"], dashboard["uid"])


class TestProvisioning:
    def test_dashboard_provider_reads_the_logsig_folder(self) -> None:
        """The file provider loads dashboards from the folder docs/operations.md mounts the JSON in."""
        provider = load_yaml(PROVISIONING / "dashboards" / "logsig.yaml")["providers"][0]
        assert ("file", "/var/lib/grafana/dashboards/logsig") == (provider["type"], provider["options"]["path"])

    def test_datasource_is_a_prometheus_with_the_default_flag(self) -> None:
        """The provisioned data source is a default Prometheus, so the datasource variable finds it."""
        source = load_yaml(PROVISIONING / "datasources" / "prometheus.yaml")["datasources"][0]
        assert ("prometheus", True) == (source["type"], source["isDefault"])
