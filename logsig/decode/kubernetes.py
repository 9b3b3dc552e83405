"""Kubernetes metadata of shipper records, as a :class:`~logsig.records.Source`.

Field names per shipper (docs/decoding.md has the full table):

- Fluent Bit ``kubernetes`` filter and Fluentd ``kubernetes_metadata``: ``kubernetes.pod_name``,
  ``namespace_name``, ``container_name``, ``host`` (the node), ``labels``.
- Vector ``kubernetes_logs``: ``kubernetes.pod_name``, ``pod_namespace``, ``container_name``,
  ``pod_node_name``, ``pod_labels``.
- Filebeat / Elastic Agent (ECS): ``kubernetes.pod.name``, ``kubernetes.namespace``,
  ``kubernetes.node.name``, ``kubernetes.container.name`` (else ``container.name``),
  ``kubernetes.labels``; ``host.name`` is the shipper's pod, never the node.
- OpenTelemetry resource attributes: ``k8s.pod.name``, ``k8s.namespace.name``,
  ``k8s.container.name``, ``k8s.node.name``, ``k8s.cluster.name``.

The cluster is never set by a shipper by default; it is probed under the spellings users add
(``kubernetes.cluster_name``, ``kubernetes.cluster``, ``orchestrator.cluster.name``, top-level
``cluster_name`` / ``cluster`` / ``k8s_cluster``, ``fields.cluster``), then taken from settings.
Label keys are kept exactly as the shipper wrote them (dotted or de-dotted).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from logsig.records import Source

_CLUSTER_KEYS = ("cluster_name", "cluster", "k8s_cluster")


def _text(value: object) -> str | None:
    """``value`` if it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def _child(value: object, key: str) -> object:
    """``value[key]`` when ``value`` is a mapping, else None."""
    return value.get(key) if isinstance(value, dict) else None


def _labels(value: object) -> dict[str, str]:
    """String-valued entries of a label map (other values are skipped)."""
    if not isinstance(value, dict) or not value:
        return {}
    return {key: item for key, item in value.items() if isinstance(item, str)}


def record_source(record: Mapping[str, Any], stream: str | None, fallback_cluster: str | None) -> Source:
    """The Source of a JSON/msgpack shipper record (any of the layouts above)."""
    kube = record.get("kubernetes")
    cluster = _cluster(record, kube) or fallback_cluster
    if not isinstance(kube, dict):
        return Source(cluster=cluster, stream=stream, container=_ecs_container(record))
    if "pod_namespace" in kube or "pod_node_name" in kube:
        return _vector_source(kube, cluster, stream)
    if "pod_name" in kube or "namespace_name" in kube:
        return Source(
            cluster=cluster,
            namespace=_text(kube.get("namespace_name")),
            pod=_text(kube.get("pod_name")),
            container=_text(kube.get("container_name")),
            node=_text(kube.get("host")),
            stream=stream,
            labels=_labels(kube.get("labels")),
        )
    return _ecs_source(record, kube, cluster, stream)


def _vector_source(kube: dict[str, Any], cluster: str | None, stream: str | None) -> Source:
    """Vector ``kubernetes_logs`` field names."""
    return Source(
        cluster=cluster,
        namespace=_text(kube.get("pod_namespace")),
        pod=_text(kube.get("pod_name")),
        container=_text(kube.get("container_name")),
        node=_text(kube.get("pod_node_name")),
        stream=stream,
        labels=_labels(kube.get("pod_labels")),
    )


def _ecs_source(record: Mapping[str, Any], kube: dict[str, Any], cluster: str | None, stream: str | None) -> Source:
    """Filebeat / Elastic Agent (ECS) field names."""
    container = _text(_child(kube.get("container"), "name")) or _ecs_container(record)
    namespace = kube.get("namespace")
    if isinstance(namespace, dict):
        namespace = namespace.get("name")
    return Source(
        cluster=cluster,
        namespace=_text(namespace),
        pod=_text(_child(kube.get("pod"), "name")),
        container=container,
        node=_text(_child(kube.get("node"), "name")),
        stream=stream,
        labels=_labels(kube.get("labels")),
    )


def _ecs_container(record: Mapping[str, Any]) -> str | None:
    """ECS top-level ``container.name``."""
    return _text(_child(record.get("container"), "name"))


def _cluster(record: Mapping[str, Any], kube: object) -> str | None:
    """The cluster name a record carries, probed in the documented order, or None."""
    if isinstance(kube, dict):
        found = _text(kube.get("cluster_name")) or _text(kube.get("cluster"))
        if found:
            return found
    orchestrator = record.get("orchestrator")
    if orchestrator is not None:
        found = _text(_child(_child(orchestrator, "cluster"), "name"))
        if found:
            return found
    for key in _CLUSTER_KEYS:
        found = _text(record.get(key))
        if found:
            return found
    return _text(_child(record.get("fields"), "cluster"))


def otel_source(attributes: Mapping[str, object], stream: str | None, fallback_cluster: str | None) -> Source:
    """The Source from OpenTelemetry attributes (resource first, merged by the caller).

    Loki-style label attributes (``namespace``, ``pod``, ``container``, ``node_name``, from
    Grafana Alloy ``otelcol.receiver.loki``) are read when the ``k8s.*`` ones are absent.
    """
    get = attributes.get
    return Source(
        cluster=_text(get("k8s.cluster.name")) or fallback_cluster,
        namespace=_text(get("k8s.namespace.name")) or _text(get("namespace")),
        pod=_text(get("k8s.pod.name")) or _text(get("pod")),
        container=_text(get("k8s.container.name")) or _text(get("container")),
        node=_text(get("k8s.node.name")) or _text(get("node_name")),
        stream=stream,
    )
