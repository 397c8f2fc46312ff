"""The text an editor shows, kept in step with the lossless smb.conf under it.

A :class:`ConfBuffer` owns the ``QTextDocument`` both views edit and the
:class:`~sambatune.conf.editor_text.EditorText` that knows the file's bytes. Every
change of the text document (typing, paste, undo, a form edit) reaches
:meth:`EditorText.replace` as "these lines now read ...", so the smb.conf engine
re-reads only the lines that changed. Edits made by the conf engine
(:mod:`sambatune.conf.edits`) go in as one undoable edit of the text document, so
undo and redo work the same for both views.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QTextBlock, QTextCursor, QTextDocument

from sambatune.conf.document import SmbConfDocument
from sambatune.conf.editor_text import EditorText
from sambatune.conf.edits import LineChange
from sambatune.ui.editor.line_layout import LineLayout


class ConfBuffer(QObject):
    #: The text changed (the conf document already follows it).
    changed = Signal()
    #: A new file was loaded into the buffer.
    loaded = Signal()
    #: Whether the text differs from what was read or last saved.
    dirty_changed = Signal(bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.qdocument = QTextDocument(self)
        self.qdocument.setDocumentLayout(LineLayout(self.qdocument))
        self.text = EditorText(b"")
        #: The bytes the text started from: read from disk or the server, or last saved.
        self.baseline = b""
        self._dirty = False
        self._loading = False
        self._restoring = False
        self._loads = 0
        self._block_count = self.qdocument.blockCount()
        # Connected before any highlighter: the conf document must follow a change
        # before the highlighter asks it about the changed lines.
        self.qdocument.contentsChange.connect(self._contents_change)
        self.qdocument.modificationChanged.connect(self._modification_changed)

    # -- state ------------------------------------------------------------------------------
    @property
    def document(self) -> SmbConfDocument:
        return self.text.document

    @property
    def generation(self) -> tuple[int, int]:
        """Changes whenever the conf document does (lint results are matched against it).

        A document counts its own edits from 0, so a file loaded again (a restore, the live
        file followed) would repeat the numbers of the one before: a check of the old text
        could then pass for the new one. The count of loads tells them apart.
        """
        return self._loads, self.text.document.generation

    @property
    def dirty(self) -> bool:
        return self._dirty

    def render(self) -> bytes:
        return self.text.render()

    # -- loading and saving -------------------------------------------------------------------
    def load(self, data: bytes, path: str | None) -> None:
        """Show ``data``: a fresh start (no undo history, not dirty)."""
        self._loads += 1
        self.text = EditorText(data, path)
        self.baseline = data
        self._loading = True
        try:
            self.qdocument.setPlainText(self.text.display_text())
        finally:
            self._loading = False
        self._block_count = self.qdocument.blockCount()
        self.qdocument.setModified(False)
        self._set_dirty(False)
        self.loaded.emit()

    def mark_saved(self, data: bytes) -> None:
        """``data`` is now what the file holds (saved locally, or applied to the server)."""
        self.baseline = data
        self.qdocument.setModified(False)
        self._set_dirty(self.render() != data)

    def _modification_changed(self, modified: bool) -> None:
        # Undoing back to the saved state clears Qt's flag; the bytes have the last word.
        self._set_dirty(modified or self.render() != self.baseline)

    def _set_dirty(self, dirty: bool) -> None:
        if dirty != self._dirty:
            self._dirty = dirty
            self.dirty_changed.emit(dirty)

    # -- following the text document ----------------------------------------------------------
    def _contents_change(self, position: int, removed: int, added: int) -> None:
        if self._loading:
            return
        qdocument = self.qdocument
        count = qdocument.blockCount()
        delta = count - self._block_count
        self._block_count = count
        first = qdocument.findBlock(position)
        if not first.isValid():
            first = qdocument.firstBlock()
        last = qdocument.findBlock(position + added)
        if not last.isValid():
            last = qdocument.lastBlock()
        first_number, last_number = first.blockNumber(), last.blockNumber()
        old_count = last_number - first_number + 1 - delta
        lines = _block_texts(first, last_number)
        if old_count < 0 or first_number + old_count > self.text.line_count:
            # A report that does not add up: compare every line instead.
            self.text.replace(
                1,
                self.text.line_count,
                _block_texts(qdocument.firstBlock(), count - 1),
                restoring=self._restoring,
            )
            first_number, lines = 0, _block_texts(qdocument.firstBlock(), count - 1)
        else:
            self.text.replace(first_number + 1, old_count, lines, restoring=self._restoring)
        display_line = self.text.display_line
        if any(text != display_line(first_number + offset + 1) for offset, text in enumerate(lines)):
            # The bytes read back differently from what was typed (a stand-in for a lone
            # CR left at the end of a line now reads as a CRLF ending): show what the
            # file says, as part of the same undo step, once Qt is done with this change.
            QTimer.singleShot(0, self._show_what_the_file_says)
        self.changed.emit()

    def _show_what_the_file_says(self) -> None:
        cursor = QTextCursor(self.qdocument)
        cursor.joinPreviousEditBlock()
        try:
            block = self.qdocument.firstBlock()
            number = 1
            while block.isValid():
                shown = self.text.display_line(number)
                if block.text() != shown:
                    cursor.setPosition(block.position())
                    cursor.setPosition(_end_of(block), QTextCursor.MoveMode.KeepAnchor)
                    cursor.insertText(shown)
                block = block.next()
                number += 1
        finally:
            cursor.endEditBlock()

    # -- undo and redo ------------------------------------------------------------------------
    def undo(self) -> None:
        """Undo the last edit of either view; lines come back with their bytes."""
        self._restoring = True
        try:
            self.qdocument.undo()
        finally:
            self._restoring = False

    def redo(self) -> None:
        self._restoring = True
        try:
            self.qdocument.redo()
        finally:
            self._restoring = False

    # -- edits from the conf engine -------------------------------------------------------------
    def apply_changes(self, changes: Sequence[LineChange]) -> None:
        """Apply :mod:`sambatune.conf.edits` results as one undoable edit of the text."""
        if not changes:
            return
        cursor = QTextCursor(self.qdocument)
        cursor.beginEditBlock()
        try:
            for change in changes:
                self._replace_lines(cursor, change)
        finally:
            cursor.endEditBlock()

    def _replace_lines(self, cursor: QTextCursor, change: LineChange) -> None:
        qdocument = self.qdocument
        lines = [self.text.display_of(raw) for raw in change.inserted]
        count = qdocument.blockCount()
        if self.text.document.line_count == 0:
            cursor.select(QTextCursor.SelectionType.Document)
            cursor.insertText("\n".join(lines))
            return
        first, removed = change.first, change.removed
        document_end = _end_of(qdocument.lastBlock())
        if removed == 0:
            if first <= count:
                cursor.setPosition(qdocument.findBlockByNumber(first - 1).position())
                cursor.insertText("".join(line + "\n" for line in lines))
            else:
                cursor.setPosition(document_end)
                cursor.insertText("".join("\n" + line for line in lines))
            return
        start = qdocument.findBlockByNumber(first - 1).position()
        if first - 1 + removed < count:
            end = qdocument.findBlockByNumber(first - 1 + removed).position()
            replacement = "".join(line + "\n" for line in lines)
        elif lines:
            end, replacement = document_end, "\n".join(lines)
        elif first > 1:
            start = _end_of(qdocument.findBlockByNumber(first - 2))
            end, replacement = document_end, ""
        else:
            end, replacement = document_end, ""
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(replacement)


def _end_of(block: QTextBlock) -> int:
    """The position just before the block's separator (the end of its text)."""
    return block.position() + block.length() - 1


def _block_texts(first: QTextBlock, last_number: int) -> list[str]:
    texts = []
    block = first
    while block.isValid():
        texts.append(block.text())
        if block.blockNumber() >= last_number:
            break
        block = block.next()
    return texts
