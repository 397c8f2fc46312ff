"""A client tuning plan on screen: one row per setting with its honoured/ignored badge,
the value now and the value planned, and everything about the selected row below.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QTextOption
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from sambatune.client.osinfo import OsInfo
from sambatune.client.plan import ClientPlan, PlannedChange
from sambatune.client.regvalue import REG_DWORD, REG_QWORD, RegValue
from sambatune.client.reports import TAKES_EFFECT, short_path
from sambatune.client.settings import Observed, SettingValue, ValueState, display_value

HONOURED_STYLE = "color:#1e4620; background:#d7f0d8;"
IGNORED_STYLE = "color:#5f2120; background:#f3dcdc;"
CHANGE_ROW = QColor("#fff8e1")

COLUMNS = ("Setting", "On this system", "Now", "Planned", "Takes effect")
NOW_COLUMN = 2


def os_short_name(os_info: OsInfo) -> str:
    """ "Windows 10", "Linux", "macOS": the version matters on Windows, the distro does not."""
    return (
        os_info.name
        if os_info.is_windows
        else {"linux": "Linux", "macos": "macOS"}.get(os_info.family, os_info.name)
    )


def badge(honoured: bool) -> QLabel:
    """The honoured/ignored label, a coloured pill so it reads at a glance."""
    label = QLabel("✔ honoured" if honoured else "✖ ignored")
    label.setObjectName("honouredBadge" if honoured else "ignoredBadge")
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setStyleSheet(
        (HONOURED_STYLE if honoured else IGNORED_STYLE)
        + "border-radius:7px; padding:0px 7px; font-weight:600;"
    )
    label.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
    return label


def short_value(value: SettingValue | None) -> str:
    """A value as the table shows it; the exact form is in the tooltip and the dry run."""
    if isinstance(value, RegValue):
        if value.type in (REG_DWORD, REG_QWORD) and isinstance(value.data, int):
            return f"{value.data:,} ({'DWORD' if value.type == REG_DWORD else 'QWORD'})"
        if isinstance(value.data, str):
            return f'"{value.data}" (text)'
    return display_value(value)


def short_observed(observed: Observed, forced: bool) -> str:
    if observed.state == ValueState.UNKNOWN:
        return "not read (another system)" if forced else "unknown"
    return short_value(observed.value)


def planned_text(change: PlannedChange) -> str:
    if change.action == "set":
        return short_value(change.recommended)
    if change.action == "delete":
        return "(remove the value)"
    if change.action == "keep":
        return "keep: fine as it is"
    return "not changed" if change.honoured else "not changed: ignored here"


def scope_of(change: PlannedChange) -> str:
    """The interface a per-interface item is about ("eth0"), from its id."""
    return change.id.split(":", 1)[1] if ":" in change.id else ""


class PlanView(QWidget):
    """The plan table and, under it, the why/what/exactly of the selected row."""

    selection_changed = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plan: ClientPlan | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.summary = QLabel("No plan yet.")
        self.summary.setObjectName("planSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.summary)
        splitter = QSplitter(Qt.Orientation.Vertical)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("planTable")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.table.verticalHeader().setDefaultSectionSize(24)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, len(COLUMNS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.table.itemSelectionChanged.connect(self._selected)
        splitter.addWidget(self.table)
        self.details = QTextBrowser()
        self.details.setObjectName("changeDetails")
        self.details.setOpenExternalLinks(True)
        self.details.setPlaceholderText(
            "Select a row to see why, what it is and exactly what would be written."
        )
        splitter.addWidget(self.details)
        # The plan's warnings and notes scroll in a pane of their own: an old Windows
        # has half a page of them, which as a label squeezed the table to five rows.
        self.notes = QTextBrowser()
        self.notes.setObjectName("planNotes")
        self.notes.hide()
        splitter.addWidget(self.notes)
        # Long paths (a mount point, a registry key) wrap anywhere instead of scrolling
        # the pane sideways.
        for pane in (self.details, self.notes):
            pane.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
            # Three lines at least; the rest of the height goes to the table.
            pane.setMinimumHeight(3 * pane.fontMetrics().lineSpacing() + 12)
        # The table first: the plan is read row by row, the panes under it scroll.
        splitter.setStretchFactor(0, 6)
        splitter.setStretchFactor(1, 2)
        splitter.setStretchFactor(2, 1)
        splitter.setSizes([420, 120, 70])
        layout.addWidget(splitter, 1)
        self.footer = QVBoxLayout()
        self.footer.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self.footer)

    def add_footer(self, widget: QWidget) -> None:
        """A widget under the plan about the plan as a whole (the before/after check)."""
        self.footer.addWidget(widget)

    # ------------------------------------------------------------------------------
    def show_plan(self, plan: ClientPlan, summary_html: str) -> None:
        self.plan = plan
        self.summary.setText(summary_html)
        forced = not plan.os.detected
        self.table.setHorizontalHeaderItem(1, QTableWidgetItem(f"On {os_short_name(plan.os)}"))
        # Another system's values cannot be read from here: a column of "not read" says
        # nothing the banner does not.
        self.table.setColumnHidden(NOW_COLUMN, forced)
        self.table.setRowCount(len(plan.changes))
        bold = QFont()
        bold.setBold(True)
        for row, change in enumerate(plan.changes):
            scope = scope_of(change)
            values = [
                change.title + (f"  [{scope}]" if scope else ""),
                "",
                short_observed(change.current, forced),
                planned_text(change),
                TAKES_EFFECT[change.restart] if change.changes_something else "",
            ]
            tips = [
                change.what,
                change.honoured_note,
                change.current.display(),
                display_value(change.target) if change.changes_something else "",
                change.restart_note,
            ]
            for column, text in enumerate(values):
                item = QTableWidgetItem(text)
                if tips[column]:
                    item.setToolTip(tips[column])
                if change.changes_something:
                    item.setBackground(QBrush(CHANGE_ROW))
                    if column in (0, 3):
                        item.setFont(bold)
                self.table.setItem(row, column, item)
            holder = QWidget()
            holder.setAutoFillBackground(False)
            if change.changes_something:
                holder.setStyleSheet(f"background:{CHANGE_ROW.name()};")
            box = QHBoxLayout(holder)
            box.setContentsMargins(6, 2, 6, 2)
            box.addWidget(badge(change.honoured))
            box.addStretch(1)
            holder.setToolTip(change.honoured_note)
            self.table.setCellWidget(row, 1, holder)
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        first_change = next((r for r, c in enumerate(plan.changes) if c.changes_something), 0)
        if plan.changes:
            self.table.selectRow(first_change)
        else:
            self.details.clear()
        # Words, not emoji: a font without the symbol draws an empty box.
        notes = [f"<p><b>Check first:</b> {html.escape(w)}</p>" for w in plan.warnings]
        notes += [f"<p>{html.escape(n)}</p>" for n in plan.notes]
        self.notes.setHtml("".join(notes))
        self.notes.setVisible(bool(notes))

    def clear(self, message: str = "No plan yet.") -> None:
        self.plan = None
        self.summary.setText(message)
        self.table.setRowCount(0)
        self.details.clear()
        self.notes.hide()

    def row_of(self, item_id: str) -> int:
        """The table row of a plan item by id or catalog id (-1 if absent)."""
        if self.plan is None:
            return -1
        for row, change in enumerate(self.plan.changes):
            if item_id in (change.id, change.catalog_id):
                return row
        return -1

    def badge_text(self, item_id: str) -> str:
        row = self.row_of(item_id)
        holder = self.table.cellWidget(row, 1) if row >= 0 else None
        label = holder.findChild(QLabel) if holder is not None else None
        return label.text() if isinstance(label, QLabel) else ""

    def selected_change(self) -> PlannedChange | None:
        rows = {index.row() for index in self.table.selectedIndexes()}
        if self.plan is None or len(rows) != 1:
            return None
        return self.plan.changes[rows.pop()]

    def _selected(self) -> None:
        change = self.selected_change()
        if change is None or self.plan is None:
            return
        self.details.setHtml(details_html(change, self.plan))
        self.selection_changed.emit(change)


def details_html(change: PlannedChange, plan: ClientPlan) -> str:
    """Everything about one plan item, for people: why, what, where it is honoured, exactly."""
    e = html.escape
    verdict = (
        "<span style='color:#1e4620; font-weight:600'>honoured</span>"
        if change.honoured
        else "<span style='color:#5f2120; font-weight:600'>ignored</span>"
    )
    parts = [f"<h3 style='margin:0'>{e(change.title)}</h3>"]
    if change.ref is not None and change.ref.label().lower() not in change.title.lower():
        parts.append(f"<p style='margin-top:2px'><code>{e(short_path(change.ref.label()))}</code></p>")
    action = {
        "set": f"Change to <b>{e(display_value(change.recommended))}</b>",
        "delete": "Remove the value",
        "keep": "Keep as it is",
        "none": "Shown for its label only; SambaTune does not change it",
    }[change.action]
    now = (
        "not read (planning for another system)"
        if not plan.os.detected and change.current.state == ValueState.UNKNOWN
        else change.current.display()
    )
    parts.append(f"<p><b>Plan:</b> {action}. <b>Now:</b> {e(now)}</p>")
    parts.append(f"<p><b>Why:</b> {e(change.reason)}</p>")
    parts.append(f"<p><b>On {e(os_short_name(plan.os))} this is {verdict}:</b> {e(change.honoured_note)}</p>")
    parts.append(f"<p><b>What it is:</b> {e(change.what)}</p>")
    if change.operations:
        commands = "<br>".join(e(short_path(op)).replace("\n", "<br>") for op in change.operations)
        parts.append(
            "<p><b>Exactly:</b></p><p style='background:#f4f4f4; padding:4px; font-family:monospace; "
            f"white-space:pre-wrap'>{commands}</p>"
        )
    if change.alternative:
        parts.append(f"<p><b>The same by hand:</b> <code>{e(change.alternative)}</code></p>")
    if change.changes_something:
        parts.append(
            f"<p><b>Takes effect:</b> {e(TAKES_EFFECT[change.restart])}. {e(change.restart_note)}</p>"
        )
    if change.measure is not None and plan.os.detected:
        # This computer's plan: the box under the plan runs the test and judges it.
        test = "large files" if change.measure.test == "smb-client" else "many small files"
        parts.append(
            f"<p><b>Measure it before and after:</b> {e(test)}, {e(change.measure.why)}. "
            "<i>Before and after</i> below runs the test ahead of the apply and again after, "
            f"and compares the two; on the command line: <code>sambatune client check {e(plan.id)} "
            "--before</code>, then <code>--after</code>.</p>"
        )
    elif change.measure is not None:
        parts.append(
            f"<p><b>Measure it before and after</b> on that machine: "
            f"<code>{e(change.measure.command)}</code> ({e(change.measure.why)})</p>"
        )
    if change.changes_something and plan.after_apply:
        steps = "<br>".join(e(step) for step in plan.after_apply)
        parts.append(
            "<p><b>After the apply</b> (not run by SambaTune):</p>"
            f"<p style='font-family:monospace; white-space:pre-wrap'>{steps}</p>"
        )
    if change.sources:
        links = ", ".join(_source_link(s) for s in change.sources)
        parts.append(f"<p style='color:#666'><small>Sources: {links}</small></p>")
    return "\n".join(parts)


def _source_link(source: str) -> str:
    text = html.escape(source)
    if source.startswith(("http://", "https://")):
        return f"<a href='{text}'>{text}</a>"
    return text
