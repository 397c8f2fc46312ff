"""The list of lint findings (and testparm's complaints) under the editor; click to jump.

A table model over the findings: a new check swaps the list in one step and the
view only draws the rows on screen, however many findings a large file has.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from sambatune.conf.lint import Finding
from sambatune.ui.severity import OTHER_SEVERITY_COLOR, SEVERITY_COLORS

MARKS = {"error": "●", "warning": "▲", "info": "○"}
HEADERS = ("", "Line", "Finding")
AnyIndex = QModelIndex | QPersistentModelIndex


class Row(NamedTuple):
    severity: str
    where: str  # "12", or "included.conf:4"
    line: int  # where to jump in the edited file; 0 for another file or no line
    message: str
    tooltip: str


class FindingsModel(QAbstractTableModel):
    """testparm's complaints first, then the findings; rows are made when drawn."""

    def __init__(self) -> None:
        super().__init__()
        self.testparm: list[tuple[int | None, str]] = []
        self.findings: list[Finding] = []

    def set_items(self, testparm: list[tuple[int | None, str]], findings: list[Finding]) -> None:
        self.beginResetModel()
        self.testparm, self.findings = testparm, findings
        self.endResetModel()

    def row(self, number: int) -> Row:
        if number < len(self.testparm):
            line, message = self.testparm[number]
            return Row(
                "error", str(line) if line else "", line or 0, f"testparm on the server: {message}", message
            )
        finding = self.findings[number - len(self.testparm)]
        where = f"{finding.file}:{finding.line}" if finding.file else str(finding.line)
        return Row(
            finding.severity,
            where,
            0 if finding.file else finding.line,
            finding.message,
            f"{finding.code}: {finding.message}",
        )

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.testparm) + len(self.findings)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        return None

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        row = self.row(index.row())
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (MARKS.get(row.severity, "·"), row.where, row.message)[column]
        if role == Qt.ItemDataRole.ForegroundRole and column == 0:
            return QColor(SEVERITY_COLORS.get(row.severity, OTHER_SEVERITY_COLOR))
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.tooltip
        if role == Qt.ItemDataRole.UserRole:
            return row.line
        return None


class FindingsList(QWidget):
    #: Jump to this 1-based line of the edited file.
    line_requested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("findingsList")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        header = QHBoxLayout()
        header.setContentsMargins(6, 0, 6, 0)
        self.summary = QLabel("Checking…")
        self.summary.setObjectName("findingsSummary")
        # A long sentence wraps: it must never make the editor, and the window, wider.
        self.summary.setWordWrap(True)
        header.addWidget(self.summary, 1)
        self.toggle = QToolButton()
        self.toggle.setText("Hide list")
        self.toggle.clicked.connect(self._toggle)
        header.addWidget(self.toggle)
        layout.addLayout(header)
        self.model = FindingsModel()
        self.view = QTreeView()
        self.view.setObjectName("findingsView")
        self.view.setModel(self.model)
        self.view.setRootIsDecorated(False)
        self.view.setUniformRowHeights(True)
        self.view.setAlternatingRowColors(False)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header_view = self.view.header()
        header_view.setStretchLastSection(True)
        header_view.setSectionResizeMode(0, QHeaderView.ResizeMode.Fixed)
        header_view.resizeSection(0, 24)
        header_view.resizeSection(1, 56)
        self.view.clicked.connect(self._clicked)
        self.view.activated.connect(self._clicked)
        layout.addWidget(self.view, 1)
        self.findings: list[Finding] = []
        self.testparm: list[tuple[int | None, str]] = []

    def _toggle(self) -> None:
        visible = not self.view.isVisible()
        self.view.setVisible(visible)
        self.toggle.setText("Hide list" if visible else "Show list")

    def show_findings(self, findings: list[Finding]) -> None:
        self.findings = findings
        self._fill()

    def show_testparm(self, messages: list[tuple[int | None, str]]) -> None:
        """testparm's complaints from the last refused apply (line None: not located)."""
        self.testparm = messages
        self._fill()

    def row_count(self) -> int:
        return self.model.rowCount()

    def row(self, number: int) -> Row:
        return self.model.row(number)

    def _fill(self) -> None:
        self.model.set_items(self.testparm, self.findings)
        counts = {"error": len(self.testparm), "warning": 0, "info": 0}
        for finding in self.findings:
            counts[finding.severity] = counts.get(finding.severity, 0) + 1
        words = []
        for severity, singular, plural in (
            ("error", "error", "errors"),
            ("warning", "warning", "warnings"),
            ("info", "note", "notes"),
        ):
            if counts[severity]:
                words.append(f"{counts[severity]} {singular if counts[severity] == 1 else plural}")
        self.summary.setText(
            " · ".join(words) if words else "No findings: Samba reads this file the way it looks."
        )
        color = (
            "#cf222e"
            if counts["error"]
            else "#9a6700"
            if counts["warning"]
            else "#1a7f37"
            if not words
            else "#57606a"
        )
        self.summary.setStyleSheet(f"color: {color}; font-weight: 600;")

    def _clicked(self, index: QModelIndex) -> None:
        line = int(self.model.data(index, Qt.ItemDataRole.UserRole) or 0)
        if line:
            self.line_requested.emit(line)
