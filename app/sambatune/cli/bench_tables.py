"""Benchmark results as text: the book's per-run table, mean and deviation, and the notes."""

from __future__ import annotations

import sys
from typing import Any

from sambatune.bench.events import BenchEvent, Notice
from sambatune.bench.progress import ProgressTracker
from sambatune.bench.records import BYTES, BenchResult, SeriesResult
from sambatune.cli.output import TerminalProgress
from sambatune.units import format_bits, format_operations_rate, format_rate, format_seconds


class BenchProgress:
    """Events to a one-line progress bar on stderr (only when stderr is a terminal): the
    step, the run of how many, the live figure and the time left, as the GUI shows them."""

    def __init__(self) -> None:
        self.bar = TerminalProgress()
        self.tracker = ProgressTracker()

    def message(self, text: str) -> None:
        self.tracker.message(text)
        self.bar.update(None, text)

    def on_event(self, event: BenchEvent) -> None:
        self.tracker.observe(event)
        if isinstance(event, Notice) and self.bar.enabled:
            self.bar.done()
            print(f"sambatune: {event.message}", file=sys.stderr)
            return
        fraction = self.tracker.fraction
        self.bar.update(0.0 if fraction is None else fraction, self.tracker.line())

    def done(self) -> None:
        self.bar.done()


def _number(value: float | int | None, digits: int = 0) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def format_series(series: SeriesResult) -> list[str]:
    stats = series.stats()
    outliers = set(series.outlier_attempts())
    lines = [series.label + (f"  [{series.name}]" if series.label != series.name else "")]
    if series.unit == BYTES:
        lines.append(
            f"  {'Run':>5} {'Size in bytes':>15} {'Time (s)':>10} {'Bytes/s':>16} "
            f"{'Bits/s':>13} {'% of link':>9}"
        )
    else:
        lines.append(f"  {'Run':>5} {'Operations':>15} {'Time (s)':>10} {'Ops/s':>16}")
    number = 0
    for run in series.runs:
        if run.warmup:
            label = f"w{run.attempt}"
        else:
            number += 1
            label = str(number)
        mark = " *" if run.attempt in outliers else ""
        if series.unit == BYTES:
            lines.append(
                f"  {label:>5} {_number(run.bytes):>15} {run.seconds:>10.3f} "
                f"{_number(run.bytes_per_s):>16} {format_bits(run.bits_per_s):>13} "
                f"{_number(run.percent_of_link, 1):>9}{mark}"
            )
        else:
            lines.append(
                f"  {label:>5} {_number(run.operations):>15} {run.seconds:>10.3f} "
                f"{_number(run.operations_per_s, 1):>16}{mark}"
            )
    if stats is not None:
        if series.unit == BYTES:
            lines.append(
                f"  {'Average':>32} {_number(stats.mean):>16} {format_bits(stats.mean * 8):>13}"
                f"   = {format_rate(stats.mean)}"
            )
            spread = f" ({stats.cv:.1%})" if stats.cv is not None else ""
            lines.append(f"  {'Deviation':>32} {_number(stats.stdev):>16}{spread}")
        else:
            lines.append(f"  {'Average':>32} {_number(stats.mean, 1):>16}")
            spread = f" ({stats.cv:.1%})" if stats.cv is not None else ""
            lines.append(f"  {'Deviation':>32} {_number(stats.stdev, 1):>16}{spread}")
        if outliers:
            valid = (
                format_rate(stats.valid_mean)
                if series.unit == BYTES
                else format_operations_rate(stats.valid_mean)
            )
            lines.append(f"  * odd run; the average of the other runs is {valid}")
        if stats.note:
            lines.append(f"  {stats.note}")
    return lines


def format_result(result: BenchResult, heading: str | None = None) -> str:
    lines = [
        heading
        or f"{result.test} test on {result.target}"
        + (f", session {result.session_id}" if result.session_id else "")
        + f" ({result.started_at})"
    ]
    if result.link_speed_bits:
        lines.append(f"Link speed: {format_bits(result.link_speed_bits)}")
    lines.append("")
    for series in result.series.values():
        lines += format_series(series)
        lines.append("")
    lines += _extra_lines(result.extra)
    for note in result.notes:
        lines.append(f"Note: {note}")
    return "\n".join(lines).rstrip()


def _extra_lines(extra: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    curve = extra.get("curve")
    if curve:
        top = max((p["mean_bytes_per_s"] or 0) for p in curve) or 1
        lines.append(f"{'Buffer':>12} {'granted snd/rcv':>20} {'mean':>12}")
        for point in curve:
            granted = f"{point.get('server_sndbuf') or '-'}/{point.get('server_rcvbuf') or '-'}"
            bar = "#" * int(30 * (point["mean_bytes_per_s"] or 0) / top)
            lines.append(
                f"{point['series']:>12} {granted:>20} {format_rate(point['mean_bytes_per_s']):>12} {bar}"
            )
        lines.append("")
    table = extra.get("table")
    if table:
        lines.append(
            f"{'Files':>8} {'list':>10} {'open':>10} {'other case':>11} {'missing':>10} {'create':>10}"
        )
        for row in table:
            lines.append(
                f"{row['files']:>8,} {format_seconds(row.get('list_seconds')):>10} "
                f"{format_seconds(row.get('open_seconds_each')):>10} "
                f"{format_seconds(row.get('open-other-case_seconds_each')):>11} "
                f"{format_seconds(row.get('missing_seconds_each')):>10} "
                f"{format_seconds(row.get('create_seconds_each')):>10}"
            )
        case = extra.get("case_settings")
        if case:
            lines.append("Share settings: " + ", ".join(f"{k} = {v}" for k, v in case.items()))
        lines.append("")
    ratios = extra.get("ratios")
    if ratios:
        shown = [f"{k.replace('_', ' ')}: {v:.0%}" for k, v in ratios.items() if v is not None]
        if shown:
            lines.append("Ratios: " + "; ".join(shown))
            lines.append("")
    return lines


def format_operations_result(result: BenchResult) -> str:
    """A test of counted calls: the per-operation table, after the run tables when there
    were several runs. One run alone shows no spread, and the table's N calls give the
    percentiles, so the run tables would only repeat the summary."""
    from sambatune.bench.small_files import format_operations

    table = "\n".join(format_operations(result.extra.get("operations", [])))
    p = result.parameters
    if p.get("runs", 1) + p.get("warmup", 0) > 1:
        return format_result(result) + "\n\n" + table
    session = f", session {result.session_id}" if result.session_id else ""
    lines = [f"{result.test} test on {result.target}{session} ({result.started_at})"]
    spread = f" over {p['connections']} connections" if p.get("connections", 1) > 1 else ""
    lines.append(f"{p['count']:,} files of {p['size']:,} bytes, {p['outstanding']} in flight{spread}")
    lines += ["", table]
    lines += [f"Note: {note}" for note in result.notes]
    return "\n".join(lines)
