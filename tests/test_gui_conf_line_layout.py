"""The editor repaints only the line a keystroke changed, and never shows a stale line."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QEvent, QObject, QRect, Qt
from PySide6.QtGui import QTextBlock, QTextCursor
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from sambatune.ui.editor.buffer import ConfBuffer
from sambatune.ui.editor.highlighter import ConfHighlighter
from sambatune.ui.editor.text_edit import ConfTextEdit

TEXT = "".join(f"[share{n}]\n   path = /srv/share{n}\n   read only = no\n" for n in range(40))


class PaintSpy(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.rects: list[QRect] = []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.rects.append(event.rect())  # type: ignore[attr-defined]
        return False


def _editor(qtbot: QtBot, text: str = TEXT) -> tuple[ConfTextEdit, PaintSpy]:
    buffer = ConfBuffer()
    buffer.load(text.encode(), "smb.conf")
    editor = ConfTextEdit(buffer)
    qtbot.addWidget(editor)
    editor.resize(700, 500)
    editor.show()
    qtbot.waitExposed(editor)
    spy = PaintSpy()
    editor.viewport().installEventFilter(spy)
    return editor, spy


def _formats(block: QTextBlock) -> list[tuple[int, int, str]]:
    return [(f.start, f.length, f.format.foreground().color().name()) for f in block.layout().formats()]


def test_a_keystroke_repaints_its_line_only(qtbot: QtBot) -> None:
    editor, spy = _editor(qtbot)
    editor.go_to_line(8)
    editor.moveCursor(QTextCursor.MoveOperation.EndOfBlock)
    qtbot.wait(50)
    spy.rects.clear()
    QTest.keyClicks(editor, "/more")
    qtbot.waitUntil(lambda: bool(spy.rects), timeout=5000)
    line_height = editor.blockBoundingRect(editor.textCursor().block()).height()
    assert spy.rects
    assert max(rect.height() for rect in spy.rects) <= line_height + 2
    assert editor.textCursor().block().text() == "   path = /srv/share2/more"
    # What was typed got the value's colour, to its end.
    name, value = (
        ConfHighlighter.NAME.foreground().color().name(),
        ConfHighlighter.VALUE.foreground().color().name(),
    )
    formats = _formats(editor.textCursor().block())
    assert (3, 4, name) in formats
    assert (10, len("/srv/share2/more"), value) in formats


def test_a_change_that_recolours_the_next_line_repaints_it(qtbot: QtBot) -> None:
    editor, spy = _editor(qtbot)
    editor.go_to_line(8)
    editor.moveCursor(QTextCursor.MoveOperation.EndOfBlock)
    following = editor.textCursor().block().next()
    before = _formats(following)
    spy.rects.clear()
    QTest.keyClicks(editor, " \\")  # line 9 now continues line 8's value
    qtbot.waitUntil(lambda: _formats(following) != before, timeout=5000)
    top = editor.blockBoundingGeometry(following).translated(editor.contentOffset()).top()
    assert any(rect.top() <= top < rect.bottom() for rect in spy.rects)


def _lines_match_layouts(editor: ConfTextEdit) -> bool:
    block = editor.firstVisibleBlock()
    while block.isValid() and block.blockNumber() < editor.firstVisibleBlock().blockNumber() + 30:
        layout = block.layout()
        if layout.lineCount() and layout.lineAt(0).textLength() != len(block.text()):
            return False
        block = block.next()
    return True


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.integers(1, 12), st.integers(0, 30), st.sampled_from(["x", "\\", "\n", "\b", "\b\b", "yz"])
        ),
        max_size=10,
    )
)
def test_after_any_typing_every_line_is_laid_out_as_it_reads(
    qtbot: QtBot,
    keys: list[tuple[int, int, str]],
) -> None:
    editor, _spy = _editor(qtbot, TEXT[:400])
    for line, column, typed in keys:
        editor.go_to_line(line, column)
        for char in typed:
            if char == "\n":
                QTest.keyClick(editor, Qt.Key.Key_Return)
            elif char == "\b":
                QTest.keyClick(editor, Qt.Key.Key_Backspace)
            else:
                QTest.keyClicks(editor, char)
    editor.viewport().repaint()
    assert _lines_match_layouts(editor)
    assert editor.buffer.text.display_lines() == editor.toPlainText().split("\n")
