"""The live throughput graph: one curve per run, fed at most ten times a second.

Samples arrive from the benchmark thread as signals; they are buffered and drawn in
one go every 100 ms (``Throttle``), appended to preallocated numpy arrays so a long
run never reallocates per point, and each curve gets ``setData`` once per flush.

What a flush costs the GUI thread is kept small and bounded, because a run can take
both cores of a small machine (measured: with autoranged axes, each flush replayed
both axes' text and tick pictures, 30 to 50 ms on a loaded two-core machine):

- the axes are cached as pixmaps, so a flush redraws the curves and blits the axes;
- the ranges are set by hand and only grow, in round steps (1, 1.2, 1.5, 2, 2.5, 3,
  4, 5, 6, 8 times a power of ten), so the axes are rebuilt a few times per run, not
  ten times a second; the y range keeps a sixth of headroom above the highest point.

The legend is a line of text under the plot, outside the curves, so it never hides
them however many runs there are. A run too short for two samples (a put that takes a
tenth of a second) is drawn as its average across its duration, so every run shows.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsItem, QLabel, QVBoxLayout, QWidget

from sambatune.bench.events import Sample
from sambatune.bench.records import RunRecord
from sambatune.ui.tasks import Throttle

COLORS = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000")
#: A warm-up keeps its own colour (grey read as "disabled", and two series' warm-ups
#: could not be told apart) but is dashed and lighter: it is shown, not counted.
WARMUP_ALPHA = 150
FLUSH_MS = 100
#: Round range ends: these times a power of ten.
STEPS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)
#: Room above the highest point, as a share of it.
HEADROOM = 1 / 6


def round_up(value: float) -> float:
    """The smallest round number (see ``STEPS``) at or above ``value``."""
    if value <= 0 or not math.isfinite(value):
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    for step in STEPS:
        if step * power >= value * (1 - 1e-9):
            return step * power
    return 10 * power


@dataclass
class _Line:
    curve: pg.PlotDataItem
    x: np.ndarray
    y: np.ndarray
    count: int = 0

    def extend(self, points: list[tuple[float, float]]) -> None:
        needed = self.count + len(points)
        if needed > len(self.x):
            size = max(needed, 2 * len(self.x))
            self.x = np.resize(self.x, size)
            self.y = np.resize(self.y, size)
        for index, (x, y) in enumerate(points, self.count):
            self.x[index] = x
            self.y[index] = y
        self.count = needed
        self.curve.setData(self.x[: self.count], self.y[: self.count])


def configure(
    plot: pg.PlotWidget,
    y_label: str = "MB/s",
    x_label: str = "seconds into the run",
    legend_offset: tuple[int, int] | None = (10, 10),
) -> None:
    """The look every SambaTune plot shares; ``legend_offset=None``: no legend in the plot."""
    plot.setBackground("w")
    plot.showGrid(x=True, y=True, alpha=0.25)
    plot.setLabel("left", y_label)
    plot.setLabel("bottom", x_label)
    plot.getPlotItem().setMenuEnabled(False)
    for side in ("left", "bottom"):
        # Axes (with their grid) repaint from a pixmap until their range changes.
        plot.getAxis(side).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
    if legend_offset is not None:
        plot.addLegend(
            offset=legend_offset,
            labelTextSize="8pt",
            brush=pg.mkBrush(255, 255, 255, 210),
            pen=pg.mkPen("#cccccc"),
        )


class LivePlot(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.plot = pg.PlotWidget()
        self.plot.setObjectName("livePlot")
        configure(self.plot, legend_offset=None)
        self.plot.getPlotItem().hideButtons()
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.disableAutoRange()
        # Wide enough for "80000": a new y range then never moves the x axis (a redraw).
        self.plot.getAxis("left").setWidth(64)
        # A title from the start: setting the first one later would shift the layout
        # and make both axes redraw at the moment a run starts.
        self.plot.setTitle("Samples appear here while a test runs")
        layout.addWidget(self.plot, 1)
        self.legend = QLabel("")
        self.legend.setObjectName("livePlotLegend")
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setContentsMargins(8, 0, 8, 2)
        layout.addWidget(self.legend)
        self.lines: dict[tuple[str, int], _Line] = {}
        self.warmup: set[tuple[str, int]] = set()
        self.labels: dict[str, str] = {}
        self.flushes = 0
        self.x_top = self.y_top = 0.0
        self.throttle = Throttle(FLUSH_MS, self._flush, self)
        self._set_ranges(1.0, 1.0)

    def clear(self, title: str = "", seconds: float | None = None) -> None:
        """Start over; ``seconds``: how long each run lasts, when the test says so."""
        self.throttle.drain()
        self.plot.clear()
        self.plot.setTitle(title)
        self.lines.clear()
        self.warmup.clear()
        self.labels.clear()
        self.legend.setText("")
        self.x_top = self.y_top = 0.0
        # A timed run fills a known width: the x axis is set once and never redrawn.
        self._set_ranges(seconds * 1.04 if seconds else 1.0, 1.0, exact=bool(seconds))

    def run_started(self, series: str, attempt: int, warmup: bool, label: str) -> None:
        self.labels[series] = label or series
        if warmup:
            self.warmup.add((series, attempt))

    def add(self, sample: Sample) -> None:
        self.throttle.push(sample)

    def run_finished(self, record: RunRecord) -> None:
        """A run ended: one too short for two samples gets its average drawn instead."""
        self.throttle.push(record)

    def show_samples(
        self,
        title: str,
        samples: Iterable[Sample],
        labels: Mapping[str, str],
        warmups: Iterable[tuple[str, int]],
        records: Iterable[RunRecord] = (),
    ) -> None:
        """Draw runs again from their samples: after the SMB test, its SMB runs, which the
        ceilings' curves replaced while they were measured."""
        self.clear(title)
        self.labels.update(labels)
        self.warmup.update(warmups)
        chosen: list[Sample | RunRecord] = [s for s in samples if s.series in labels]
        chosen += [r for r in records if r.series in labels]
        if chosen:
            self._flush(chosen)

    def finish(self) -> None:
        self.throttle.drain()

    @property
    def points(self) -> int:
        return sum(line.count for line in self.lines.values())

    def _flush(self, items: list[Sample | RunRecord]) -> None:
        grouped: dict[tuple[str, int], list[tuple[float, float]]] = {}
        x_high = y_high = 0.0
        for item in items:
            key = (item.series, item.attempt)
            if isinstance(item, RunRecord):
                points = self._average(item, grouped.get(key, []))
                if points:
                    grouped[key] = []  # the run's average replaces a lone sample
            else:
                points = [(item.t, item.bytes_per_s / 1e6)]
            for x, y in points:
                grouped.setdefault(key, []).append((x, y))
                x_high = max(x_high, x)
                y_high = max(y_high, y)
        added = False
        for key, points in grouped.items():
            line = self.lines.get(key)
            if line is None:
                line = self._new_line(key)
                added = True
            line.extend(points)
        if added:
            self._show_legend()
        self._set_ranges(x_high, y_high * (1 + HEADROOM))
        self.flushes += 1

    def _average(self, record: RunRecord, pending: list[tuple[float, float]]) -> list[tuple[float, float]]:
        """A finished run with fewer than two points: its average from start to end instead."""
        line = self.lines.get((record.series, record.attempt))
        drawn = line.count if line is not None else 0
        rate = record.bytes_per_s
        if drawn + len(pending) >= 2 or not rate or record.seconds <= 0:
            return []
        if line is not None:
            line.count = 0
        return [(0.0, rate / 1e6), (record.seconds, rate / 1e6)]

    def _set_ranges(self, x_high: float, y_high: float, exact: bool = False) -> None:
        """Grow the ranges to round numbers when the points outgrow them; never shrink."""
        x_top = self.x_top if x_high <= self.x_top else x_high if exact else round_up(x_high)
        y_top = self.y_top if y_high <= self.y_top else round_up(y_high)
        if x_top != self.x_top:
            self.plot.setXRange(0, x_top, padding=0)
            self.x_top = x_top
        if y_top != self.y_top:
            self.plot.setYRange(0, y_top, padding=0)
            self.y_top = y_top

    def _new_line(self, key: tuple[str, int]) -> _Line:
        warm = key in self.warmup
        color = QColor(COLORS[(len(self.lines)) % len(COLORS)])
        if warm:
            color.setAlpha(WARMUP_ALPHA)
        pen = pg.mkPen(color, width=2, style=Qt.PenStyle.DashLine if warm else Qt.PenStyle.SolidLine)
        curve = self.plot.plot([], [], pen=pen)
        line = _Line(curve, np.zeros(1024), np.zeros(1024))
        self.lines[key] = line
        return line

    def _show_legend(self) -> None:
        """One group per series: its label, then a coloured sample and name per run."""
        groups: dict[str, list[str]] = {}
        colors = [COLORS[index % len(COLORS)] for index in range(len(self.lines))]
        for (series, attempt), color in zip(self.lines, colors, strict=True):
            warm = (series, attempt) in self.warmup
            sample = "╌╌╌" if warm else "━━━"
            # Counted runs are numbered after their warm-ups, as in the run table.
            earlier_warmups = sum(1 for s, a in self.warmup if s == series and a < attempt)
            name = f"warm-up {attempt}" if warm else f"run {attempt - earlier_warmups}"
            groups.setdefault(series, []).append(
                f'<span style="color:{color}; font-weight:bold">{sample}</span>&nbsp;{name}'
            )
        parts = [
            f"{html.escape(self.labels.get(series, series))}: " + "&nbsp;&nbsp; ".join(entries)
            for series, entries in groups.items()
        ]
        self.legend.setText("<br>".join(parts))
