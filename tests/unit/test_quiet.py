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

    def test_record_behind_a_collector_severity_keeps_its_own_level(self) -> None:
        """An INFO record that a collector marked ERROR (Cloud Logging's stderr) raises no generic incident."""
        line = "ERROR 2024-03-20T12:09:36.741697566Z 2024-03-20T12:09:36Z I 58 server.cc:634] Started GRPCInferenceService"
        assert ([], True) == (ids(line), bool(ENGINE.match(line)))

    def test_record_without_words_raises_nothing(self) -> None:
        """A level and a time before an empty JSON object is no message and no failure."""
        line = "ERROR 2024-03-20T12:09:36.741718541Z {}"
        assert ([], True) == (ids(line), bool(ENGINE.match(line)))

    def test_error_record_with_words_keeps_its_generic_incident(self) -> None:
        """An ERROR record with a message still raises the generic ERROR-record class."""
        line = "ERROR 2024-03-20T12:09:36.741718541Z model repository poll failed"
        assert "generic/error-log-record" in ids(line)

    def test_warning_that_reports_a_caught_exception_raises_nothing(self) -> None:
        """A WARNING naming what failed and the exception it caught keeps no match inside that exception."""
        line = ("2025-03-19 20:54:50,520 - lmdeploy - WARNING - supported_models.py:119 - AutoConfig.from_pretrained "
                "failed for /models/deepseek-vl2-tiny. Exception: The checkpoint you are trying to load has model "
                "type `deepseek_vl_v2` but Transformers does not recognize this architecture.")
        assert ([], True) == (ids(line), bool(ENGINE.match(line)))

    def test_error_that_reports_a_caught_exception_keeps_its_incident(self) -> None:
        """The same report at ERROR level is a failure and names its cause."""
        line = ("2025-03-19 20:54:50,520 - lmdeploy - ERROR - supported_models.py:119 - AutoConfig.from_pretrained "
                "failed for /models/deepseek-vl2-tiny. Exception: The checkpoint you are trying to load has model "
                "type `deepseek_vl_v2` but Transformers does not recognize this architecture.")
        assert "llm/hf-transformers-unknown-model-type" in ids(line)

    def test_setting_it_could_not_detect_is_advice(self) -> None:
        """'Unable to detect X, please set Y' asks for a setting; the program goes on."""
        lines = ["Unable to detect VRAM, please set layers manually.",
                 "Could not determine the number of GPUs; please specify --tensor-parallel-size."]
        assert [[], []] == [ids(line) for line in lines]

    def test_warning_prefix_is_a_level(self) -> None:
        """A Go or Python ``WARNING:`` prefix makes a warning record: an errno text raises no generic incident."""
        line = "WARNING: failed to read int from file: open /sys/class/drm/card0/device/numa_node: no such file or directory"
        assert ([], True) == (ids(line), bool(ENGINE.match(line)))

    def test_terminal_noise_of_a_shell_without_a_tty_raises_nothing(self) -> None:
        """Job-control and terminal-setting messages of a shell without a terminal are no failure."""
        lines = ["tcgetpgrp failed: Not a tty", "stty: 'standard input': Inappropriate ioctl for device",
                 "bash: no job control in this shell",
                 "bash: cannot set terminal process group (-1): Inappropriate ioctl for device"]
        assert [[], [], [], []] == [ids(line) for line in lines]

    def test_advice_that_quotes_an_error_as_an_example_raises_nothing(self) -> None:
        """vLLM's ulimit warning quotes the error it may lead to; that error has not happened."""
        line = ("WARNING 01-28 10:05:01 [utils.py:2573] Found ulimit of 1024 and failed to automatically increase with "
                "error current limit exceeds maximum limit. This can cause fd limit errors like `OSError: [Errno 24] "
                "Too many open files`. Consider increasing with ulimit -n")
        assert ([], True) == (ids(line), bool(ENGINE.match(line)))

    def test_error_before_an_example_keeps_its_incident(self) -> None:
        """The error a line states itself, before an example it quotes, keeps its signature."""
        line = "OSError: [Errno 24] Too many open files (raise the limit, e.g. 'ulimit -n 65536')"
        assert "host/too-many-open-files" in ids(line)

    def test_nccl_error_propagation_trace_raises_nothing(self) -> None:
        """NCCL's ``file.cc:N -> R`` INFO lines are the call stack of the WARN before them, not failures."""
        lines = ["node-1:2200689:2200706 [3] NCCL INFO transport/net.cc:1133 -> 6",
                 "node-1:2200689:2200706 [3] NCCL INFO proxy.cc:768 -> 6", "[0] NCCL INFO group.cc:75 -> 6 [Async thread]"]
        assert [[], [], []] == [ids(line) for line in lines]
