"""The HTML report of ``logsig scan --report FILE.html``: one self-contained file (no network at
view time: plotly.js is inlined, styles are inline).

Sections: totals; a timeline of matching lines per signature over log time (a stacked bar chart,
plotly); the top signatures and the top pods (or files); one section per signature found (the
report's incident group: root cause, workarounds ranked by success rate, dead ends, the pods, an
example line); and the unclassified templates: lines only a generic signature matched (``tier``
``generic``), counted per line template with :class:`logsig.discovery.topk.TopK`.

:class:`ReportCollector` is an observer of :class:`logsig.scan.Scanner` (it reads ``step.matched``,
one detection per matching line); :func:`render` writes the page. Memory is bounded by the number
of signatures times the minutes of log time, plus :data:`MAX_TEMPLATES` templates.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from logsig.discovery.topk import TopK
from logsig.incident import Incident
from logsig.pipeline import StepResult
from logsig.sinks.stdout import where

MAX_TEMPLATES = 200
MAX_PODS = 20
TOP = 15
BUCKETS = 120
"""About how many bars the timeline has across the scanned log time."""


@dataclass
class SignatureGroup:
    """Every matching line of one signature: its first incident (for the catalog's advice), counts, pods."""

    first: Incident
    count: int = 0
    pods: Counter[str] = field(default_factory=Counter)
    first_seen: datetime | None = None
    last_seen: datetime | None = None

    def add(self, incident: Incident, pod: str) -> None:
        """Count one line of this signature, from ``pod``."""
        self.count += 1
        if pod in self.pods or len(self.pods) < MAX_PODS:
            self.pods[pod] += 1
        moment = incident.log_timestamp
        if moment is not None:
            self.first_seen = min(self.first_seen or moment, moment)
            self.last_seen = max(self.last_seen or moment, moment)


@dataclass
class ReportCollector:
    """Collects what the report shows from each scanned step."""

    inputs: list[str] = field(default_factory=list)
    lines: int = 0
    without_time: int = 0
    minutes: Counter[tuple[str, int]] = field(default_factory=Counter)
    pods: Counter[str] = field(default_factory=Counter)
    groups: dict[str, SignatureGroup] = field(default_factory=dict)
    templates: TopK = field(default_factory=lambda: TopK(MAX_TEMPLATES, max_pods=8, max_text_chars=500))

    def __call__(self, step: StepResult) -> None:
        """Take the matching lines of ``step``."""
        for detection in step.matched:
            self.add(detection.incident)

    def add(self, incident: Incident) -> None:
        """Count one matching line."""
        self.lines += 1
        pod = where(incident) if incident.source.pod else (incident.source.file or where(incident))
        self.pods[pod] += 1
        sig = incident.signature.id
        self.groups.setdefault(sig, SignatureGroup(incident)).add(incident, pod)
        moment = incident.log_timestamp
        if moment is None:
            self.without_time += 1
        else:
            self.minutes[(sig, int(moment.timestamp()) // 60)] += 1
        if incident.tier == "generic":
            seen = moment.timestamp() if moment is not None else 0.0
            self.templates.add(incident.fingerprint, incident.template or incident.match.line, line=incident.match.line,
                               pod=pod, seen_at=seen, signature_id=sig)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def timeline_figure(collector: ReportCollector) -> Any:
    """A plotly stacked bar chart: lines per signature per time bucket (log time, UTC)."""
    import plotly.graph_objects as go

    figure = go.Figure()
    if collector.minutes:
        first = min(minute for _, minute in collector.minutes)
        last = max(minute for _, minute in collector.minutes)
        width = max(1, -(-(last - first + 1) // BUCKETS))
        counts: Counter[tuple[str, int]] = Counter()
        for (sig, minute), n in collector.minutes.items():
            counts[(sig, first + (minute - first) // width * width)] += n
        for sig in sorted({s for s, _ in counts}, key=lambda s: -collector.groups[s].count):
            buckets = sorted((m, n) for (s, m), n in counts.items() if s == sig)
            figure.add_trace(go.Bar(name=sig, x=[datetime.fromtimestamp(m * 60, UTC) for m, _ in buckets],
                                    y=[n for _, n in buckets]))
        title = f"Matching lines per signature over log time ({width}-minute bars, UTC)"
    else:
        title = "No matching line has a log time"
    figure.update_layout(barmode="stack", title=title, height=420, margin={"l": 50, "r": 20, "t": 50, "b": 40},
                         legend={"font": {"size": 10}}, template="plotly_white")
    return figure


def _table(headers: tuple[str, ...], rows: Sequence[tuple[object, ...]], cls: str) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _group_html(group: SignatureGroup) -> str:
    incident, sig = group.first, group.first.signature
    workarounds = "".join(f"<li><b>{w.success_rate:.0%}</b> {_e(w.action)}" + (f": {_e(w.how)}" if w.how else "")
                          + "</li>" for w in sorted(incident.workarounds, key=lambda w: -w.success_rate))
    dead_ends = "".join(f"<li><b>fails {d.fail_rate:.0%}</b> {_e(d.action)}: {_e(d.why_fails)}</li>"
                        for d in incident.dead_ends)
    seen = f"{group.first_seen:%Y-%m-%d %H:%M:%S} to {group.last_seen:%Y-%m-%d %H:%M:%S} UTC" \
        if group.first_seen and group.last_seen else "no log time"
    pods = ", ".join(f"{pod} ({n})" for pod, n in group.pods.most_common())
    return (f'<section class="group severity-{incident.severity}"><h3>{_e(sig.id)} '
            f'<span class="count">{group.count} lines</span></h3>'
            f'<p class="meta">{_e(sig.category)}, {_e(incident.severity)}; {_e(seen)}; {_e(pods)}</p>'
            f'<p class="title">{_e(sig.title)}</p><p><b>Root cause.</b> {_e(incident.root_cause)}</p>'
            f'<p><b>Workarounds</b>, most successful first:</p>'
            f'<ol class="workarounds">{workarounds or "<li>none known</li>"}</ol>'
            f'<p><b>Dead ends</b>:</p><ul class="dead-ends">{dead_ends or "<li>none known</li>"}</ul>'
            f'<pre class="line">{_e(incident.match.line)}</pre></section>')


STYLE = """body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;max-width:1200px;color:#222}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:28px}
h3{font-size:15px;margin:0 0 6px}.count{color:#666;font-weight:normal}.meta{color:#555;font-size:13px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}td,th{border:1px solid #ddd;padding:4px 8px;
text-align:left;vertical-align:top}th{background:#f4f4f4}.cols{display:flex;gap:32px;flex-wrap:wrap}
.group{border-left:4px solid #e0a000;padding:6px 14px;margin:14px 0;background:#fbfbfb}
.severity-critical{border-color:#c62828}.severity-info{border-color:#1e88e5}
pre{white-space:pre-wrap;word-break:break-all;background:#f4f4f4;padding:6px;font-size:12px}
.totals{font-size:14px}"""


def render(collector: ReportCollector, generated_at: datetime | None = None) -> str:
    """The whole report page (HTML5, UTF-8) with plotly.js inlined."""
    moment = generated_at or datetime.now(UTC)
    chart = timeline_figure(collector).to_html(full_html=False, include_plotlyjs=True, div_id="timeline",
                                               config={"displaylogo": False})
    signatures = [(g.first.signature.id, g.first.signature.category, g.first.severity, g.count)
                  for g in sorted(collector.groups.values(), key=lambda g: -g.count)]
    pods = collector.pods.most_common(TOP)
    templates = [(t.count, t.template, t.signature_id, ", ".join(t.pods), t.example)
                 for t in collector.templates.top(TOP * 2)]
    groups = "".join(_group_html(g) for g in sorted(collector.groups.values(), key=lambda g: -g.count))
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>logsig report</title>'
            f"<style>{STYLE}</style></head><body><h1>logsig report</h1>"
            f'<p class="totals">{_e(", ".join(collector.inputs) or "stdin")}: <b>{collector.lines}</b> matching lines, '
            f"<b>{len(collector.groups)}</b> signatures, <b>{len(collector.pods)}</b> pods or files; "
            f"{collector.without_time} lines without a log time. Generated {moment:%Y-%m-%d %H:%M:%S} UTC.</p>"
            f'<h2>Timeline</h2>{chart}<div class="cols"><div><h2>Top signatures</h2>'
            f'{_table(("signature", "category", "severity", "lines"), signatures[:TOP], "signatures")}</div>'
            f'<div><h2>Top pods</h2>{_table(("pod or file", "lines"), list(pods), "pods")}</div></div>'
            f"<h2>Incident groups</h2>{groups or '<p>No signature matched.</p>'}"
            f"<h2>Unclassified templates</h2><p>Lines only a generic signature matched, by line template "
            f"(numbers, ids, paths and times masked): candidates for new signatures.</p>"
            f'{_table(("lines", "template", "generic signature", "pods", "example"), templates, "templates")}'
            f"</body></html>")
