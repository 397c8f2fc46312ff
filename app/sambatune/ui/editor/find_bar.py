"""Find in the text view: next, previous, and how many matches there are."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QToolButton,
    QWidget,
)

from sambatune.ui.editor.text_edit import ConfTextEdit


class FindField(QLineEdit):
    """Enter finds the next match, Shift+Enter the previous one, Escape closes."""

    next_requested = Signal()
    previous_requested = Signal()
    close_requested = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.previous_requested.emit()
            else:
                self.next_requested.emit()
            return
        if event.key() == Qt.Key.Key_Escape:
            self.close_requested.emit()
            return
        super().keyPressEvent(event)


class FindBar(QWidget):
    def __init__(self, editor: ConfTextEdit, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("findBar")
        self.editor = editor
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        layout.addWidget(QLabel("Find:"))
        self.field = FindField()
        self.field.setObjectName("findField")
        self.field.setPlaceholderText("text to find")
        self.field.setClearButtonEnabled(True)
        layout.addWidget(self.field, 1)
        self.case = QCheckBox("Match case")
        layout.addWidget(self.case)
        self.previous_button = QPushButton("Previous")
        self.next_button = QPushButton("Next")
        layout.addWidget(self.previous_button)
        layout.addWidget(self.next_button)
        self.count_label = QLabel()
        self.count_label.setObjectName("findCount")
        self.count_label.setMinimumWidth(110)
        layout.addWidget(self.count_label)
        close = QToolButton()
        close.setText("✕")
        close.setToolTip("Close (Escape)")
        layout.addWidget(close)
        self.field.textChanged.connect(self._text_changed)
        self.field.next_requested.connect(self.find_next)
        self.field.previous_requested.connect(self.find_previous)
        self.field.close_requested.connect(self.close_bar)
        self.case.toggled.connect(lambda _on: self._text_changed(self.field.text()))
        self.next_button.clicked.connect(self.find_next)
        self.previous_button.clicked.connect(self.find_previous)
        close.clicked.connect(self.close_bar)
        # Counting scans the whole text: after typing pauses, and only while the bar is open.
        self._recount = QTimer(self)
        self._recount.setSingleShot(True)
        self._recount.setInterval(250)
        self._recount.timeout.connect(self.count_matches)
        editor.buffer.changed.connect(self._document_changed)
        self.count = 0
        self._per_line: list[int] = []

    def open_bar(self) -> None:
        selected = self.editor.textCursor().selectedText()
        if selected and "\u2029" not in selected:
            self.field.setText(selected)
        self.show()
        self.field.setFocus()
        self.field.selectAll()
        self.count_matches()

    def close_bar(self) -> None:
        self.hide()
        self.editor.setFocus()

    def _flags(self, backward: bool = False) -> QTextDocument.FindFlag:
        flags = QTextDocument.FindFlag(0)
        if self.case.isChecked():
            flags |= QTextDocument.FindFlag.FindCaseSensitively
        if backward:
            flags |= QTextDocument.FindFlag.FindBackward
        return flags

    def _text_changed(self, text: str) -> None:
        # Find as you type, from where the current match starts.
        cursor = self.editor.textCursor()
        cursor.setPosition(cursor.selectionStart())
        self.editor.setTextCursor(cursor)
        if text:
            self._find(backward=False)
        self.count_matches()

    def _document_changed(self) -> None:
        if self.isVisible() and self.field.text():
            self._recount.start()

    def find_next(self) -> bool:
        return self._find(backward=False)

    def find_previous(self) -> bool:
        return self._find(backward=True)

    def _find(self, backward: bool) -> bool:
        text = self.field.text()
        if not text:
            return False
        editor = self.editor
        document = editor.document()
        found = document.find(text, editor.textCursor(), self._flags(backward))
        if found.isNull():  # wrap around
            start = QTextCursor(document)
            if backward:
                start.movePosition(QTextCursor.MoveOperation.End)
            found = document.find(text, start, self._flags(backward))
        if found.isNull():
            self.field.setStyleSheet("background: #ffebe9;")
            return False
        self.field.setStyleSheet("")
        editor.setTextCursor(found)
        editor.centerCursor()
        self._show_count()
        return True

    def count_matches(self) -> int:
        text = self.field.text()
        if not text:
            self.count = 0
            self.count_label.setText("")
            return 0
        lines = self.editor.buffer.text.display_lines()
        if self.case.isChecked():
            self._per_line = [line.count(text) for line in lines]
        else:
            needle = text.lower()
            self._per_line = [line.lower().count(needle) for line in lines]
        self.count = sum(self._per_line)
        self._show_count()
        return self.count

    def current_match(self) -> int:
        """1-based number of the selected match, 0 when the selection is not one."""
        text = self.field.text()
        cursor = self.editor.textCursor()
        selected = cursor.selectedText()
        matches = selected == text if self.case.isChecked() else selected.lower() == text.lower()
        if not text or not matches:
            return 0
        block = cursor.block()
        before = block.text()[: cursor.selectionStart() - block.position()]
        if not self.case.isChecked():
            before, text = before.lower(), text.lower()
        return sum(self._per_line[: block.blockNumber()]) + before.count(text) + 1

    def _show_count(self) -> None:
        if not self.field.text():
            self.count_label.setText("")
        elif self.count == 0:
            self.count_label.setText("no matches")
        else:
            current = self.current_match()
            total = f"{self.count} match{'es' if self.count != 1 else ''}"
            self.count_label.setText(f"{current} of {total}" if current else total)
