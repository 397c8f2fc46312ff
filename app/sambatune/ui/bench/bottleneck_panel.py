"""The bottleneck panel: the book's table from this server's measured layers, and clients supported.

Every row names the session its figure came from (the test, its file size and the
smb.conf version it ran with). Sessions run with different smb.conf files are not
combined unless the user ticks them in the session list: by default only those run
with the newest session's smb.conf count.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QFont, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from sambatune.bench.bottleneck import (
    BottleneckReport,
    Direction,
    clients_supported,
    percent_digits,
    row_mark,
)
from sambatune.bench.bottleneck_inputs import (
    LAYER_TESTS,
    NOT_RECORDED,
    TEST_NAMES,
    BottleneckFigures,
    SessionFacts,
    config_versions,
    default_selection,
    direction_to_show,
    figures_from_results,
)
from sambatune.bench.records import BenchResult
from sambatune.errors import SambaTuneError
from sambatune.ui.tables import read_only_table
from sambatune.units import format_bytes

HEADERS = ["Layer", "MB/s", "Mbit/s", "% of link", "Session", "How", ""]
#: The first column's box ticks the session in or out.
SESSION_HEADERS = ["Session", "Test", "File", "smb.conf", "Started", "Note"]
SESSION_COLUMN = 4
HOW_COLUMN = 5
LIMIT_ROW = QColor("#fde7e4")
WARNING = "#8a5300"
#: How many sessions the list shows before it scrolls.
VISIBLE_SESSIONS = 5

if TYPE_CHECKING:
    from sambatune.bench.results_db import StoredSession


def _text(text: str) -> str:
    """Plain text for a rich-text label (a share or a note may hold < or &)."""
    return html.escape(text, quote=False)


def _number(value: float | None, digits: int = 0) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _percent(value: float | None) -> str:
    return _number(value, percent_digits(value) if value is not None else 0)


def _fit_height(table: QTableWidget, rows: int) -> None:
    """As tall as its first ``rows`` rows (the rest scroll) and the header, with room for
    the horizontal scroll bar when the columns are wider than the table."""
    table.resizeRowsToContents()
    shown = sum(table.rowHeight(r) for r in range(min(rows, table.rowCount())))
    header = table.horizontalHeader().sizeHint().height()
    columns = sum(table.columnWidth(c) for c in range(table.columnCount()))
    scroll = table.horizontalScrollBar().sizeHint().height() if columns > table.viewport().width() else 0
    table.setFixedHeight(
        header + max(shown, table.verticalHeader().defaultSectionSize()) + 2 * table.frameWidth() + scroll
    )


class BottleneckPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.results: list[BenchResult] = []
        #: The smb.conf and file of each session, by id; None when they cannot be read.
        self.facts: dict[int, SessionFacts] = {}
        #: The sessions the user ticked; None: the default (the newest smb.conf's).
        self.chosen: set[int] | None = None
        self.figures: BottleneckFigures | None = None
        self.report: BottleneckReport | None = None
        self._fit_pending = False
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        # Everything scrolls up and down when the page is short; nothing sideways.
        self.scroll_area = QScrollArea()
        self.scroll_area.setObjectName("bottleneckScroll")
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.content = QWidget()
        self.scroll_area.setWidget(self.content)
        outer.addWidget(self.scroll_area)
        layout = QVBoxLayout(self.content)
        layout.setContentsMargins(6, 6, 6, 6)
        top = QHBoxLayout()
        top.addWidget(QLabel("Transfers:"))
        self.direction = QComboBox()
        self.direction.setObjectName("bottleneckDirection")
        self.direction.addItem("clients read from the server", "read")
        self.direction.addItem("clients write to the server", "write")
        self.direction.currentIndexChanged.connect(self._recompute)
        # Until the user picks one, the direction shown is the one SMB does worst in.
        self.direction_chosen = False
        self.direction.activated.connect(self._direction_picked)
        top.addWidget(self.direction)
        top.addStretch(1)
        self.default_button = QPushButton("Only the newest smb.conf")
        self.default_button.setObjectName("bottleneckDefaultSessions")
        self.default_button.setToolTip(
            "Tick again only the sessions run with the same smb.conf as the newest session"
        )
        self.default_button.clicked.connect(self.use_default_sessions)
        top.addWidget(self.default_button)
        layout.addLayout(top)
        self.sessions_hint = QLabel(
            "The sessions the figures come from. Sessions run with another smb.conf measured "
            "the server under other settings: they count only when you tick them."
        )
        self.sessions_hint.setObjectName("bottleneckSessionsHint")
        self.sessions_hint.setWordWrap(True)
        self.sessions_hint.setMinimumWidth(200)
        self.sessions_hint.setStyleSheet("color: palette(mid);")
        layout.addWidget(self.sessions_hint)
        self.sessions = read_only_table(SESSION_HEADERS, "bottleneckSessions")
        self.sessions.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.sessions.setWordWrap(False)
        self.sessions.horizontalHeader().sectionResized.connect(lambda *_args: self._schedule_fit())
        self.sessions.itemChanged.connect(self._session_ticked)
        layout.addWidget(self.sessions)
        self.table = read_only_table(HEADERS, "bottleneckTable")
        # The session and how each figure was obtained share the width left, wrapped: the
        # table fits the page instead of hiding them past a sideways scroll.
        header = self.table.horizontalHeader()
        for column in (SESSION_COLUMN, HOW_COLUMN):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
        header.setStretchLastSection(False)
        # A column that got narrower (a scroll bar came, the window shrank) wraps into more
        # lines: the rows grow to show them, once the widths have settled.
        header.sectionResized.connect(lambda *_args: self._schedule_fit())
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setWordWrap(True)
        layout.addWidget(self.table)
        self.basis = QLabel("")
        self.basis.setObjectName("bottleneckBasis")
        self.basis.setWordWrap(True)
        self.basis.setMinimumWidth(200)
        layout.addWidget(self.basis)
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

    # -- what to show -----------------------------------------------------------------------
    def show_results(
        self, sessions: Sequence[StoredSession], facts: dict[int, SessionFacts] | None = None
    ) -> None:
        """The server's stored sessions (loaded off the GUI thread; each carries its smb.conf),
        with their facts when the loader read them too (hashing and reading each smb.conf is
        work for that thread, not this one)."""
        if facts is None:
            facts = {s.id: SessionFacts.of(s) for s in sessions}
        previous = set(self.facts)
        self.results = [s.result for s in sessions]
        self.facts = facts
        if self.chosen is not None and set(facts) != previous:
            self.chosen = None  # other sessions now: the default again
        self._fill_sessions()
        if not self.direction_chosen:
            shown = direction_to_show(self.results, facts=self.facts, chosen=self.chosen)
            self.direction.blockSignals(True)
            self.direction.setCurrentIndex(self.direction.findData(shown))
            self.direction.blockSignals(False)
        self._recompute()

    def _direction_picked(self, _index: int) -> None:
        self.direction_chosen = True

    def use_default_sessions(self) -> None:
        self.chosen = None
        self._fill_sessions()
        self._recompute()

    def choose_sessions(self, session_ids: set[int]) -> None:
        """Combine exactly these sessions (what ticking them in the list does)."""
        self.chosen = set(session_ids)
        self._fill_sessions()
        self._recompute()

    def _selected(self) -> set[int]:
        if self.chosen is not None:
            return self.chosen
        return default_selection(self.facts)

    def _fill_sessions(self) -> None:
        facts = self.facts
        usable = sorted(
            (f for f in facts.values() if f.test in LAYER_TESTS),
            key=lambda f: (f.started_at, f.id),
            reverse=True,
        )
        versions = config_versions(facts.values())
        selected = self._selected()
        self.sessions.blockSignals(True)
        try:
            self.sessions.setRowCount(len(usable))
            for row, item in enumerate(usable):
                tick = QTableWidgetItem(str(item.id))
                tick.setFlags(Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled)
                tick.setCheckState(Qt.CheckState.Checked if item.id in selected else Qt.CheckState.Unchecked)
                tick.setData(Qt.ItemDataRole.UserRole, item.id)
                tick.setToolTip("Tick to take figures from this session")
                self.sessions.setItem(row, 0, tick)
                cells = [
                    TEST_NAMES.get(item.test, item.test),
                    format_bytes(item.size) if item.size is not None else "–",
                    versions.get(item.config, NOT_RECORDED),
                    item.started_at[:16].replace("T", " "),
                    item.note,
                ]
                for column, text in enumerate(cells, 1):
                    cell = QTableWidgetItem(text)
                    if column == len(cells) and text:
                        cell.setToolTip(text)
                    self.sessions.setItem(row, column, cell)
        finally:
            self.sessions.blockSignals(False)
        _fit_height(self.sessions, VISIBLE_SESSIONS)
        self.sessions.setVisible(bool(usable))
        self.sessions_hint.setVisible(bool(usable))
        self.default_button.setVisible(bool(usable))
        self.default_button.setEnabled(self.chosen is not None)

    def _session_ticked(self, item: QTableWidgetItem) -> None:
        if item.column() != 0:
            return
        ticked = set()
        for row in range(self.sessions.rowCount()):
            cell = self.sessions.item(row, 0)
            if cell is not None and cell.checkState() == Qt.CheckState.Checked:
                ticked.add(int(cell.data(Qt.ItemDataRole.UserRole)))
        self.chosen = ticked
        self.default_button.setEnabled(True)
        self._recompute()

    # -- the table and the verdict ------------------------------------------------------------
    def _recompute(self) -> None:
        direction: Any = self.direction.currentData()
        self.figures = figures_from_results(self.results, direction, facts=self.facts, chosen=self.chosen)
        figures = self.figures
        basis = figures.basis()
        if figures.mixed:
            basis = f"<span style='color:{WARNING}'><b>Mixed settings.</b> {_text(basis)}</span>"
        else:
            basis = _text(basis)
        self.basis.setText(basis)
        self.basis.setVisible(bool(basis))
        try:
            self.report = figures.report()
        except SambaTuneError as error:
            self.report = None
            self.table.setRowCount(0)
            self.verdict.setText(_text(error.message))
            return
        report = self.report
        self.table.setRowCount(len(report.rows))
        bold = QFont(self.table.font())
        bold.setBold(True)
        # The mark follows the verdict (bench.bottleneck.row_mark, as in every view).
        for row, layer in enumerate(report.rows):
            source = layer.source + ("" if layer.counted or layer.kind == "smb" else " (not counted)")
            mark = row_mark(report, layer)
            limits = mark == "limits"
            mark = "◀ limits" if limits else mark
            cells = [
                layer.name,
                _number(layer.ceiling_mb_per_s, 1),
                _number(layer.ceiling_mbit_per_s),
                _percent(layer.percent_of_link),
                figures.describe_source(layer.name),
                source,
                mark,
            ]
            facts = figures.session_of(layer.name)
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if 1 <= column <= 3:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if column == SESSION_COLUMN and facts is not None:
                    item.setToolTip(
                        f"{facts.describe(figures.versions)}, started "
                        f"{facts.started_at}" + (f": {facts.note}" if facts.note else "")
                    )
                if limits:
                    item.setBackground(QBrush(LIMIT_ROW))
                    item.setFont(bold)
                self.table.setItem(row, column, item)
        self._fit_table()
        text = f"<b>Limit: {_text(report.limiting)}.</b> {_text(report.reason)}"
        if report.smb_vs_raw_meaning:
            text += f"<br>{_text(report.smb_vs_raw_meaning)}"
        other = self._other_direction(direction, report)
        if other:
            text += f"<br><span style='color:{WARNING}'>{_text(other)}</span>"
        left_out = figures.left_out()
        if left_out:
            text += "".join(f"<br><span style='color:{WARNING}'>{_text(line)}</span>" for line in left_out)
        if report.advice:
            text += "<ul>" + "".join(f"<li>{_text(a)}</li>" for a in report.advice) + "</ul>"
        self.verdict.setText(text)
        if self.demand.text().strip():
            self._clients()

    def _other_direction(self, shown: str, report: BottleneckReport) -> str:
        """One line when the other direction's verdict differs: a slow write is not hidden
        behind a healthy read."""
        other: Direction = "write" if shown == "read" else "read"
        figures = figures_from_results(self.results, other, facts=self.facts, chosen=self.chosen)
        if figures.smb is None:
            return ""
        try:
            theirs = figures.report()
        except SambaTuneError:
            return ""
        if theirs.limiting in (report.limiting, "unknown"):
            return ""
        index = self.direction.findData(other)
        return (
            f"When {self.direction.itemText(index)}, the limit is {theirs.limiting}: "
            f"{theirs.reason} Choose that direction above for its table."
        )

    def _fit_table(self) -> None:
        """Rows as tall as their wrapped text, the tables as tall as their rows."""
        _fit_height(self.table, self.table.rowCount())
        _fit_height(self.sessions, VISIBLE_SESSIONS)

    def _schedule_fit(self) -> None:
        if not self._fit_pending:
            self._fit_pending = True
            QTimer.singleShot(0, self._fit_now)

    def _fit_now(self) -> None:
        self._fit_pending = False
        self._fit_table()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._schedule_fit()  # narrower columns wrap into more lines

    def _clients(self) -> None:
        from sambatune.quantities import parse_bandwidth

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
            self.clients.setText(
                f"<span style='color:#b3261e'>{_text(error.message)}</span> {_text(error.details)}"
            )
            return
        self.clients.setText(
            f"<b style='font-size:14pt'>About {estimate.clients} clients</b><br>{_text(estimate.assumption)}"
        )
