"""The book's measurement form: one row per run, then mean, deviation and what to make of them."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QScrollArea,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from sambatune.bench.records import BYTES, RunRecord, SeriesResult
from sambatune.ui.tables import read_only_table
from sambatune.units import format_bits, format_figure, format_operations_rate, format_percent

COLUMNS = ["Series", "Run", "Size in bytes", "Time (s)", "Bytes/s", "Bits/s", "% of link"]
WARMUP = QColor("#8a8a8a")
ODD = QColor("#fff2e0")


def _number(value: float | int | None, digits: int = 0) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def run_cells(record: RunRecord, number: int | None) -> list[str]:
    label = f"warm-up {record.attempt}" if number is None else str(number)
    if record.unit == BYTES:
        return [
            label,
            _number(record.bytes),
            f"{record.seconds:.3f}",
            _number(record.bytes_per_s),
            format_bits(record.bits_per_s),
            _number(record.percent_of_link, 1),
        ]
    return [
        label,
        f"{_number(record.operations)} ops",
        f"{record.seconds:.3f}",
        format_operations_rate(record.operations_per_s, missing="–"),
        "",
        "",
    ]


def summary_text(series: SeriesResult) -> str:
    stats = series.stats()
    if stats is None:
        return f"<b>{series.label}</b>: no counted runs yet."

    def shown(value: float) -> str:
        return format_figure(value, series.unit)

    parts = [f"<b>{series.label}</b>: mean <b>{shown(stats.mean)}</b>"]
    if series.unit == BYTES:
        parts[0] += f" ({format_bits(stats.mean * 8)})"
    spread = f", deviation {shown(stats.stdev)}"
    if stats.cv is not None:
        spread += f" ({format_percent(stats.cv)})"
    parts.append(spread + f", {stats.n} counted run{'s' if stats.n != 1 else ''}.")
    if stats.outliers:
        parts.append(f" Odd runs are shaded; the average of the others is {shown(stats.valid_mean)}.")
    if stats.note:
        color = "#1e5a8c" if stats.quiet else "#8a5300"
        parts.append(f"<br><span style='color:{color}'>{stats.note}</span>")
    elif stats.quiet:
        parts.append("<br><span style='color:#1e7d32'>The runs agree: the machine was quiet.</span>")
    return "".join(parts)


class RunTable(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.table = read_only_table(COLUMNS, "runTable")
        self.table.setAlternatingRowColors(True)
        rows = self.table.verticalHeader().defaultSectionSize()
        # The runs stay in sight: a test of five series (the disk test) has five
        # summaries with notes, which as a plain label left one row of the table.
        self.table.setMinimumHeight(self.table.horizontalHeader().sizeHint().height() + 4 * rows + 4)
        layout.addWidget(self.table, 1)
        self.summary = QLabel()
        self.summary.setObjectName("runSummary")
        self.summary.setWordWrap(True)
        self.summary.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.summary_area = QScrollArea()
        self.summary_area.setObjectName("runSummaryArea")
        self.summary_area.setWidgetResizable(True)
        self.summary_area.setFrameShape(QFrame.Shape.NoFrame)
        self.summary_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.summary_area.setWidget(self.summary)
        self.summary_area.setMaximumHeight(7 * self.summary.fontMetrics().lineSpacing())
        layout.addWidget(self.summary_area)

    def clear(self) -> None:
        self.table.setRowCount(0)
        self.summary.setText("")

    def add_run(self, label: str, record: RunRecord, number: int | None) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        for column, text in enumerate([label, *run_cells(record, number)]):
            item = QTableWidgetItem(text)
            if column >= 2:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if number is None:
                item.setForeground(QBrush(WARMUP))
            self.table.setItem(row, column, item)
        self.table.scrollToBottom()

    def show_series(self, series: list[SeriesResult]) -> None:
        """The finished result: every run again (odd ones shaded) and the summaries."""
        self.table.setRowCount(0)
        for found in series:
            odd = set(found.outlier_attempts())
            number = 0
            for record in found.runs:
                if not record.warmup:
                    number += 1
                self.add_run(found.name, record, None if record.warmup else number)
                if record.attempt in odd:
                    for column in range(self.table.columnCount()):
                        item = self.table.item(self.table.rowCount() - 1, column)
                        if item is not None:
                            item.setBackground(QBrush(ODD))
        self.summary.setText("<br>".join(summary_text(found) for found in series))
