"""The generic tier: classes of failure below every specific signature, quiet on benign lines.

Only the written-from part of the corpus is read here (``tests/data/corpus/heldout`` stays held out).
"""

from __future__ import annotations

import io
import json
from functools import cache
from pathlib import Path

import pytest

from logsig.config import load_settings
from logsig.matchers.engine.engine import Engine
from logsig.matchers.signature import GENERIC_PRIORITY
from logsig.pipeline import Detection, Pipeline
from logsig.sources.lines import line_chunks
from tests.unit.matchers.catalog.builtin_support import builtin_catalog, builtin_engine

CORPUS = Path(__file__).parents[3] / "data" / "corpus"


def _rows(name: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in (CORPUS / name).read_text(encoding="utf-8").splitlines() if line.strip()]


@cache
def _generic_engine() -> Engine:
    """The generic family alone: a catalog that knows no specific failure."""
    return Engine([s for s in builtin_catalog().signatures if s.id.startswith("generic/")])


def _detections(lines: list[str], engine: Engine | None = None) -> list[Detection]:
    """What ``logsig scan`` reports for ``lines`` read as one file (built-in catalog by default)."""
    pipeline = Pipeline(engine or builtin_engine(), load_settings().decode)
    found: list[Detection] = []
    for chunk in line_chunks(io.BytesIO("\n".join(lines).encode()), "<excerpt>", 4096):
        found.extend(pipeline.process(chunk, 0.0).detections)
    return [*found, *pipeline.flush_all().detections]


def _generic() -> list[str]:
    return [s.id for s in builtin_catalog().signatures if s.id.startswith("generic/")]


class TestGenericFamily:
    """The built-in generic family (``builtin/generic/``)."""

    def test_family_is_in_the_generic_tier_below_every_specific_signature(self) -> None:
        """Every generic record is domain ``generic``, tier generic, low confidence, below all others."""
        sigs = builtin_catalog().signatures
        family = [s for s in sigs if s.id.startswith("generic/")]
        lowest_specific = min(s.priority for s in sigs if not s.id.startswith("generic/"))
        assert [] == [s.id for s in family if (s.domain, s.tier) != ("generic", "generic")
                      or (s.confidence or 1.0) > 0.3 or s.priority >= lowest_specific]
        assert lowest_specific > GENERIC_PRIORITY

    def test_every_named_class_has_a_record(self) -> None:
        """Python, Rust, Go, native, OOM, NCCL, log level, Kubernetes events, network, limits,
        unsupported builds and failed steps each have a record."""
        expected = {"generic/python-exception", "generic/rust-panic", "generic/go-panic", "generic/native-crash",
                    "generic/out-of-memory", "generic/nccl-error", "generic/error-log-record",
                    "generic/k8s-warning-event", "generic/network-error", "generic/limit-exceeded",
                    "generic/not-supported", "generic/step-failed"}
        assert expected <= set(_generic())

    def test_quiet_on_the_benign_corpus(self) -> None:
        """No benign line of the corpus (the tricky warnings and INFO lines included) raises an incident."""
        lines = [str(r["line"]) for r in _rows("benign_lines.jsonl")]
        noisy = {line: d.incident.signature.id for line in lines for d in _detections([line])}
        assert {} == noisy

    def test_specific_signature_stays_primary(self) -> None:
        """A line a specific signature knows keeps it as primary; the generic match is in also_matched."""
        line = "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"
        incident = _detections([line])[0].incident
        assert ("cuda/cublas-alloc-failed", "specific") == (incident.signature.id, incident.tier)
        assert "generic/accelerator-error" in incident.also_matched

    def test_the_family_alone_detects_the_written_from_corpus(self) -> None:
        """With no specific signature at all, the generic family raises an incident on >= 85% of the
        written-from excerpts: what an unknown failure of any of these classes would get."""
        excerpts = [*_rows("real_logs.jsonl"), *_rows("incoming/real_logs.jsonl")]
        assert len(excerpts) >= 300
        detected = [e for e in excerpts if _detections([str(x) for x in e["lines"]], _generic_engine())]  # type: ignore[attr-defined]
        assert len(detected) >= 0.85 * len(excerpts)

    def test_the_family_alone_detects_the_written_from_key_lines(self) -> None:
        """With no specific signature, the key line alone of >= 93% of the written-from excerpts raises
        an incident: a log window may hold only the cause line."""
        excerpts = [*_rows("real_logs.jsonl"), *_rows("incoming/real_logs.jsonl")]
        keys = [str(e["lines"][int(str(e["key_line_index"]))]) for e in excerpts]  # type: ignore[index]
        detected = [key for key in keys if _detections([key], _generic_engine())]
        assert len(detected) >= 0.93 * len(keys)

    def test_an_api_error_body_is_an_http_error_response(self) -> None:
        """A vLLM error body printed to the log keeps its "object": "error" through decoding and is named."""
        line = ('{"object":"error","message":"The model `Qwen1.5-14B-Chat-GPTQ-Int8` does not exist.",'
                '"type":"NotFoundError","param":null,"code":404}')
        assert ["generic/http-error-response"] == [d.incident.signature.id for d in _detections([line], _generic_engine())]

    def test_a_json_record_at_error_level_is_an_error_record(self) -> None:
        """A zap-style JSON record whose level field says error is named by its level, its message
        as the matched text; the same record at info level raises nothing."""
        record = '{"level":"%s","ts":1700000000.5,"logger":"controller","msg":"Reconciler error","controller":"isvc"}'
        found = _detections([record % "error"], _generic_engine()) + _detections([record % "info"], _generic_engine())
        assert [("generic/error-log-record", "Reconciler error")] == [
            (d.incident.signature.id, d.incident.match.matched_text) for d in found]

    def test_python_exception_names_the_class(self) -> None:
        """The final line of a traceback in a vLLM ERROR record is a python-exception with its class."""
        line = "ERROR 12-05 20:24:46 engine.py:366] KeyError: 'layers.0.mlp.down_proj.weight_scale'"
        detection = _detections([line], _generic_engine())[0]
        assert ("generic/python-exception", "KeyError") == (
            detection.incident.signature.id, detection.incident.match.captures["exception"])

    @pytest.mark.parametrize(("line", "exception"), [
        ("(EngineCore_DP0 pid=380873) ValueError: To serve at least one request with the models's max seq len", "ValueError"),
        ("[rank0]: AttributeError: 'Qwen2Model' object has no attribute 'embed_tokens'", "AttributeError"),
        ("(pid=4521) ray.exceptions.RayTaskError(ValueError): ray::RayWorkerWrapper.execute_method()", "ray.exceptions.RayTaskError"),
        ("  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)", "ExceptionGroup"),
        ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:", "torch._dynamo.exc.BackendCompilerFailed"),
        ("zipfile.BadZipFile: File is not a zip file", "zipfile.BadZipFile"),
        ("(ServeReplica:router:Router pid=265, ip=10.0.150.166) anyio.EndOfStream", "anyio.EndOfStream"),
        ("AttributeError                            Traceback (most recent call last)", "AttributeError"),
    ])
    def test_python_exception_under_any_prefix(self, line: str, exception: str) -> None:
        """Worker, rank and Ray prefixes, exception groups, Ray's wrapped class and classes of an
        ``exc``/``errors`` module, dotted classes named neither Error nor Exception and a notebook's
        traceback header all name the exception."""
        detection = _detections([line], _generic_engine())[0]
        assert ("generic/python-exception", exception) == (
            detection.incident.signature.id, detection.incident.match.captures["exception"])

    @pytest.mark.parametrize(("line", "expected"), [
        ("[  603.029519] [drm:psp_hw_init [amdgpu]] *ERROR* PSP firmware loading failed", "generic/error-log-record"),
        ("[Error]: The vector core execution is abnormal.", "generic/error-log-record"),
        ("2025-07-02T15:35:18Z #7 278.8 E: Package 'build-essential' has no installation candidate",
         "generic/error-log-record"),
        ("CMake Error at CMakeLists.txt:14 (project):", "generic/error-message"),
        ('"error": "fails to reconcile component: fails to create NewRawKubeReconciler for predictor",',
         "generic/error-message"),
        ("Exception occurred during processing of request from ('127.0.0.1', 55283)", "generic/python-traceback"),
        ("(main_task pid=235642) Unhandled error (suppress with 'RAY_IGNORE_UNHANDLED_ERRORS=1'): "
         "ray::WorkerDict.actor_rollout_generate_sequences() (pid=237706, ip=10.140.24.28)", "generic/python-traceback"),
        ("exec /usr/local/bin/python3: exec format error", "generic/os-error"),
        ("/media/build/llama/ggml/src/ggml-backend.cpp:748: pre-allocated tensor (cache_k_l0 (view)) in a buffer "
         "(Vulkan0) that cannot run the operation (CPY)", "generic/native-crash"),
        ("研究过程中发生错误: peer closed connection without sending complete message body (incomplete chunked read)",
         "generic/network-error"),
    ])
    def test_classes_beyond_the_server_headers(self, line: str, expected: str) -> None:
        """Kernel DRM, Ascend and apt error records, CMake and pretty-printed JSON errors, socketserver's and
        Ray's reports, ENOEXEC, lowercase ggml aborts and an error under a non-English prefix are named."""
        assert [expected] == [d.incident.signature.id for d in _detections([line], _generic_engine())]

    @pytest.mark.parametrize(("line", "expected"), [
        ("Signal (11) received.", "generic/native-crash"),
        ("[64524.535657] BUG: workqueue lockup - pool cpus=14 node=0 flags=0x0 nice=0 stuck for 360s!",
         "generic/native-crash"),
        ("[  +0.000049] task:python3.11      state:D stack:    0 pid:15277 ppid: 15257 flags:0x00000002",
         "generic/timeout"),
        ("2025-08-16T00:03:03.937586-04:00 localhost systemd[1]: nvidia-persistenced.service: Control process exited, "
         "code=exited, status=1/FAILURE", "generic/process-died"),
        ("root        1059     657  0 May11 pts/0    00:19:02 [triton_python_b] <defunct>", "generic/process-died"),
        ("HTTP Error 429 thrown while requesting HEAD https://huggingface.co/.../resolve/v2/config.json",
         "generic/http-error-response"),
        ("_amdgpu_device_initialize: amdgpu_get_auth (1) failed (-1)", "generic/error-message"),
        ("update_slots : failed to decode the batch, n_batch = 1, ret = 1", "generic/error-message"),
        ('\\"auto\\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
         "generic/requirement-unmet"),
        ("!!! Exception during processing !!! FlashAttention only supports Ampere GPUs or newer.", "generic/not-supported"),
        ('Error: Head "https://registry.ollama.ai/v2/library/qwen/blobs/sha256:1296b084ed6bc4c6eaee99255d73e9c715d38e00'
         '87b6467fd1c498b908180614": unexpected EOF', "generic/network-error"),
    ])
    def test_widened_classes(self, line: str, expected: str) -> None:
        """Triton's crash-signal report, kernel BUG and hung-task headers, systemd unit failures, zombie
        processes, a client's HTTP 429, a native call's negative return code, llamafile's spaced logger,
        a flag a feature requires, a GPU generation a kernel requires and a cut-off download are named
        (real lines from public reports)."""
        assert [expected] == [d.incident.signature.id for d in _detections([line], _generic_engine())]

    @pytest.mark.parametrize(("line", "expected"), [
        # https://github.com/ROCm/legacy-rocm-build/issues/6273
        ("[127033.279661] amdgpu 0000:c5:00.0: amdgpu: ring gfx_0.0.0 timeout, signaled seq=2662395, emitted seq=2662397",
         "generic/accelerator-error"),
        ("[127037.563935] amdgpu 0000:c5:00.0: amdgpu: MES failed to respond to msg=REMOVE_QUEUE",
         "generic/accelerator-error"),
        # https://github.com/pytorch/pytorch/issues/35710
        ("cudaGetDeviceProperties returned 802", "generic/accelerator-error"),
        # https://github.com/NVIDIA/k8s-device-plugin/issues/414 and /65
        ("2023/06/12 09:21:25 No devices found. Waiting indefinitely.", "generic/accelerator-error"),
        ("2018/08/07 18:05:29 Failed to created FS watcher.", "generic/call-failed"),
        # https://github.com/knative/serving/issues/1668
        ("message: 'Revision \"kythe-00003\" failed with message: \"\".'", "generic/error-message"),
        # https://github.com/ollama/ollama/issues/6248
        ("Active: activating (auto-restart) (Result: exit-code) since Fri 2024-08-09 15:41:52 CST; 2s ago",
         "generic/process-died"),
        # https://github.com/torch-spyre/sendnn-inference/issues/191
        ("Signal Received: 15 (Terminated)", "generic/process-died"),
        # https://github.com/ollama/ollama/issues/9036 (a WARN record that names the exit code)
        ('time=2025-02-12T16:31:50.931+08:00 level=WARN source=server.go:163 msg="server crash 13 - exit code 2 - '
         'respawning"', "generic/process-died"),
        # https://github.com/kubernetes/kubernetes/issues/71261
        ("[Tue Nov 20 22:30:22 2018] nf_conntrack: table full, dropping packet", "generic/os-error"),
        # https://github.com/NVIDIA/TensorRT-LLM/issues/2303
        ("assert max_batch_size <= model_config.max_batch_size", "generic/stack-frame"),
        # https://github.com/huggingface/text-generation-inference/issues/1108
        ("`max_new_tokens` must be <= 1", "generic/limit-exceeded"),
        # https://github.com/vllm-project/vllm/issues/17757
        ('"message": "At most 1 image(s) may be provided in one request.",', "generic/limit-exceeded"),
        # https://github.com/vllm-project/vllm/issues/13209 (the scheduler drops the request it warns about)
        ("WARNING 02-13 07:19:11 scheduler.py:949] Input prompt (32889 tokens) is too long and exceeds limit of 2048",
         "generic/limit-exceeded"),
    ])
    def test_classes_widened_for_unknown_failures(self, line: str, expected: str) -> None:
        """A GPU kernel driver's failure, a CUDA API's non-zero return, a device plugin that finds no
        device or fails in its Go log, a controller's failure message, systemd's failed results, a
        runtime's fatal signal, a crash at WARN with its exit code, a full kernel table, a traceback's
        failed assert, a request over a validation bound or a multimodal limit are named."""
        assert [expected] == [d.incident.signature.id for d in _detections([line], _generic_engine())]

    @pytest.mark.parametrize(("line", "expected"), [
        # https://github.com/vllm-project/vllm/issues/2067
        ("    raise AsyncEngineDeadError(", "generic/stack-frame"),
        # https://github.com/vllm-project/vllm-ascend/issues/692
        ("GELib::InnerInitialize failed.[FUNC:Initialize][FILE:gelib.cc][LINE:177]", "generic/call-failed"),
        # https://github.com/vllm-project/vllm/issues/7785
        ("-- Configuring incomplete, errors occurred!", "generic/error-message"),
        # https://github.com/verl-project/verl/issues/2357
        ("(TaskRunner pid=568593) Failed to unpickle serialized exception", "generic/error-message"),
        # https://github.com/sgl-project/sglang/pull/6555
        ("[2025-07-11 17:40:16 DP0 TP0] Pyspy failed to dump PID 544. Error: /bin/sh: 1: py-spy: not found",
         "generic/error-with-cause"),
        # https://github.com/FlashML-org/FreeToken/issues/246
        ("[16:10:42] health/ERROR  OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: "
         "65536. Reducing block sizes or `num_stages` may help.", "generic/out-of-memory"),
        # https://github.com/NVIDIA/nccl-tests/issues/263
        (".. g0010 pid 888385: Test failure common.cu:891", "generic/nccl-error"),
        # https://github.com/NVIDIA/TensorRT-LLM/issues/1826
        ("1       0x7fb4aebbeb71 tensorrt_llm::common::throwRuntimeError(char const*, int, std::string const&) + 82",
         "generic/stack-frame"),
        ("kernel: python3[40923]: segfault at 100 ip 00007f2711b2d282 sp 00007fffa29a1530 error 4 in "
         "libamdhip64.so[7f2711a00000+3f3000] likely on CPU 9 (core 1, socket 0)", "generic/native-crash"),
        # https://github.com/derailed/k9s/issues/174
        ("Status:             Failed", "generic/k8s-pod-failure"),
        # https://github.com/facebookresearch/xformers/issues/1191
        ("[rank0]: `fa2F@v2.5.7-pt` is not supported because:", "generic/not-supported"),
        # https://github.com/jswortz/spotify_mpd_two_tower/issues/7
        ('details = "failed to connect to all addresses; last error: UNKNOWN: ipv4:10.53.0.5:10000: Failed to connect '
         'to remote host: FD Shutdown"', "generic/network-error"),
        # https://github.com/ggml-org/llama.cpp/issues/21677
        ("get_repo_files: error: GET failed (429): <!DOCTYPE html>", "generic/http-error-response"),
    ])
    def test_more_shapes_of_the_same_classes(self, line: str, expected: str) -> None:
        """A traceback's raise line, a C++ method that failed, CMake's closing error, a Ray worker's failed
        step, a step's caught cause, Triton's out-of-resource, nccl-tests' check, TensorRT-LLM's native
        frames, the kernel's segfault report, a failed pod's status, an operator xformers cannot run, gRPC's
        unreachable addresses and a rate-limited download are named."""
        assert [expected] == [d.incident.signature.id for d in _detections([line], _generic_engine())]

    @pytest.mark.parametrize(("line", "expected"), [
        ("/AppleInternal/Library/BuildRoots/d187755d-b9a3-11ef-83e5-aabfac210453/Library/Caches/com.apple.xbs/Sources/"
         "MetalPerformanceShaders/MPSCore/Types/MPSNDArray.mm:850: failed assertion `[MPSNDArray initWithDevice:"
         "descriptor:isTextureBacked:] Error: total bytes of NDArray > 2**32'", "generic/native-crash"),
        ("Abort trap: 6", "generic/native-crash"),
        ("16:30:59 - LiteLLM Proxy:ERROR: proxy_server.py:2586 - litellm.proxy.proxy_server.async_data_generator(): "
         "Exception occured - b''", "generic/error-message"),
        # https://projectcontour.io/docs/main/troubleshooting/envoy-debug/
        ('[2024-02-06T15:18:17.437Z] "GET / HTTP/1.1" 503 UF 0 91 1998 - "103.67.2.26" "curl/8.4.0" '
         '"d70640ec-2feb-46f8-9f63-24c44142c42e" "example.projectcontour.io" "10.244.8.27:8080"',
         "generic/http-error-response"),
        ("Job 'raysubmit_8BTCzNfEtd6ZAS3n' failed", "generic/serving-status-failed"),
    ])
    def test_shapes_of_gateways_clients_and_other_platforms(self, line: str, expected: str) -> None:
        """Metal's failed assertion and macOS's abort, LiteLLM's ERROR records (by their ``:ERROR:``), a
        proxy's 5xx access-log line and a failed Ray job are named."""
        assert [expected] == [d.incident.signature.id for d in _detections([line], _generic_engine())]

    @pytest.mark.parametrize(("line", "expected"), [
        # https://github.com/jianchang512/stt/issues/76
        ("Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared object "
         "file: No such file or directory", "generic/error-with-cause"),
        # https://github.com/daswer123/xtts-finetune-webui/issues/18
        ("Invalid handle. Cannot load symbol cudnnCreateTensorDescriptor", "generic/os-error"),
        # https://github.com/google-gemini/deprecated-generative-ai-python/issues/244
        ("429 Quota exceeded for quota metric 'Generate Content API requests per minute' and limit 'GenerateContent "
         "request limit per minute for a region' of service 'generativelanguage.googleapis.com'", "generic/limit-exceeded"),
    ])
    def test_missing_libraries_and_provider_quotas(self, line: str, expected: str) -> None:
        """cuDNN's loader failures (8's caught cause, 9's missing symbol) and a provider's quota are named."""
        assert [expected] == [d.incident.signature.id for d in _detections([line], _generic_engine())]

    def test_a_successful_request_in_an_access_log_raises_nothing(self) -> None:
        """An access-log line answered 200 is no failure (ml-explore/mlx-examples#1077)."""
        line = '127.0.0.1 - - [30/Oct/2024 20:54:41] "POST /v1/chat/completions HTTP/1.1" 200 -'
        assert [] == _detections([line], _generic_engine())

    def test_a_downloaders_probe_for_an_optional_file_raises_nothing(self) -> None:
        """llama.cpp's HEAD probe for a preset file answered 404 is no failure (ggml-org/llama.cpp#21677)."""
        assert [] == _detections(["common_download_file_single_online: HEAD failed, status: 404"], _generic_engine())

    def test_a_warning_that_carries_its_caught_error_is_a_warning_failure(self) -> None:
        """vLLM's WARNING with the grammar error it caught is a warning-failure: the other generic classes
        stay quiet on a WARNING record (the error-message class matched too)."""
        caught = ("WARNING 03-26 15:23:05 [backend_guidance.py:86] LLMatcher error: Parser Error: token \" null\" "
                  "doesn't satisfy the grammar; byte 'n' fails parse")
        incident = _detections([caught], _generic_engine())[0].incident
        matched = [m.signature.id for m in _generic_engine().match(caught)]
        assert ("generic/warning-failure", True) == (incident.signature.id, "generic/error-message" in matched)

    @pytest.mark.parametrize("line", [
        "Signal (15) received.",
        "[Router (Rust)] 2025-03-18 14:17:58 - WARN - Generate request to http://localhost:8001 failed (attempt 1/3)",
        "WARNING 12-01 10:00:00 [utils.py:1] Connection refused, retrying in 1s",
        "load_backend: failed to find ggml_backend_init in /home/user/work/llama.cpp/build/bin/libggml-cpu.so",
    ])
    def test_near_misses_of_the_widened_classes_raise_nothing(self, line: str) -> None:
        """A graceful stop's signal, a retried request or connection and a loader's probe are no failure."""
        assert [] == _detections([line], _generic_engine())

    def test_a_line_that_ignores_its_error_raises_nothing(self) -> None:
        """huggingface_hub's "Ignored error while writing ..." goes on; the same errno without it is an os-error."""
        ignored = ("Ignored error while writing commit hash to /root/.cache/huggingface/hub/models--Qwen--Qwen3.8-27B/"
                   "refs/main: [Errno 13] Permission denied: '/root/.cache/huggingface/hub'.")
        failed = "PermissionError: [Errno 13] Permission denied: '/home/user/cache_root/huggingface'"
        found = [[d.incident.signature.id for d in _detections([line], _generic_engine())] for line in (ignored, failed)]
        assert [[], ["generic/os-error"]] == found

    def test_a_gateway_record_counts_at_its_own_level(self) -> None:
        """SGLang's model gateway (Rust, local time) logs a failed health check at DEBUG: quiet; its ERROR
        record of the same failure is an ERROR record."""
        head = "2025-10-07 23:31:33 %s sglang_router_rs::core::worker%s: src/core/worker%s.rs:517: "
        debug = head % ("DEBUG", "_manager", "_manager") + "Worker grpc://localhost:20000 health check failed: transport error"
        error = head % ("ERROR", "", "") + "Failed to connect gRPC client for worker grpc://localhost:20000: transport error"
        found = [[d.incident.signature.id for d in _detections([line], _generic_engine())] for line in (debug, error)]
        assert [[], ["generic/error-log-record"]] == found


class TestUnclassifiedFingerprints:
    """Unclassified incidents group by fingerprint."""

    def test_burst_on_several_pods_is_one_fingerprint(self) -> None:
        """The same unknown failure on three pods (ranks, pids, times differ) has one fingerprint."""
        lines = ["(EngineCore_0 pid=2221630) ERROR 09-24 20:59:57 [core.py:491] AssertionError",
                 "(EngineCore_0 pid=31) ERROR 09-25 07:02:11 [core.py:491] AssertionError",
                 "(EngineCore_0 pid=977) ERROR 10-01 23:40:05 [core.py:491] AssertionError"]
        found = [d for line in lines for d in _detections([line])]
        assert (3, {"generic"}, 1) == (len(found), {d.incident.tier for d in found},
                                       len({d.incident.fingerprint for d in found}))

    def test_ten_different_unknown_failures_give_ten_fingerprints(self) -> None:
        """Ten excerpts of ten different kinds, seen by the generic family alone, give ten fingerprints."""
        by_kind: dict[str, str] = {}
        for excerpt in [*_rows("real_logs.jsonl"), *_rows("incoming/real_logs.jsonl")]:
            key = str(excerpt["lines"][int(str(excerpt["key_line_index"]))])  # type: ignore[index]
            found = [d for d in _detections([key], _generic_engine()) if d.incident.tier == "generic"]
            if found and str(excerpt["kind"]) not in by_kind:
                by_kind[str(excerpt["kind"])] = found[0].incident.fingerprint
        ten = list(by_kind.values())[:10]
        assert (10, 10) == (len(ten), len(set(ten)))
