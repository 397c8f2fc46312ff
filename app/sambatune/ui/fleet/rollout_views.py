"""What the Roll out tab shows: each host's plan and state, the timeline, the outcome.

The host table starts as the plan (role, what changes, reload or restart, who a restart
ends) and follows the rollout as its events arrive; the record has the last word when
the rollout ends. The banner says how it ended in one sentence, and for a halt, why
and which hosts were put back.
"""

from __future__ import annotations

import datetime as _dt

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QWidget

from sambatune.fleet.rollout import RolloutEvent, RolloutPlan
from sambatune.fleet.rollout_report import activation_text
from sambatune.fleet.rollout_store import HostRecord, HostState, RolloutRecord, RolloutStatus
from sambatune.ui.tables import SelectionMode, read_only_table

HOST_COLUMNS = ("Host", "Role", "Plan", "Takes effect by", "A restart ends", "Diff", "State", "Note")
HOST, ROLE, PLAN, ACTIVATION, CLIENTS, DIFF, STATE, NOTE = range(len(HOST_COLUMNS))
TIMELINE_COLUMNS = ("Time", "Host", "What", "Message")

#: Timeline words -> what the State column says while the rollout runs.
LIVE_STATES = {
    "measuring": "measuring…",
    "applying": "applying…",
    "applied": "applied",
    "failed": "failed",
    "restoring": "putting back…",
    "restored": "put back",
    "not restored": "NOT put back",
    "settled": "checked",
}
_STATE_COLOURS = {
    HostState.APPLIED: "#1e7d32",
    HostState.RESTORED: "#1e7d32",
    HostState.FAILED: "#b3261e",
    HostState.NOT_RESTORED: "#b3261e",
}

BANNER_STYLES = {
    "info": "background:#e8f4fd; border:1px solid #b6dcfb; color:#0d3c61;",
    "success": "background:#edf7ed; border:1px solid #b7dfb9; color:#1e4620;",
    "warning": "background:#fff4e5; border:1px solid #ffd8a8; color:#663c00;",
    "error": "background:#fdecea; border:1px solid #f5c2c0; color:#611a15;",
}


def role_text(host: HostRecord) -> str:
    if host.wave is None:
        return "-"
    return "canary" if host.wave == 0 else f"wave {host.wave}"


def diff_counts(diff: str) -> str:
    lines = diff.splitlines()
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    return f"+{added} −{removed}" if diff else "-"


def local_time(stamp: str) -> str:
    """A record's UTC ISO time as this computer's time of day."""
    try:
        return _dt.datetime.fromisoformat(stamp).astimezone().strftime("%H:%M:%S")
    except ValueError:
        return stamp[11:19]


def note_text(host: HostRecord, ended: bool) -> str:
    """The host's last word: for a host put back, that it was (its apply's message is old);
    for one a halted rollout never reached, that it was not touched."""
    if host.state is HostState.RESTORED:
        return "changed, then put back byte for byte (SHA-256 checked)"
    if ended and host.state is HostState.PENDING and host.wave is not None:
        return "not touched"
    return host.message


class RolloutHostsTable:
    """The host table: the plan, then the rollout's progress on it."""

    def __init__(self) -> None:
        self.table: QTableWidget = read_only_table(
            HOST_COLUMNS, "fleetRolloutHosts", select=SelectionMode.SingleSelection
        )
        # A note (why a host failed, the canary's verdict) wraps and its row grows: the
        # words matter more than one line per host.
        self.table.setWordWrap(True)
        self.table.horizontalHeader().setSectionResizeMode(NOTE, QHeaderView.ResizeMode.Stretch)

    def _set(self, row: int, column: int, text: str, tooltip: str = "") -> QTableWidgetItem:
        item = QTableWidgetItem(text)
        item.setToolTip(tooltip or text)
        self.table.setItem(row, column, item)
        return item

    def row_of(self, name: str) -> int | None:
        for row in range(self.table.rowCount()):
            item = self.table.item(row, HOST)
            if item is not None and item.text() == name:
                return row
        return None

    def show_plan(self, plan: RolloutPlan) -> None:
        self.show_hosts(plan.hosts, plan.refusals)

    def show_hosts(
        self, hosts: list[HostRecord], refusals: dict[str, str] | None = None, *, ended: bool = False
    ) -> None:
        refusals = refusals or {}
        self.table.setRowCount(len(hosts))
        for row, host in enumerate(hosts):
            refusal = refusals.get(host.name)
            self._set(row, HOST, host.name)
            self._set(row, ROLE, role_text(host))
            plan = "refused" if refusal else host.state.value if host.wave is None else "change"
            item = self._set(row, PLAN, plan, refusal or "")
            if refusal:
                item.setForeground(QColor("#b3261e"))
            self._set(row, ACTIVATION, activation_text(host), "; ".join(host.restart_reasons))
            self._set(row, CLIENTS, (host.clients or "nobody") if host.restart_reasons else "-")
            self._set(row, DIFF, diff_counts(host.diff), host.diff or "no change")
            self._set_state(row, host)
            self._set(row, NOTE, refusal or note_text(host, ended))
            self.table.resizeRowToContents(row)

    def _set_state(self, row: int, host: HostRecord) -> None:
        word = "-" if host.wave is None and host.state is not HostState.PENDING else host.state.value
        item = self._set(row, STATE, word)
        colour = _STATE_COLOURS.get(host.state)
        if colour:
            item.setForeground(QColor(colour))

    def follow(self, event: RolloutEvent) -> None:
        """A host's step, as it happens (the record settles it at the end)."""
        if event.host is None:
            return
        row = self.row_of(event.host)
        if row is None:
            return
        word = LIVE_STATES.get(event.what)
        if event.what == "verdict":
            word = f"measured: {event.message.split(':', 1)[0]}"
        if word:
            item = self._set(row, STATE, word)
            if event.what in ("failed", "not restored"):
                item.setForeground(QColor("#b3261e"))
        if event.message:
            self._set(row, NOTE, event.message)
            self.table.resizeRowToContents(row)

    def show_record(self, record: RolloutRecord) -> None:
        self.show_hosts(record.hosts, ended=record.status is not RolloutStatus.RUNNING)


def timeline_table() -> QTableWidget:
    table = read_only_table(TIMELINE_COLUMNS, "fleetRolloutTimeline", select=SelectionMode.SingleSelection)
    table.setWordWrap(True)  # a verdict or a reason is read whole; its row grows
    table.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
    return table


def add_timeline_row(table: QTableWidget, time: str, host: str | None, what: str, message: str) -> None:
    row = table.rowCount()
    table.insertRow(row)
    for column, text in enumerate((time, host or "(all)", what, message)):
        item = QTableWidgetItem(text)
        item.setToolTip(text)
        if what in ("failed", "halting", "halted", "not restored", "refused"):
            item.setForeground(QColor("#b3261e"))
        table.setItem(row, column, item)
    table.resizeRowToContents(row)
    table.scrollToBottom()


def show_timeline(table: QTableWidget, record: RolloutRecord) -> None:
    table.setRowCount(0)
    for entry in record.timeline:
        add_timeline_row(table, local_time(entry.at), entry.host, entry.what, entry.message)
    table.resizeColumnToContents(0)
    table.resizeColumnToContents(1)
    table.resizeColumnToContents(2)


def outcome_banner(parent: QWidget | None = None) -> QLabel:
    label = QLabel(parent)
    label.setObjectName("fleetRolloutOutcome")
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setVisible(False)
    return label


def set_banner(label: QLabel, kind: str, text: str) -> None:
    label.setStyleSheet(f"#fleetRolloutOutcome {{{BANNER_STYLES[kind]} border-radius:4px; padding:6px;}}")
    label.setText(text)
    label.setVisible(True)


def outcome_text(record: RolloutRecord) -> tuple[str, str]:
    """(kind, sentence) for how a rollout ended."""
    status = record.status
    changed = [h.name for h in record.hosts if h.state is HostState.APPLIED]
    if status is RolloutStatus.DONE:
        if not changed:
            return "success", f"Rollout {record.id} done: every host was already in line."
        return "success", f"Rollout {record.id} done: {len(changed)} host(s) changed ({', '.join(changed)})."
    if status is RolloutStatus.REFUSED:
        return "error", (
            f"Rollout {record.id} refused before anything was touched: {record.reason}. No host was changed."
        )
    if status is RolloutStatus.HALTED:
        restored = [h.name for h in record.hosts if h.state is HostState.RESTORED]
        left = [h.name for h in record.hosts if h.state is HostState.NOT_RESTORED]
        untouched = [h.name for h in record.hosts if h.state is HostState.PENDING]
        text = f"Rollout {record.id} halted: {record.reason.rstrip('.')}."
        if restored:
            text += f" Put back byte for byte (checked by SHA-256): {', '.join(restored)}."
        elif not left:
            text += " No host had been changed, so none needed putting back."
        if left:
            text += f" NOT put back, check by hand: {', '.join(left)}."
        if untouched:
            text += f" Never touched: {', '.join(untouched)}."
        return "error", text
    if status in (RolloutStatus.INTERRUPTED, RolloutStatus.RUNNING, RolloutStatus.HALTING):
        return "warning", (
            f"Rollout {record.id} stopped between two steps ({record.reason or status.value}); "
            "every host was left checked. Resume it from Past rollouts."
        )
    return "info", f"Rollout {record.id}: {status.value}."
