"""The small-file test's figures: per operation how many, how fast, and how long one call took.

A throughput curve says nothing here: what matters is the rate of each kind of call and
its latency, the typical one (p50) and the slow one (p99, which users notice as a hang).
While the test runs, each operation's row fills in as its run ends; at the end the rows
hold all counted runs together (the result's ``operations`` table, as the CLI prints it).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QLabel, QTableWidgetItem, QVBoxLayout, QWidget

from sambatune.bench.records import BenchResult, RunRecord
from sambatune.bench.small_files import OPERATION_LABELS, OPERATION_NAMES
from sambatune.ui.tables import read_only_table
from sambatune.units import format_bytes, format_operations_rate

COLUMNS = ["Operation", "Done", "Ops/s", "p50 latency", "p99 latency", "What one operation is"]
RUNNING = "running…"
WAITING = "Each operation's rate and its p50 and p99 latency appear here as the test runs."
WARMUP = QColor("#8a8a8a")
LEGEND = (
    "p50: half of the calls took at most this long; p99: all but 1 in 100 did (the slow calls users notice)."
)


def format_latency(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    return f"{seconds * 1000:.2f} ms"


class OperationsTable(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("operationsView")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        self._plan = ""
        self.caption = QLabel(WAITING)
        self.caption.setObjectName("operationsCaption")
        self.caption.setWordWrap(True)
        self.caption.setContentsMargins(4, 0, 4, 2)
        layout.addWidget(self.caption)
        self.table = read_only_table(COLUMNS, "operationsTable")
        self.table.setRowCount(len(OPERATION_NAMES))
        for row, name in enumerate(OPERATION_NAMES):
            self._set_row(row, [name, "", "", "", "", OPERATION_LABELS[name]])
        layout.addWidget(self.table, 1)
        legend = QLabel(LEGEND)
        legend.setWordWrap(True)
        legend.setContentsMargins(4, 2, 4, 0)
        legend.setStyleSheet("color: palette(mid);")
        layout.addWidget(legend)

    def clear(self, caption: str) -> None:
        self._plan = caption
        self.caption.setText(caption)
        for row in range(self.table.rowCount()):
            for column in range(1, 5):
                self._cell(row, column, "")

    def run_started(self, series: str, warmup: bool) -> None:
        if series in OPERATION_NAMES:
            row = OPERATION_NAMES.index(series)
            self._cell(row, 1, RUNNING + (" (warm-up)" if warmup else ""))

    def run_finished(self, record: RunRecord) -> None:
        """A run of one operation ended: its own figures, until the result sums them up."""
        if record.series not in OPERATION_NAMES:
            return
        details = record.details
        done = f"{record.operations or 0:,}" + (" (warm-up)" if record.warmup else "")
        self._fill(
            OPERATION_NAMES.index(record.series),
            done,
            record.operations_per_s,
            details.get("p50_seconds"),
            details.get("p99_seconds"),
            record.warmup,
        )

    def show_result(self, result: BenchResult) -> None:
        """All counted runs together, as stored with the session."""
        rows: list[dict[str, Any]] = result.extra.get("operations", [])
        for found in rows:
            if found.get("operation") in OPERATION_NAMES:
                self._fill(
                    OPERATION_NAMES.index(found["operation"]),
                    f"{found.get('count') or 0:,}",
                    found.get("operations_per_s"),
                    found.get("p50_seconds"),
                    found.get("p99_seconds"),
                    False,
                )
        counted = max((len(series.counted) for series in result.series.values()), default=0)
        together = f" {counted} counted runs, taken together." if counted > 1 else ""
        self.caption.setText(self._plan + together)

    def _fill(
        self, row: int, done: str, rate: float | None, p50: float | None, p99: float | None, warmup: bool
    ) -> None:
        cells = [done, format_operations_rate(rate, "–"), format_latency(p50), format_latency(p99)]
        for column, text in enumerate(cells, 1):
            item = self._cell(row, column, text)
            item.setForeground(QBrush(WARMUP) if warmup else QBrush())

    def _set_row(self, row: int, cells: list[str]) -> None:
        for column, text in enumerate(cells):
            self._cell(row, column, text)

    def _cell(self, row: int, column: int, text: str) -> QTableWidgetItem:
        item = self.table.item(row, column)
        if item is None:
            item = QTableWidgetItem()
            if 1 <= column <= 4:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.table.setItem(row, column, item)
        item.setText(text)
        return item


def plan_caption(count: int, size: int, outstanding: int, where: str, connections: int = 1) -> str:
    """What the test does, in the words of its form."""
    at_once = "one at a time" if outstanding == 1 else f"{outstanding} at a time"
    if connections > 1:
        at_once += f" over {connections} connections"
    return f"{count:,} files of {format_bytes(size, 0)}, {at_once}, on {where}."
