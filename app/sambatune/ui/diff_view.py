"""A read-only view of a unified diff, coloured the way admins expect."""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument
from PySide6.QtWidgets import QPlainTextEdit, QWidget


def _format(foreground: str, background: str | None = None, bold: bool = False) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(foreground))
    if background:
        fmt.setBackground(QColor(background))
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    return fmt


class DiffHighlighter(QSyntaxHighlighter):
    ADDED = _format("#1e4620", "#e6f4ea")
    REMOVED = _format("#8b1a10", "#fbe9e7")
    HUNK = _format("#0d5c9e")
    HEADER = _format("#555555", bold=True)

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)

    def highlightBlock(self, text: str) -> None:
        if text.startswith(("+++", "---")):
            self.setFormat(0, len(text), self.HEADER)
        elif text.startswith("+"):
            self.setFormat(0, len(text), self.ADDED)
        elif text.startswith("-"):
            self.setFormat(0, len(text), self.REMOVED)
        elif text.startswith("@@"):
            self.setFormat(0, len(text), self.HUNK)


class DiffView(QPlainTextEdit):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        font = QFont("monospace")
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.setFont(font)
        self.highlighter = DiffHighlighter(self.document())

    def show_diff(self, diff: str, empty_text: str = "(no difference)") -> None:
        self.setPlainText(diff or empty_text)
