"""Line charts as inline SVG text, for reports that must open anywhere without anything else.

No Qt, no plotting library, no fonts or scripts from elsewhere: a report written with
these charts is one file that a browser shows offline, and mails well.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape

#: Colours that stay apart for people with the common colour-vision deficiencies.
PALETTE = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000")

Format = Callable[[float], str]


@dataclass
class ChartSeries:
    name: str
    points: Sequence[tuple[float, float]]
    color: str | None = None
    #: Draw dots at the points (a curve of a few measured points), else only the line.
    markers: bool = False


@dataclass
class Chart:
    title: str
    x_label: str
    y_label: str
    series: list[ChartSeries] = field(default_factory=list)
    x_format: Format = lambda value: f"{value:g}"
    y_format: Format = lambda value: f"{value:g}"
    log_x: bool = False
    #: The x axis counts things (run 1, 2, 3): no ticks between whole numbers.
    whole_x: bool = False
    #: Vertical marks with a label, e.g. the autotuned buffer size.
    marks: list[tuple[float, str]] = field(default_factory=list)
    width: int = 760
    height: int = 300


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values from at most low to at least high (1, 2 or 5 times a power of ten apart)."""
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    ticks = [round(first, 12)]
    # The last tick is at or above ``high``, so nothing is drawn above the axis.
    while ticks[-1] < high - step * 1e-9:
        ticks.append(round(ticks[-1] + step, 12))
    return ticks


def render(chart: Chart) -> str:
    left, right, top, bottom = 88, 16, 34, 48
    columns = _legend_columns(chart)
    legend_rows = math.ceil(len(chart.series) / columns) if len(chart.series) > 1 else 0
    height = chart.height + legend_rows * 18 + (14 if legend_rows else 0)
    plot_w = chart.width - left - right
    plot_h = chart.height - top - bottom
    points = [p for s in chart.series for p in s.points if _finite(p) and (not chart.log_x or p[0] > 0)]
    parts = [
        f'<svg width="{chart.width}" height="{height}" '
        f'viewBox="0 0 {chart.width} {height}" role="img" aria-label="{escape(chart.title)}" '
        'font-family="sans-serif" font-size="12">',
        f'<text x="{left}" y="20" font-size="14" font-weight="bold">{escape(chart.title)}</text>',
    ]
    if not points:
        parts.append(f'<text x="{left}" y="{top + plot_h / 2}" fill="#666">No samples to draw.</text>')
        parts.append("</svg>")
        return "".join(parts)
    xs = [p[0] for p in points] + [m[0] for m in chart.marks if not chart.log_x or m[0] > 0]
    ys = [p[1] for p in points]
    if chart.log_x:
        lo, hi = math.log2(min(xs)), math.log2(max(xs))
        if hi == lo:
            lo, hi = lo - 1, hi + 1
        x_ticks = sorted({p[0] for p in points})
        x_of = lambda v: left + (math.log2(v) - lo) / (hi - lo) * plot_w  # noqa: E731
    else:
        x_ticks = nice_ticks(min(xs), max(xs))
        lo, hi = x_ticks[0], x_ticks[-1]
        if chart.whole_x:
            x_ticks = [tick for tick in x_ticks if float(tick).is_integer()] or [lo, hi]
        x_of = lambda v: left + (v - lo) / ((hi - lo) or 1) * plot_w  # noqa: E731
    y_ticks = nice_ticks(0.0, max(ys) * 1.05 or 1.0)
    y_hi = y_ticks[-1] or 1.0
    y_of = lambda v: top + plot_h - v / y_hi * plot_h  # noqa: E731

    parts.append(
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#fbfbfb" stroke="#bbb"/>'
    )
    for tick in y_ticks:
        y = y_of(tick)
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e4e4e4"/>')
        parts.append(
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{escape(chart.y_format(tick))}</text>'
        )
    shown = _thin(x_ticks, max(2, plot_w // 70))
    for tick in shown:
        x = x_of(tick)
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + plot_h}" stroke="#eeeeee"/>')
        parts.append(
            f'<text x="{x:.1f}" y="{top + plot_h + 16}" text-anchor="middle">'
            f"{escape(chart.x_format(tick))}</text>"
        )
    parts.append(
        f'<text x="{left + plot_w / 2}" y="{top + plot_h + 36}" text-anchor="middle" '
        f'fill="#444">{escape(chart.x_label)}</text>'
    )
    parts.append(
        f'<text transform="translate(16 {top + plot_h / 2}) rotate(-90)" text-anchor="middle" '
        f'fill="#444">{escape(chart.y_label)}</text>'
    )
    for value, label in chart.marks:
        if chart.log_x and value <= 0:
            continue
        x = x_of(value)
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + plot_h}" stroke="#888" '
            'stroke-dasharray="4 3"/>'
        )
        parts.append(f'<text x="{x + 4:.1f}" y="{top + 12}" fill="#555">{escape(label)}</text>')
    for index, series in enumerate(chart.series):
        color = series.color or PALETTE[index % len(PALETTE)]
        drawn = [p for p in series.points if _finite(p) and (not chart.log_x or p[0] > 0)]
        if not drawn:
            continue
        path = " ".join(f"{x_of(x):.1f},{y_of(y):.1f}" for x, y in drawn)
        parts.append(
            f'<polyline fill="none" stroke="{color}" stroke-width="1.8" points="{path}">'
            f"<title>{escape(series.name)}</title></polyline>"
        )
        if series.markers or len(drawn) == 1:
            for x, y in drawn:
                parts.append(
                    f'<circle cx="{x_of(x):.1f}" cy="{y_of(y):.1f}" r="3.5" fill="{color}">'
                    f"<title>{escape(series.name)}: {escape(chart.y_format(y))}</title></circle>"
                )
    if legend_rows:
        for index, series in enumerate(chart.series):
            color = series.color or PALETTE[index % len(PALETTE)]
            x = left + (index % columns) * (plot_w / columns)
            y = chart.height + 14 + (index // columns) * 18 - 4
            parts.append(f'<rect x="{x:.1f}" y="{y - 9}" width="14" height="4" fill="{color}"/>')
            parts.append(f'<text x="{x + 20:.1f}" y="{y - 4}">{escape(series.name[:48])}</text>')
    parts.append("</svg>")
    return "".join(parts)


# About how wide a character of the 12 px sans-serif legend is, with the swatch.
_CHAR_WIDTH, _SWATCH = 7, 30


def _legend_columns(chart: Chart) -> int:
    """As many legend columns (up to 3) as the longest name leaves room for: names no
    longer run into the next column."""
    longest = max((len(series.name[:48]) for series in chart.series), default=0)
    plot_w = chart.width - 88 - 16
    return max(1, min(3, plot_w // (longest * _CHAR_WIDTH + _SWATCH + 10)))


def _finite(point: tuple[float, float]) -> bool:
    return all(isinstance(v, (int, float)) and math.isfinite(v) for v in point)


def _thin(ticks: list[float], most: int) -> list[float]:
    if len(ticks) <= most:
        return ticks
    step = math.ceil(len(ticks) / most)
    return ticks[::step]
