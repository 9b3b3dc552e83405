"""quiet_matches: what a line says of itself that makes it no failure."""

from __future__ import annotations

from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.quiet import quiet_matches

ENGINE = Engine(load_catalog().signatures)
PROMPT = ("INFO 06-12 10:43:00 [logger.py:39] Received request chatcmpl-abc: prompt: '<|user|>My server printed "
          "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus. What now?', params: SamplingParams(n=1)")
HINTS = [
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
    "incorrect.",
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
]


def ids(message: str) -> list[str]:
    """Signature ids of ``message``'s matches that quiet_matches keeps."""
    return [m.signature.id for m in quiet_matches(message, None, ENGINE.match(message))]


class TestQuietMatches:
    def test_prompt_echoed_by_a_request_log_raises_nothing(self) -> None:
        """A failure's words inside a prompt vLLM's request logger echoes are not a failure."""
        assert ([], True) == (ids(PROMPT), bool(ENGINE.match(PROMPT)))

    def test_sglang_request_log(self) -> None:
        """SGLang's Receive: obj=... echo of a request's text raises nothing."""
        line = ("[2025-05-27 20:00:05 TP0] Receive: obj=GenerateReqInput(rid='r1', text='why do I get "
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB')")
        assert [] == ids(line)

    def test_failure_before_the_echo_is_kept(self) -> None:
        """A failure a line states before the echoed text still raises its incident."""
        line = "RuntimeError: CUDA error: out of memory; Received request r1: prompt: 'hi'"
        assert "cuda/cuda-error-out-of-memory" in ids(line)

    def test_pytorch_hint_lines_alone_raise_nothing(self) -> None:
        """PyTorch's CUDA hint lines on their own are advice."""
        assert [[], [], []] == [ids(line) for line in HINTS]

    def test_exception_with_its_hints_keeps_its_incident(self) -> None:
        """The CUDA error a traceback's hints follow keeps its signature."""
        message = "\n".join(["RuntimeError: CUDA error: out of memory", *HINTS])
        assert "cuda/cuda-error-out-of-memory" in ids(message)

    def test_warning_record_raises_only_the_warning_class(self) -> None:
        """A WARN record with an errno text raises no generic incident; one carrying its caught error may."""
        line = ('time=2024-03-15T14:15:29.927-06:00 level=WARN source=amd_linux.go:53 msg="amdgpu version file '
                'missing: /sys/module/amdgpu/version stat /sys/module/amdgpu/version: no such file or directory"')
        assert ([], True) == (ids(line), bool(ENGINE.match(line)))
