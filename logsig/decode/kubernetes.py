"""Kubernetes metadata of shipper records, as a :class:`~logsig.records.Source`.

Field names per shipper (``docs/record-formats.md`` §10.1 has the full table):

- Fluent Bit ``kubernetes`` filter and Fluentd ``kubernetes_metadata``: ``kubernetes.pod_name``,
  ``namespace_name``, ``container_name``, ``host`` (the node), ``labels``, ``container_image``.
- Vector ``kubernetes_logs``: ``kubernetes.pod_name``, ``pod_namespace``, ``container_name``,
  ``pod_node_name``, ``pod_labels``, ``container_image``.
- Filebeat / Elastic Agent (ECS): ``kubernetes.pod.name``, ``kubernetes.namespace``,
  ``kubernetes.node.name``, ``kubernetes.container.name`` (else ``container.name``),
  ``kubernetes.labels``, ``container.image.name``; ``host.name`` is the shipper's pod, never the node.
- OpenTelemetry resource attributes: ``k8s.pod.name``, ``k8s.namespace.name``,
  ``k8s.container.name``, ``k8s.node.name``, ``k8s.cluster.name``, ``container.image.name``
  (with ``container.image.tag``, semantic conventions ``container.*``).

The cluster is never set by a shipper by default; it is probed under the spellings users add
(``kubernetes.cluster_name``, ``kubernetes.cluster``, ``orchestrator.cluster.name``, top-level
``cluster_name`` / ``cluster`` / ``k8s_cluster``, ``fields.cluster``), then taken from settings.
Label maps are kept exactly as the shipper wrote them (dotted or de-dotted keys).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from logsig.records import Source

_CLUSTER_KEYS = ("cluster_name", "cluster", "k8s_cluster")
_CLUSTER_HINTS = frozenset({"orchestrator", "fields", *_CLUSTER_KEYS})
_NO_LABELS: dict[str, str] = {}
_CACHE_SIZE = 4096
_sources: dict[tuple[str | None, ...], Source] = {}


def make_source(
    cluster: str | None,
    namespace: str | None = None,
    pod: str | None = None,
    container: str | None = None,
    node: str | None = None,
    stream: str | None = None,
    labels: dict[str, str] = _NO_LABELS,
    image: str | None = None,
) -> Source:
    """A Source, shared with earlier records of the same pod and stream when equal.

    Most records of a stream carry the same metadata; reusing the frozen value saves building
    one per record. The memo holds at most 4,096 entries (cleared when full).
    """
    key = (cluster, namespace, pod, container, node, stream, image)
    cached = _sources.get(key)
    if cached is not None and cached.labels == labels:
        return cached
    if len(_sources) >= _CACHE_SIZE:
        _sources.clear()
    source = Source(cluster, namespace, pod, container, node, stream, labels, image)
    _sources[key] = source
    return source


def _text(value: object) -> str | None:
    """``value`` if it is a non-empty string, else None."""
    return value if type(value) is str and value else None


def _child(value: object, key: str) -> object:
    """``value[key]`` when ``value`` is a mapping, else None."""
    return value.get(key) if type(value) is dict else None


def _labels(value: object) -> dict[str, str]:
    """A label map as the shipper wrote it (non-maps give no labels)."""
    return value if type(value) is dict and value else _NO_LABELS


_LAYOUTS: tuple[tuple[tuple[str, ...], str, str, str], ...] = (
    # (keys that identify the layout, namespace key, node key, labels key)
    (("pod_namespace", "pod_node_name"), "pod_namespace", "pod_node_name", "pod_labels"),  # Vector
    (("pod_name", "namespace_name"), "namespace_name", "host", "labels"),  # Fluent Bit, Fluentd
)


def record_source(record: Mapping[str, Any], stream: str | None, fallback_cluster: str | None) -> Source:
    """The Source of a JSON/msgpack shipper record (any of the layouts above)."""
    kube = record.get("kubernetes")
    cluster = _cluster(record, kube) or fallback_cluster
    if type(kube) is not dict:
        return make_source(cluster, container=_ecs_container(record), stream=stream)
    for detect, namespace, node, labels in _LAYOUTS:
        if any(key in kube for key in detect):
            return make_source(
                cluster,
                _text(kube.get(namespace)),
                _text(kube.get("pod_name")),
                _text(kube.get("container_name")),
                _text(kube.get(node)),
                stream,
                _labels(kube.get(labels)),
                _text(kube.get("container_image")),
            )
    return _ecs_source(record, kube, cluster, stream)


def _ecs_source(record: Mapping[str, Any], kube: dict[str, Any], cluster: str | None, stream: str | None) -> Source:
    """Filebeat / Elastic Agent (ECS) field names."""
    container = _text(_child(kube.get("container"), "name")) or _ecs_container(record)
    namespace = kube.get("namespace")
    if type(namespace) is dict:
        namespace = namespace.get("name")
    return make_source(
        cluster,
        _text(namespace),
        _text(_child(kube.get("pod"), "name")),
        container,
        _text(_child(kube.get("node"), "name")),
        stream,
        _labels(kube.get("labels")),
        _text(_child(_child(record.get("container"), "image"), "name")),
    )


def _ecs_container(record: Mapping[str, Any]) -> str | None:
    """ECS top-level ``container.name``."""
    return _text(_child(record.get("container"), "name"))


def _cluster(record: Mapping[str, Any], kube: object) -> str | None:
    """The cluster name a record carries, probed in the documented order, or None."""
    if type(kube) is dict and ("cluster_name" in kube or "cluster" in kube):
        found = _text(kube.get("cluster_name")) or _text(kube.get("cluster"))
        if found:
            return found
    if _CLUSTER_HINTS.isdisjoint(record):
        return None
    found = _text(_child(_child(record.get("orchestrator"), "cluster"), "name"))
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
    return make_source(
        _text(get("k8s.cluster.name")) or fallback_cluster,
        _text(get("k8s.namespace.name")) or _text(get("namespace")),
        _text(get("k8s.pod.name")) or _text(get("pod")),
        _text(get("k8s.container.name")) or _text(get("container")),
        _text(get("k8s.node.name")) or _text(get("node_name")),
        stream,
        image=_otel_image(attributes),
    )


def _otel_image(attributes: Mapping[str, object]) -> str | None:
    """``container.image.name``, with ``:container.image.tag`` when the name has no tag."""
    name = _text(attributes.get("container.image.name"))
    tag = _text(attributes.get("container.image.tag"))
    if name and tag and ":" not in name.rsplit("/", 1)[-1]:
        return f"{name}:{tag}"
    return name
