"""Which inference server a stream runs, and whether a signature applies to it (pure, no I/O).

A stream's server is learnt two ways:

- from its start-up banner: catalog records with ``role: banner`` (``builtin/banner/``) match the
  line a server prints once at start-up, in the same engine pass as every other signature; the
  record's ``servers`` names the server and a ``version`` capture its release (vLLM's
  ``vLLM API server version 0.8.5``, Ollama's ``Listening on ... (version 0.5.7)``, ...);
- from Kubernetes metadata, when no banner was seen: the container image
  (``vllm/vllm-openai:v0.6.3`` -> vLLM 0.6.3), the container name, then the pod labels
  ``app.kubernetes.io/name`` and ``app``.

A signature is *for* the servers it names, when it names only inference servers: its ``servers``
field, the ``<server>-`` prefix of its slug and the packages of its ``versions``, for ``llm/``
records. Records of the platform layers (``cuda/``, ``nccl/``, ``gpu/``, ``host/``, ``k8s/``, ``ray/``,
``kserve/``, ``generic/``) and ``llm/`` records that also name a layer (``pytorch``, ``nccl``, ...) apply to
every server. :func:`coverage` says whether a signature's ``versions`` cover the stream's release.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from logsig.matchers.signature import Signature
from logsig.records import Source

SERVERS: tuple[str, ...] = ("vllm", "sglang", "tgi", "trtllm", "triton", "ollama", "llamacpp", "lmdeploy",
                            "ray", "kserve")
"""The inference servers logsig tells apart (the names used in ``servers`` and incidents)."""
Coverage = Literal["yes", "no", "unknown"]
Evidence = Literal["banner", "image", "container", "label"]
_PACKAGES: dict[str, str] = {
    "vllm": "vllm", "sglang": "sglang", "tgi": "tgi", "text-generation-inference": "tgi",
    "tensorrt-llm": "trtllm", "tensorrt_llm": "trtllm", "trtllm": "trtllm", "tritonserver": "triton",
    "ollama": "ollama", "llama.cpp": "llamacpp", "llamacpp": "llamacpp", "lmdeploy": "lmdeploy",
    "ray": "ray", "kserve": "kserve",
}
"""``versions`` package names (and name fragments) -> server."""
_NAMES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p), s) for p, s in (
    (r"vllm", "vllm"), (r"sglang", "sglang"), (r"text-generation-inference|\btgi\b", "tgi"),
    (r"tensorrt-?llm|trt-?llm", "trtllm"), (r"tritonserver|triton-?server|\btriton\b", "triton"),
    (r"ollama", "ollama"), (r"llama[.-]?cpp|llama-server", "llamacpp"), (r"lmdeploy", "lmdeploy"),
    (r"kserve", "kserve"), (r"\bray\b|rayproject|ray-serve", "ray"),
))
"""Image, container and label value fragments -> server, most specific first."""
_IMAGE_TAG = re.compile(r":v?(?P<version>\d+(?:\.\d+)+[\w.+-]*)(?:@|$)")
_LABELS = ("app.kubernetes.io/name", "app_kubernetes_io/name", "app")
_PLATFORM_DOMAINS = frozenset({"cuda", "nccl", "gpu", "host", "k8s", "generic", "banner", "ray", "kserve"})
_SPEC = re.compile(r"^\s*(?P<package>[A-Za-z][\w.-]*?)\s*(?P<spec>(?:[<>=!~]=?|===).*)?$")
MAX_STREAMS = 65_536
"""Streams whose server is remembered; the least recently seen is forgotten first."""


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """A stream's server: ``name`` (one of :data:`SERVERS`), ``version`` as printed (or None),
    and the ``evidence`` it was learnt from."""

    name: str
    version: str | None
    evidence: Evidence


def server_of_name(text: str) -> str | None:
    """The server a container image, container name or label value names, or None."""
    lowered = text.lower()
    return next((server for pattern, server in _NAMES if pattern.search(lowered)), None)


def from_source(source: Source) -> ServerInfo | None:
    """The server Kubernetes metadata names (image, container name, labels), or None."""
    if source.image:
        name = server_of_name(source.image.rsplit("/", 1)[-1]) or server_of_name(source.image)
        if name:
            tag = _IMAGE_TAG.search(source.image)
            return ServerInfo(name, tag.group("version") if tag else None, "image")
    if source.container and (name := server_of_name(source.container)):
        return ServerInfo(name, None, "container")
    for key in _LABELS:
        value = source.labels.get(key)
        if value and (name := server_of_name(value)):
            return ServerInfo(name, None, "label")
    return None


def from_banner(sig: Signature, captures: Mapping[str, str | None]) -> ServerInfo | None:
    """The server a banner match names (the record's first server, its ``version`` capture)."""
    names = [s for s in sig.servers if s in SERVERS]
    return ServerInfo(names[0], captures.get("version"), "banner") if names else None


_memo: dict[int, tuple[Signature, frozenset[str]]] = {}
_MEMO_SIZE = 20_000


def signature_servers(sig: Signature) -> frozenset[str]:
    """The servers ``sig`` is written for; empty when it applies to every server (see above).

    Memoised per record object (records are frozen; the memo keeps them alive, so ids are not
    reused, and is cleared when it reaches 20,000 records).
    """
    entry = _memo.get(id(sig))
    if entry is not None and entry[0] is sig:
        return entry[1]
    if len(_memo) >= _MEMO_SIZE:
        _memo.clear()
    found = _written_for(sig)
    _memo[id(sig)] = (sig, found)
    return found


def _written_for(sig: Signature) -> frozenset[str]:
    if sig.domain_name in _PLATFORM_DOMAINS:
        return frozenset()
    if any(s not in SERVERS for s in sig.servers):
        return frozenset()
    found = set(sig.servers)
    prefix = sig.id.partition("/")[2].split("-", 1)[0]
    if prefix in SERVERS:
        found.add(prefix)
    for version in sig.versions:
        parsed = _SPEC.match(version.version)
        if parsed and (server := _PACKAGES.get(parsed.group("package").lower())):
            found.add(server)
    return frozenset(found)


def is_foreign(sig: Signature, server: ServerInfo | None) -> bool:
    """True when ``sig`` is written for other servers than the stream's (known) one."""
    servers = signature_servers(sig)
    return server is not None and bool(servers) and server.name not in servers


def coverage(sig: Signature, server: ServerInfo | None) -> Coverage:
    """Whether ``sig``'s ``versions`` cover the stream's release.

    ``no`` for a signature written for another server; ``unknown`` when the server or its
    version is unknown, or ``sig`` gives no parseable constraint for that server's package;
    else ``yes`` when any constraint (``vllm>=0.6``, ``vllm==0.4.3``) holds, ``no`` when none does.
    """
    if server is None:
        return "unknown"
    if is_foreign(sig, server):
        return "no"
    version = _version(server.version)
    specs = _specifiers(tuple(v.version for v in sig.versions), server.name)
    if version is None or not specs:
        return "unknown"
    return "yes" if any(version in spec for spec in specs) else "no"


def _version(text: str | None) -> Version | None:
    if not text:
        return None
    try:
        return Version(text.lstrip("v"))
    except InvalidVersion:
        return None


@lru_cache(maxsize=4096)
def _specifiers(versions: Sequence[str], server: str) -> tuple[SpecifierSet, ...]:
    out = []
    for text in versions:
        parsed = _SPEC.match(text)
        if not parsed or _PACKAGES.get(parsed.group("package").lower()) != server or not parsed.group("spec"):
            continue
        try:
            out.append(SpecifierSet(parsed.group("spec").replace(" ", "")))
        except InvalidSpecifier:
            continue
    return tuple(out)


class StreamServers:
    """The server of each stream, from banners seen on it, else from its metadata (bounded LRU)."""

    def __init__(self, max_streams: int = MAX_STREAMS) -> None:
        self._banners: OrderedDict[object, ServerInfo] = OrderedDict()
        self._max = max_streams

    def saw_banner(self, stream: object, info: ServerInfo) -> None:
        """Remember ``info`` for ``stream`` (a later banner replaces an earlier one)."""
        self._banners[stream] = info
        self._banners.move_to_end(stream)
        while len(self._banners) > self._max:
            self._banners.popitem(last=False)

    def server(self, stream: object, source: Source) -> ServerInfo | None:
        """The stream's server: the last banner seen on it, else what its metadata names."""
        found = self._banners.get(stream)
        if found is not None:
            self._banners.move_to_end(stream)
            return found
        return from_source(source)
