"""The backups SambaTune took of this computer's settings, what each holds, and Restore."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from sambatune.client.reports import KIND_TEXT, short_path


class BackupsView(QWidget):
    refresh_requested = Signal()
    details_requested = Signal(str)
    #: (backup id, dry run)
    restore_requested = Signal(str, bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.entries: list[dict[str, Any]] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        self.where = QLabel(
            "Backups of this computer's settings, taken before every apply and restore, newest first."
        )
        self.where.setWordWrap(True)
        top.addWidget(self.where, 1)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.refresh_requested.emit)
        top.addWidget(self.refresh_button)
        self.dry_restore_button = QPushButton("Dry run restore")
        self.dry_restore_button.setObjectName("dryRestoreButton")
        self.dry_restore_button.setEnabled(False)
        self.dry_restore_button.clicked.connect(lambda: self._request(True))
        top.addWidget(self.dry_restore_button)
        self.restore_button = QPushButton("Restore…")
        self.restore_button.setObjectName("restoreBackupButton")
        self.restore_button.setEnabled(False)
        self.restore_button.clicked.connect(lambda: self._request(False))
        top.addWidget(self.restore_button)
        layout.addLayout(top)
        splitter = QSplitter(Qt.Orientation.Vertical)
        self.table = QTableWidget(0, 4)
        self.table.setObjectName("clientBackupTable")
        self.table.setHorizontalHeaderLabels(["Taken (UTC)", "Taken", "Settings", "Restored"])
        self.table.setWordWrap(False)
        self.table.verticalHeader().setDefaultSectionSize(24)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.itemSelectionChanged.connect(self._selected)
        splitter.addWidget(self.table)
        self.details = QPlainTextEdit()
        self.details.setObjectName("clientBackupDetails")
        self.details.setReadOnly(True)
        self.details.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.details.setFont(mono)
        self.details.setPlaceholderText("Select a backup to see what it puts back.")
        splitter.addWidget(self.details)
        splitter.setSizes([200, 300])
        layout.addWidget(splitter, 1)

    def show_entries(self, entries: list[dict[str, Any]], folder: str) -> None:
        self.entries = list(reversed(entries))
        self.where.setText(
            f"Backups of this computer's settings, taken before every apply and "
            f"restore, newest first. They are kept in {folder}."
        )
        self.table.setRowCount(len(self.entries))
        for row, entry in enumerate(self.entries):
            restored = entry.get("restored_at") or ""
            values = [
                str(entry.get("created", "")).replace("T", " ").replace("+00:00", ""),
                short_path(str(entry.get("summary", ""))) or KIND_TEXT.get(entry.get("kind", ""), ""),
                str(entry.get("settings", "")),
                restored.replace("T", " ").replace("+00:00", "") if restored else "no",
            ]
            for column, text in enumerate(values):
                item = QTableWidgetItem(text)
                item.setToolTip(str(entry.get("summary", "")))
                self.table.setItem(row, column, item)
        if not self.entries:
            self.details.setPlainText("No backups yet: SambaTune takes one before every apply.")
        self._selected()

    def show_details(self, backup_id: str, text: str) -> None:
        if self.selected_id() == backup_id:
            self.details.setPlainText(text)

    def selected_id(self) -> str | None:
        rows = {index.row() for index in self.table.selectedIndexes()}
        if len(rows) != 1:
            return None
        return str(self.entries[rows.pop()].get("id"))

    def set_busy(self, busy: bool) -> None:
        selected = self.selected_id() is not None
        self.refresh_button.setEnabled(not busy)
        self.restore_button.setEnabled(selected and not busy)
        self.dry_restore_button.setEnabled(selected and not busy)

    def _selected(self) -> None:
        backup_id = self.selected_id()
        self.restore_button.setEnabled(backup_id is not None)
        self.dry_restore_button.setEnabled(backup_id is not None)
        if backup_id is not None:
            self.details.setPlainText("Reading the backup…")
            self.details_requested.emit(backup_id)

    def _request(self, dry_run: bool) -> None:
        backup_id = self.selected_id()
        if backup_id is not None:
            self.restore_requested.emit(backup_id, dry_run)
