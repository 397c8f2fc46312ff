"""Completion in the text view: parameter names (synonyms too), then values after ``=``.

Names pop up after two letters at the start of a setting; the list shows what a
synonym stands for (``writable → read only (inverted)``) and inserts the name as
chosen. After ``name =`` the values of a yes/no or enum parameter are offered.
Ctrl+Space asks for the list anywhere it makes sense.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QAbstractItemView, QCompleter

from sambatune.conf.catalog import ParameterCatalog
from sambatune.conf.completion import parameter_names, value_choices
from sambatune.conf.document import CONTINUATION
from sambatune.ui.editor.text_edit import ConfTextEdit

#: The model role holding the text to insert (the popup shows the display role).
INSERT_ROLE = Qt.ItemDataRole.UserRole + 1
NAME, VALUE = "name", "value"
MIN_TYPED = 2
MAX_SHOWN = 60


class ConfCompletion(QObject):
    #: The highlighted choice changed: a parameter name, for the explanation panel.
    highlighted = Signal(str)

    def __init__(self, editor: ConfTextEdit) -> None:
        super().__init__(editor)
        self.editor = editor
        self.catalog: ParameterCatalog | None = None
        self.completer = QCompleter(self)
        self.completer.setObjectName("confCompleter")
        self.completer.setWidget(editor)
        # We rank the matches ourselves (names that start with what was typed first).
        self.completer.setCompletionMode(QCompleter.CompletionMode.UnfilteredPopupCompletion)
        self.completer.setCompletionRole(INSERT_ROLE)
        self.completer.setMaxVisibleItems(12)
        self.completer.activated[str].connect(self.insert)  # type: ignore[index]
        self.completer.highlighted[str].connect(self._highlighted)  # type: ignore[index]
        self.matches = QStandardItemModel(self)
        self.completer.setModel(self.matches)
        self.names: list[tuple[str, str, str]] = []  # (inserted, shown, tooltip)
        self.mode = NAME
        self._word_start = 0
        editor.after_key = self.after_key
        editor.popup_visible = lambda: self.popup_visible

    def _popup(self) -> QAbstractItemView:
        popup = self.completer.popup()
        assert popup is not None  # QCompleter makes its list view when created
        return popup

    @property
    def popup_visible(self) -> bool:
        return self._popup().isVisible()

    def set_catalog(self, catalog: ParameterCatalog) -> None:
        self.catalog = catalog
        self.names = []
        for choice in parameter_names(catalog):
            where = "[global] only" if choice.scope == "global" else "a share or [global]"
            self.names.append((choice.written, choice.label, f"{choice.canonical}: {where}"))

    # -- when to offer ----------------------------------------------------------------------
    def after_key(self, event: QKeyEvent) -> None:
        forced = event.key() == Qt.Key.Key_Space and bool(
            event.modifiers() & Qt.KeyboardModifier.ControlModifier
        )
        typed = event.text()
        if not forced and not (typed and typed.isprintable()) and (event.key() != Qt.Key.Key_Backspace):
            if event.key() not in (Qt.Key.Key_Shift, Qt.Key.Key_Control, Qt.Key.Key_Alt):
                self.hide()
            return
        self.offer(forced=forced, typed=typed)

    def offer(self, *, forced: bool = False, typed: str = "") -> None:
        editor = self.editor
        if self.catalog is None or editor.isReadOnly():
            return
        cursor = editor.textCursor()
        if cursor.hasSelection():
            self.hide()
            return
        block = cursor.block()
        column = cursor.positionInBlock()
        before = block.text()[:column]
        stripped = before.lstrip(" \t")
        document = editor.buffer.text.document
        number = block.blockNumber() + 1
        if stripped[:1] in ("#", ";", "[") or (
            number <= document.line_count and document.kind(number) == CONTINUATION
        ):
            self.hide()
            return
        if "=" in before:
            name, _, value_part = before.partition("=")
            prefix = value_part.lstrip(" \t")
            choices = self._values(name.strip(" \t"))
            wanted = forced or bool(prefix) or typed in ("=", " ")
            self.mode = VALUE
        else:
            prefix = stripped
            choices = self.names
            wanted = forced or len(prefix) >= MIN_TYPED
            self.mode = NAME
        if not wanted or not choices:
            self.hide()
            return
        ranked = _ranked(choices, prefix)
        if not ranked or (len(ranked) == 1 and not forced and ranked[0][0].lower() == prefix.lower()):
            self.hide()
            return
        self._word_start = column - len(prefix)
        self.matches.clear()
        for inserted, shown, tip in ranked[:MAX_SHOWN]:
            item = QStandardItem(shown)
            item.setData(inserted, INSERT_ROLE)
            if tip:
                item.setToolTip(tip)
            self.matches.appendRow(item)
        popup = self._popup()
        popup.setCurrentIndex(self.completer.completionModel().index(0, 0))
        rect = editor.cursorRect()
        rect.moveLeft(rect.left() - editor.fontMetrics().horizontalAdvance(prefix))
        scrollbar = popup.verticalScrollBar().sizeHint().width()
        rect.setWidth(min(520, popup.sizeHintForColumn(0) + scrollbar + 12))
        self.completer.complete(rect)
        self._highlighted(ranked[0][0])

    def _values(self, name: str) -> list[tuple[str, str, str]]:
        assert self.catalog is not None
        lookup = self.catalog.lookup(name)
        if lookup is None:
            return []
        parameter = lookup.parameter
        choices = ["yes", "no"] if lookup.inverse else value_choices(parameter)
        default = (parameter.default or "").lower()
        return [
            (value, f"{value}   (default)" if value.lower() == default and not lookup.inverse else value, "")
            for value in choices
        ]

    def hide(self) -> None:
        if self.popup_visible:
            self._popup().hide()

    def _highlighted(self, text: str) -> None:
        if self.mode == NAME:
            self.highlighted.emit(text)

    # -- inserting --------------------------------------------------------------------------
    def insert(self, completion: str) -> None:
        editor = self.editor
        cursor = editor.textCursor()
        block = cursor.block()
        end = cursor.position()
        cursor.setPosition(block.position() + self._word_start)
        cursor.setPosition(end, cursor.MoveMode.KeepAnchor)
        rest = block.text()[end - block.position() :]
        text = completion
        follow_with_values = False
        if self.mode == NAME and "=" not in rest:
            text += " = "
            follow_with_values = True
        cursor.insertText(text)
        editor.setTextCursor(cursor)
        if follow_with_values:
            QTimer.singleShot(0, lambda: self.offer(typed=" "))


def _squeezed(text: str) -> str:
    return text.lower().replace(" ", "").replace("\t", "")


def _ranked(choices: list[tuple[str, str, str]], typed: str) -> list[tuple[str, str, str]]:
    """Choices matching ``typed``: names starting with it, then a word starting with it,
    then containing it (case and blanks ignored, as Samba ignores them)."""
    wanted = _squeezed(typed)
    if not wanted:
        return list(choices)
    ranked = []
    lowered = typed.lower().strip()
    for choice in choices:
        name = choice[0]
        squeezed = _squeezed(name)
        if squeezed.startswith(wanted):
            rank = 0
        elif any(word.startswith(lowered) for word in name.lower().split()):
            rank = 1
        elif wanted in squeezed:
            rank = 2
        else:
            continue
        ranked.append((rank, choice))
    # Canonical names before synonyms of the same rank (a synonym's label has an arrow).
    ranked.sort(key=lambda pair: (pair[0], "→" in pair[1][1]))
    return [choice for _, choice in ranked]
