"""Offline checks of deploy/kubernetes: core objects against the Kubernetes OpenAPI schemas
(kubernetes-validate), CRD objects by shape, and the wiring between them and logsig's settings."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from logsig.config import Settings, load_settings
from logsig.matchers.catalog.loader import load_catalog
from tests.deploy.support import (
    K8S_BASE,
    K8S_KEDA,
    RULES,
    configmap_volume,
    load_documents,
    load_yaml,
    run_tool,
)

CORE_KINDS = {"ServiceAccount", "ConfigMap", "Deployment", "Service", "PodDisruptionBudget"}
OLDEST_KUBERNETES = "1.28.0"
SIGNATURES_MOUNT = "/etc/logsig/signatures"
KEDA_SASL = {"PLAIN": "plaintext", "SCRAM-SHA-256": "scram_sha256", "SCRAM-SHA-512": "scram_sha512"}
"""logsig's kafka.sasl_mechanism in the KEDA kafka scaler's spelling."""


def objects(*directories: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """``{(kind, name): object}`` for every manifest in ``directories`` (kustomization files excluded)."""
    found = {}
    for directory in directories:
        for path in sorted(directory.glob("*.yaml")):
            if path.name != "kustomization.yaml":
                found.update({(doc["kind"], doc["metadata"]["name"]): doc for doc in load_documents(path)})
    return found


BASE = objects(K8S_BASE)
KEDA = objects(K8S_KEDA)
DEPLOYMENT = BASE[("Deployment", "logsig")]
POD = DEPLOYMENT["spec"]["template"]["spec"]
CONTAINER = POD["containers"][0]


def settings_text() -> str:
    """The logsig.yaml held by the logsig-config ConfigMap."""
    text: str = BASE[("ConfigMap", "logsig-config")]["data"]["logsig.yaml"]
    return text


def settings_data() -> dict[str, Any]:
    """The ConfigMap's settings as parsed YAML."""
    data: dict[str, Any] = yaml.safe_load(settings_text())
    return data


def container_port(name_or_number: str | int) -> int:
    """The container port a probe or Service names (by name or number)."""
    ports = {p["name"]: p["containerPort"] for p in CONTAINER["ports"]}
    port: int = ports.get(str(name_or_number), name_or_number)
    assert port in ports.values(), name_or_number
    return port


class TestCoreObjects:
    @pytest.mark.parametrize("version", [OLDEST_KUBERNETES, "latest"])
    def test_core_objects_fit_the_kubernetes_schema(self, kubernetes_validate: ModuleType, version: str) -> None:
        """ServiceAccount, ConfigMaps, Deployment, Service and PDB validate strictly."""
        version = kubernetes_validate.latest_version() if version == "latest" else version
        errors = []
        for key, doc in BASE.items():
            if doc["kind"] in CORE_KINDS:
                try:
                    kubernetes_validate.validate(doc, version, strict=True)
                except kubernetes_validate.ValidationError as error:
                    errors.append(f"{key}: {error.message}")
        assert ([], CORE_KINDS) == (errors, {kind for kind, _ in BASE} & CORE_KINDS)

    def test_kustomization_lists_every_manifest(self) -> None:
        """The base's kustomization includes each manifest file of the folder."""
        resources = load_yaml(K8S_BASE / "kustomization.yaml")["resources"]
        files = sorted(p.name for p in K8S_BASE.glob("*.yaml") if p.name != "kustomization.yaml")
        assert files == sorted(resources)


class TestDeployment:
    def test_runs_as_non_root_on_a_read_only_root_filesystem(self) -> None:
        """Non-root user, read-only root, no privilege escalation, no capabilities, no API token."""
        context = CONTAINER["securityContext"]
        assert (True, True, False, ["ALL"], False) == (
            POD["securityContext"]["runAsNonRoot"], context["readOnlyRootFilesystem"],
            context["allowPrivilegeEscalation"], context["capabilities"]["drop"], POD["automountServiceAccountToken"])

    def test_requests_and_limits_are_set(self) -> None:
        """CPU and memory have both a request and a limit."""
        resources = CONTAINER["resources"]
        assert [["cpu", "memory"]] * 2 == [sorted(resources["requests"]), sorted(resources["limits"])]

    def test_probes_use_healthz_and_readyz_on_the_http_port(self) -> None:
        """Liveness is /healthz and readiness /readyz, both on http.port of the settings."""
        probes = {kind: (CONTAINER[kind]["httpGet"]["path"], container_port(CONTAINER[kind]["httpGet"]["port"]))
                  for kind in ("livenessProbe", "readinessProbe")}
        port = settings_data()["http"]["port"]
        assert {"livenessProbe": ("/healthz", port), "readinessProbe": ("/readyz", port)} == probes

    def test_grace_period_outlasts_the_drain(self) -> None:
        """terminationGracePeriodSeconds exceeds shutdown_timeout_seconds by at least 10 s."""
        drain = settings_data()["shutdown_timeout_seconds"]
        assert POD["terminationGracePeriodSeconds"] >= drain + 10

    def test_sasl_credentials_come_from_the_secret(self) -> None:
        """LOGSIG_KAFKA__SASL_PASSWORD (and the user name) are read from the logsig-kafka Secret."""
        env = {e["name"]: e.get("valueFrom", {}).get("secretKeyRef") for e in CONTAINER["env"]}
        assert {"name": "logsig-kafka", "key": "password"} == env["LOGSIG_KAFKA__SASL_PASSWORD"]
        assert {"name": "logsig-kafka", "key": "username"} == env["LOGSIG_KAFKA__SASL_USERNAME"]

    def test_config_argument_is_the_mounted_settings_file(self) -> None:
        """`run --config FILE` names the path where the ConfigMap's logsig.yaml is mounted."""
        mount = next(m for m in CONTAINER["volumeMounts"] if m["name"] == "config")
        config_path = CONTAINER["args"][CONTAINER["args"].index("--config") + 1]
        assert (["run", "--config"], config_path, "logsig.yaml") == (
            CONTAINER["args"][:2], mount["mountPath"], mount["subPath"])

    def test_catalog_paths_are_keys_of_the_signatures_configmap(self) -> None:
        """Every catalog path lies in the signatures mount and names a key of logsig-signatures."""
        mount = next(m for m in CONTAINER["volumeMounts"] if m["name"] == "signatures")
        keys = set(BASE[("ConfigMap", "logsig-signatures")]["data"])
        paths = [Path(p) for p in settings_data()["catalog"]["paths"]]
        assert (SIGNATURES_MOUNT, keys) == (mount["mountPath"], {p.name for p in paths})
        assert all(str(p.parent) == SIGNATURES_MOUNT for p in paths)


class TestSettings:
    def test_configmap_settings_load_with_the_secret_in_the_environment(
            self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """logsig accepts the settings; the environment supplies the SASL user and password."""
        monkeypatch.setenv("LOGSIG_KAFKA__SASL_USERNAME", "logsig")
        monkeypatch.setenv("LOGSIG_KAFKA__SASL_PASSWORD", "s3cret")
        path = tmp_path / "logsig.yaml"
        path.write_text(settings_text(), encoding="utf-8")
        settings = load_settings(path)
        assert ("SASL_SSL", "logsig", "s3cret", 9464) == (
            settings.kafka.security_protocol, settings.kafka.sasl_username,
            settings.kafka.sasl_password.get_secret_value() if settings.kafka.sasl_password else None,
            settings.http.port)

    def test_example_signature_loads_from_a_configmap_volume(self, tmp_path: Path) -> None:
        """The configured catalog paths load once each from a kubelet-style ConfigMap volume."""
        volume = configmap_volume(tmp_path, BASE[("ConfigMap", "logsig-signatures")]["data"])
        paths = [volume / Path(p).relative_to(SIGNATURES_MOUNT) for p in settings_data()["catalog"]["paths"]]
        catalog = load_catalog(paths, builtin=False)
        assert ["k8s/site-model-puller-checksum-mismatch"] == [sig.id for sig in catalog.signatures]

    def test_example_signature_passes_its_own_examples(self, tmp_path: Path) -> None:
        """`logsig catalog test` runs the example's match and no_match lines successfully."""
        path = tmp_path / "example.yaml"
        path.write_text(BASE[("ConfigMap", "logsig-signatures")]["data"][
            "site-model-puller-checksum-mismatch.yaml"], encoding="utf-8")
        result = subprocess.run([sys.executable, "-m", "logsig", "catalog", "test", str(path)],
                                capture_output=True, text=True, timeout=120, check=False)
        assert 0 == result.returncode, result.stdout + result.stderr

    def test_default_drain_is_what_the_configmap_states(self) -> None:
        """The ConfigMap's shutdown_timeout_seconds is logsig's default, so the grace period fits it."""
        assert Settings.model_fields["shutdown_timeout_seconds"].default == settings_data()["shutdown_timeout_seconds"]


class TestWiring:
    def test_service_selects_the_pods_and_exposes_the_metrics_port(self) -> None:
        """The Service's selector matches the pod labels and its port targets the metrics port."""
        service = BASE[("Service", "logsig")]["spec"]
        labels = DEPLOYMENT["spec"]["template"]["metadata"]["labels"]
        port = service["ports"][0]
        assert (True, 9464, 9464) == (service["selector"].items() <= labels.items(), port["port"],
                                      container_port(port["targetPort"]))

    def test_service_name_is_the_job_the_rules_select(self) -> None:
        """The ServiceMonitor's job label (the Service name) is the job rules.yml selects."""
        assert 'up{job="logsig"}' in RULES.read_text(encoding="utf-8")
        assert "logsig" == BASE[("Service", "logsig")]["metadata"]["name"]

    def test_servicemonitor_scrapes_the_service_port_and_keeps_source_labels(self) -> None:
        """The ServiceMonitor selects the Service, scrapes its named port, honours metric labels."""
        monitor = BASE[("ServiceMonitor", "logsig")]
        endpoint = monitor["spec"]["endpoints"][0]
        service = BASE[("Service", "logsig")]
        assert ("monitoring.coreos.com/v1", True, "metrics", "/metrics", True) == (
            monitor["apiVersion"], monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"][
                "labels"].items(), endpoint["port"], endpoint["path"], endpoint["honorLabels"])
        assert set(endpoint) <= {"port", "path", "interval", "scrapeTimeout", "honorLabels", "scheme",
                                 "relabelings", "metricRelabelings"}

    def test_pdb_selects_the_pods(self) -> None:
        """The PodDisruptionBudget covers the Deployment's pods."""
        selector = BASE[("PodDisruptionBudget", "logsig")]["spec"]["selector"]["matchLabels"]
        assert selector == DEPLOYMENT["spec"]["selector"]["matchLabels"]


class TestKeda:
    def test_scaledobject_scales_the_deployment_on_logsigs_group_and_topic(self) -> None:
        """The kafka trigger reads the lag of logsig's consumer group, topic and brokers."""
        scaled = KEDA[("ScaledObject", "logsig")]["spec"]
        trigger = scaled["triggers"][0]
        kafka = settings_data()["kafka"]
        assert ("Deployment", "logsig", "kafka") == (
            scaled["scaleTargetRef"]["kind"], scaled["scaleTargetRef"]["name"], trigger["type"])
        assert (kafka["bootstrap_servers"], kafka["group_id"], kafka["topics"][0], kafka["auto_offset_reset"]) == (
            trigger["metadata"]["bootstrapServers"], trigger["metadata"]["consumerGroup"],
            trigger["metadata"]["topic"], trigger["metadata"]["offsetResetPolicy"])

    def test_scaledobject_shape(self) -> None:
        """Metadata values are strings (KEDA rejects others), replica bounds are ordered, auth exists."""
        scaled = KEDA[("ScaledObject", "logsig")]
        spec = scaled["spec"]
        trigger = spec["triggers"][0]
        assert ("keda.sh/v1alpha1", True, True) == (
            scaled["apiVersion"], all(isinstance(v, str) for v in trigger["metadata"].values()),
            1 <= spec["minReplicaCount"] <= spec["maxReplicaCount"])
        assert ("TriggerAuthentication", trigger["authenticationRef"]["name"]) in KEDA

    def test_trigger_authentication_reads_the_deployments_secret(self) -> None:
        """KEDA authenticates with the same Secret keys as logsig, in the SASL mode of the settings."""
        refs = KEDA[("TriggerAuthentication", "logsig-kafka")]["spec"]["secretTargetRef"]
        trigger = KEDA[("ScaledObject", "logsig")]["spec"]["triggers"][0]["metadata"]
        assert {("username", "logsig-kafka", "username"), ("password", "logsig-kafka", "password")} == {
            (r["parameter"], r["name"], r["key"]) for r in refs}
        assert (KEDA_SASL[settings_data()["kafka"]["sasl_mechanism"]], "enable") == (trigger["sasl"], trigger["tls"])


@pytest.fixture(scope="module")
def kubectl() -> str:
    """Path of kubectl; its absence skips, also in CI (it is optional)."""
    found = shutil.which("kubectl")
    if found is None:
        pytest.skip("kubectl is not installed; `kubectl kustomize` is only checked where it exists")
    return found


class TestKustomize:
    """Rendered with `kubectl kustomize` where kubectl exists."""

    def render(self, kubectl: str, directory: Path) -> list[dict[str, Any]]:
        result = run_tool(kubectl, "kustomize", str(directory))
        assert 0 == result.returncode, result.stderr
        return [doc for doc in yaml.safe_load_all(result.stdout) if doc]

    def test_base_renders_every_object_into_the_logsig_namespace(self, kubectl: str) -> None:
        """The base renders its objects, all in namespace logsig, with the image tag set."""
        docs = self.render(kubectl, K8S_BASE)
        deployment = next(d for d in docs if d["kind"] == "Deployment")
        assert (set(BASE), {"logsig"}) == (
            {(d["kind"], d["metadata"]["name"]) for d in docs}, {d["metadata"]["namespace"] for d in docs})
        assert "registry.example.com/logsig:0.1.0" == deployment["spec"]["template"]["spec"]["containers"][0]["image"]

    def test_keda_overlay_leaves_the_replica_count_to_keda(self, kubectl: str) -> None:
        """The overlay adds the KEDA objects in namespace logsig and drops the Deployment's replicas."""
        docs = self.render(kubectl, K8S_KEDA)
        deployment = next(d for d in docs if d["kind"] == "Deployment")
        assert (set(BASE) | set(KEDA), {"logsig"}, False) == (
            {(d["kind"], d["metadata"]["name"]) for d in docs}, {d["metadata"]["namespace"] for d in docs},
            "replicas" in deployment["spec"])
