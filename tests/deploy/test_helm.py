"""Checks of the Helm chart deploy/helm/logsig: `helm lint`, `helm template` with the default and
the full values (ci/full-values.yaml) through kubernetes-validate (strict), CRD objects by shape,
and the wiring between the rendered objects, logsig's settings, rules.yml and the dashboard."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from logsig.config import KafkaSettings, Settings, load_settings
from logsig.matchers.catalog.loader import load_catalog
from tests.deploy.support import DEPLOY, RULES, configmap_volume, rule_groups, run_tool


def _generator() -> ModuleType:
    """deploy/prometheus/to_prometheusrule.py as a module."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("to_prometheusrule", DEPLOY / "prometheus" / "to_prometheusrule.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

CHART = DEPLOY / "helm" / "logsig"
FULL_VALUES = CHART / "ci" / "full-values.yaml"
DASHBOARD = DEPLOY / "grafana" / "logsig-dashboard.json"
OLDEST_KUBERNETES = "1.28.0"
KUBE_VERSION = ("--kube-version", OLDEST_KUBERNETES)
"""Helm built by `go install` (no release ldflags) assumes Kubernetes 1.20; the chart needs 1.28 or later."""
CORE_KINDS = {"ServiceAccount", "ConfigMap", "Secret", "Deployment", "Service", "PodDisruptionBudget"}
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
SIGNATURES_MOUNT = Path("/etc/logsig/signatures")
SASL_ENV = {"LOGSIG_KAFKA__SASL_USERNAME": "logsig", "LOGSIG_KAFKA__SASL_PASSWORD": "s3cret"}

Render = Callable[..., dict[tuple[str, str], dict[str, Any]]]


def template(helm: str, *args: str, release: str = "logsig") -> dict[tuple[str, str], dict[str, Any]]:
    """``{(kind, name): object}`` of `helm template RELEASE CHART -n logsig ARGS`; fails on a non-zero exit."""
    result = run_tool(helm, "template", release, str(CHART), "--namespace", "logsig", *KUBE_VERSION, *args)
    assert 0 == result.returncode, result.stderr
    docs = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    return {(doc["kind"], doc["metadata"]["name"]): doc for doc in docs}


@pytest.fixture(scope="module")
def render(helm: str) -> Render:
    """`helm template` as a function of extra arguments (``-f FILE``, ``--set K=V``)."""
    return lambda *args, release="logsig": template(helm, *args, release=release)


@pytest.fixture(scope="module")
def default(render: Render) -> dict[tuple[str, str], dict[str, Any]]:
    """The chart rendered with its default values."""
    return render()


@pytest.fixture(scope="module")
def full(render: Render) -> dict[tuple[str, str], dict[str, Any]]:
    """The chart rendered with ci/full-values.yaml."""
    return render("-f", str(FULL_VALUES))


def container(objects: dict[tuple[str, str], dict[str, Any]]) -> dict[str, Any]:
    """The logsig container of the rendered Deployment."""
    spec: dict[str, Any] = pod_spec(objects)["containers"][0]
    return spec


def pod_spec(objects: dict[tuple[str, str], dict[str, Any]]) -> dict[str, Any]:
    """The pod spec of the rendered Deployment."""
    spec: dict[str, Any] = objects[("Deployment", "logsig")]["spec"]["template"]["spec"]
    return spec


def settings_text(objects: dict[tuple[str, str], dict[str, Any]]) -> str:
    """The logsig.yaml the rendered settings ConfigMap holds."""
    text: str = objects[("ConfigMap", "logsig-config")]["data"]["logsig.yaml"]
    return text


def load_rendered(objects: dict[tuple[str, str], dict[str, Any]], tmp_path: Path,
                  monkeypatch: pytest.MonkeyPatch) -> Settings:
    """logsig's Settings from the rendered logsig.yaml, with the SASL variables set as the pod would."""
    for name, value in SASL_ENV.items():
        monkeypatch.setenv(name, value)
    path = tmp_path / "logsig.yaml"
    path.write_text(settings_text(objects), encoding="utf-8")
    return load_settings(path)


def checksums(objects: dict[tuple[str, str], dict[str, Any]]) -> dict[str, str]:
    """The ``checksum/*`` annotations of the Deployment's pod template."""
    annotations = objects[("Deployment", "logsig")]["spec"]["template"]["metadata"]["annotations"]
    return {key: value for key, value in annotations.items() if key.startswith("checksum/")}


def values_file(tmp_path: Path, name: str, values: dict[str, Any]) -> str:
    """A values file holding ``values``; returns its path."""
    path = tmp_path / name
    path.write_text(yaml.safe_dump(values), encoding="utf-8")
    return str(path)


class TestLint:
    @pytest.mark.parametrize("values", [[], ["--values", str(FULL_VALUES)]], ids=["default", "full"])
    def test_helm_lint_passes_strictly(self, helm: str, values: list[str]) -> None:
        """`helm lint --strict` reports no error or warning with the default and the full values."""
        result = run_tool(helm, "lint", "--strict", *KUBE_VERSION, str(CHART), *values)
        assert 0 == result.returncode, result.stdout + result.stderr

    def test_a_wrong_security_protocol_is_named(self, helm: str) -> None:
        """values.schema.json rejects an unknown kafka.securityProtocol and names the key."""
        result = run_tool(helm, "template", "logsig", str(CHART), *KUBE_VERSION, "--set", "kafka.securityProtocol=SASL")
        assert (1, True) == (result.returncode, "kafka.securityProtocol" in result.stderr.replace("/", "."))

    def test_sasl_without_a_secret_is_named(self, helm: str) -> None:
        """SASL with neither an existing Secret nor kafka.sasl.create fails naming the value to set."""
        result = run_tool(helm, "template", "logsig", str(CHART), *KUBE_VERSION, "--set", "kafka.securityProtocol=SASL_SSL",
                          "--set", "kafka.sasl.existingSecret=")
        assert (1, True) == (result.returncode, "kafka.sasl.existingSecret is required" in result.stderr)


class TestSchemas:
    @pytest.mark.parametrize("version", [OLDEST_KUBERNETES, "latest"])
    @pytest.mark.parametrize("values", ["default", "full"])
    def test_core_objects_fit_the_kubernetes_schema(
            self, kubernetes_validate: ModuleType, request: pytest.FixtureRequest, values: str, version: str) -> None:
        """Every core object of the rendered chart validates strictly against the Kubernetes schema."""
        objects: dict[tuple[str, str], dict[str, Any]] = request.getfixturevalue(values)
        version = kubernetes_validate.latest_version() if version == "latest" else version
        errors = []
        for key, doc in objects.items():
            if doc["kind"] in CORE_KINDS:
                try:
                    kubernetes_validate.validate(doc, version, strict=True)
                except kubernetes_validate.ValidationError as error:
                    errors.append(f"{key}: {error.message}")
        assert [] == errors

    def test_default_values_render_only_core_objects(self, default: dict[tuple[str, str], dict[str, Any]]) -> None:
        """Without options the chart needs no CRD: settings, dashboard, Deployment, Service, PDB, account."""
        assert {("ServiceAccount", "logsig"), ("ConfigMap", "logsig-config"), ("ConfigMap", "logsig-dashboard"),
                ("Deployment", "logsig"), ("Service", "logsig"), ("PodDisruptionBudget", "logsig")} == set(default)

    def test_full_values_render_every_optional_object(self, full: dict[tuple[str, str], dict[str, Any]]) -> None:
        """The full values add the signatures, Secret, operator, KEDA and Strimzi objects."""
        assert {("ConfigMap", "logsig-signatures"), ("Secret", "logsig-kafka"), ("ServiceMonitor", "logsig"),
                ("PrometheusRule", "logsig"), ("ScaledObject", "logsig"), ("TriggerAuthentication", "logsig-kafka"),
                ("KafkaTopic", "inference-logs"), ("KafkaTopic", "logsig-incidents"),
                ("KafkaTopic", "logsig-dead-letters")} == set(full) - {
            ("ServiceAccount", "logsig"), ("ConfigMap", "logsig-config"), ("ConfigMap", "logsig-dashboard"),
            ("Deployment", "logsig"), ("Service", "logsig"), ("PodDisruptionBudget", "logsig")}

    def test_crd_objects_name_their_api_versions(self, full: dict[tuple[str, str], dict[str, Any]]) -> None:
        """Each CRD kind carries the apiVersion its operator serves."""
        versions = {kind: doc["apiVersion"] for (kind, _), doc in full.items() if kind not in CORE_KINDS}
        assert {"ServiceMonitor": "monitoring.coreos.com/v1", "PrometheusRule": "monitoring.coreos.com/v1",
                "ScaledObject": "keda.sh/v1alpha1", "TriggerAuthentication": "keda.sh/v1alpha1",
                "KafkaTopic": "kafka.strimzi.io/v1beta2"} == versions

    def test_every_object_is_in_a_namespace_and_labelled(self, full: dict[tuple[str, str], dict[str, Any]]) -> None:
        """Each object has a namespace and the standard app.kubernetes.io labels of the release."""
        unlabelled = [key for key, doc in full.items() if not doc["metadata"].get("namespace") or not {
            "app.kubernetes.io/name": "logsig", "app.kubernetes.io/instance": "logsig"}.items()
            <= doc["metadata"]["labels"].items()]
        assert [] == unlabelled


class TestSettings:
    def test_default_settings_load(self, default: dict[tuple[str, str], dict[str, Any]], tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
        """logsig accepts the default logsig.yaml: PLAINTEXT, built-in catalog, no extra files."""
        settings = load_rendered(default, tmp_path, monkeypatch)
        assert ("PLAINTEXT", None, True, [], 9464) == (
            settings.kafka.security_protocol, settings.kafka.sasl_mechanism, settings.catalog.builtin,
            settings.catalog.paths, settings.http.port)

    def test_full_settings_load_with_the_secret_in_the_environment(
            self, full: dict[tuple[str, str], dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """The full values give SASL_SSL with the mounted CA, their topics and the merged settings."""
        settings = load_rendered(full, tmp_path, monkeypatch)
        assert ("SASL_SSL", "SCRAM-SHA-512", "logsig", Path("/etc/logsig/kafka-ca/ca.crt"),
                ["inference-logs"], "logsig.incidents", "logsig_dead_letters", "logsig-prod") == (
            settings.kafka.security_protocol, settings.kafka.sasl_mechanism, settings.kafka.sasl_username,
            settings.kafka.ssl_cafile, settings.kafka.topics, settings.kafka.output_topic,
            settings.kafka.dead_letter_topic, settings.kafka.group_id)
        assert (["cluster", "namespace", "node"], True) == (
            settings.metrics.source_labels, settings.alertmanager.enabled)

    def test_signatures_load_from_the_mounted_configmap(
            self, full: dict[tuple[str, str], dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Catalog paths name keys of the signatures ConfigMap; they load from a kubelet-style volume."""
        settings = load_rendered(full, tmp_path, monkeypatch)
        volume = configmap_volume(tmp_path, full[("ConfigMap", "logsig-signatures")]["data"])
        paths = [volume / path.relative_to(SIGNATURES_MOUNT) for path in settings.catalog.paths]
        catalog = load_catalog(paths, builtin=False)
        assert ["k8s/site-model-puller-checksum-mismatch"] == [sig.id for sig in catalog.signatures]

    def test_every_environment_variable_names_a_setting(self, full: dict[tuple[str, str], dict[str, Any]]) -> None:
        """Each LOGSIG_ variable the container sets is SECTION__KEY of an existing setting."""
        names = [e["name"] for e in container(full)["env"] if e["name"].startswith("LOGSIG_")]
        unknown = [name for name in names if not _is_setting(name)]
        assert ([], True) == (unknown, len(names) >= 3)


def _is_setting(variable: str) -> bool:
    section, _, key = variable.removeprefix("LOGSIG_").lower().partition("__")
    field = Settings.model_fields.get(section)
    model = field.annotation if field is not None else None
    return model is not None and key in getattr(model, "model_fields", {})


class TestDeployment:
    def test_keda_owns_the_replica_count(self, default: dict[tuple[str, str], dict[str, Any]],
                                         full: dict[tuple[str, str], dict[str, Any]]) -> None:
        """replicaCount sets replicas, except with KEDA enabled, where the field is left out."""
        assert (2, False) == (default[("Deployment", "logsig")]["spec"]["replicas"],
                              "replicas" in full[("Deployment", "logsig")]["spec"])

    def test_grace_period_outlasts_the_drain(self, full: dict[tuple[str, str], dict[str, Any]], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
        """terminationGracePeriodSeconds exceeds shutdown_timeout_seconds by 20 s."""
        drain = load_rendered(full, tmp_path, monkeypatch).shutdown_timeout_seconds
        assert drain + 20 == pod_spec(full)["terminationGracePeriodSeconds"]

    def test_probes_use_healthz_and_readyz_on_the_settings_port(
            self, default: dict[tuple[str, str], dict[str, Any]], tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> None:
        """Startup and liveness probe /healthz, readiness /readyz, on the port logsig listens on."""
        spec = container(default)
        ports = {port["name"]: port["containerPort"] for port in spec["ports"]}
        probes = {kind: (spec[kind]["httpGet"]["path"], ports[spec[kind]["httpGet"]["port"]])
                  for kind in ("startupProbe", "livenessProbe", "readinessProbe")}
        port = load_rendered(default, tmp_path, monkeypatch).http.port
        assert {"startupProbe": ("/healthz", port), "livenessProbe": ("/healthz", port),
                "readinessProbe": ("/readyz", port)} == probes

    def test_sasl_credentials_come_from_the_secret(self, full: dict[tuple[str, str], dict[str, Any]]) -> None:
        """The SASL user and password are read from the chart's Secret, which holds the values' ones."""
        env = {e["name"]: e.get("valueFrom", {}).get("secretKeyRef") for e in container(full)["env"]}
        secret = full[("Secret", "logsig-kafka")]["stringData"]
        assert ({"name": "logsig-kafka", "key": "username"}, {"name": "logsig-kafka", "key": "password"}) == (
            env["LOGSIG_KAFKA__SASL_USERNAME"], env["LOGSIG_KAFKA__SASL_PASSWORD"])
        assert {"username": "logsig", "password": "s3cret"} == secret

    def test_plaintext_sets_no_credentials(self, default: dict[tuple[str, str], dict[str, Any]]) -> None:
        """Without SASL the container reads no Secret."""
        assert ["LOGSIG_KAFKA__CLIENT_ID"] == [e["name"] for e in container(default)["env"]]

    def test_static_membership_names_each_pod_its_group_instance(self, render: Render) -> None:
        """kafka.staticMembership sets LOGSIG_KAFKA__GROUP_INSTANCE_ID from the pod's name (downward API)."""
        env = {e["name"]: e for e in container(render("--set", "kafka.staticMembership=true"))["env"]}
        assert {"fieldRef": {"fieldPath": "metadata.name"}} == env["LOGSIG_KAFKA__GROUP_INSTANCE_ID"]["valueFrom"]

    def test_the_ca_is_mounted_where_ssl_cafile_points(
            self, full: dict[tuple[str, str], dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """The CA Secret's key is mounted at the path of kafka.ssl_cafile."""
        mount = next(m for m in container(full)["volumeMounts"] if m["name"] == "kafka-ca")
        volume = next(v for v in pod_spec(full)["volumes"] if v["name"] == "kafka-ca")["secret"]
        cafile = load_rendered(full, tmp_path, monkeypatch).kafka.ssl_cafile
        assert (Path(mount["mountPath"]) / volume["items"][0]["path"], "prod-cluster-ca-cert") == (
            cafile, volume["secretName"])


class TestRollAndReload:
    def test_a_settings_change_rolls_the_pods(self, render: Render, default: dict[tuple[str, str], dict[str, Any]],
                                              tmp_path: Path) -> None:
        """Changing a setting changes checksum/config on the pod template, which rolls the pods."""
        changed = render("-f", values_file(tmp_path, "v.yaml", {"settings": {"logging": {"level": "debug"}}}))
        assert checksums(default)["checksum/config"] != checksums(changed)["checksum/config"]

    def test_a_new_password_rolls_the_pods(self, render: Render, full: dict[tuple[str, str], dict[str, Any]]) -> None:
        """A new password of the chart's Secret changes checksum/secret."""
        changed = render("-f", str(FULL_VALUES), "--set", "kafka.sasl.password=other")
        assert checksums(full)["checksum/secret"] != checksums(changed)["checksum/secret"]

    def test_a_signature_change_is_hot_reloaded(self, render: Render, full: dict[tuple[str, str], dict[str, Any]],
                                                tmp_path: Path) -> None:
        """With reloading on, new signature text changes the ConfigMap but no pod annotation."""
        extra = {"catalog": {"signatures": {"site-model-puller-checksum-mismatch.yaml": "id: k8s/other\n"}}}
        changed = render("-f", str(FULL_VALUES), "-f", values_file(tmp_path, "v.yaml", extra))
        assert (checksums(full), True) == (checksums(changed), full[("ConfigMap", "logsig-signatures")] != changed[
            ("ConfigMap", "logsig-signatures")])

    def test_without_reloading_a_signature_change_rolls_the_pods(self, render: Render, tmp_path: Path) -> None:
        """With reload_interval_seconds 0 the signature text is part of the pod's checksums."""
        def rendered(text: str) -> dict[str, str]:
            values = {"catalog": {"reloadIntervalSeconds": 0, "signatures": {"site.yaml": text}}}
            return checksums(render("-f", values_file(tmp_path, "v.yaml", values)))
        assert rendered("id: k8s/a\n")["checksum/signatures"] != rendered("id: k8s/b\n")["checksum/signatures"]


class TestMonitoring:
    def test_the_generator_writes_the_chart_copies(self, tmp_path: Path) -> None:
        """to_prometheusrule.py --check fails on a missing or stale chart copy; without it, it writes the copy."""
        module = _generator()
        module.TARGET, module.CHART_COPIES = tmp_path / "prometheusrule.yaml", {RULES: tmp_path / "rules.yml"}
        (tmp_path / "rules.yml").write_bytes(b"# stale\n")
        before = module.main(["--check"])
        module.main([])
        assert (1, 0, RULES.read_bytes()) == (before, module.main(["--check"]), (tmp_path / "rules.yml").read_bytes())

    def test_the_generator_copies_into_the_chart(self) -> None:
        """The script's chart copies are the chart's files/ (rules and dashboard)."""
        assert {CHART / "files" / "rules.yml", CHART / "files" / "logsig-dashboard.json"} == set(
            _generator().CHART_COPIES.values())

    def test_rule_file_copy_is_identical(self) -> None:
        """files/rules.yml is byte for byte deploy/prometheus/rules.yml (deploy/prometheus/to_prometheusrule.py
        copies it)."""
        assert RULES.read_bytes() == (CHART / "files" / "rules.yml").read_bytes()

    def test_prometheusrule_holds_the_rule_groups(self, full: dict[tuple[str, str], dict[str, Any]]) -> None:
        """The PrometheusRule's spec.groups are the groups of rules.yml, with the selector label."""
        rule = full[("PrometheusRule", "logsig")]
        assert (rule_groups(), "kube-prometheus-stack") == (rule["spec"]["groups"], rule["metadata"]["labels"]["release"])

    def test_dashboard_copy_is_identical(self) -> None:
        """files/logsig-dashboard.json is byte for byte deploy/grafana/logsig-dashboard.json (the same script copies it)."""
        assert DASHBOARD.read_bytes() == (CHART / "files" / "logsig-dashboard.json").read_bytes()

    def test_dashboard_configmap_is_labelled_for_the_grafana_sidecar(
            self, full: dict[tuple[str, str], dict[str, Any]]) -> None:
        """The dashboard ConfigMap carries grafana_dashboard: "1", lives in the sidecar's namespace, holds the JSON."""
        config_map = full[("ConfigMap", "logsig-dashboard")]
        assert ("1", "monitoring", json.loads(DASHBOARD.read_text(encoding="utf-8"))) == (
            config_map["metadata"]["labels"]["grafana_dashboard"], config_map["metadata"]["namespace"],
            json.loads(config_map["data"]["logsig-dashboard.json"]))

    @pytest.mark.parametrize("release", ["logsig", "prod"])
    def test_servicemonitor_job_is_the_one_the_rules_select(self, render: Render, release: str) -> None:
        """Whatever the release name, the ServiceMonitor's jobLabel gives job="logsig", as rules.yml expects."""
        objects = render("--set", "serviceMonitor.enabled=true", release=release)
        name = "logsig" if release == "logsig" else f"{release}-logsig"
        monitor, service = objects[("ServiceMonitor", name)]["spec"], objects[("Service", name)]
        assert ('up{job="logsig"}' in RULES.read_text(encoding="utf-8"), "logsig") == (
            True, service["metadata"]["labels"][monitor["jobLabel"]])

    def test_servicemonitor_scrapes_the_service_port(self, full: dict[tuple[str, str], dict[str, Any]]) -> None:
        """The ServiceMonitor selects the Service, scrapes its named port's /metrics and honours labels."""
        monitor = full[("ServiceMonitor", "logsig")]["spec"]
        service = full[("Service", "logsig")]
        endpoint = monitor["endpoints"][0]
        assert (True, service["spec"]["ports"][0]["name"], "/metrics", True, ["logsig"]) == (
            monitor["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items(),
            endpoint["port"], endpoint["path"], endpoint["honorLabels"], monitor["namespaceSelector"]["matchNames"])


class TestKedaAndStrimzi:
    def test_scaledobject_reads_logsigs_group_and_topic(
            self, full: dict[tuple[str, str], dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """The kafka trigger reads the lag of logsig's brokers, group and topic, in its SASL and TLS mode."""
        kafka = load_rendered(full, tmp_path, monkeypatch).kafka
        trigger = full[("ScaledObject", "logsig")]["spec"]["triggers"][0]
        assert ({"bootstrapServers": kafka.bootstrap_servers, "consumerGroup": kafka.group_id,
                 "topic": kafka.topics[0], "offsetResetPolicy": kafka.auto_offset_reset, "sasl": "scram_sha512",
                 "tls": "enable"}, "logsig-kafka") == (
            {key: trigger["metadata"][key] for key in ("bootstrapServers", "consumerGroup", "topic",
                                                       "offsetResetPolicy", "sasl", "tls")},
            trigger["authenticationRef"]["name"])

    def test_scaledobject_metadata_values_are_strings(self, full: dict[tuple[str, str], dict[str, Any]]) -> None:
        """KEDA rejects non-string trigger metadata; replica bounds are ordered; the target is the Deployment."""
        spec = full[("ScaledObject", "logsig")]["spec"]
        assert (True, True, ("Deployment", "logsig")) == (
            all(isinstance(v, str) for v in spec["triggers"][0]["metadata"].values()),
            1 <= spec["minReplicaCount"] <= spec["maxReplicaCount"],
            (spec["scaleTargetRef"]["kind"], spec["scaleTargetRef"]["name"]))

    def test_trigger_authentication_uses_the_secret_and_ca(self, full: dict[tuple[str, str], dict[str, Any]]) -> None:
        """KEDA authenticates with the Deployment's Secret keys and the CA Secret."""
        refs = full[("TriggerAuthentication", "logsig-kafka")]["spec"]["secretTargetRef"]
        assert {("username", "logsig-kafka", "username"), ("password", "logsig-kafka", "password"),
                ("ca", "prod-cluster-ca-cert", "ca.crt")} == {(r["parameter"], r["name"], r["key"]) for r in refs}

    def test_kafkatopics_cover_the_topics_logsig_uses(
            self, full: dict[tuple[str, str], dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """One KafkaTopic per input, output and dead-letter topic, for the values' Strimzi cluster."""
        kafka = load_rendered(full, tmp_path, monkeypatch).kafka
        topics = [doc for (kind, _), doc in full.items() if kind == "KafkaTopic"]
        assert ({*kafka.topics, kafka.output_topic, kafka.dead_letter_topic}, {"prod"}, {"kafka"}) == (
            {t["spec"]["topicName"] for t in topics}, {t["metadata"]["labels"]["strimzi.io/cluster"] for t in topics},
            {t["metadata"]["namespace"] for t in topics})

    def test_kafkatopic_names_are_dns_labels(self, full: dict[tuple[str, str], dict[str, Any]]) -> None:
        """Topic names with dots and underscores become valid object names; partitions and replicas are ints."""
        topics = [doc for (kind, _), doc in full.items() if kind == "KafkaTopic"]
        assert [] == [t["metadata"]["name"] for t in topics if not DNS_LABEL.match(t["metadata"]["name"])
                      or not isinstance(t["spec"]["partitions"], int) or not isinstance(t["spec"]["replicas"], int)]

    def test_dead_letter_topic_takes_logsigs_largest_record(
            self, full: dict[tuple[str, str], dict[str, Any]]) -> None:
        """The dead-letter topic's max.message.bytes is above logsig's default dead_letter_max_bytes."""
        topic = full[("KafkaTopic", "logsig-dead-letters")]["spec"]["config"]
        limit = KafkaSettings().dead_letter_max_bytes
        assert True is (int(topic["max.message.bytes"]) > limit)


class TestMutualTls:
    def test_client_certificate_is_mounted_where_the_settings_point(
            self, render: Render, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """kafka.tls.clientSecret mounts the certificate and key at ssl_certfile and ssl_keyfile."""
        objects = render("--set", "kafka.securityProtocol=SSL", "--set", "kafka.tls.clientSecret=logsig-user")
        kafka = load_rendered(objects, tmp_path, monkeypatch).kafka
        mount = next(m for m in container(objects)["volumeMounts"] if m["name"] == "kafka-client")
        volume = next(v for v in pod_spec(objects)["volumes"] if v["name"] == "kafka-client")["secret"]
        files = [Path(mount["mountPath"]) / item["path"] for item in volume["items"]]
        assert ([kafka.ssl_certfile, kafka.ssl_keyfile], "logsig-user") == (files, volume["secretName"])

    @pytest.mark.parametrize("version", [OLDEST_KUBERNETES, "latest"])
    def test_mutual_tls_objects_fit_the_kubernetes_schema(
            self, render: Render, kubernetes_validate: ModuleType, version: str) -> None:
        """The Deployment with the client-certificate volume validates strictly."""
        objects = render("--set", "kafka.securityProtocol=SSL", "--set", "kafka.tls.clientSecret=logsig-user")
        version = kubernetes_validate.latest_version() if version == "latest" else version
        kubernetes_validate.validate(objects[("Deployment", "logsig")], version, strict=True)
        assert "kafka-client" in {v["name"] for v in pod_spec(objects)["volumes"]}
