"""Colours for smb.conf text, from the conf engine's own reading of each line.

The highlighter never parses: it asks the buffer's document what kind each line
is and where its name and value are (backslash continuation lines included), so
the colours always match what Samba reads. A block's state records its kind and
whether the next line continues it; when either changes, Qt re-colours the next
line too.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat

from sambatune.conf.document import (
    BAD_SECTION,
    COMMENT,
    CONTINUATION,
    EMPTY_NAME,
    PARAMETER,
    SECTION,
    TEXT,
)
from sambatune.ui.editor.buffer import ConfBuffer

_KIND_STATE = {
    kind: number
    for number, kind in enumerate(
        ("blank", COMMENT, SECTION, PARAMETER, CONTINUATION, TEXT, BAD_SECTION, EMPTY_NAME)
    )
}


def _format(color: str, *, bold: bool = False, italic: bool = False) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(color))
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    if italic:
        fmt.setFontItalic(True)
    return fmt


class ConfHighlighter(QSyntaxHighlighter):
    COMMENT = _format("#6a737d", italic=True)
    SECTION = _format("#0b4f8a", bold=True)
    NAME = _format("#6f2da8")
    EQUALS = _format("#8c959f")
    VALUE = _format("#0a3069")
    IGNORED = _format("#9a6700", italic=True)
    BROKEN = _format("#b3261e", bold=True)

    def __init__(self, buffer: ConfBuffer) -> None:
        self.buffer = buffer
        super().__init__(buffer.qdocument)

    def highlightBlock(self, text: str) -> None:
        editor_text = self.buffer.text
        document = editor_text.document
        number = self.currentBlock().blockNumber() + 1
        if number > document.line_count:
            self.setCurrentBlockState(0)
            return
        line = document.line(number)
        kind = line.kind
        continues = number < document.line_count and document.kind(number + 1) == CONTINUATION
        self.setCurrentBlockState(_KIND_STATE.get(kind, 0) * 2 + int(continues))
        if kind == COMMENT:
            self.setFormat(0, len(text), self.COMMENT)
            return
        if kind in (TEXT, EMPTY_NAME, BAD_SECTION):
            self.setFormat(0, len(text), self.BROKEN if kind != TEXT else self.IGNORED)
            if kind == TEXT:
                return
        flags = editor_text.flags(number)

        def span(found: tuple[int, int] | None) -> tuple[int, int] | None:
            if found is None or not flags:
                return found
            return (
                editor_text.display_offset(number, found[0]),
                editor_text.display_offset(number, found[1]),
            )

        name, value = span(line.name_span), span(line.value_span)
        if kind == SECTION and name is not None:
            self.setFormat(max(0, name[0] - 1), name[1] - name[0] + 2, self.SECTION)
            return
        if name is not None:
            self.setFormat(name[0], name[1] - name[0], self.NAME)
            if kind == PARAMETER:
                equals = text.find("=", name[1])
                if equals >= 0:
                    self.setFormat(equals, 1, self.EQUALS)
        if value is not None:
            self.setFormat(value[0], value[1] - value[0], self.VALUE)
