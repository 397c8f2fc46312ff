"""The form view: sections on the left, the chosen section's settings with typed editors.

It edits the same document as the text view. Every change is a minimal edit made
by :mod:`sambatune.conf.edits` (the file's own indentation, spacing, line endings
and spelling of the name kept) and lands in the text as one undoable edit; the
form is rebuilt from the conf engine's effective view after each check.
"""

from __future__ import annotations

import html
import math
import posixpath
from collections.abc import Callable

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QCompleter,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QSplitter,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from sambatune.conf import edits, placement
from sambatune.conf.catalog import Parameter, ParameterCatalog
from sambatune.conf.completion import parameter_names, value_choices
from sambatune.conf.document import SmbConfDocument
from sambatune.conf.edits import LineChange
from sambatune.conf.effective import EffectiveConfig, IncludeReader, Section, Setting
from sambatune.conf.hints import ParameterHints
from sambatune.conf.normalize import enum_form
from sambatune.conf.values import INT_MAX, integer_is_clean, parse_boolean, parse_integer

#: A change to make: given a copy of the document, edit it and say which lines changed.
FormEdit = Callable[[SmbConfDocument], list[LineChange]]
NAME, VALUE, NOTES, REMOVE = range(4)
#: Below this table width the notes move from their column to a grey line under each
#: parameter's name (and, whole, to its tooltip).
NOTES_NEED = 560
#: Where a parameter's note is kept on its name's item.
NOTE_ROLE = Qt.ItemDataRole.UserRole + 1


class NameWithNote(QStyledItemDelegate):
    """Paints a parameter's note under its name when the Notes column is hidden: cut to
    the column's width, in a smaller grey font (the tooltip has it whole)."""

    def __init__(self, table: QTableWidget) -> None:
        super().__init__(table)
        self.table = table

    def note(self, index: QModelIndex | QPersistentModelIndex) -> str:
        """The note shown under the name at ``index`` ("" when the column shows it)."""
        if not self.table.isColumnHidden(NOTES):
            return ""
        return str(index.data(NOTE_ROLE) or "")

    def _small(self, font: QFont) -> QFont:
        small = QFont(font)
        small.setPointSizeF(max(font.pointSizeF() * 0.85, 6.0))
        return small

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        size = super().sizeHint(option, index)
        if self.note(index):
            size.setHeight(size.height() + math.ceil(QFontMetricsF(self._small(option.font)).height()))
        return size

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        note = self.note(index)
        if not note:
            super().paint(painter, option, index)
            return
        view = QStyleOptionViewItem(option)
        self.initStyleOption(view, index)
        name = view.text
        view.text = ""
        widget = self.table
        widget.style().drawControl(QStyle.ControlElement.CE_ItemViewItem, view, painter, widget)
        area = view.rect.adjusted(4, 1, -4, -1)
        line = view.fontMetrics.height()
        painter.save()
        painter.drawText(QRect(area.x(), area.y(), area.width(), line), Qt.AlignmentFlag.AlignVCenter, name)
        small = self._small(view.font)
        painter.setFont(small)
        painter.setPen(QColor(Qt.GlobalColor.darkGray))  # as the Notes column's text
        metrics = QFontMetricsF(small)
        shown = metrics.elidedText(note, Qt.TextElideMode.ElideRight, area.width())
        painter.drawText(
            QRect(area.x(), area.y() + line, area.width(), int(metrics.height()) + 1),
            Qt.AlignmentFlag.AlignVCenter,
            shown,
        )
        painter.restore()


class FormView(QWidget):
    edit_requested = Signal(object)  # a FormEdit
    line_requested = Signal(int)
    #: The user is looking at this parameter's row (for the explanation panel).
    parameter_focused = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("formView")
        self.catalog: ParameterCatalog | None = None
        self.hints: ParameterHints | None = None
        self.view: EffectiveConfig | None = None
        #: Included files as far as they were read (never reads: this is the GUI thread).
        self.read_include: IncludeReader | None = None
        self.label = ""  # the edited document's path label: settings from includes differ
        self.read_only = False
        self.section_name = "global"
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        layout.addWidget(splitter)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 4, 0)
        left_layout.addWidget(QLabel("<b>Sections</b>"))
        self.sections = QListWidget()
        self.sections.setObjectName("formSections")
        self.sections.currentItemChanged.connect(self._section_chosen)
        left_layout.addWidget(self.sections, 1)
        add_row = QHBoxLayout()
        self.new_share = QLineEdit()
        self.new_share.setObjectName("newShareName")
        self.new_share.setPlaceholderText("share name")
        self.new_share.returnPressed.connect(self._add_share)
        add_row.addWidget(self.new_share, 1)
        self.add_share_button = QPushButton("Add share")
        self.add_share_button.clicked.connect(self._add_share)
        add_row.addWidget(self.add_share_button)
        left_layout.addLayout(add_row)
        self.remove_share_button = QPushButton("Remove this share")
        self.remove_share_button.setObjectName("removeShareButton")
        self.remove_share_button.clicked.connect(self._remove_share)
        left_layout.addWidget(self.remove_share_button)
        splitter.addWidget(left)

        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(4, 0, 0, 0)
        self.title = QLabel()
        self.title.setObjectName("formTitle")
        self.title.setWordWrap(True)
        right_layout.addWidget(self.title)
        self.table = QTableWidget(0, 4)
        self.table.setObjectName("formTable")
        self.table.setHorizontalHeaderLabels(["Parameter", "Value", "Notes", ""])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(NAME, QHeaderView.ResizeMode.ResizeToContents)
        # The value gets the room; the notes a share of it, or (when the window is
        # narrow) only the row's tooltip: a notes column squeezed to a few pixels
        # wrapped one letter per line.
        header.setSectionResizeMode(VALUE, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(NOTES, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(REMOVE, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.viewport().installEventFilter(self)
        self.names = NameWithNote(self.table)
        self.table.setItemDelegateForColumn(NAME, self.names)
        self.table.cellDoubleClicked.connect(self._row_double_clicked)
        self.table.cellClicked.connect(self._row_clicked)
        right_layout.addWidget(self.table, 1)
        adder = QHBoxLayout()
        adder.addWidget(QLabel("Add:"))
        self.new_name = QLineEdit()
        self.new_name.setObjectName("newParameterName")
        self.new_name.setPlaceholderText("parameter (type to search)")
        self.name_completer = QCompleter(self)
        self.name_completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.name_completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.new_name.setCompleter(self.name_completer)
        adder.addWidget(self.new_name, 2)
        adder.addWidget(QLabel("="))
        self.new_value = QLineEdit()
        self.new_value.setObjectName("newParameterValue")
        self.new_value.setPlaceholderText("value")
        self.new_value.returnPressed.connect(self._add_parameter)
        adder.addWidget(self.new_value, 2)
        self.add_button = QPushButton("Add to section")
        self.add_button.setObjectName("addParameterButton")
        self.add_button.clicked.connect(self._add_parameter)
        adder.addWidget(self.add_button)
        right_layout.addLayout(adder)
        self.status = QLabel()
        self.status.setObjectName("formStatus")
        self.status.setWordWrap(True)
        right_layout.addWidget(self.status)
        splitter.addWidget(right)
        splitter.setSizes([220, 600])

    # -- data in --------------------------------------------------------------------------
    def set_catalog(self, catalog: ParameterCatalog, hints: ParameterHints) -> None:
        from PySide6.QtCore import QStringListModel

        self.catalog = catalog
        self.hints = hints
        names = [choice.written for choice in parameter_names(catalog)]
        self.name_completer.setModel(QStringListModel(names, self.name_completer))

    def set_read_only(self, read_only: bool) -> None:
        self.read_only = read_only
        for widget in (
            self.new_share,
            self.add_share_button,
            self.remove_share_button,
            self.new_name,
            self.new_value,
            self.add_button,
        ):
            widget.setEnabled(not read_only)

    def show_view(self, view: EffectiveConfig, label: str) -> None:
        """Show what ``view`` (the effective view of the text as it is now) says."""
        self.view = view
        self.label = label
        wanted = view.section(self.section_name)
        self.sections.blockSignals(True)
        self.sections.clear()
        current = None
        for section in view.sections.values():
            item = QListWidgetItem("[global]" if section.is_global else f"[{section.name}]")
            item.setData(Qt.ItemDataRole.UserRole, section.name)
            count = len(section.own_settings())
            item.setToolTip(f"{count} setting(s)")
            self.sections.addItem(item)
            if wanted is not None and section.key == wanted.key:
                current = item
        self.sections.blockSignals(False)
        self.sections.setCurrentItem(current or self.sections.item(0))
        self._fill_table()

    def select_section(self, name: str) -> None:
        for row in range(self.sections.count()):
            item = self.sections.item(row)
            if str(item.data(Qt.ItemDataRole.UserRole)).lower() == name.lower():
                self.sections.setCurrentItem(item)
                return

    def _section_chosen(self, item: QListWidgetItem | None) -> None:
        if item is None:
            return
        self.section_name = str(item.data(Qt.ItemDataRole.UserRole))
        self._fill_table()

    def _section(self) -> Section | None:
        return self.view.section(self.section_name) if self.view is not None else None

    # -- the table ---------------------------------------------------------------------------
    def _fill_table(self) -> None:
        section = self._section()
        table = self.table
        table.setRowCount(0)
        if section is None:
            self.title.setText("")
            return
        is_global = section.is_global
        # A share an included file defines is edited in that file (placement refuses here).
        headers = section.headers
        elsewhere = (
            None if is_global or not headers or any(h.file == self.label for h in headers) else headers[0]
        )
        editable = not self.read_only and elsewhere is None
        self.remove_share_button.setEnabled(not is_global and editable)
        for widget in (self.new_name, self.new_value, self.add_button):
            widget.setEnabled(editable)
        settings = sorted(
            section.own_settings().values(), key=lambda s: (s.file != self.label, s.file, s.line)
        )
        if is_global:
            title = "<b>[global]</b> — server-wide settings, and defaults for every share defined below them."
        elif elsewhere is not None:
            title = (
                f"<b>[{html.escape(section.name)}]</b> — defined in "
                f"<span title='{html.escape(elsewhere.file, quote=True)}'>"
                f"{html.escape(posixpath.basename(elsewhere.file))}</span>, line {elsewhere.line}, which "
                "this file includes: edit it there (open it from Includes above)."
            )
        else:
            title = (
                f"<b>[{html.escape(section.name)}]</b> — what this share sets itself; everything else "
                "comes from [global] or Samba's defaults."
            )
        self.title.setText(title)
        table.setRowCount(len(settings))
        for row, setting in enumerate(settings):
            self._fill_row(row, section, setting)
        table.resizeRowsToContents()

    def _fill_row(self, row: int, section: Section, setting: Setting) -> None:
        table = self.table
        lookup = self.catalog.lookup(setting.written_name) if self.catalog else None
        name_item = QTableWidgetItem(setting.written_name)
        name_item.setData(Qt.ItemDataRole.UserRole, setting.line)
        elsewhere = setting.file != self.label
        tip = f"line {setting.line}" + (f" of {setting.file}" if elsewhere else "")
        name_item.setToolTip(tip + " — double-click to show it in the text")
        table.setItem(row, NAME, name_item)
        note = self.hints.hint(setting.written_name, setting.written_value) if self.hints else ""
        if elsewhere:
            note = f"set in {setting.file}, line {setting.line}" + (f" · {note}" if note else "")
        notes = QTableWidgetItem(note)
        notes.setForeground(Qt.GlobalColor.darkGray)
        if note:
            name_item.setToolTip(f"{note}\n{name_item.toolTip()}")
            name_item.setData(NOTE_ROLE, note)
        table.setItem(row, NOTES, notes)
        editable = not self.read_only and not elsewhere
        parameter = lookup.parameter if lookup is not None else None
        inverse = lookup.inverse if lookup is not None else False
        editor = self._editor(section.name, setting, parameter, inverse, editable)
        editor.setProperty("parameter", setting.written_name)
        editor.installEventFilter(self)
        table.setCellWidget(row, VALUE, editor)
        if editable:
            remove = QToolButton()
            remove.setText("✕")
            remove.setToolTip(
                f"Remove {setting.written_name} from this section (Samba's default applies again)"
            )
            remove.clicked.connect(lambda _checked=False, name=setting.written_name: self._remove(name))
            table.setCellWidget(row, REMOVE, remove)

    def _editor(
        self, section: str, setting: Setting, parameter: Parameter | None, inverse: bool, editable: bool
    ) -> QWidget:
        written = setting.written_value
        name = setting.written_name
        kind = parameter.type if parameter is not None else "string"

        def commit(value: str) -> None:
            if value != written:
                self._set(section, name, value)

        flag = parse_boolean(written)
        if (kind in ("boolean", "boolean-rev") or inverse) and flag is not None:
            box = QCheckBox("yes" if flag else "no")
            box.setChecked(flag)
            box.setEnabled(editable)

            def toggled(on: bool) -> None:
                box.setText("yes" if on else "no")
                commit("yes" if on else "no")

            box.toggled.connect(toggled)
            return box
        if kind == "enum" and parameter is not None:
            combo = QComboBox()
            choices = value_choices(parameter)
            combo.addItems(choices)
            shown = enum_form(parameter, written)
            if shown is None or shown not in choices:
                combo.insertItem(0, written)
                shown = written
            combo.setCurrentText(shown)
            combo.setEnabled(editable)
            combo.activated.connect(
                lambda _index: commit(
                    combo.currentText() if enum_form(parameter, written) != combo.currentText() else written
                )
            )
            return combo
        if kind == "integer" and integer_is_clean(written):
            spin = QSpinBox()
            spin.setRange(-INT_MAX - 1, INT_MAX)
            spin.setValue(parse_integer(written))
            spin.setEnabled(editable)
            spin.editingFinished.connect(
                lambda: commit(str(spin.value()) if spin.value() != parse_integer(written) else written)
            )
            return spin
        field = QLineEdit(written)
        field.setEnabled(editable)
        field.editingFinished.connect(lambda: commit(field.text().strip()))
        return field

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and watched is self.table.viewport():
            self._fit_notes()
            return False
        if event.type() == QEvent.Type.FocusIn:
            name = watched.property("parameter")
            if name:
                self.parameter_focused.emit(str(name))
        return False

    def _fit_notes(self) -> None:
        width = self.table.viewport().width()
        narrow = width < NOTES_NEED
        if narrow != self.table.isColumnHidden(NOTES):
            self.table.setColumnHidden(NOTES, narrow)
            self.table.resizeRowsToContents()
        if not narrow:
            self.table.setColumnWidth(NOTES, int(width * 0.38))

    def _row_clicked(self, row: int, _column: int) -> None:
        item = self.table.item(row, NAME)
        if item is not None:
            self.parameter_focused.emit(item.text())

    def _row_double_clicked(self, row: int, _column: int) -> None:
        item = self.table.item(row, NAME)
        if item is not None:
            self.line_requested.emit(int(item.data(Qt.ItemDataRole.UserRole)))

    # -- edits out ---------------------------------------------------------------------------
    def _set(self, section: str, name: str, value: str) -> None:
        catalog, includes = self.catalog, self.read_include
        self.status.setText("")
        self.edit_requested.emit(
            lambda document: placement.placed_set(document, section, name, value, catalog, includes)
        )

    def _remove(self, name: str) -> None:
        section, catalog, includes = self.section_name, self.catalog, self.read_include
        self.edit_requested.emit(
            lambda document: placement.placed_unset(document, section, name, catalog, includes)
        )

    def _add_parameter(self) -> None:
        name = self.new_name.text().strip()
        if not name:
            self.status.setText("Type the name of the parameter to add.")
            return
        value = self.new_value.text().strip()
        self._set(self.section_name, name, value)
        self.new_name.clear()
        self.new_value.clear()

    def _add_share(self) -> None:
        name = self.new_share.text().strip()
        if not name:
            self.status.setText("Type the name of the new share first.")
            return
        self.section_name = name
        catalog, includes = self.catalog, self.read_include
        self.edit_requested.emit(
            lambda document: placement.placed_add_section(document, name, catalog, includes)
        )
        self.new_share.clear()

    def _remove_share(self) -> None:
        section = self._section()
        if section is None or section.is_global:
            return
        name = section.name
        self.section_name = "global"
        self.edit_requested.emit(lambda document: edits.remove_section(document, name))
        self.status.setText(f"Removed [{name}]. Undo (Ctrl+Z) brings it back.")

    def show_error(self, message: str) -> None:
        self.status.setText(message)
        self.status.setStyleSheet("color: #cf222e;")
