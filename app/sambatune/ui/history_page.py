"""smb.conf history: the server's backups, each against the live file, and Restore."""

from __future__ import annotations

from typing import Any, NamedTuple

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from sambatune.applied_versions import AppliedVersion, JournalStatus
from sambatune.cancellation import CancelToken
from sambatune.remote.config_backups import Backup
from sambatune.states import ApplyStatus, LiveState
from sambatune.ui.diff_view import DiffView
from sambatune.ui.session import ServerSession
from sambatune.ui.tables import read_only_table
from sambatune.units import format_bytes


class HistoryPage(QWidget):
    def __init__(self, session: ServerSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("historyPage")
        self.session = session
        self.backups: list[Backup] = []
        #: This computer's record of the run each backup was made for, by backup id.
        self.runs: dict[str, AppliedVersion] = {}
        self.live: bytes = b""
        self.path = ""
        self.dialog: Any = None
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        self.where = QLabel("Backups SambaTune made before each change, newest first.")
        self.where.setWordWrap(True)
        top.addWidget(self.where, 1)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.refresh)
        top.addWidget(self.refresh_button)
        self.restore_button = QPushButton("Restore this version…")
        self.restore_button.setObjectName("restoreButton")
        self.restore_button.setEnabled(False)
        self.restore_button.clicked.connect(self.restore_selected)
        top.addWidget(self.restore_button)
        layout.addLayout(top)
        splitter = QSplitter(Qt.Orientation.Vertical)
        self.table = read_only_table(
            ["Backed up at (UTC)", "What happened", "Backed up before this change", "Size", "By"],
            "backupTable",
            select=QAbstractItemView.SelectionMode.SingleSelection,
        )
        self.table.itemSelectionChanged.connect(self._selection_changed)
        splitter.addWidget(self.table)
        below = QWidget()
        below_layout = QVBoxLayout(below)
        below_layout.setContentsMargins(0, 4, 0, 0)
        self.diff_title = QLabel("Select a backup to see what restoring it would change.")
        self.diff_title.setObjectName("historyDiffTitle")
        below_layout.addWidget(self.diff_title)
        self.diff = DiffView()
        self.diff.setObjectName("historyDiff")
        below_layout.addWidget(self.diff, 1)
        splitter.addWidget(below)
        splitter.setSizes([220, 380])
        layout.addWidget(splitter, 1)
        self._contents: dict[str, bytes] = {}
        self._refreshing = False
        self._refresh_again = False

    def refresh(self) -> None:
        """Read the backups again; one reading at a time (asked again meanwhile: once more)."""
        if self._refreshing:
            self._refresh_again = True
            return
        self._refreshing = True
        session = self.session
        self.refresh_button.setEnabled(False)

        def work(report: Any, cancel: CancelToken) -> Loaded:
            from sambatune.conf.apply import read_live
            from sambatune.remote.config_backups import BackupStore

            transport = session.require_transport()
            path = session.config_path()
            sudo = session.prepare_root(transport, path, cancel)
            live = read_live(transport, path, sudo=sudo).data
            backups = BackupStore(transport, path, sudo=sudo).entries()
            return path, live, backups, recorded_runs(transport.label, path)

        def finished() -> None:
            self._refreshing = False
            self.refresh_button.setEnabled(True)
            if self._refresh_again:
                self._refresh_again = False
                self.refresh()

        session.run_task("Backups", work, on_done=self._loaded, on_finished=finished)

    def _loaded(self, result: Loaded) -> None:
        chosen = self.selected()
        if result[0] != self.path:
            self._contents.clear()  # another smb.conf (a backup's bytes never change)
        self.path, self.live, self.backups, self.runs = result
        self.where.setText(
            f"Backups of {self.path}, newest first: each is the file as it was "
            "before a change SambaTune applied or tried to. Restoring one goes "
            "through the same checks as any change."
        )
        self.table.setRowCount(len(self.backups))
        for row, backup in enumerate(self.backups):
            happened = what_happened(self.runs.get(backup.id))
            values = [
                _when(backup),
                happened.short,
                backup.summary,
                format_bytes(backup.size),
                backup.applied_by,
            ]
            for column, value in enumerate(values):
                item = QTableWidgetItem(value)
                item.setToolTip(happened.long)
                if not happened.applied:
                    # An attempt, not a version the server ran with after it.
                    item.setForeground(QColor("#8a5300" if column == OUTCOME else "#6e6e6e"))
                self.table.setItem(row, column, item)
        self.table.clearSelection()
        self.diff.clear()
        self.restore_button.setEnabled(False)
        self.diff_title.setText("Select a backup to see what restoring it would change.")
        ids = [backup.id for backup in self.backups]
        if chosen is not None and chosen.id in ids:  # still there: compared with live again
            self.table.selectRow(ids.index(chosen.id))
        if not self.backups:
            self.diff_title.setText("")
            self.diff.setPlainText(
                "No backups yet: they appear after the first change applied with SambaTune."
            )

    def _selection_changed(self) -> None:
        backup = self.selected()
        # Restore needs the backup's bytes: it is offered once they are here.
        self.restore_button.setEnabled(backup is not None and backup.id in self._contents)
        if backup is None:
            return
        self.diff_title.setText(f"Reading the backup of {_when(backup)}…")
        if backup.id in self._contents:
            self._show_diff(backup)
            return
        session = self.session

        def work(report: Any, cancel: CancelToken) -> bytes:
            from sambatune.remote.config_backups import BackupStore

            transport = session.require_transport()
            sudo = session.prepare_root(transport, self.path, cancel)
            return BackupStore(transport, self.path, sudo=sudo).read(backup.id)

        def loaded(content: bytes) -> None:
            self._contents[backup.id] = content
            if self.selected() == backup:
                self.restore_button.setEnabled(True)
                self._show_diff(backup)

        session.run_task("Backup", work, on_done=loaded)

    def _show_diff(self, backup: Backup) -> None:
        from sambatune.conf.apply import unified_diff

        self.diff_title.setText(
            f"What restoring the backup of {_when(backup)} would change "
            "in the live file (− taken out, + put back):"
        )
        self.diff.show_diff(
            unified_diff(
                self.live, self._contents[backup.id], self.path, "live", f"backup of {backup.created}"
            ),
            "(this backup is identical to the live file)",
        )

    def selected(self) -> Backup | None:
        rows = {index.row() for index in self.table.selectedIndexes()}
        return self.backups[rows.pop()] if len(rows) == 1 else None

    def restore_selected(self) -> None:
        from sambatune.ui.apply_dialog import ApplyDialog

        backup = self.selected()
        if backup is None or backup.id not in self._contents:
            return
        self.dialog = ApplyDialog(
            self.session,
            path=self.path,
            original=self.live,
            candidate=self._contents[backup.id],
            summary=f"restored the backup of {_when(backup)} UTC",
            title="Restore a backup",
            what="a restore from smb.conf history",
            parent=self.window(),
        )
        self.dialog.finished_outcome.connect(lambda _outcome: self.refresh())
        self.dialog.open()


Loaded = tuple[str, bytes, list[Backup], dict[str, AppliedVersion]]
#: The table's column saying what became of each change.
OUTCOME = 1

NOT_APPLIED = (
    "The backup was made before SambaTune tried the change and holds the file as SambaTune expected it then."
)


def recorded_runs(server: str, path: str) -> dict[str, AppliedVersion]:
    """This computer's record of each apply run, by the backup made for it (worker thread).

    A run from another computer (or from before SambaTune kept the record) has none."""
    import sqlite3

    from sambatune.applied_versions import AppliedVersions

    try:
        versions = AppliedVersions().for_server(server, path)
    except (OSError, sqlite3.Error):
        return {}
    return {v.backup_id: v for v in reversed(versions) if v.backup_id}


class Happened(NamedTuple):
    """What became of the change a backup was made for."""

    short: str  # for the table
    long: str  # for its tooltip
    applied: bool


def what_happened(run: AppliedVersion | None) -> Happened:
    """What became of the change a backup was made for, by this computer's record.

    A backup is made before the swap, so a run refused at the swap (someone else had
    changed the file) or rolled back leaves one too: it is an attempt, not a version."""
    if run is None:
        return Happened(
            "No record here",
            "This computer has no record of the change: it "
            "was applied from elsewhere, or before SambaTune kept one.",
            True,
        )
    outcome, live = run.outcome, run.live
    if outcome == ApplyStatus.APPLIED:
        return Happened("Applied", "Applied and checked.", True)
    if outcome == ApplyStatus.REFUSED:
        return Happened(
            "Refused: someone else had changed the file",
            "Not applied: the live file had changed since it was read, so "
            "SambaTune did not overwrite it. " + NOT_APPLIED,
            False,
        )
    if outcome == ApplyStatus.ROLLED_BACK:
        return Happened(
            "Rolled back", "Not applied: it failed its checks and the previous file was put back.", False
        )
    if outcome == ApplyStatus.FAILED:
        if live == LiveState.NEW:
            return Happened(
                "Failed, but live",
                "It failed after the swap and putting the "
                "previous file back failed too: the change is live, unchecked.",
                True,
            )
        if live == LiveState.OLD:
            return Happened(
                "Failed, not applied", "It failed before the swap: the live file stayed as it was.", False
            )
        return Happened(
            "Failed", "It failed, and the live file was changed by someone else meanwhile.", False
        )
    if outcome == JournalStatus.INTERRUPTED:
        if live == LiveState.NEW:
            return Happened("Interrupted, live", "The run was cut off; the change had gone live.", True)
        if live == LiveState.OLD:
            return Happened("Interrupted, not applied", "The run was cut off before the swap.", False)
        return Happened("Interrupted", "The run was cut off; the live file has changed since.", False)
    if outcome == JournalStatus.IN_PROGRESS:
        return Happened(
            "Under way or cut off",
            "The run is under way, or was cut off; the next apply settles what became of it.",
            False,
        )
    # A word a newer SambaTune wrote: shown as it is.
    return Happened(outcome, outcome, False)


def _when(backup: Backup) -> str:
    return backup.created.replace("T", " ").replace("+00:00", "")[:19]
