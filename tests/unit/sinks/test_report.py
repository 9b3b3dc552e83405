"""The HTML report's collector and page, without a browser (tests/report has the browser test)."""

import json
from datetime import UTC, datetime

from logsig.decode.settings import DecodeSettings
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.pipeline import Pipeline
from logsig.records import Origin, RawRecord
from logsig.sinks.report import ReportCollector, render

OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
       "79.25 GiB of which 1.16 GiB is free.")


def collected(*records: dict[str, object]) -> ReportCollector:
    """A collector fed the pipeline's step for ``records`` (Fluent Bit records)."""
    pipeline = Pipeline(Engine(load_catalog().signatures), DecodeSettings())
    raw = [RawRecord(value=json.dumps(r).encode(), origin=Origin(file="in.log", line_number=i + 1))
           for i, r in enumerate(records)]
    collector = ReportCollector(inputs=["in.log"])
    collector(pipeline.process(raw, 0.0))
    collector(pipeline.flush_all())
    return collector


def fluent(line: str, when: str | None, pod: str) -> dict[str, object]:
    """A Fluent Bit record of ``line`` by ``pod`` in namespace ml, logged at ``when`` (None: no time)."""
    record: dict[str, object] = {"log": line, "kubernetes": {"pod_name": pod, "namespace_name": "ml"}}
    if when is not None:
        record["time"] = when
    return record


class TestReportCollector:
    def test_counts_lines_pods_minutes_and_lines_without_time(self) -> None:
        """Three OOM lines: per-pod counts, per-minute timeline buckets, one without a log time."""
        collector = collected(fluent(OOM, "2026-03-02T06:00:10Z", "vllm-0"), fluent(OOM, "2026-03-02T06:00:50Z", "vllm-0"),
                              fluent(OOM, None, "vllm-1"))
        minute = int(datetime(2026, 3, 2, 6, 0, tzinfo=UTC).timestamp()) // 60
        assert (3, {"ml/vllm-0": 2, "ml/vllm-1": 1}, {("cuda/torch-oom", minute): 2}, 1) == (
            collector.lines, dict(collector.pods), dict(collector.minutes), collector.without_time)


class TestRender:
    def test_log_text_is_escaped(self) -> None:
        """Markup in a log line is shown as text, never as markup."""
        page = render(collected(fluent(OOM + " <script>alert(1)</script>", "2026-03-02T06:00:10Z", "vllm-0")))
        assert ("<script>alert(1)</script>" in page, "&lt;script&gt;alert(1)&lt;/script&gt;" in page) == (False, True)

    def test_page_is_self_contained(self) -> None:
        """No script or stylesheet is fetched from elsewhere: plotly.js is inlined."""
        page = render(collected(fluent(OOM, "2026-03-02T06:00:10Z", "vllm-0")))
        assert (False, False, True) == ('<script src="http' in page, '<link rel="stylesheet"' in page,
                                        "Plotly.newPlot" in page)
