"""One smb.conf in the editor: text and form views, findings, explanations, save and apply.

The page reads its file off the GUI thread (a local file, or a server's config
over the session's transport), checks it after every pause in typing, and either
saves it (local files, atomically) or applies it to the server through the safe
apply dialog, with the bytes read at opening as the original so that a change
someone else made meanwhile is caught.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence, QResizeEvent, QTextCursor
from PySide6.QtWidgets import (
    QButtonGroup,
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from sambatune.cancellation import CancelToken
from sambatune.conf.catalog import ParameterCatalog
from sambatune.conf.document import PARAMETER, SECTION
from sambatune.conf.effective import IncludeLink
from sambatune.conf.hints import ParameterHints
from sambatune.errors import InvalidInput, SambaTuneError
from sambatune.ui.editor.apply_flow import ServerApplyFlow
from sambatune.ui.editor.buffer import ConfBuffer
from sambatune.ui.editor.completion import ConfCompletion
from sambatune.ui.editor.explanation_panel import ExplanationPanel
from sambatune.ui.editor.find_bar import FindBar
from sambatune.ui.editor.findings_list import FindingsList
from sambatune.ui.editor.form_view import FormEdit, FormView
from sambatune.ui.editor.lint_runner import LintResult, LintRunner
from sambatune.ui.editor.sources import ConfSource, IncludedFile, Opened
from sambatune.ui.editor.text_edit import ConfTextEdit
from sambatune.ui.tasks import Task, TaskRunner

TEXT_VIEW, FORM_VIEW = 0, 1


def _fit_path(path: str, room: int, width: Any) -> str:
    """``path`` in ``room`` pixels: the file name whole, the folders cut from the left."""
    if width(path) <= room:
        return path
    folder, _, name = path.rpartition("/")
    kept = folder
    while kept and width(f"…{kept}/{name}") > room:
        kept = kept[1:]
    return f"…{kept}/{name}" if kept else f"…/{name}"


class ConfEditorPage(QWidget):
    #: Unsaved edits appeared or went away.
    dirty_changed = Signal(bool)
    #: A file was loaded (first time or reload).
    opened = Signal()
    #: A change was applied to the server (the history has a new entry).
    applied = Signal(object)
    #: An error for the message bar.
    failed = Signal(object)
    #: The title (file name and dirty mark) changed.
    title_changed = Signal(str)

    def __init__(
        self,
        source: ConfSource,
        runner: TaskRunner,
        *,
        session: Any = None,
        read_only: bool = False,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("confEditorPage")
        self.source = source
        self.runner = runner
        self.session = session
        self.read_only = read_only
        self.catalog: ParameterCatalog | None = None
        self.loaded = False
        self.task: Task | None = None
        self.windows: list[QWidget] = []
        self._saving = False
        #: A save asked for while another was being written: (path or None,), run next.
        self._queued_save: tuple[str | None] | None = None
        self._tasks: list[Task] = []
        #: What changed the live file while the page was hidden (checked when shown).
        self._live_changed_by: str | None = None
        self._live_check: Task | None = None
        self.follow_box: QMessageBox | None = None
        self.buffer = ConfBuffer(self)
        self._build()
        self._connect()

    # -- building -----------------------------------------------------------------------------
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 4)
        layout.setSpacing(4)

        top = QHBoxLayout()
        self.title = QLabel()
        self.title.setObjectName("editorTitle")
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # A long path must not widen the window: the label shrinks and the path is cut
        # in the middle (the whole of it is in the tooltip).
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.title.setMinimumWidth(120)
        top.addWidget(self.title, 1)
        self.view_buttons = QButtonGroup(self)
        for index, name in ((TEXT_VIEW, "Text"), (FORM_VIEW, "Form")):
            button = QPushButton(name)
            button.setObjectName(f"{name.lower()}ViewButton")
            button.setCheckable(True)
            button.setChecked(index == TEXT_VIEW)
            self.view_buttons.addButton(button, index)
            top.addWidget(button)
        self.view_buttons.idClicked.connect(self.show_view)
        top.addSpacing(12)
        self.reload_button = QPushButton("Reload")
        self.reload_button.setToolTip("Read the file again (unsaved edits are lost after asking)")
        self.reload_button.clicked.connect(self.reload)
        top.addWidget(self.reload_button)
        self.save_button = QPushButton("Save")
        self.save_button.setObjectName("saveButton")
        self.save_button.clicked.connect(self.save)
        top.addWidget(self.save_button)
        self.save_as_button = QPushButton("Save a copy…" if self.source.can_apply else "Save as…")
        self.save_as_button.setObjectName("saveAsButton")
        self.save_as_button.clicked.connect(self.ask_save_as)
        top.addWidget(self.save_as_button)
        self.apply_button = QPushButton("Apply to server…")
        self.apply_button.setObjectName("applyToServerButton")
        self.apply_button.setToolTip(
            "Review the changes, then validate, back up, swap, reload and check, with automatic rollback"
        )
        self.apply_button.clicked.connect(self.apply_to_server)
        top.addWidget(self.apply_button)
        layout.addLayout(top)

        self.loading = QWidget()
        loading_layout = QHBoxLayout(self.loading)
        loading_layout.setContentsMargins(0, 0, 0, 0)
        self.loading_label = QLabel()
        self.loading_label.setObjectName("editorLoading")
        # It names the file: a long path wraps instead of widening the window for good.
        self.loading_label.setWordWrap(True)
        loading_layout.addWidget(self.loading_label, 1)
        self.loading_bar = QProgressBar()
        self.loading_bar.setRange(0, 0)
        self.loading_bar.setMaximumWidth(240)
        loading_layout.addWidget(self.loading_bar)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel_loading)
        loading_layout.addWidget(self.cancel_button)
        loading_layout.addStretch(1)
        self.loading.hide()
        layout.addWidget(self.loading)

        self.includes = QLabel()
        self.includes.setObjectName("includesBar")
        self.includes.setWordWrap(True)
        self.includes.linkActivated.connect(self._open_include)
        self.includes.hide()
        layout.addWidget(self.includes)

        self.editor = ConfTextEdit(self.buffer)
        self.editor.setReadOnly(self.read_only)
        self.completion = ConfCompletion(self.editor)
        self.form = FormView()
        self.form.set_read_only(self.read_only)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.editor)
        self.stack.addWidget(self.form)
        self.panel = ExplanationPanel()
        self.panel.set_man_page_owner(
            "this computer's" if self.source.where == "this computer" else "the server's"
        )
        self.find_bar = FindBar(self.editor)
        self.find_bar.hide()
        editor_column = QWidget()
        column_layout = QVBoxLayout(editor_column)
        column_layout.setContentsMargins(0, 0, 0, 0)
        column_layout.setSpacing(2)
        column_layout.addWidget(self.stack, 1)
        column_layout.addWidget(self.find_bar)
        self.sides = QSplitter(Qt.Orientation.Horizontal)
        self.sides.addWidget(editor_column)
        self.sides.addWidget(self.panel)
        self.sides.setStretchFactor(0, 3)
        self.sides.setStretchFactor(1, 2)
        self.sides.setSizes([560, 340])
        self.findings = FindingsList()
        self.rows = QSplitter(Qt.Orientation.Vertical)
        self.rows.addWidget(self.sides)
        self.rows.addWidget(self.findings)
        self.rows.setStretchFactor(0, 4)
        self.rows.setStretchFactor(1, 1)
        self.rows.setSizes([520, 130])
        layout.addWidget(self.rows, 1)

        self.status = QLabel()
        self.status.setObjectName("editorStatus")
        self.status.setStyleSheet("color: #57606a;")
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        layout.addWidget(self.status)

        self.lint = LintRunner(self.buffer, self.runner, self)
        self.apply_flow = ServerApplyFlow(self)
        self.lint.read_include = self.source.include_reader if not self.read_only else (lambda: None)
        self._include_reader: Any = None
        self.form.read_include = self._already_read
        self._make_actions()
        self.update_buttons()
        self._update_title()

    def _make_actions(self) -> None:
        def action(text: str, shortcut: Any, slot: Any) -> QAction:
            made = QAction(text, self)
            made.setShortcut(shortcut)
            made.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            made.triggered.connect(slot)
            self.addAction(made)
            return made

        self.find_action = action("Find…", QKeySequence.StandardKey.Find, self.open_find)
        self.find_next_action = action(
            "Find next", QKeySequence.StandardKey.FindNext, self.find_bar.find_next
        )
        self.find_previous_action = action(
            "Find previous", QKeySequence.StandardKey.FindPrevious, self.find_bar.find_previous
        )
        self.goto_action = action("Go to line…", QKeySequence("Ctrl+G"), self.ask_go_to_line)
        self.save_action = action("Save", QKeySequence.StandardKey.Save, self.save)
        self.save_as_action = action("Save as…", QKeySequence.StandardKey.SaveAs, self.ask_save_as)
        # The text view and form fields handle Ctrl+Z themselves; elsewhere on the page
        # (the form's table, checkboxes) these undo the document.
        self.undo_action = action("Undo", QKeySequence.StandardKey.Undo, self.buffer.undo)
        self.redo_action = action("Redo", QKeySequence.StandardKey.Redo, self.buffer.redo)

    def _connect(self) -> None:
        buffer = self.buffer
        buffer.changed.connect(self._text_changed)
        buffer.dirty_changed.connect(self._dirty_changed)
        self.editor.line_changed.connect(self._cursor_line_changed)
        self.editor.cursorPositionChanged.connect(self._update_status)
        self.lint.finished.connect(self._linted)
        self.lint.failed.connect(self.failed.emit)
        self.form.edit_requested.connect(self.apply_form_edit)
        self.form.line_requested.connect(self.go_to_line)
        self.findings.line_requested.connect(self.go_to_line)
        self.panel.man_page_requested.connect(self._read_man_page)
        self.completion.highlighted.connect(self.panel.show_parameter)
        self.form.parameter_focused.connect(self.panel.show_parameter)
        self._explain_timer = QTimer(self)
        self._explain_timer.setSingleShot(True)
        self._explain_timer.setInterval(120)
        self._explain_timer.timeout.connect(self._explain_cursor)

    # -- state shown ---------------------------------------------------------------------------
    @property
    def dirty(self) -> bool:
        return self.buffer.dirty

    def tab_title(self) -> str:
        return "smb.conf" + (" •" if self.dirty else "")

    def _update_title(self) -> None:
        source = self.source
        mark = "  ● unsaved changes" if self.dirty else ""
        read_only = "  (read-only)" if self.read_only else ""
        tail = f" on {source.where}{read_only}{mark}"
        metrics = self.title.fontMetrics()
        room = max(80, self.title.width() - metrics.horizontalAdvance(tail) - 24)
        path = _fit_path(source.title, room, metrics.horizontalAdvance)
        mark_html = "  <span style='color:#9a6700'>● unsaved changes</span>" if self.dirty else ""
        self.title.setText(
            f"<b>{html.escape(path)}</b> <span style='color:#57606a'>on "
            f"{html.escape(source.where)}{html.escape(read_only)}</span>{mark_html}"
        )
        self.title.setToolTip(f"{source.title} on {source.where}")
        self.title_changed.emit(self.tab_title())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._update_title()

    def update_buttons(self) -> None:
        source = self.source
        ready = self.loaded
        self.save_button.setVisible(source.can_save and not self.read_only)
        self.save_button.setEnabled(ready and self.dirty)
        self.save_as_button.setEnabled(ready)
        self.apply_button.setVisible(source.can_apply and not self.read_only)
        # While the live file is read again after a change elsewhere, Apply would start
        # from bytes that may be gone.
        self.apply_button.setEnabled(
            ready and self.session is not None and self._live_check is None and self.follow_box is None
        )
        self.reload_button.setEnabled(not isinstance(source, IncludedFile))

    def _dirty_changed(self, dirty: bool) -> None:
        self._update_title()
        self.update_buttons()
        self.dirty_changed.emit(dirty)

    def _update_status(self) -> None:
        if not self.loaded:
            self.status.setText("")
            return
        cursor = self.editor.textCursor()
        text = self.buffer.text
        document = text.document
        parts = [
            f"Line {cursor.blockNumber() + 1}, column {cursor.positionInBlock() + 1}",
            f"{text.line_count:,} lines",
            "CRLF" if text.default_eol == "\r\n" else "LF",
        ]
        if not document.final_newline and document.line_count:
            parts.append("no newline at the end")
        if not document.utf8:
            parts.append("some lines Latin-1")
        if self.catalog is not None:
            where = "this computer" if self.source.where == "this computer" else "the server"
            parts.append(self.catalog.origin_text(where))
        self.status.setText(" · ".join(parts))

    # -- background work ------------------------------------------------------------------------
    def start_task(self, work: Any, **callbacks: Any) -> Task:
        """Start work for this page; :meth:`stop_tasks` cancels what is still running."""
        task = self.runner.start(work, **callbacks)
        self._tasks = [t for t in self._tasks if t.running] + [task]
        return task

    def stop_tasks(self) -> None:
        """Cancel the page's background work (its window is closing)."""
        for task in self._tasks:
            task.cancel()
        self.lint.stop()

    # -- opening ---------------------------------------------------------------------------------
    def open(self) -> None:
        """Read the file (off the GUI thread) and show it."""
        source = self.source
        self._show_loading(f"Reading {source.title} on {source.where}…")

        def work(report: Any, cancel: CancelToken) -> Opened:
            return source.open(cancel)

        self.task = self.start_task(
            work,
            name=f"Opening {source.title}",
            on_done=self._opened,
            on_failed=self._open_failed,
            on_cancelled=lambda: self._show_loading(None),
        )

    def _show_loading(self, text: str | None) -> None:
        self.loading.setVisible(text is not None)
        self.loading_label.setText(text or "")

    def cancel_loading(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def _opened(self, opened: Opened) -> None:
        self.task = None
        self._show_loading(None)
        self._include_reader = None
        self.lint.read_include = self._reader
        self.buffer.load(opened.data, self.source.path)
        # Replacing the document's text leaves the cursor after the last line: a file opens
        # at its top, with nothing explained until the admin moves to a line.
        self.editor.moveCursor(QTextCursor.MoveOperation.Start)
        self.loaded = True
        self.clear_testparm_errors()
        self.set_catalog(opened.catalog)
        self.update_buttons()
        self._update_title()
        self._cursor_line_changed(self.editor.current_line())
        self.opened.emit()
        if not opened.catalog_is_final:
            self._fetch_live_catalog()
        if self._live_changed_by is not None and self.isVisible():
            self._check_live()  # changed while it was being read: read it again

    def _open_failed(self, error: SambaTuneError) -> None:
        self.task = None
        self._show_loading(None)
        self.loading_label.setText(error.message)
        self.status.setText(f"Could not open: {error.message}")
        self.failed.emit(error)

    def _reader(self) -> Any:
        """One include reader per opening: each included file is read once."""
        if self.read_only:
            return None
        if self._include_reader is None:
            self._include_reader = self.source.include_reader()
        return self._include_reader

    def _already_read(self, path: str) -> Any:
        """An include as the lint run read it; form edits on the GUI thread read nothing."""
        if self._include_reader is None:
            return "not-followed", "not read yet"
        return self._include_reader.already_read(path)

    def forget(self) -> None:
        """Drop the text (the connection it came from is going away)."""
        self.loaded = False
        self._live_changed_by = None
        self.buffer.load(b"", None)
        self.editor.set_markers({})
        self.findings.show_findings([])
        self.includes.hide()
        self.update_buttons()
        self._update_title()
        self._update_status()

    # -- following the live file ---------------------------------------------------------------
    def follow_live(self, path: str, what: str) -> None:
        """``what`` (an apply, a restore, the wizard) may have changed the live file at ``path``.

        The page reads it again when it is shown. Without unsaved edits it shows the live
        file; with them it asks: keep the edits, now measured against the live file (the
        next Apply's review and its check that nobody changed the file start from what is
        really there), or load the live file and drop them.
        """
        if not self.source.can_apply or self.read_only or path != self.source.path:
            return
        if not self.loaded and self.task is None:
            return  # nothing shown yet: the first opening reads the live file anyway
        self._live_changed_by = what
        if self.isVisible():
            self._check_live()

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        if self._live_changed_by is not None:
            self._check_live()

    def _check_live(self) -> None:
        what = self._live_changed_by
        # Still opening: _opened comes back here. Already reading: finished() does.
        # Asking about the last change: the answer does.
        if (
            what is None
            or self.task is not None
            or self._live_check is not None
            or self.follow_box is not None
            or not self.loaded
        ):
            return
        self._live_changed_by = None
        source = self.source
        read = getattr(source, "read", None)
        if read is None:
            return

        base, mine = self.buffer.baseline, self.buffer.render()

        def work(report: Any, cancel: CancelToken) -> tuple[bytes, bytes, bytes | None]:
            from sambatune.merge import merge3

            live = bytes(read(cancel))
            # The unsaved edits, put on the live file (None when they clash with its change).
            merged = merge3(base, mine, live) if mine != base and live != base else None
            return live, mine, merged

        def finished() -> None:
            self._live_check = None
            self.update_buttons()
            if self._live_changed_by is not None:  # changed again meanwhile
                self._check_live()

        self._live_check = self.start_task(
            work,
            name=f"Reading {source.title} again",
            on_done=lambda result: self._live_read(*result, what=what),
            on_failed=self.failed.emit,
            on_finished=finished,
        )
        self.update_buttons()

    def _live_read(self, live: bytes, mine: bytes, merged: bytes | None, *, what: str) -> None:
        if live == self.buffer.baseline:
            return  # the editor already starts from the live file (its own apply, a refusal)
        if not self.dirty:
            self._show_live(live)
            self.status.setText(f"Reloaded: {what} changed {self.source.title}; this is the live file now.")
            return
        if self.buffer.render() != mine:
            # Typed on while the file was read: read and merge again, in the worker (a
            # merge of a large file is no work for the GUI thread). finished() does it.
            self._live_changed_by = what
            return
        who = f"{what[:1].upper()}{what[1:]}"
        if merged is not None:
            keeping = (
                "Keep my edits: they are put on the live file (they touch other lines "
                "than that change); Apply's review shows just them."
            )
        else:
            keeping = (
                "Keep my edits: your edits touch lines that change touched too, so "
                "your text stays as it is; Apply compares it with the live file, and "
                "its review shows what your text would undo of that change."
            )
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "smb.conf changed on the server",
            f"{who} changed {self.source.title} on {self.source.where}. Your unsaved edits "
            f"were made on the version before it.\n\n{keeping}\n\n"
            "Load the live file: your edits are dropped.",
            QMessageBox.StandardButton.NoButton,
            self,
        )
        box.setObjectName("liveChangedBox")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        keep = box.addButton("Keep my edits", QMessageBox.ButtonRole.AcceptRole)
        load = box.addButton("Load the live file", QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(keep)
        box.setEscapeButton(keep)
        self.follow_box = box

        def answered(_result: int) -> None:
            self.follow_box = None
            if box.clickedButton() is load:
                self._show_live(live)
                self.status.setText(f"Loaded the live file ({what} changed it); your edits were dropped.")
            elif merged is not None and self.buffer.render() == mine:
                self._show_live(merged)
                self.buffer.mark_saved(live)  # what the server has; the edits stay unsaved
                self.status.setText(f"Your edits are kept, on the live file as {what} left it.")
            else:
                self.buffer.mark_saved(live)
                self.clear_testparm_errors()
                self.status.setText(
                    f"Your edits are kept as you wrote them. {who} changed the "
                    "live file: Apply compares with it now."
                )
            self._update_title()
            self.update_buttons()
            if self._live_changed_by is not None:  # changed again while asking
                self._check_live()

        box.finished.connect(answered)
        self.update_buttons()
        box.open()

    def _show_live(self, live: bytes) -> None:
        """Show the live file in place of the text (near the line the cursor was on)."""
        line = self.editor.current_line()
        self._include_reader = None  # the includes are read again too
        self.buffer.load(live, self.source.path)
        self.clear_testparm_errors()
        self.lint.run_now()
        self.update_buttons()
        self._update_title()
        self.editor.go_to_line(min(line, self.buffer.text.line_count))

    def reload(self) -> None:
        if self.dirty:
            self._ask_discard("Reload the file and lose your unsaved changes?", self.open)
        else:
            self.open()

    def _ask_discard(self, question: str, then: Any) -> None:
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Unsaved changes",
            question,
            QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setObjectName("discardChangesBox")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def answered(button: int) -> None:
            if button == QMessageBox.StandardButton.Discard:
                then()

        box.finished.connect(answered)
        box.open()

    def confirm_close(self, then: Any, why: str = "") -> None:
        """Run ``then`` now when nothing is unsaved, else after the user agrees to lose it.

        ``why`` says what asks for it, as a sentence before the question."""
        if not self.dirty:
            then()
            return
        what = "apply them to the server" if self.source.can_apply else "save them"
        self._ask_discard(
            f"{why + ' ' if why else ''}{self.source.title} has unsaved changes. "
            f"Discard them? (Cancel, then {what} to keep them.)",
            then,
        )

    # -- the catalog ---------------------------------------------------------------------------
    def set_catalog(self, catalog: ParameterCatalog) -> None:
        self.catalog = catalog
        hints = ParameterHints(catalog)
        self.editor.hints = hints
        self.editor.viewport().update()
        self.completion.set_catalog(catalog)
        self.panel.set_catalog(catalog)
        self.form.set_catalog(catalog, hints)
        self.lint.catalog = catalog
        self.lint.run_now()
        self._update_status()

    def _fetch_live_catalog(self) -> None:
        source = self.source
        self.status.setText(self.status.text() + " · reading the parameter list from testparm…")

        def work(report: Any, cancel: CancelToken) -> ParameterCatalog | None:
            return source.live_catalog(cancel)

        def done(catalog: ParameterCatalog | None) -> None:
            if catalog is not None:
                self.set_catalog(catalog)
            else:
                self._update_status()

        def failed(error: SambaTuneError) -> None:
            # The bundled catalog keeps answering; say why it is not the server's own.
            self._update_status()
            self.status.setText(self.status.text() + f" · {error.message}")

        self.start_task(work, name="Reading the parameter list", on_done=done, on_failed=failed)

    # -- following the text --------------------------------------------------------------------
    def _text_changed(self) -> None:
        self._explain_timer.start()
        self._update_status()

    def _cursor_line_changed(self, _line: int) -> None:
        self._explain_timer.start()

    def _explain_cursor(self) -> None:
        # In the form view the row the admin picked is explained, not the hidden text
        # cursor that form edits move about.
        if not self.loaded or self.stack.currentIndex() == FORM_VIEW:
            return
        line = self.editor.current_line()
        document = self.buffer.document
        entry = document.entry_at(line) if line <= document.line_count else None
        if entry is None:
            self.panel.show_nothing()
        elif entry.kind == PARAMETER:
            self.panel.show_parameter(entry.name)
        elif entry.kind == SECTION:
            result = self.lint.current
            self.panel.show_section(
                entry.name, result.settings_in(entry.name) if result is not None else None
            )
        else:
            self.panel.show_nothing()

    def _linted(self, result: LintResult) -> None:
        label = self.buffer.document.path or "<document>"
        self.editor.set_markers(result.markers)
        self.findings.show_findings(result.findings)
        self._show_includes(result.includes)
        if self.stack.currentIndex() == FORM_VIEW:
            if result.view is not None:
                self.form.show_view(result.view, label)
            else:
                self.lint.run_now()  # checked while the text view showed: no view built

    def _show_includes(self, links: list[IncludeLink]) -> None:
        if not links:
            self.includes.hide()
            return
        parts = []
        for number, link in enumerate(links):
            path = html.escape(link.path)
            if link.status == "followed" and link.document is not None:
                parts.append(f"<a href='{number}'>{path}</a>")
            else:
                parts.append(f"{path} <span style='color:#9a6700'>({html.escape(link.status)})</span>")
        self._include_links = links
        self.includes.setText(
            "Includes: " + " · ".join(parts) + " <span style='color:#57606a'>— click to open read-only</span>"
        )
        self.includes.show()

    def _open_include(self, target: str) -> None:
        from sambatune.ui.editor.file_window import ConfFileWindow

        link = self._include_links[int(target)]
        if link.document is None or self.catalog is None:
            return
        source = IncludedFile(
            link.path, link.document.render(), self.source.where, self.catalog, self.source.man_page_entry
        )
        window = ConfFileWindow(source, read_only=True, parent_page=self)
        self.windows.append(window)
        window.show()

    # -- views -----------------------------------------------------------------------------
    def show_view(self, index: int) -> None:
        self.view_buttons.button(index).setChecked(True)
        self.stack.setCurrentIndex(index)
        self.lint.want_view = index == FORM_VIEW
        if index == FORM_VIEW:
            result = self.lint.current
            if result is not None and result.view is not None:
                self.form.show_view(result.view, self.buffer.document.path or "<document>")
            else:
                self.lint.run_now()
            self.find_bar.hide()
        else:
            self._explain_cursor()

    def go_to_line(self, line: int) -> None:
        self.show_view(TEXT_VIEW)
        self.editor.go_to_line(line)

    def open_find(self) -> None:
        self.show_view(TEXT_VIEW)
        self.find_bar.open_bar()

    def ask_go_to_line(self) -> None:
        dialog = QInputDialog(self)
        dialog.setObjectName("goToLineDialog")
        dialog.setWindowTitle("Go to line")
        dialog.setLabelText(f"Line (1 to {self.buffer.text.line_count}):")
        dialog.setInputMode(QInputDialog.InputMode.IntInput)
        dialog.setIntRange(1, self.buffer.text.line_count)
        dialog.setIntValue(self.editor.current_line())
        dialog.intValueSelected.connect(self.go_to_line)
        dialog.open()

    # -- form edits ----------------------------------------------------------------------------
    def apply_form_edit(self, edit: FormEdit) -> None:
        """Make a conf-engine edit on a copy, then put it in the text as one undoable edit."""
        if self.read_only or not self.loaded:
            return
        copy = self.buffer.document.copy()
        try:
            changes = edit(copy)
        except InvalidInput as error:
            self.form.show_error(error.message)
            return
        self.buffer.apply_changes(changes)
        self.lint.run_now()

    # -- saving (local files) --------------------------------------------------------------------
    def save(self) -> None:
        if not self.loaded or not self.source.can_save or self.read_only:
            return
        self._save_to(None)

    def ask_save_as(self) -> None:
        if not self.loaded:
            return
        dialog = QFileDialog(self, "Save smb.conf as")
        dialog.setObjectName("saveAsDialog")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.fileSelected.connect(self.save_as)
        dialog.open()

    def save_as(self, path: str) -> None:
        """Save the text to ``path`` (a local file). A local file then continues as that file."""
        if path:
            self._save_to(path)

    def _save_to(self, path: str | None) -> None:
        from sambatune.ui.editor.sources import LocalFile

        if self._saving:
            # Save right after Save as… must go to the new file, which the page only
            # adopts once that write is done: wait for it.
            self._queued_save = (path,)
            return
        data = self.buffer.render()
        target = LocalFile(path) if path else self.source
        if not isinstance(target, LocalFile):
            return
        becomes_source = path is None or isinstance(self.source, LocalFile)

        def work(report: Any, cancel: CancelToken) -> str:
            return target.save(data)

        def done(saved: str) -> None:
            if becomes_source:
                if path is not None:
                    self.source = LocalFile(saved)
                    self.buffer.document.path = saved
                self.buffer.mark_saved(data)
            self.status.setText(f"Saved {saved}.")
            self._update_title()
            self.update_buttons()

        def finished() -> None:
            self._saving = False
            queued, self._queued_save = self._queued_save, None
            if queued is not None:
                self._save_to(queued[0])

        self._saving = True
        self.start_task(work, name="Saving", on_done=done, on_failed=self.failed.emit, on_finished=finished)

    # -- applying (server configs) ---------------------------------------------------------------
    def apply_to_server(self) -> None:
        if self.loaded and self.source.can_apply and self.session is not None:
            self.apply_flow.start()

    @property
    def apply_dialog(self) -> Any:
        """The review-and-apply dialog of the last Apply to server… (None before)."""
        return self.apply_flow.dialog

    def clear_testparm_errors(self) -> None:
        self.editor.set_anchored([])
        self.findings.show_testparm([])

    # -- the man page --------------------------------------------------------------------------
    def _read_man_page(self, name: str) -> None:
        source = self.source

        def work(report: Any, cancel: CancelToken) -> str | None:
            return source.man_page_entry(name)

        self.start_task(
            work,
            name="Reading the man page",
            on_done=lambda text: self.panel.show_man_page(name, text),
            on_failed=lambda error: self.panel.show_man_page_failed(name, error.message),
        )
