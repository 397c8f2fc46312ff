"""One self-contained HTML file with the sessions: plots, the book's tables, what changed.

Everything is inside the file (inline CSS and SVG, no scripts, no links to anything
elsewhere), so it opens offline, can be mailed, and still reads the same in years.
Per session: the per-run table in the book's columns with mean, deviation and the
notes; the samples over time; the socket-buffer curve or directory table where the
test has one; the smb.conf it was measured with and the server as surveyed. Across
sessions: the before/after comparison with its significance, and the bottleneck table.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Sequence
from html import escape
from typing import Any

from sambatune import __version__
from sambatune.bench.bottleneck import BottleneckReport, percent_digits, row_mark
from sambatune.bench.bottleneck_inputs import figures_from_sessions
from sambatune.bench.comparison import SessionComparison, compare_sessions
from sambatune.bench.records import BYTES, BenchResult, SeriesResult
from sambatune.bench.results_db import StoredSession
from sambatune.bench.svg_chart import Chart, ChartSeries, render
from sambatune.errors import SambaTuneError
from sambatune.units import (
    format_bits,
    format_bytes,
    format_figure,
    format_percent,
    format_rate,
    format_seconds,
)

STYLE = """
body { font-family: sans-serif; margin: 24px auto; max-width: 1000px; color: #1d1d1d; line-height: 1.4; }
h1 { font-size: 22px; } h2 { font-size: 18px; border-bottom: 2px solid #0072b2; padding-bottom: 4px;
margin-top: 36px; } h3 { font-size: 15px; margin-bottom: 4px; }
table { border-collapse: collapse; margin: 8px 0 12px; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; } th { background: #eef3f8; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.warmup td { color: #888; font-style: italic; } tr.odd td { background: #fff2e0; }
tr.limits td { background: #fde7e4; font-weight: bold; }
.note { background: #f4f7fb; border-left: 4px solid #0072b2; padding: 6px 10px; margin: 6px 0; }
.warn { background: #fff6e5; border-left: 4px solid #e69f00; padding: 6px 10px; margin: 6px 0; }
.verdict { font-size: 15px; font-weight: bold; } .muted { color: #666; font-size: 12px; }
pre { background: #f6f6f6; padding: 8px; overflow-x: auto; font-size: 12px; }
"""


def _number(value: float | int | None, digits: int = 0) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    return f"{value:,.{digits}f}"


def _figure(series: SeriesResult, value: float | None) -> str:
    return format_figure(value, series.unit, missing="–")


def html_table(
    headers: Sequence[str],
    rows: Sequence[tuple[Sequence[str], str]],
    numeric_from: int = 1,
    numeric_to: int = 99,
) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = []
    for cells, css in rows:
        tds = "".join(
            f'<td class="n">{escape(c)}</td>' if numeric_from <= i <= numeric_to else f"<td>{escape(c)}</td>"
            for i, c in enumerate(cells)
        )
        body.append(f'<tr class="{css}">{tds}</tr>' if css else f"<tr>{tds}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def series_table(series: SeriesResult) -> str:
    """The book's per-run form: run, size, time, bytes/s, bits/s, % of link."""
    outliers = set(series.outlier_attempts())
    rows: list[tuple[Sequence[str], str]] = []
    number = 0
    for run in series.runs:
        label = f"warm-up {run.attempt}" if run.warmup else str(number := number + 1)
        css = "warmup" if run.warmup else ("odd" if run.attempt in outliers else "")
        if series.unit == BYTES:
            rows.append(
                (
                    [
                        label,
                        _number(run.bytes),
                        f"{run.seconds:.3f}",
                        _number(run.bytes_per_s),
                        format_bits(run.bits_per_s),
                        _number(run.percent_of_link, 1),
                    ],
                    css,
                )
            )
        else:
            rows.append(
                (
                    [label, _number(run.operations), f"{run.seconds:.3f}", _number(run.operations_per_s, 1)],
                    css,
                )
            )
    headers = (
        ["Run", "Size in bytes", "Time (s)", "Bytes/s", "Bits/s", "% of link"]
        if series.unit == BYTES
        else ["Run", "Operations", "Time (s)", "Ops/s"]
    )
    return html_table(headers, rows)


def series_summary(series: SeriesResult) -> str:
    stats = series.stats()
    if stats is None:
        return '<p class="muted">No counted runs.</p>'
    parts = [f"Mean <b>{escape(_figure(series, stats.mean))}</b>"]
    if series.unit == BYTES:
        parts.append(escape(format_bits(stats.mean * 8)))
    parts.append(
        f"deviation {escape(_figure(series, stats.stdev))}"
        + (f" ({escape(format_percent(stats.cv))})" if stats.cv is not None else "")
    )
    if stats.ci95_low is not None and stats.ci95_high is not None:
        parts.append(
            f"95% interval {escape(_figure(series, stats.ci95_low))} to "
            f"{escape(_figure(series, stats.ci95_high))}"
        )
    parts.append(f"{stats.n} counted runs")
    html = "<p>" + "; ".join(parts) + ".</p>"
    if stats.outliers:
        html += (
            f'<p class="warn">Odd runs are marked; the average of the others is '
            f"{escape(_figure(series, stats.valid_mean))}.</p>"
        )
    if stats.note:
        html += f'<p class="{"note" if stats.quiet else "warn"}">{escape(stats.note)}</p>'
    elif stats.quiet:
        html += '<p class="note">The runs agree: the machine was quiet.</p>'
    return html


def samples_chart(result: BenchResult, title: str | None = None) -> str:
    lines: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for sample in result.samples:
        lines.setdefault((sample.series, sample.attempt), []).append((sample.t, sample.bytes_per_s))
    if not lines:
        return ""
    labels = {name: s.label for name, s in result.series.items()}
    chart = Chart(
        title or "Throughput while the runs ran", "seconds into the run", "throughput", y_format=format_rate
    )
    for (series, attempt), points in lines.items():
        chart.series.append(ChartSeries(f"{labels.get(series, series)}, run {attempt}", points))
    return render(chart)


def sockbuf_chart(result: BenchResult) -> str:
    curve = result.extra.get("curve") or []
    sized = [
        (float(p["requested_bytes"]), float(p["mean_bytes_per_s"]))
        for p in curve
        if p.get("requested_bytes") and p.get("mean_bytes_per_s")
    ]
    if not sized:
        return ""
    chart = Chart(
        "Throughput against the socket buffer size",
        "SO_SNDBUF = SO_RCVBUF (log scale)",
        "mean throughput",
        x_format=lambda v: format_bytes(v, 0),
        y_format=format_rate,
        log_x=True,
    )
    chart.series.append(ChartSeries("set buffer size", sized, markers=True))
    autotuned = [p for p in curve if p.get("requested_bytes") is None and p.get("mean_bytes_per_s")]
    if autotuned:
        rate = float(autotuned[0]["mean_bytes_per_s"])
        chart.series.append(
            ChartSeries(
                f"autotuned (no size set): {format_rate(rate)}",
                [(sized[0][0], rate), (sized[-1][0], rate)],
                color="#009e73",
            )
        )
    return render(chart)


def runs_chart(sessions: Sequence[StoredSession], series: str) -> str:
    # Each series in its own unit: bytes per second, or operations per second.
    unit = next((s.result.series[series].unit for s in sessions if series in s.result.series), BYTES)
    chart = Chart(
        f"Counted runs of '{series}', session by session",
        "run",
        "throughput" if unit == BYTES else "operations per second",
        x_format=lambda v: f"{v:g}",
        y_format=lambda v: format_figure(v, unit),
        whole_x=True,
    )
    for session in sessions:
        found = session.result.series.get(series)
        if found is None:
            continue
        chart.series.append(
            ChartSeries(
                f"session {session.id}" + (f" ({session.note})" if session.note else ""),
                [(i, r.rate) for i, r in enumerate(found.counted, 1)],
                markers=True,
            )
        )
    return render(chart)


def comparison_section(comparisons: Sequence[SessionComparison], sessions: Sequence[StoredSession]) -> str:
    if not comparisons:
        return ""
    html = ["<h2>Before and after</h2>"]
    first = comparisons[0]
    html.append(runs_chart(sessions, first.series))
    for found in comparisons:
        c = found.comparison
        html.append(
            f"<h3>Session {found.before.id} (before) against session {found.after.id} (after), "
            f"series '{escape(found.series)}'</h3>"
        )
        html.append(f'<p class="verdict">{escape(c.verdict.capitalize())}</p><p>{escape(c.sentence)}</p>')
        if c.diff_ci95_low is not None and c.diff_ci95_high is not None:
            low, high = (_signed(c.unit, v) for v in (c.diff_ci95_low, c.diff_ci95_high))
            html.append(f"<p>95% confidence interval of the difference: {escape(low)} to {escape(high)}.</p>")
        if found.changed_lines:
            changed = escape("\n".join(found.changed_lines))
            html.append(f"<p>Changed in smb.conf:</p><pre>{changed}</pre>")
        elif found.before.smb_conf is not None and found.after.smb_conf is not None:
            html.append("<p>smb.conf was the same in both sessions.</p>")
        html.extend(f'<p class="warn">{escape(w)}</p>' for w in found.warnings)
    return "".join(html)


def _signed(unit: str, value: float) -> str:
    shown = format_rate(abs(value)) if unit == "bytes/s" else f"{abs(value):,.1f} {unit}"
    return ("−" if value < 0 else "+") + shown


def bottleneck_section(
    report: BottleneckReport, sources: dict[str, int | None], server: str | None = None, basis: str = ""
) -> str:
    rows: list[tuple[Sequence[str], str]] = []
    for row in report.rows:
        rows.append(
            (
                [
                    row.name,
                    _number(row.ceiling_bytes_per_s / 1e6, 1),
                    _number(row.ceiling_bits_per_s / 1e6, 0),
                    _number(row.percent_of_link, percent_digits(row.percent_of_link or 0)),
                    row.source + ("" if row.counted or row.kind == "smb" else " (not counted)"),
                    row_mark(report, row),
                ],
                "limits" if row_mark(report, row) == "limits" else "",
            )
        )
    of = f" of {escape(server)}" if server else ""
    html = [
        f"<h2>Bottleneck{of} ({escape(report.direction)}, {escape(report.workload)})</h2>",
        f'<p class="muted">{escape(basis)}</p>' if basis else "",
        html_table(["Layer", "MB/s", "Mbit/s", "% of link", "From", ""], rows, numeric_to=3),
        f'<p class="verdict">Limit: {escape(report.limiting)}</p><p>{escape(report.reason)}</p>',
    ]
    if report.smb_vs_raw_meaning:
        html.append(f"<p>{escape(report.smb_vs_raw_meaning)}</p>")
    if report.advice:
        html.append("<ul>" + "".join(f"<li>{escape(a)}</li>" for a in report.advice) + "</ul>")
    used = ", ".join(f"{k}: session {v}" for k, v in sources.items() if v is not None)
    if used:
        html.append(f'<p class="muted">Figures from {escape(used)}.</p>')
    return "".join(html)


def survey_facts(survey: dict[str, Any] | None) -> str:
    if not survey:
        return '<p class="muted">No survey was recorded with this session.</p>'
    system = survey.get("os") or {}
    cpu = survey.get("cpu") or {}
    memory = survey.get("memory") or {}
    samba = survey.get("samba") or {}
    rows: list[tuple[Sequence[str], str]] = [
        (["Host", str(survey.get("hostname", "?"))], ""),
        (["System", f"{system.get('distribution', '?')}, kernel {system.get('kernel', '?')}"], ""),
        (["CPU", f"{cpu.get('available', '?')} × {cpu.get('model', '?')}"], ""),
        (["Memory", format_bytes(memory.get("total_bytes"))], ""),
        (["Samba", str(samba.get("version_text", "?"))], ""),
    ]
    for nic in survey.get("nics") or []:
        speed = nic.get("speed_mbit")
        rows.append(
            (
                [
                    f"Interface {nic.get('name')}",
                    f"{nic.get('state', '?')}, "
                    + (format_bits(speed * 1e6) if speed else "speed unknown")
                    + f", MTU {nic.get('mtu')}, "
                    + ", ".join(nic.get("addresses") or []),
                ],
                "",
            )
        )
    return html_table(["", ""], rows, numeric_from=99)


def session_section(session: StoredSession) -> str:
    result = session.result
    html = [
        f'<h2 id="s{session.id}">Session {session.id}: {escape(result.test)} test on '
        f"{escape(session.server)}</h2>",
        f'<p class="muted">{escape(result.started_at)} to {escape(result.finished_at)}'
        + (f" · note: {escape(session.note)}" if session.note else "")
        + (f" · link {escape(format_bits(result.link_speed_bits))}" if result.link_speed_bits else "")
        + "</p>",
    ]
    params = ", ".join(f"{k} = {v}" for k, v in result.parameters.items() if v not in (None, "", []))
    html.append(f'<p class="muted">Parameters: {escape(params)}</p>')
    html.append(samples_chart(result))
    html.append(sockbuf_chart(result))
    html.append(dirscale_table(result))
    for series in result.series.values():
        html.append(f"<h3>{escape(series.label)}</h3>")
        html.append(series_table(series))
        html.append(series_summary(series))
    html.extend(f'<p class="note">{escape(n)}</p>' for n in result.notes)
    conf_name = escape(session.smb_conf_path or "smb.conf")
    if session.smb_conf is not None:
        html.append(
            f"<details><summary>{conf_name} as measured ({len(session.smb_conf):,} bytes)</summary>"
            f"<pre>{escape(session.smb_conf.decode('utf-8', 'replace'))}</pre></details>"
        )
    else:
        html.append('<p class="muted">smb.conf was not recorded with this session.</p>')
    html.append(
        "<details><summary>The server as surveyed</summary>" + survey_facts(session.survey) + "</details>"
    )
    return "".join(html)


def dirscale_table(result: BenchResult) -> str:
    table = result.extra.get("table") or []
    if not table:
        return ""
    rows: list[tuple[Sequence[str], str]] = [
        (
            [f"{row['files']:,}"]
            + [
                format_seconds(row.get(key))
                for key in (
                    "list_seconds",
                    "open_seconds_each",
                    "open-other-case_seconds_each",
                    "missing_seconds_each",
                    "create_seconds_each",
                )
            ],
            "",
        )
        for row in table
    ]
    return html_table(["Files", "List", "Open", "Open, other case", "Missing name", "Create"], rows)


def comparisons_of(sessions: Sequence[StoredSession]) -> list[SessionComparison]:
    """Each later session of a test against the first session of that test."""
    found = []
    firsts: dict[str, StoredSession] = {}
    for session in sessions:
        first = firsts.setdefault(session.result.test, session)
        if first is session:
            continue
        try:
            found.append(compare_sessions(first, session))
        except SambaTuneError:
            continue
    return found


def render_report(
    sessions: Sequence[StoredSession], *, title: str | None = None, generated_at: str | None = None
) -> str:
    ordered = sorted(sessions, key=lambda s: s.id)
    when = generated_at or _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    servers = sorted({s.server for s in ordered})
    heading = title or f"SambaTune benchmark report: {', '.join(servers) or 'no sessions'}"
    overview: list[tuple[Sequence[str], str]] = []
    for session in ordered:
        primary = session.result.summary
        stats = primary.stats()
        overview.append(
            (
                [
                    str(session.id),
                    session.result.started_at,
                    session.result.test,
                    session.server,
                    primary.label,
                    _figure(primary, stats.mean if stats else None),
                    str(stats.n if stats else 0),
                    session.note,
                ],
                "",
            )
        )
    body = [
        f"<h1>{escape(heading)}</h1>",
        f'<p class="muted">Written by SambaTune {escape(__version__)} on {escape(when)}.</p>',
        html_table(
            ["Session", "Started", "Test", "Server", "Main series", "Mean", "Runs", "Note"],
            overview,
            numeric_from=99,
        ),
    ]
    body.append(comparison_section(comparisons_of(ordered), ordered))
    # One bottleneck table per server, from the sessions of its newest smb.conf: figures
    # of two servers, or of one server under different settings, describe no one server.
    for server in servers:
        figures = figures_from_sessions([s for s in ordered if s.server == server], direction=None)
        if all(v is None for v in (figures.disk_read, figures.network, figures.smb, figures.file_ops)):
            continue
        try:
            body.append(
                bottleneck_section(
                    figures.report(), figures.sources, server if len(servers) > 1 else None, figures.basis()
                )
            )
        except SambaTuneError:
            pass
    body.extend(session_section(s) for s in ordered)
    return html_page(heading, body)


def html_page(title: str, parts: Sequence[str]) -> str:
    """One self-contained HTML document: the report's style and the given parts."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
        + "\n".join(part for part in parts if part)
        + "</body></html>\n"
    )
