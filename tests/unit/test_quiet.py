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

    def test_warning_record_of_a_dropped_request_or_a_crash_raises(self) -> None:
        """A WARNING that a prompt exceeds the limit, or that a server crashed with an exit code, is a failure."""
        generic = Engine([s for s in load_catalog().signatures if s.tier == "generic"])
        lines = ["WARNING 02-13 07:19:11 scheduler.py:949] Input prompt (32889 tokens) is too long and exceeds limit of 2048",
                 'time=2025-02-12T16:31:50.931+08:00 level=WARN source=server.go:163 msg="server crash 13 - exit code 2 '
                 '- respawning"']
        kept = [[m.signature.id for m in quiet_matches(line, None, generic.match(line))] for line in lines]
        assert [["generic/limit-exceeded"], ["generic/process-died"]] == kept

    def test_warning_of_a_death_without_exit_code_stays_quiet(self) -> None:
        """Ray's worker-died warning, printed at some programs' every exit (ray-project/ray#8000), names
        no exit code: in a record at warning level it raises no generic incident."""
        generic = Engine([s for s in load_catalog().signatures if s.tier == "generic"])
        line = ("2020-04-13 15:35:00,032 WARNING worker.py:1072 -- A worker died or was killed while executing task "
                "ffffffffffffffff45b95b1c0100.")
        found = [m.signature.id for m in generic.match(line)]
        assert (["generic/process-died"], []) == (found, quiet_matches(line, "warning", generic.match(line)))
