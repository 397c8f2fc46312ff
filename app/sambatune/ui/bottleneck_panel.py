"""The bottleneck panel: the book's table from this server's measured layers, and clients supported."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from sambatune.bench.bottleneck import BottleneckReport, clients_supported
from sambatune.bench.bottleneck_inputs import BottleneckFigures, figures_from_results
from sambatune.bench.records import BenchResult
from sambatune.errors import SambaTuneError
from sambatune.ui.tables import read_only_table

HEADERS = ["Layer", "Ceiling (MB/s)", "Ceiling (Mbit/s)", "% of link", "From", ""]
LIMIT_ROW = QColor("#fde7e4")


def _number(value: float | None, digits: int = 0) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


class BottleneckPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.results: list[BenchResult] = []
        self.figures: BottleneckFigures | None = None
        self.report: BottleneckReport | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        top = QHBoxLayout()
        top.addWidget(QLabel("Transfers:"))
        self.direction = QComboBox()
        self.direction.setObjectName("bottleneckDirection")
        self.direction.addItem("clients read from the server", "read")
        self.direction.addItem("clients write to the server", "write")
        self.direction.currentIndexChanged.connect(self._recompute)
        top.addWidget(self.direction)
        top.addStretch(1)
        layout.addLayout(top)
        self.table = read_only_table(HEADERS, "bottleneckTable")
        layout.addWidget(self.table)
        self.verdict = QLabel("")
        self.verdict.setObjectName("bottleneckVerdict")
        self.verdict.setWordWrap(True)
        self.verdict.setMinimumWidth(200)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.verdict)
        demand_row = QHBoxLayout()
        demand_row.addWidget(QLabel("Each client needs on average:"))
        self.demand = QLineEdit()
        self.demand.setObjectName("clientDemand")
        self.demand.setPlaceholderText("e.g. 2 MB/s or 20 Mbit/s")
        self.demand.returnPressed.connect(self._clients)
        demand_row.addWidget(self.demand)
        self.clients_button = QPushButton("How many clients?")
        self.clients_button.setObjectName("clientsButton")
        self.clients_button.clicked.connect(self._clients)
        demand_row.addWidget(self.clients_button)
        demand_row.addStretch(1)
        layout.addLayout(demand_row)
        self.clients = QLabel("")
        self.clients.setObjectName("clientsSupported")
        self.clients.setWordWrap(True)
        self.clients.setMinimumWidth(200)
        layout.addWidget(self.clients)
        layout.addStretch(1)

    def show_results(self, results: list[BenchResult]) -> None:
        self.results = results
        self._recompute()

    def _recompute(self) -> None:
        direction: Any = self.direction.currentData()
        self.figures = figures_from_results(self.results, direction)
        try:
            self.report = self.figures.report()
        except SambaTuneError as error:
            self.report = None
            self.verdict.setText(error.message)
            return
        report = self.report
        self.table.setRowCount(len(report.rows))
        bold = QFont(self.table.font())
        bold.setBold(True)
        for row, layer in enumerate(report.rows):
            source = layer.source + ("" if layer.counted else " (not counted)")
            cells = [layer.name, _number(layer.ceiling_mb_per_s, 1), _number(layer.ceiling_mbit_per_s),
                     _number(layer.percent_of_link), source, "◀ limits" if layer.limits else ""]
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if 1 <= column <= 3:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if layer.limits:
                    item.setBackground(QBrush(LIMIT_ROW))
                    item.setFont(bold)
                self.table.setItem(row, column, item)
        self.table.resizeRowsToContents()
        self.table.setMinimumHeight(34 + 30 * len(report.rows))
        text = f"<b>Limit: {report.limiting}.</b> {report.reason}"
        if report.smb_vs_raw_meaning:
            text += f"<br>{report.smb_vs_raw_meaning}"
        if report.advice:
            text += "<ul>" + "".join(f"<li>{a}</li>" for a in report.advice) + "</ul>"
        self.verdict.setText(text)
        if self.demand.text().strip():
            self._clients()

    def _clients(self) -> None:
        from sambatune.client.quantities import parse_bandwidth

        if self.report is None or self.report.expected_bytes_per_s is None:
            self.clients.setText("The ceiling is not known yet: measure the disk and the network first.")
            return
        text = self.demand.text().strip()
        if not text:
            self.clients.setText("Type what one client moves on average, e.g. 2 MB/s.")
            return
        try:
            demand = parse_bandwidth(text) / 8
            estimate = clients_supported(self.report.expected_bytes_per_s, demand)
        except SambaTuneError as error:
            self.clients.setText(f"<span style='color:#b3261e'>{error.message}</span> {error.details}")
            return
        self.clients.setText(f"<b style='font-size:14pt'>About {estimate.clients} clients</b><br>"
                             f"{estimate.assumption}")
