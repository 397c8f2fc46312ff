"""The Qt binding keeps Python's reference counts straight (a broken release aborts the app)."""

from __future__ import annotations

import sys

from PySide6.QtGui import QColor, QImage, QPainter, QSyntaxHighlighter, QTextCharFormat
from PySide6.QtWidgets import QPlainTextEdit, QWidget
from pytestqt.qtbot import QtBot

CALLS = 5000


def test_methods_returning_nothing_keep_none_alive(qtbot: QtBot) -> None:
    # Before Python 3.12 None is reference counted like any object: a binding that
    # releases it once too often kills the interpreter ("deallocating None") after
    # enough paints. PySide6 6.12.0 did so on every void method.
    widget = QWidget()
    qtbot.addWidget(widget)
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        before = sys.getrefcount(None)
        for _ in range(CALLS):
            widget.setEnabled(True)
            painter.setPen(QColor("#333333"))
        after = sys.getrefcount(None)
    finally:
        painter.end()
    assert after - before > -CALLS // 10, f"None lost {before - after} references"


def test_a_highlighter_can_format_many_blocks(qtbot: QtBot) -> None:
    fmt = QTextCharFormat()

    class Marker(QSyntaxHighlighter):
        def highlightBlock(self, text: str) -> None:
            self.setFormat(0, len(text), fmt)
            self.setCurrentBlockState(1)

    editor = QPlainTextEdit()
    qtbot.addWidget(editor)
    editor.setPlainText("\n".join(f"name{n} = value" for n in range(CALLS)))
    before = sys.getrefcount(None)
    highlighter = Marker(editor.document())
    highlighter.rehighlight()
    assert sys.getrefcount(None) - before > -CALLS // 10
