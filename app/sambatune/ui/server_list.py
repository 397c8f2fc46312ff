"""The list of servers on the left: this computer first, then the saved profiles."""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import Qt, Signal, SignalInstance
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from sambatune.profiles import ServerProfile
from sambatune.ui.session import SessionState

STATE_MARKS = {SessionState.CONNECTED: "●", SessionState.CONNECTING: "◌"}


class ServerList(QWidget):
    selected = Signal(str)  # profile id
    add_requested = Signal()
    edit_requested = Signal(str)
    remove_requested = Signal(str)
    connect_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 0, 8)
        title = QLabel("Servers")
        title.setStyleSheet("font-weight: 600;")
        layout.addWidget(title)
        self.list = QListWidget()
        self.list.setObjectName("serverList")
        self.list.currentItemChanged.connect(self._current_changed)
        self.list.itemDoubleClicked.connect(
            lambda item: self.connect_requested.emit(item.data(Qt.ItemDataRole.UserRole))
        )
        layout.addWidget(self.list, 1)
        self.hint = QLabel(
            "Add your Samba servers with <b>Add…</b>: SambaTune reaches them over SSH, "
            "with your keys, ssh-agent and ~/.ssh/config."
        )
        self.hint.setWordWrap(True)
        self.hint.setStyleSheet("color: palette(mid); padding: 4px;")
        layout.addWidget(self.hint)
        buttons = QHBoxLayout()
        self.add_button = QPushButton("Add…")
        self.add_button.setObjectName("addServerButton")
        self.add_button.clicked.connect(self.add_requested.emit)
        self.edit_button = QPushButton("Edit…")
        self.edit_button.setObjectName("editServerButton")
        self.edit_button.clicked.connect(lambda: self._emit_for_current(self.edit_requested))
        self.remove_button = QPushButton("Remove")
        self.remove_button.setObjectName("removeServerButton")
        self.remove_button.clicked.connect(lambda: self._emit_for_current(self.remove_requested))
        for button in (self.add_button, self.edit_button, self.remove_button):
            buttons.addWidget(button)
        layout.addLayout(buttons)

    def _emit_for_current(self, signal: SignalInstance) -> None:
        item = self.list.currentItem()
        if item is not None:
            signal.emit(item.data(Qt.ItemDataRole.UserRole))

    def _current_changed(self, current: QListWidgetItem | None, _previous: object) -> None:
        if current is None:
            return
        profile_id = current.data(Qt.ItemDataRole.UserRole)
        editable = profile_id != "local"
        self.edit_button.setEnabled(editable)
        self.remove_button.setEnabled(editable)
        self.selected.emit(profile_id)

    def set_profiles(self, profiles: list[ServerProfile], states: Mapping[str, SessionState]) -> None:
        current = self.current_id()
        self.list.blockSignals(True)
        self.list.clear()
        for profile in profiles:
            mark = STATE_MARKS.get(states.get(profile.id, SessionState.DISCONNECTED), "○")
            item = QListWidgetItem(f"{mark}  {profile.name}\n     {profile.describe()}")
            item.setData(Qt.ItemDataRole.UserRole, profile.id)
            item.setToolTip(profile.describe())
            self.list.addItem(item)
        self.list.blockSignals(False)
        self.hint.setVisible(all(p.is_local for p in profiles))
        self.select(current or (profiles[0].id if profiles else ""))

    def select(self, profile_id: str) -> None:
        for row in range(self.list.count()):
            item = self.list.item(row)
            if item.data(Qt.ItemDataRole.UserRole) == profile_id:
                self.list.setCurrentItem(item)
                return

    def current_id(self) -> str | None:
        item = self.list.currentItem()
        return None if item is None else str(item.data(Qt.ItemDataRole.UserRole))
