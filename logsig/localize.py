"""The human texts of an incident: a short title, the example line, and their translations (pure).

- ``title``: the record's ``title`` field (logsig's optional catalog field) when it has one, else
  derived from the id's slug, words capitalised and known acronyms spelled as their projects spell
  them: ``llm/vllm-cuda-oom-during-prefill`` -> ``vLLM CUDA OOM during prefill``. A title never
  carries numbers from an example line, so it never contradicts the matched line;
- ``example``: the record's ``signature`` text, an example of the message (``match.line`` is the
  line actually logged);
- locale: the seed format carries translations as ``<field>_<locale>`` (``signature_zh``,
  ``root_cause_zh``, ``workarounds_zh``, and ``title_zh`` where given). With ``locale`` set to such a
  two-letter code, the example, root cause, title and each workaround's ``action`` (``workarounds_zh``
  lists them in the record's order) are taken from it; any text without a translation stays English.
"""

from __future__ import annotations

from typing import Any

from logsig.matchers.signature import Signature, Workaround

ENGLISH = "en"
WORDS = {
    "vllm": "vLLM", "sglang": "SGLang", "tgi": "TGI", "trtllm": "TensorRT-LLM", "llamacpp": "llama.cpp",
    "ollama": "Ollama", "cuda": "CUDA", "oom": "OOM", "gpu": "GPU", "nccl": "NCCL", "xid": "Xid", "hf": "HF",
    "kv": "KV", "ecc": "ECC", "nvlink": "NVLink", "nvml": "NVML", "shm": "SHM", "ib": "IB", "tp": "TP",
    "cublas": "cuBLAS", "cudnn": "cuDNN", "bf16": "BF16", "mmu": "MMU", "gsp": "GSP", "pci": "PCI", "k8s": "K8s",
    "api": "API", "cpu": "CPU", "rocm": "ROCm", "ray": "Ray", "triton": "Triton", "tensorrt": "TensorRT",
    "sigkill": "SIGKILL", "sigbus": "SIGBUS", "sigill": "SIGILL", "crashloop": "CrashLoop", "dns": "DNS",
    "tls": "TLS", "rdma": "RDMA", "pytorch": "PyTorch", "torch": "torch", "url": "URL", "io": "I/O",
    "nvidia": "NVIDIA", "dcgm": "DCGM", "hpu": "HPU", "enospc": "ENOSPC", "gc": "GC", "oomkilled": "OOMKilled",
}


def derived_title(signature_id: str) -> str:
    """A short title from the id's slug: ``gpu/xid-79-fallen-off-bus`` -> ``Xid 79 fallen off bus``."""
    words = signature_id.partition("/")[2].replace("_", "-").split("-")
    out = [WORDS.get(w, w) for w in words if w]
    if out and out[0] == words[0]:
        out[0] = out[0][:1].upper() + out[0][1:]
    return " ".join(out)


def _translated(sig: Signature, locale: str) -> dict[str, Any]:
    return {} if locale == ENGLISH else sig.translations.get(locale, {})


def title(sig: Signature, locale: str = ENGLISH) -> str:
    """The signature's title in ``locale`` (English when untranslated)."""
    own = (sig.model_extra or {}).get("title")
    translated = _translated(sig, locale).get("title")
    return str(translated or own or derived_title(sig.id))


def example(sig: Signature, locale: str = ENGLISH) -> str:
    """The record's example line (``signature``), translated where the record has it."""
    return str(_translated(sig, locale).get("signature") or sig.signature)


def root_cause(sig: Signature, locale: str = ENGLISH) -> str:
    """The root cause in ``locale``, else English."""
    return str(_translated(sig, locale).get("root_cause") or sig.root_cause)


def workaround_actions(sig: Signature, locale: str = ENGLISH) -> dict[int, str]:
    """Translated ``action`` per workaround (keyed by ``id`` of the record's Workaround), where given."""
    texts = _translated(sig, locale).get("workarounds") or []
    return {id(w): str(t) for w, t in zip(sig.workarounds, texts, strict=False) if isinstance(t, str) and t}


def action_of(workaround: Workaround, translated: dict[int, str]) -> str:
    """``workaround.action`` in the chosen locale."""
    return translated.get(id(workaround), workaround.action)
