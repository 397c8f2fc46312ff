"""The smb.conf text view: line numbers, lint markers, quiet hints after parameter lines.

Everything drawn on top of the text (hints, underlines, gutter markers) is painted
for the visible lines only, from data the conf engine already holds, so the cost
of a keystroke does not grow with the file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from PySide6.QtCore import QEvent, QPointF, QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QAction,
    QColor,
    QContextMenuEvent,
    QFont,
    QFontDatabase,
    QFontMetricsF,
    QHelpEvent,
    QKeyEvent,
    QKeySequence,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPen,
    QPolygonF,
    QResizeEvent,
    QStaticText,
    QTextBlock,
    QTextCursor,
    QTextFormat,
    QTextLine,
)
from PySide6.QtWidgets import QMenu, QPlainTextEdit, QTextEdit, QToolTip, QWidget

from sambatune.conf.document import CONTINUATION, PARAMETER, SECTION
from sambatune.conf.hints import ParameterHints
from sambatune.conf.syntax import BLANKS
from sambatune.ui.editor.buffer import ConfBuffer
from sambatune.ui.editor.highlighter import ConfHighlighter
from sambatune.ui.severity import OTHER_SEVERITY_COLOR, SEVERITY_COLORS

SEVERITY_RANK = {"error": 3, "warning": 2, "info": 1}
HINT_COLOR = "#8c959f"
CURRENT_LINE = "#f2f6fb"
GUTTER_BACKGROUND = "#f6f8fa"
GUTTER_TEXT = "#8c959f"
MARKER_WIDTH = 16
MIN_HINT_ROOM = 80  # pixels; less and a hint would be a few letters and an ellipsis
_POPUP_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Escape, Qt.Key.Key_Tab, Qt.Key.Key_Backtab)


class Marker(NamedTuple):
    """A message attached to a line: a lint finding, or testparm's complaint."""

    severity: str  # "error", "warning" or "info"
    message: str
    source: str = "lint"  # "lint" or "testparm"


def editor_font() -> QFont:
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setStyleHint(QFont.StyleHint.Monospace)
    return font


class LineGutter(QWidget):
    """Line numbers and one marker per line; hovering a marker shows its messages."""

    def __init__(self, editor: ConfTextEdit) -> None:
        super().__init__(editor)
        self.editor = editor
        self.setObjectName("lineGutter")

    def sizeHint(self) -> QSize:
        return QSize(self.editor.gutter_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:
        self.editor.paint_gutter(event)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            assert isinstance(event, QHelpEvent)
            line = self.editor.line_at(event.pos().y())
            text = self.editor.marker_text(line) if line else ""
            if text:
                QToolTip.showText(event.globalPos(), text, self)
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().event(event)


class ConfTextEdit(QPlainTextEdit):
    """A plain-text editor over a :class:`ConfBuffer`."""

    #: The cursor moved to another line (1-based).
    line_changed = Signal(int)

    def __init__(self, buffer: ConfBuffer, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("confTextEdit")
        self.buffer = buffer
        self.setDocument(buffer.qdocument)
        self.highlighter = ConfHighlighter(buffer)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setFont(editor_font())
        self.setTabStopDistance(self.fontMetrics().horizontalAdvance(" ") * 8)
        self.hints: ParameterHints | None = None
        self.markers: dict[int, list[Marker]] = {}
        #: Markers that move with the text (testparm's complaints after a refused apply).
        self.anchored: list[tuple[QTextCursor, Marker]] = []
        #: Called after each key press the editor handled (completion listens).
        self.after_key: Callable[[QKeyEvent], None] | None = None
        #: Whether a completion list is open (it then takes Enter, Tab and Escape).
        self.popup_visible: Callable[[], bool] = lambda: False
        self.gutter = LineGutter(self)
        self._hint_font = QFont(self.font())
        self._hint_font.setItalic(True)
        self._static_texts: dict[str, QStaticText] = {}
        self._last_line = 0
        self.blockCountChanged.connect(self._update_gutter_width)
        self.updateRequest.connect(self._update_gutter)
        self.cursorPositionChanged.connect(self._cursor_moved)
        self._update_gutter_width()
        self._cursor_moved()

    # -- geometry ---------------------------------------------------------------------------
    def gutter_width(self) -> int:
        digits = max(3, len(str(self.blockCount())))
        return MARKER_WIDTH + 8 + self.fontMetrics().horizontalAdvance("9") * digits

    def _update_gutter_width(self) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _update_gutter(self, rect: QRect, dy: int) -> None:
        if dy:
            self.gutter.scroll(0, dy)
        else:
            self.gutter.update(0, rect.y(), self.gutter.width(), rect.height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        contents = self.contentsRect()
        self.gutter.setGeometry(
            QRect(contents.left(), contents.top(), self.gutter_width(), contents.height())
        )

    def line_at(self, y: int) -> int:
        """The 1-based line drawn at viewport height ``y`` (0 below the last line)."""
        block = self.firstVisibleBlock()
        offset = self.contentOffset()
        while block.isValid():
            geometry = self.blockBoundingGeometry(block).translated(offset)
            if geometry.top() > y:
                return 0
            if geometry.bottom() >= y:
                return block.blockNumber() + 1
            block = block.next()
        return 0

    def _visible_blocks(self, rect: QRect | None = None) -> list[tuple[QTextBlock, float, float]]:
        """(block, top, bottom) in viewport coordinates for the blocks on screen.

        With ``rect``, only the blocks that cross it (what a paint event repaints).
        """
        found = []
        block = self.firstVisibleBlock()
        offset = self.contentOffset()
        height = self.viewport().height()
        low, high = (0.0, float(height)) if rect is None else (float(rect.top()), float(rect.bottom()))
        top = self.blockBoundingGeometry(block).translated(offset).top() if block.isValid() else 0
        while block.isValid():
            bottom = top + self.blockBoundingRect(block).height()
            if top > high or top > height:
                break
            if block.isVisible() and bottom >= low:
                found.append((block, top, bottom))
            top = bottom
            block = block.next()
        return found

    def _static(self, text: str) -> QStaticText:
        """Text laid out once and drawn many times (line numbers and hints repeat)."""
        found = self._static_texts.get(text)
        if found is None:
            if len(self._static_texts) > 4000:
                self._static_texts.clear()
            found = self._static_texts[text] = QStaticText(text)
            found.setTextFormat(Qt.TextFormat.PlainText)
        return found

    # -- markers ----------------------------------------------------------------------------
    def set_markers(self, markers: dict[int, list[Marker]]) -> None:
        self.markers = markers
        self.viewport().update()
        self.gutter.update()

    def set_anchored(self, markers: list[tuple[int, Marker]]) -> None:
        """Markers on lines that stay with their text as lines are added or removed above."""
        anchored = []
        for line, marker in markers:
            block = self.document().findBlockByNumber(line - 1)
            if block.isValid():
                anchored.append((QTextCursor(block), marker))
        self.anchored = anchored
        self.viewport().update()
        self.gutter.update()

    def markers_at(self, line: int) -> list[Marker]:
        found = list(self.markers.get(line, ()))
        for cursor, marker in self.anchored:
            if cursor.blockNumber() + 1 == line:
                found.append(marker)
        return found

    def marker_text(self, line: int) -> str:
        markers = self.markers_at(line)
        lines = []
        for marker in sorted(markers, key=lambda m: -SEVERITY_RANK.get(m.severity, 0)):
            who = "testparm on the server" if marker.source == "testparm" else marker.severity
            lines.append(f"{who}: {marker.message}")
        return "\n".join(lines)

    def _worst(self, line: int) -> str | None:
        markers = self.markers_at(line)
        if not markers:
            return None
        return max(markers, key=lambda m: SEVERITY_RANK.get(m.severity, 0)).severity

    # -- painting ---------------------------------------------------------------------------
    def paint_gutter(self, event: QPaintEvent) -> None:
        painter = QPainter(self.gutter)
        painter.fillRect(event.rect(), QColor(GUTTER_BACKGROUND))
        metrics = self.fontMetrics()
        right = self.gutter.width() - 6
        current = self.textCursor().blockNumber()
        painter.setFont(self.font())
        plain, strong = QPen(QColor(GUTTER_TEXT)), QPen(QColor("#24292f"))
        digit = metrics.horizontalAdvance("9")
        for block, top, bottom in self._visible_blocks(event.rect()):
            number = block.blockNumber()
            line_height = bottom - top
            painter.setPen(strong if number == current else plain)
            label = str(number + 1)
            painter.drawStaticText(QPointF(right - digit * len(label), top), self._static(label))
            severity = self._worst(number + 1)
            if severity is not None:
                _paint_marker(painter, severity, 3.0, top + (line_height - 10) / 2, 10.0)
        painter.end()

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        painter = QPainter(self.viewport())
        try:
            self._paint_overlays(painter, event.rect())
        finally:
            painter.end()

    def _paint_overlays(self, painter: QPainter, rect: QRect) -> None:
        document = self.buffer.text.document
        rows = document.rows
        hints = self.hints
        metrics = self.fontMetrics()
        space = metrics.horizontalAdvance("  ")
        offset_x = self.contentOffset().x()
        painter.setFont(self._hint_font)
        hint_pen = QPen(QColor(HINT_COLOR))
        hint_metrics = QFontMetricsF(self._hint_font)
        width = self.viewport().width()
        for block, top, _bottom in self._visible_blocks(rect):
            number = block.blockNumber() + 1
            layout = block.layout()
            if layout is None or layout.lineCount() == 0:
                continue
            line = layout.lineAt(0)
            left = offset_x + layout.position().x()
            baseline = top + line.ascent() + layout.position().y()
            severity = self._worst(number)
            if severity is not None and severity != "info":
                self._underline(painter, block, left, baseline + 3, severity)
            if hints is None or number > len(rows):
                continue
            row = rows[number - 1]
            if row is CONTINUATION:
                # A setting over several lines: its hint goes after the last of them.
                if number < len(rows) and rows[number] is CONTINUATION:
                    continue
                row = rows[document.head_index(number - 1)]
            elif not isinstance(row, str) and row[3]:
                continue
            if isinstance(row, str) or row[0] != PARAMETER:
                continue
            hint = hints.hint(row[1], row[2] or "")
            if not hint:
                continue
            x = left + line.naturalTextWidth() + space
            room = width - x - 4
            if room < MIN_HINT_ROOM:
                continue
            if hint_metrics.horizontalAdvance(hint) > room:
                # Cut to fit; hovering the line shows all of it.
                hint = hint_metrics.elidedText(hint, Qt.TextElideMode.ElideRight, int(room))
            painter.setPen(hint_pen)
            painter.drawStaticText(QPointF(x, top + layout.position().y()), self._static(hint))

    def _underline(self, painter: QPainter, block: QTextBlock, left: float, y: float, severity: str) -> None:
        text = block.text()
        start = len(text) - len(text.lstrip(BLANKS))
        end = len(text.rstrip(BLANKS))
        if end <= start:
            return
        line = block.layout().lineAt(0)
        x1, x2 = left + _x_of(line, start), left + _x_of(line, end)
        path = QPainterPath(QPointF(x1, y))
        x, up = x1, True
        while x < x2:
            x = min(x + 2.0, x2)
            path.lineTo(x, y - 1.5 if up else y)
            up = not up
        painter.setPen(QPen(QColor(SEVERITY_COLORS.get(severity, OTHER_SEVERITY_COLOR)), 1))
        painter.drawPath(path)

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            assert isinstance(event, QHelpEvent)
            text = self.line_tooltip(self.line_at(event.pos().y()))
            if text:
                QToolTip.showText(event.globalPos(), text, self.viewport())
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(event)

    def line_tooltip(self, line: int) -> str:
        """What hovering a line shows: its hint in full, then its findings."""
        parts = []
        rows = self.buffer.text.document.rows
        if self.hints is not None and 0 < line <= len(rows):
            row = rows[self.buffer.text.document.head_index(line - 1)]
            if not isinstance(row, str) and row[0] == PARAMETER:
                hint = self.hints.hint(row[1], row[2] or "")
                if hint:
                    parts.append(f"{row[1]}: {hint}")
        markers = self.marker_text(line) if line else ""
        if markers:
            parts.append(markers)
        return "\n".join(parts)

    # -- cursor -----------------------------------------------------------------------------
    def _cursor_moved(self) -> None:
        selection = QTextEdit.ExtraSelection()
        selection.format.setBackground(QColor(CURRENT_LINE))
        selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        cursor = self.textCursor()
        cursor.clearSelection()
        selection.cursor = cursor
        self.setExtraSelections([selection])
        line = self.textCursor().blockNumber() + 1
        if line != self._last_line:
            self._last_line = line
            self.gutter.update()
            self.line_changed.emit(line)

    def current_line(self) -> int:
        return self.textCursor().blockNumber() + 1

    def go_to_line(self, line: int, column: int = 0) -> None:
        block = self.document().findBlockByNumber(max(0, line - 1))
        if not block.isValid():
            block = self.document().lastBlock()
        cursor = QTextCursor(block)
        cursor.movePosition(QTextCursor.MoveOperation.Right, n=min(column, block.length() - 1))
        self.setTextCursor(cursor)
        self.centerCursor()
        self.setFocus()

    # -- keys -------------------------------------------------------------------------------
    def keyPressEvent(self, event: QKeyEvent) -> None:
        if self.popup_visible() and event.key() in _POPUP_KEYS:
            event.ignore()
            return
        if event.matches(QKeySequence.StandardKey.Undo):
            self.buffer.undo()
            return
        if event.matches(QKeySequence.StandardKey.Redo):
            self.buffer.redo()
            return
        if (
            event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
            and not self.isReadOnly()
        ):
            self._new_line()
        else:
            super().keyPressEvent(event)
        if self.after_key is not None:
            self.after_key(event)

    def _new_line(self) -> None:
        """Enter keeps the indentation people use for settings in this section."""
        cursor = self.textCursor()
        text = cursor.block().text()
        indent = text[: len(text) - len(text.lstrip(" \t"))]
        document = self.buffer.text.document
        number = cursor.blockNumber() + 1
        if number <= document.line_count and document.kind(number) == SECTION:
            indent = self._parameter_indent(number)
        cursor.insertText("\n" + indent)
        self.setTextCursor(cursor)
        self.ensureCursorVisible()

    def _parameter_indent(self, after: int) -> str:
        document = self.buffer.text.document
        for number in range(after + 1, min(document.line_count, after + 50) + 1):
            if document.kind(number) == PARAMETER:
                raw = document.raw_line(number)
                return raw[: len(raw) - len(raw.lstrip(" \t"))]
        return "   "

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        menu = QMenu(self)
        undo = QAction("Undo", menu)
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        undo.setEnabled(self.document().isUndoAvailable() and not self.isReadOnly())
        undo.triggered.connect(self.buffer.undo)
        redo = QAction("Redo", menu)
        redo.setShortcut(QKeySequence.StandardKey.Redo)
        redo.setEnabled(self.document().isRedoAvailable() and not self.isReadOnly())
        redo.triggered.connect(self.buffer.redo)
        menu.addActions([undo, redo])
        menu.addSeparator()
        has_selection = self.textCursor().hasSelection()
        for title, slot, enabled in (
            ("Cut", self.cut, has_selection and not self.isReadOnly()),
            ("Copy", self.copy, has_selection),
            ("Paste", self.paste, self.canPaste() and not self.isReadOnly()),
        ):
            action = QAction(title, menu)
            action.setEnabled(enabled)
            action.triggered.connect(slot)
            menu.addAction(action)
        menu.addSeparator()
        select_all = QAction("Select all", menu)
        select_all.triggered.connect(self.selectAll)
        menu.addAction(select_all)
        menu.exec(event.globalPos())


def _x_of(line: QTextLine, position: int) -> float:
    found: Any = line.cursorToX(position)  # (x, position) in PySide6
    return float(found[0])


def _paint_marker(painter: QPainter, severity: str, x: float, y: float, size: float) -> None:
    """Error: a red disc; warning: an amber triangle; info: a blue ring."""
    color = QColor(SEVERITY_COLORS.get(severity, OTHER_SEVERITY_COLOR))
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    if severity == "error":
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color)
        painter.drawEllipse(QPointF(x + size / 2, y + size / 2), size / 2, size / 2)
    elif severity == "warning":
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color)
        painter.drawPolygon(
            QPolygonF([QPointF(x + size / 2, y), QPointF(x + size, y + size), QPointF(x, y + size)])
        )
    else:
        painter.setPen(QPen(color, 1.6))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawEllipse(QPointF(x + size / 2, y + size / 2), size / 2 - 1, size / 2 - 1)
    painter.restore()
