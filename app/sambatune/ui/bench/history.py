"""Past sessions of one server: pick two or more, see them overlaid and whether they differ.

The database is read in a worker (``session.run_task``); the comparison is the core's
``compare_sessions`` (Welch's t-test, the confidence interval of the difference, what
changed in smb.conf), each later session against the first one picked.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from sambatune.bench.comparison import SessionComparison
from sambatune.bench.results_db import SessionSummary, StoredSession
from sambatune.cancellation import CancelToken
from sambatune.ui.bench.live_plot import COLORS, configure
from sambatune.ui.file_places import remember, suggested
from sambatune.ui.tables import read_only_table
from sambatune.units import format_figure, format_rate

HEADERS = ["Session", "Started (UTC)", "Test", "Main series", "Mean", "Runs", "Note"]
VERDICT_COLORS = {"better": "#1e7d32", "worse": "#b3261e"}


def _mean(summary: SessionSummary) -> str:
    return format_figure(summary.mean, summary.unit, missing="–")


def _signed_rate(value: float) -> str:
    return ("−" if value < 0 else "+") + format_rate(abs(value))


class HistoryView(QWidget):
    #: (sessions, comparisons) after Compare.
    compared = Signal(object, object)

    def __init__(
        self, run_task: Callable[..., Any], server: Callable[[], str], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.run_task = run_task
        self.server = server
        self.summaries: list[SessionSummary] = []
        self.compared_sessions: list[StoredSession] = []
        self.comparisons: list[SessionComparison] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        hint = QLabel("Select two or more sessions of the same test (Ctrl+click), then Compare.")
        hint.setWordWrap(True)
        layout.addWidget(hint)
        bar = QHBoxLayout()
        bar.addStretch(1)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.refresh)
        self.compare_button = QPushButton("Compare")
        self.compare_button.setObjectName("compareButton")
        self.compare_button.clicked.connect(self.compare_selected)
        self.csv_button = QPushButton("Export CSV…")
        self.csv_button.clicked.connect(lambda: self._ask_path("CSV", "runs.csv", "CSV files (*.csv)"))
        self.html_button = QPushButton("HTML report…")
        self.html_button.setObjectName("htmlReportButton")
        self.html_button.clicked.connect(
            lambda: self._ask_path("HTML", "sambatune-report.html", "HTML files (*.html)")
        )
        for button in (self.refresh_button, self.compare_button, self.csv_button, self.html_button):
            bar.addWidget(button)
        layout.addLayout(bar)
        splitter = QSplitter(Qt.Orientation.Vertical)
        self.table = read_only_table(
            HEADERS, "sessionTable", select=QAbstractItemView.SelectionMode.ExtendedSelection
        )
        self.table.itemSelectionChanged.connect(self._selection_changed)
        splitter.addWidget(self.table)
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        #: Made at the first Compare (``_plot``): until then it would be an empty frame,
        #: and making it was a third of the Benchmarks page's making.
        self.plot: pg.PlotWidget | None = None
        self._lower_layout = lower_layout
        self.legend = QLabel("")
        self.legend.setObjectName("compareLegend")
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setContentsMargins(8, 0, 8, 2)
        lower_layout.addWidget(self.legend)
        self.sentence = QLabel("")
        self.sentence.setObjectName("compareSentence")
        self.sentence.setWordWrap(True)
        self.sentence.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lower_layout.addWidget(self.sentence)
        splitter.addWidget(lower)
        splitter.setSizes([180, 320])
        layout.addWidget(splitter, 1)
        self.status = QLabel("")
        self.status.setObjectName("historyStatus")
        layout.addWidget(self.status)
        self._selection_changed()

    # -- loading ---------------------------------------------------------------------
    def refresh(self) -> None:
        server = self.server()

        def work(report: Any, cancel: CancelToken) -> list[SessionSummary]:
            from sambatune.bench.results_db import ResultsDatabase

            return ResultsDatabase().sessions(server=server)

        self.run_task("Reading the benchmark history", work, on_done=self._show)

    def _show(self, summaries: list[SessionSummary]) -> None:
        self.summaries = summaries
        self.table.setRowCount(len(summaries))
        for row, summary in enumerate(summaries):
            values = [
                str(summary.id),
                summary.started_at.replace("T", " ").replace("+00:00", ""),
                summary.test,
                summary.primary_series,
                _mean(summary),
                str(summary.runs),
                summary.note,
            ]
            for column, text in enumerate(values):
                self.table.setItem(row, column, QTableWidgetItem(text))
        if not summaries:
            self.status.setText("No sessions for this server yet: run a test on the left.")
        else:
            self.status.setText(f"{len(summaries)} session(s) on record for this server.")

    def selected_ids(self) -> list[int]:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.summaries[row].id for row in rows if row < len(self.summaries)]

    def select_ids(self, ids: list[int]) -> None:
        self.table.clearSelection()
        mode = self.table.selectionMode()
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.MultiSelection)
        for row, summary in enumerate(self.summaries):
            if summary.id in ids:
                self.table.selectRow(row)
        self.table.setSelectionMode(mode)

    def _selection_changed(self) -> None:
        count = len(self.selected_ids()) if self.summaries else 0
        self.compare_button.setEnabled(count >= 2)
        self.csv_button.setEnabled(count >= 1)
        self.html_button.setEnabled(count >= 1)

    # -- comparing -------------------------------------------------------------------
    def compare_selected(self) -> None:
        ids = sorted(self.selected_ids())

        def work(report: Any, cancel: CancelToken) -> tuple[list[StoredSession], list[SessionComparison]]:
            from sambatune.bench.comparison import compare_sessions
            from sambatune.bench.results_db import ResultsDatabase

            database = ResultsDatabase()
            sessions = [database.load(number) for number in ids]
            return sessions, [compare_sessions(sessions[0], later) for later in sessions[1:]]

        self.run_task("Comparing sessions", work, on_done=lambda found: self._show_comparison(*found))

    def _plot(self) -> pg.PlotWidget:
        if self.plot is None:
            self.plot = pg.PlotWidget()
            self.plot.setObjectName("comparePlot")
            # The legend is a line under the plot: inside it, it covered the runs it names.
            configure(self.plot, x_label="counted run", legend_offset=None)
            self._lower_layout.insertWidget(0, self.plot, 1)
        return self.plot

    def _show_comparison(self, sessions: list[StoredSession], comparisons: list[SessionComparison]) -> None:
        self.compared_sessions, self.comparisons = sessions, comparisons
        plot = self._plot()
        plot.clear()
        series = comparisons[0].series if comparisons else sessions[0].result.primary
        unit_bytes = sessions[0].result.series[series].unit == "bytes"
        plot.setLabel("left", "MB/s" if unit_bytes else "operations/s")
        plot.setTitle(f"Counted runs of '{series}'")
        highest = 0.0
        legend: list[str] = []
        for index, session in enumerate(sessions):
            found = session.result.series.get(series)
            if found is None:
                continue
            scale = 1e6 if unit_bytes else 1.0
            xs = list(range(1, len(found.counted) + 1))
            ys = [r.rate / scale for r in found.counted]
            highest = max([highest, *ys])
            color = COLORS[index % len(COLORS)]
            name = f"session {session.id}" + (f" – {session.note}" if session.note else "")
            plot.plot(xs, ys, pen=pg.mkPen(color, width=2), symbol="o", symbolBrush=color, symbolSize=8)
            legend.append(
                f'<span style="color:{color}; font-weight:bold">━━━</span>&nbsp;{html.escape(name)}'
            )
            stats = found.stats()
            if stats is not None:
                line = pg.InfiniteLine(
                    stats.mean / scale, angle=0, pen=pg.mkPen(color, style=Qt.PenStyle.DotLine)
                )
                plot.addItem(line)
        most = max(
            (len(s.result.series[series].counted) for s in sessions if series in s.result.series), default=1
        )
        plot.getAxis("bottom").setTicks([[(n, str(n)) for n in range(1, most + 1)]])
        # From zero, so a small difference looks small.
        plot.setXRange(0.8, most + 0.2, padding=0)
        plot.setYRange(0, (highest or 1.0) * 1.1, padding=0)
        self.legend.setText("&nbsp;&nbsp; ".join(legend) + "&nbsp;&nbsp; (dotted: each session's mean)")
        self.sentence.setText("<br>".join(self._comparison_html(c) for c in comparisons))
        self.compared.emit(sessions, comparisons)

    @staticmethod
    def _comparison_html(found: SessionComparison) -> str:
        c = found.comparison
        color = VERDICT_COLORS.get(c.verdict, "#444")
        text = (
            f"<b style='color:{color}'>Session {found.after.id} against {found.before.id}: "
            f"{c.verdict}.</b> {c.sentence}"
        )
        if c.diff_ci95_low is not None and c.diff_ci95_high is not None and c.unit == "bytes/s":
            text += (
                f" The difference is between {_signed_rate(c.diff_ci95_low)} and "
                f"{_signed_rate(c.diff_ci95_high)} (95% confidence)."
            )
        if found.changed_lines:
            text += " Changed in smb.conf: <tt>" + "; ".join(found.changed_lines) + "</tt>."
        for warning in found.warnings:
            text += f"<br><span style='color:#8a5300'>{warning}</span>"
        return text

    # -- exporting -------------------------------------------------------------------
    def _ask_path(self, kind: str, default: str, filter_text: str) -> None:
        path, _ = QFileDialog.getSaveFileName(self, f"Export {kind}", suggested(default), filter_text)
        if path:
            remember(path)
            self.export(kind, Path(path))

    def export(self, kind: str, path: Path, on_done: Callable[[Any], None] | None = None) -> None:
        """Write the selected sessions as CSV or an HTML report, off the GUI thread."""
        ids = self.selected_ids()

        def work(report: Any, cancel: CancelToken) -> Path:
            from sambatune.bench.results_db import ResultsDatabase

            database = ResultsDatabase()
            sessions = [database.load(number) for number in ids]
            if kind == "HTML":
                from sambatune.bench.html_report import render_report

                path.write_text(render_report(sessions), encoding="utf-8")
            else:
                from sambatune.bench.csv_export import write_runs_csv

                with open(path, "w", newline="", encoding="utf-8") as handle:
                    write_runs_csv(sessions, handle)
            return path

        def done(written: Path) -> None:
            self.status.setText(f"Wrote {written}.")
            if on_done is not None:
                on_done(written)

        self.run_task(f"Exporting {kind}", work, on_done=done)
