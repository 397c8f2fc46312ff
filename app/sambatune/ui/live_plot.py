"""The live throughput graph: one curve per run, fed at most ten times a second.

Samples arrive from the benchmark thread as signals; they are buffered and drawn in
one go every 100 ms (``Throttle``), appended to preallocated numpy arrays so a long
run never reallocates per point, and each curve gets ``setData`` once per flush.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget

from sambatune.bench.events import Sample
from sambatune.ui.tasks import Throttle

COLORS = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000")
WARMUP_COLOR = "#9a9a9a"
FLUSH_MS = 100


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


def configure(plot: pg.PlotWidget, y_label: str = "MB/s", x_label: str = "seconds into the run",
              legend_offset: tuple[int, int] = (10, 10)) -> None:
    plot.setBackground("w")
    plot.showGrid(x=True, y=True, alpha=0.25)
    plot.setLabel("left", y_label)
    plot.setLabel("bottom", x_label)
    plot.getPlotItem().setMenuEnabled(False)
    plot.addLegend(offset=legend_offset, labelTextSize="8pt", brush=pg.mkBrush(255, 255, 255, 210),
                   pen=pg.mkPen("#cccccc"))


class LivePlot(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.plot = pg.PlotWidget()
        self.plot.setObjectName("livePlot")
        configure(self.plot)
        layout.addWidget(self.plot)
        self.lines: dict[tuple[str, int], _Line] = {}
        self.warmup: set[tuple[str, int]] = set()
        self.labels: dict[str, str] = {}
        self.flushes = 0
        self.throttle = Throttle(FLUSH_MS, self._flush, self)

    def clear(self, title: str = "") -> None:
        self.throttle.drain()
        self.plot.clear()
        self.plot.setTitle(title)
        self.lines.clear()
        self.warmup.clear()
        self.labels.clear()

    def run_started(self, series: str, attempt: int, warmup: bool, label: str) -> None:
        self.labels[series] = label or series
        if warmup:
            self.warmup.add((series, attempt))

    def add(self, sample: Sample) -> None:
        self.throttle.push(sample)

    def finish(self) -> None:
        self.throttle.drain()

    @property
    def points(self) -> int:
        return sum(line.count for line in self.lines.values())

    def _flush(self, samples: list[Sample]) -> None:
        grouped: dict[tuple[str, int], list[tuple[float, float]]] = {}
        for sample in samples:
            grouped.setdefault((sample.series, sample.attempt), []).append(
                (sample.t, sample.bytes_per_s / 1e6))
        for key, points in grouped.items():
            line = self.lines.get(key) or self._new_line(key)
            line.extend(points)
        self.flushes += 1

    def _new_line(self, key: tuple[str, int]) -> _Line:
        series, attempt = key
        warm = key in self.warmup
        color = WARMUP_COLOR if warm else COLORS[(len(self.lines)) % len(COLORS)]
        name = f"{self.labels.get(series, series)}: " + (f"warm-up {attempt}" if warm else f"run {attempt}")
        pen = pg.mkPen(color, width=2, style=Qt.PenStyle.DashLine if warm else Qt.PenStyle.SolidLine)
        curve = self.plot.plot([], [], pen=pen, name=name)
        line = _Line(curve, np.zeros(1024), np.zeros(1024))
        self.lines[key] = line
        return line
