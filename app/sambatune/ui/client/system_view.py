"""This computer as the client tuning sees it: OS, rights, interfaces and MTUs, and the
current value of every setting, each labelled honoured or ignored here."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from sambatune.client.nics import NetworkInterface
from sambatune.client.snapshot import ClientSnapshot
from sambatune.ui.client.plan_view import badge, os_short_name, short_observed
from sambatune.ui.tables import read_only_table
from sambatune.units import format_bits

TOWARDS_ROW = QColor("#e8f4fd")


def _table(headers: list[str], name: str) -> QTableWidget:
    table = read_only_table(headers, name)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setWordWrap(False)
    return table


class SystemView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.heading = QLabel("Reading this computer…")
        self.heading.setObjectName("systemHeading")
        self.heading.setWordWrap(True)
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        self.heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.heading)
        splitter = QSplitter(Qt.Orientation.Vertical)
        self.nics = _table(["Interface", "MTU", "Addresses", "State", "Link speed"], "clientNicTable")
        self.nics.verticalHeader().setDefaultSectionSize(24)
        splitter.addWidget(self.nics)
        self.settings = _table(["Setting", "Here", "Current value"], "currentTable")
        self.settings.verticalHeader().setDefaultSectionSize(24)
        splitter.addWidget(self.settings)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 3)
        layout.addWidget(splitter, 1)

    def show_snapshot(
        self,
        snapshot: ClientSnapshot,
        towards: NetworkInterface | None,
        server_label: str | None,
        rights: str,
    ) -> None:
        os_info = snapshot.system.os
        e = html.escape
        if os_info.detected:
            title = f"<b>{e(os_info.name)}</b> ({e(os_info.version)})"
            admin = (
                "<span style='color:#1e4620'>● administrator rights</span>"
                if snapshot.admin
                else "<span style='color:#8a5300'>● no administrator rights</span>"
            )
            rights_line = "" if snapshot.admin else f"<br><small>{e(rights)}</small>"
        else:
            title = (
                f"<b>Planning for {e(os_info.name)}</b>: another system, not this "
                "computer. Its values cannot be read from here; the interface below is an "
                "example."
            )
            admin, rights_line = "", ""
        summary = e(os_info.summary)
        self.heading.setText(f"{title} &nbsp; {admin}<br>{summary}{rights_line}")

        # Loopback only when it is the way to the server (a server on this very computer).
        shown = [
            n
            for n in snapshot.interfaces
            if not n.is_loopback or (towards is not None and n.name == towards.name)
        ]
        shown = shown or snapshot.interfaces
        self.nics.setRowCount(len(shown))
        bold = QFont()
        bold.setBold(True)
        for row, nic in enumerate(shown):
            is_towards = towards is not None and nic.name == towards.name and not nic.example
            name = nic.name + (f"  → towards {server_label}" if is_towards and server_label else "")
            values = [
                name,
                str(nic.mtu) if nic.mtu else "?",
                ", ".join(nic.addresses) or "—",
                "up" if nic.up else "down",
                format_bits(nic.speed_bps) if nic.speed_bps else "—",
            ]
            for column, text in enumerate(values):
                item = QTableWidgetItem(text)
                if nic.description:
                    item.setToolTip(nic.description)
                if is_towards:
                    item.setBackground(QBrush(TOWARDS_ROW))
                    item.setFont(bold)
                self.nics.setItem(row, column, item)
        self.nics.resizeColumnsToContents()

        forced = not os_info.detected
        self.settings.setColumnHidden(2, forced)
        self.settings.setHorizontalHeaderItem(1, QTableWidgetItem(f"On {os_short_name(os_info)}"))
        self.settings.setRowCount(len(snapshot.items))
        for row, entry in enumerate(snapshot.items):
            setting_item = QTableWidgetItem(entry.title)
            setting_item.setToolTip(entry.what)
            self.settings.setItem(row, 0, setting_item)
            holder = QWidget()
            box = QHBoxLayout(holder)
            box.setContentsMargins(6, 2, 6, 2)
            box.addWidget(badge(entry.honoured))
            box.addStretch(1)
            holder.setToolTip(entry.evidence)
            self.settings.setCellWidget(row, 1, holder)
            current = QTableWidgetItem(short_observed(entry.current, forced))
            current.setToolTip(entry.current.display())
            self.settings.setItem(row, 2, current)
        self.settings.resizeColumnsToContents()
        for note in snapshot.notes:
            self.heading.setText(self.heading.text() + f"<br>⚠ {e(note)}")
