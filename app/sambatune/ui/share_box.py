"""The share a form acts on, chosen from the newest survey (Benchmarks form, wizard start)."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QWidget


class SurveyedShareBox(QComboBox):
    """An editable list of the server's shares that follows every survey.

    A share the previous survey listed and this one does not (another smb.conf was
    chosen, the share was removed) gives way to this survey's first; a name the admin
    typed, or a share still listed, stays.
    """

    def __init__(self, object_name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(object_name)
        self.setEditable(True)
        self._surveyed: list[str] = []

    def set_shares(self, names: list[str]) -> None:
        current = self.currentText().strip()
        follow = not current or (current in self._surveyed and current not in names)
        self._surveyed = list(names)
        self.clear()
        self.addItems(names)
        if current and not follow:
            self.setCurrentText(current)
