"""smb.conf history: the server's backups, each against the live file, and Restore."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
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

from sambatune.cancellation import CancelToken
from sambatune.remote.config_backups import Backup
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
            ["Backed up at (UTC)", "Size", "By", "Backed up before this change"], "backupTable",
            select=QAbstractItemView.SelectionMode.SingleSelection)
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

    def refresh(self) -> None:
        session = self.session
        self.refresh_button.setEnabled(False)

        def work(report: Any, cancel: CancelToken) -> tuple[str, bytes, list[Backup]]:
            from sambatune.remote.apply import read_live
            from sambatune.remote.config_backups import BackupStore

            transport = session.require_transport()
            path = session.config_path()
            sudo = session.prepare_root(transport, path, cancel)
            live = read_live(transport, path, sudo=sudo).data
            return path, live, BackupStore(transport, path, sudo=sudo).entries()

        session.run_task("Backups", work, on_done=self._loaded,
                         on_finished=lambda: self.refresh_button.setEnabled(True))

    def _loaded(self, result: tuple[str, bytes, list[Backup]]) -> None:
        self.path, self.live, self.backups = result
        self._contents.clear()
        self.where.setText(f"Backups of {self.path}, newest first. Restoring one goes through "
                           "the same checks as any change.")
        self.table.setRowCount(len(self.backups))
        for row, backup in enumerate(self.backups):
            values = [_when(backup),
                      format_bytes(backup.size), backup.applied_by, backup.summary]
            for column, value in enumerate(values):
                self.table.setItem(row, column, QTableWidgetItem(value))
        self.diff.clear()
        self.restore_button.setEnabled(False)
        self.diff_title.setText("Select a backup to see what restoring it would change.")
        if not self.backups:
            self.diff_title.setText("")
            self.diff.setPlainText("No backups yet: they appear after the first change applied "
                                   "with SambaTune.")

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
        from sambatune.remote.apply import unified_diff

        self.diff_title.setText(f"What restoring the backup of {_when(backup)} would change "
                                "in the live file (− taken out, + put back):")
        self.diff.show_diff(
            unified_diff(self.live, self._contents[backup.id], self.path, "live",
                         f"backup of {backup.created}"),
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
            self.session, path=self.path, original=self.live, candidate=self._contents[backup.id],
            summary=f"restored the backup of {backup.created}", title="Restore a backup",
            parent=self.window(),
        )
        self.dialog.finished_outcome.connect(lambda _outcome: self.refresh())
        self.dialog.open()


def _when(backup: Backup) -> str:
    return backup.created.replace("T", " ").replace("+00:00", "")[:19]
