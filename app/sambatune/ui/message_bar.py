"""The one place errors are shown: a bar under the page, with copyable details."""

from __future__ import annotations

import logging

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from sambatune.errors import SambaTuneError

log = logging.getLogger(__name__)

# Qt's own icons: an emoji renders as an empty box where the font lacks it.
_ICONS = {
    "error": QStyle.StandardPixmap.SP_MessageBoxCritical,
    "warning": QStyle.StandardPixmap.SP_MessageBoxWarning,
    "info": QStyle.StandardPixmap.SP_MessageBoxInformation,
    "success": QStyle.StandardPixmap.SP_DialogApplyButton,
}
_STYLES = {
    "error": "background:#fdecea; border:1px solid #f5c2c0; color:#611a15;",
    "warning": "background:#fff4e5; border:1px solid #ffd8a8; color:#663c00;",
    "info": "background:#e8f4fd; border:1px solid #b6dcfb; color:#0d3c61;",
    "success": "background:#edf7ed; border:1px solid #b7dfb9; color:#1e4620;",
}


class DetailsDialog(QDialog):
    def __init__(self, message: str, details: str, parent: QWidget | None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Details")
        self.resize(640, 400)
        layout = QVBoxLayout(self)
        label = QLabel(message)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(label)
        self.text = QPlainTextEdit(details)
        self.text.setReadOnly(True)
        layout.addWidget(self.text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        copy = buttons.addButton("Copy all", QDialogButtonBox.ButtonRole.ActionRole)
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(f"{message}\n\n{details}"))
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)


class MessageBar(QFrame):
    """Shows the latest message; errors stay until dismissed, others fade after a while."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageBar")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        self.icon = QLabel()
        self.icon.setObjectName("messageIcon")
        layout.addWidget(self.icon, 0, Qt.AlignmentFlag.AlignTop)
        self.label = QLabel()
        self.label.setObjectName("messageText")
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.label, 1)
        self.details_button = QPushButton("Details…")
        self.details_button.clicked.connect(self._show_details)
        layout.addWidget(self.details_button)
        self.copy_button = QPushButton("Copy")
        self.copy_button.clicked.connect(self._copy)
        layout.addWidget(self.copy_button)
        close = QPushButton()
        close.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_TitleBarCloseButton))
        close.setFlat(True)
        close.setToolTip("Dismiss")
        close.clicked.connect(self.hide)
        layout.addWidget(close)
        self._message = ""
        self._details = ""
        self.hide()

    @property
    def message(self) -> str:
        return self._message

    def show_error(self, error: SambaTuneError | str, details: str = "") -> None:
        if isinstance(error, SambaTuneError):
            message, details = error.message, error.details
        else:
            message = error
        # Log first, then show: the log keeps it after the bar is dismissed.
        log.warning("%s", message)
        self._show("error", message, details)

    def dismiss(self, message: str) -> None:
        """Hide the bar if it still shows ``message`` (an error since put right); another
        message that came later stays."""
        if self.isVisible() and self._message == message:
            self.hide()

    def show_message(self, kind: str, message: str, details: str = "") -> None:
        self._show(kind, message, details)

    def _show(self, kind: str, message: str, details: str) -> None:
        self._message, self._details = message, details
        self.setStyleSheet(f"#messageBar {{{_STYLES[kind]} border-radius:4px;}}")
        size = self.fontMetrics().height()
        self.icon.setPixmap(self.style().standardIcon(_ICONS[kind]).pixmap(size, size))
        self.label.setText(message)
        self.details_button.setVisible(bool(details))
        self.show()

    def _show_details(self) -> None:
        DetailsDialog(self._message, self._details, self.window()).open()

    def _copy(self) -> None:
        text = self._message + (f"\n\n{self._details}" if self._details else "")
        QGuiApplication.clipboard().setText(text)
