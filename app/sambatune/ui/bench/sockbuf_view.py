"""The socket-buffer curve: throughput against SO_SNDBUF/SO_RCVBUF, log scale, autotuning marked.

The book's Figure B.1 asked which fixed buffer size was best; on a current kernel the
answer is usually "none": the autotuned line shows what Linux reaches by itself.
"""

from __future__ import annotations

import math
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from sambatune.bench.records import BenchResult
from sambatune.ui.bench.live_plot import configure
from sambatune.units import format_bytes, format_rate


class SizeAxis(pg.AxisItem):
    """Ticks at the measured sizes (log2 scale), labelled 4 KiB, 64 KiB, 1 MiB..."""

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        return [format_bytes(2**v, 0) for v in values]


class SockbufView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.layout_ = QVBoxLayout(self)
        self.layout_.setContentsMargins(0, 0, 0, 0)
        #: Made with the first curve: an empty plot tells nothing, and each one takes a
        #: tenth of the Benchmarks page's making (the window stays answering meanwhile).
        self.plot: pg.PlotWidget | None = None
        self.caption = QLabel("Run the socket buffer sweep to see the curve.")
        self.caption.setObjectName("sockbufCaption")
        self.caption.setWordWrap(True)
        self.caption.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.layout_.addWidget(self.caption, 1)
        self.points: list[tuple[float, float]] = []
        self.autotuned: float | None = None

    def show_result(self, result: BenchResult, session_label: str = "") -> None:
        curve: list[dict[str, Any]] = result.extra.get("curve") or []
        self.points = [
            (float(p["requested_bytes"]), float(p["mean_bytes_per_s"]))
            for p in curve
            if p.get("requested_bytes") and p.get("mean_bytes_per_s")
        ]
        tuned = [p for p in curve if p.get("requested_bytes") is None and p.get("mean_bytes_per_s")]
        self.autotuned = float(tuned[0]["mean_bytes_per_s"]) if tuned else None
        plot = self._plot()
        plot.clear()
        plot.setTitle(f"Throughput against socket buffer size{session_label}")
        if self.points:
            xs = [math.log2(size) for size, _ in self.points]
            ys = [rate / 1e6 for _, rate in self.points]
            plot.plot(
                xs,
                ys,
                pen=pg.mkPen("#0072b2", width=2),
                symbol="o",
                symbolSize=9,
                symbolBrush="#0072b2",
                name="buffer size set (as socket options would)",
            )
            axis = plot.getAxis("bottom")
            axis.setTicks([[(x, format_bytes(2**x, 0)) for x in xs]])
        if self.autotuned is not None:
            line = pg.InfiniteLine(
                self.autotuned / 1e6,
                angle=0,
                label=f"autotuned (no size set): {format_rate(self.autotuned)}",
                labelOpts={"position": 0.55, "color": "#007a55", "fill": (255, 255, 255, 220)},
                pen=pg.mkPen("#009e73", width=2, style=Qt.PenStyle.DashLine),
            )
            plot.addItem(line)
        self.caption.setText(self._caption())

    def _plot(self) -> pg.PlotWidget:
        if self.plot is None:
            self.plot = pg.PlotWidget(axisItems={"bottom": SizeAxis(orientation="bottom")})
            self.plot.setObjectName("sockbufPlot")
            configure(self.plot, x_label="SO_SNDBUF = SO_RCVBUF (log scale)", legend_offset=(-10, -40))
            self.layout_.insertWidget(0, self.plot, 1)
            self.layout_.setStretchFactor(self.caption, 0)
            self.caption.setAlignment(Qt.AlignmentFlag.AlignLeft)
        return self.plot

    def _caption(self) -> str:
        if not self.points:
            return "This session has no buffer sizes to draw."
        best_size, best_rate = max(self.points, key=lambda p: p[1])
        text = f"Best fixed size: {format_bytes(best_size, 0)} at {format_rate(best_rate)}."
        if self.autotuned is not None:
            share = self.autotuned / best_rate if best_rate else 0
            if share >= 0.97:
                text += (
                    f" Autotuning reaches {format_rate(self.autotuned)} ({share:.0%} of the best fixed "
                    "size) without any setting: leave SO_SNDBUF/SO_RCVBUF out of 'socket options'."
                )
            else:
                text += (
                    f" Autotuning reaches {format_rate(self.autotuned)} ({share:.0%} of it): check the "
                    "kernel's tcp_rmem/tcp_wmem maximums before fixing a size in smb.conf."
                )
        return text
