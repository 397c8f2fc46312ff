"""The smb.conf editor on local files, driven like a user: type, complete, form, undo, save."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QPainter, QPixmap, QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from sambatune.ui.editor.file_window import ConfFileWindow
from sambatune.ui.editor.form_view import NAME, NOTES, NOTES_NEED, VALUE, FormView
from sambatune.ui.editor.page import FORM_VIEW, TEXT_VIEW, ConfEditorPage
from sambatune.ui.editor.sources import LocalFile
from sambatune.ui.main_window import MainWindow
from screenshots import Screenshot
from table_items import item_at

# Every test opens a local file: the catalog its first opening builds is there already.
pytestmark = pytest.mark.usefixtures("local_catalog_cached")

SAMPLE = """\
# Samba configuration of the file server
[global]
   workgroup = EXAMPLE
   server string = Samba %v on %h
   server min protocol = SMB2_02
   socket options = TCP_NODELAY SO_RCVBUF=8192 SO_SNDBUF=8192
   max xmit = 65535
   log level = 3
   read prediction = yes

[projects]
   path = /srv/projects
   writable = yes
   guest ok = no
   oplocks = maybe
   vfs objects = acl_xattr \\
       streams_xattr
   strict sync = yes
   sync always = yes
   case sensitive = auto
"""
OPLOCKS_LINE = 15
SOCKET_LINE = 6
AWKWARD = (
    b"# caf\xe9 au lait\r\n[global]\r\n\tworkgroup = EXAMPLE   \r\n"
    b"[share]\r\n   path = /srv/share\r\n   read only = yes"
)


def _open(qtbot: QtBot, path: Path) -> ConfFileWindow:
    window = ConfFileWindow(LocalFile(str(path)))
    qtbot.addWidget(window)
    window.resize(1180, 780)
    window.show()
    page = window.page
    qtbot.waitUntil(lambda: page.loaded and page.lint.current is not None, timeout=20000)
    return window


def _checked(qtbot: QtBot, page: ConfEditorPage) -> None:
    """Wait until the check of the text as it is now has come back."""
    qtbot.waitUntil(lambda: page.lint.current is not None and not page.lint.busy, timeout=20000)


@pytest.fixture
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("samba") / "smb.conf"
    path.write_text(SAMPLE)
    return path


def test_text_view_shows_hints_markers_and_the_explanation_under_the_cursor(
    qtbot: QtBot,
    sample: Path,
    screenshot: Screenshot,
) -> None:
    window = _open(qtbot, sample)
    page = window.page
    editor = page.editor
    assert page.buffer.render() == sample.read_bytes()
    # The file opens at its top, not with the cursor (and the explanation) on its last line.
    assert editor.current_line() == 1 and editor.firstVisibleBlock().blockNumber() == 0
    qtbot.wait(400)  # past the explanation's debounce
    assert page.panel.parameter is None
    # Lint markers sit on the lines they are about.
    assert [m.severity for m in editor.markers_at(OPLOCKS_LINE)] == ["error"]
    assert "socket-buffer" not in editor.marker_text(SOCKET_LINE)
    assert "autotuning" in editor.marker_text(SOCKET_LINE)
    assert editor.markers_at(3) == []
    assert page.findings.row_count() >= 5
    # Hints come from this version's catalog and our notes.
    assert editor.hints is not None
    assert "SMB1 only" in editor.hints.hint("max xmit", "65535")
    # Hovering a line shows its whole hint and its findings.
    tip = editor.line_tooltip(SOCKET_LINE)
    assert "default TCP_NODELAY" in tip and "autotuning" in tip
    # The explanation panel follows the cursor.
    editor.go_to_line(SOCKET_LINE)
    qtbot.waitUntil(lambda: page.panel.parameter == "socket options", timeout=5000)
    assert "autotuning" in page.panel.browser.toPlainText()
    editor.go_to_line(13)
    qtbot.waitUntil(lambda: page.panel.parameter == "read only", timeout=5000)
    assert "synonym" in page.panel.browser.toPlainText()
    editor.go_to_line(SOCKET_LINE)
    qtbot.waitUntil(lambda: page.panel.parameter == "socket options", timeout=5000)
    qtbot.wait(100)
    screenshot(window, "editor-text")
    # Clicking a finding jumps to its line.
    row = next(n for n in range(page.findings.row_count()) if page.findings.row(n).line == OPLOCKS_LINE)
    page.findings.view.clicked.emit(page.findings.model.index(row, 2))
    assert editor.current_line() == OPLOCKS_LINE


def test_completion_offers_parameter_names_and_then_values(
    qtbot: QtBot,
    sample: Path,
    screenshot: Screenshot,
) -> None:
    window = _open(qtbot, sample)
    page = window.page
    editor = page.editor
    editor.go_to_line(9)
    editor.moveCursor(QTextCursor.MoveOperation.EndOfBlock)
    QTest.keyClick(editor, Qt.Key.Key_Return)
    QTest.keyClicks(editor, "sock")
    completion = page.completion
    qtbot.waitUntil(lambda: completion.popup_visible, timeout=5000)
    offered = [completion.matches.item(n).text() for n in range(completion.matches.rowCount())]
    assert "socket options" in offered
    assert offered[0].startswith("socket")  # names that start with it come first
    popup = completion.completer.popup()
    assert popup is not None
    _screenshot_with_popup(window, popup, screenshot, "editor-completion")
    # A synonym shows what it stands for.
    for _ in range(4):
        QTest.keyClick(editor, Qt.Key.Key_Backspace)
    QTest.keyClicks(editor, "writa")
    qtbot.waitUntil(lambda: completion.popup_visible, timeout=5000)
    offered = [completion.matches.item(n).text() for n in range(completion.matches.rowCount())]
    assert "writable → read only (inverted)" in offered
    # Choosing a yes/no parameter goes on to its values.
    for _ in range(5):
        QTest.keyClick(editor, Qt.Key.Key_Backspace)
    QTest.keyClicks(editor, "oplock")
    qtbot.waitUntil(lambda: completion.popup_visible, timeout=5000)
    completion.insert("oplocks")
    qtbot.waitUntil(lambda: completion.popup_visible and completion.mode == "value", timeout=5000)
    values = [completion.matches.item(n).text() for n in range(completion.matches.rowCount())]
    assert values == ["yes   (default)", "no"]
    completion.insert("no")
    assert editor.textCursor().block().text() == "   oplocks = no"


def test_form_edits_land_in_the_text_as_one_undoable_edit(
    qtbot: QtBot,
    sample: Path,
    screenshot: Screenshot,
) -> None:
    window = _open(qtbot, sample)
    page = window.page
    original = page.buffer.render()
    page.show_view(FORM_VIEW)
    form = page.form
    qtbot.waitUntil(lambda: form.sections.count() == 2, timeout=5000)
    form.select_section("projects")
    row = _form_row(form, "guest ok")
    box = form.table.cellWidget(row, VALUE)
    assert isinstance(box, QCheckBox) and not box.isChecked()
    box.setChecked(True)
    assert b"   guest ok = yes\n" in page.buffer.render()
    # Only that line changed.
    assert page.buffer.render() == original.replace(b"guest ok = no", b"guest ok = yes")
    _checked(qtbot, page)
    combo = form.table.cellWidget(_form_row(form, "case sensitive"), VALUE)
    assert isinstance(combo, QComboBox)
    combo.setCurrentText("Yes")
    combo.activated.emit(combo.currentIndex())
    assert b"   case sensitive = Yes\n" in page.buffer.render()
    _checked(qtbot, page)
    form.new_name.setText("aio read size")
    form.new_value.setText("1")
    form.add_button.click()
    assert b"   aio read size = 1\n" in page.buffer.render()
    _checked(qtbot, page)
    # The explanation panel follows the row the admin clicks in the form too.
    qtbot.waitUntil(lambda: _form_value(form, "aio read size") == "1", timeout=5000)
    cell = form.table.visualRect(form.table.model().index(_form_row(form, "aio read size"), NAME))
    qtbot.mouseClick(form.table.viewport(), Qt.MouseButton.LeftButton, pos=cell.center())
    qtbot.waitUntil(lambda: page.panel.parameter == "aio read size", timeout=5000)
    field = form.table.cellWidget(_form_row(form, "aio read size"), VALUE)
    assert isinstance(field, QLineEdit)
    field.setText("2")
    field.editingFinished.emit()
    assert b"   aio read size = 2\n" in page.buffer.render()
    _checked(qtbot, page)
    qtbot.waitUntil(lambda: _form_value(form, "aio read size") == "2", timeout=5000)
    # Undo moves the hidden text cursor to the line it changes; the panel stays with
    # the row the admin picked.
    cell = form.table.visualRect(form.table.model().index(_form_row(form, "path"), NAME))
    qtbot.mouseClick(form.table.viewport(), Qt.MouseButton.LeftButton, pos=cell.center())
    qtbot.waitUntil(lambda: page.panel.parameter == "path", timeout=5000)
    page.buffer.undo()
    assert b"   aio read size = 1\n" in page.buffer.render()
    _checked(qtbot, page)
    # The explanation follows after its delay, and stays on the row picked.
    qtbot.waitUntil(lambda: not page._explain_timer.isActive(), timeout=5000)
    assert page.panel.parameter == "path"
    cell = form.table.visualRect(form.table.model().index(_form_row(form, "aio read size"), NAME))
    qtbot.mouseClick(form.table.viewport(), Qt.MouseButton.LeftButton, pos=cell.center())
    qtbot.waitUntil(lambda: page.panel.parameter == "aio read size", timeout=5000)
    assert "aio read size" in page.panel.browser.toPlainText()
    screenshot(window, "editor-form")
    # Undo goes back through the form edits, one at a time, to the exact bytes.
    page.buffer.undo()
    assert b"aio read size" not in page.buffer.render()
    page.buffer.undo()
    page.buffer.undo()
    assert page.buffer.render() == original
    assert not page.dirty
    page.buffer.redo()
    assert b"guest ok = yes" in page.buffer.render()

    # And the other way round: a text edit shows up in the form.
    page.show_view(TEXT_VIEW)
    editor = page.editor
    editor.go_to_line(12)
    editor.moveCursor(QTextCursor.MoveOperation.EndOfBlock)
    QTest.keyClicks(editor, "/more")
    page.show_view(FORM_VIEW)
    _checked(qtbot, page)
    qtbot.waitUntil(lambda: _form_value(form, "path") == "/srv/projects/more", timeout=5000)


def _form_row(form: FormView, name: str) -> int:
    for row in range(form.table.rowCount()):
        if item_at(form.table, row, NAME).text() == name:
            return row
    raise AssertionError(f"{name} is not in the form")


def _form_value(form: FormView, name: str) -> str:
    try:
        widget = form.table.cellWidget(_form_row(form, name), VALUE)
    except AssertionError:
        return ""
    assert isinstance(widget, QLineEdit), f"{name} is not edited as text"
    return str(widget.text())


def test_a_file_with_crlf_latin1_and_no_final_newline_saves_byte_for_byte(
    qtbot: QtBot,
    tmp_path: Path,
) -> None:
    path = tmp_path / "awkward.conf"
    path.write_bytes(AWKWARD)
    window = _open(qtbot, path)
    page = window.page
    assert page.editor.document().findBlockByNumber(0).text() == "# café au lait"
    page.save_as(str(tmp_path / "copy.conf"))
    qtbot.waitUntil(lambda: (tmp_path / "copy.conf").exists(), timeout=20000)
    assert (tmp_path / "copy.conf").read_bytes() == AWKWARD
    # Edit one line in the text, save: only that line differs.
    editor = page.editor
    editor.go_to_line(3)
    editor.moveCursor(QTextCursor.MoveOperation.EndOfBlock)
    for _ in range(10):
        QTest.keyClick(editor, Qt.Key.Key_Backspace)
    QTest.keyClicks(editor, "OTHER")
    assert page.dirty
    page.save()
    expected = AWKWARD.replace(b"EXAMPLE   ", b"OTHER")
    qtbot.waitUntil(lambda: (tmp_path / "copy.conf").read_bytes() == expected, timeout=20000)
    # The file is renamed into place on the worker just before the GUI hears it is saved.
    qtbot.waitUntil(lambda: not page.dirty, timeout=5000)
    assert "•" not in window.windowTitle()
    # The original file was left alone: after Save as, the window edits the copy.
    assert path.read_bytes() == AWKWARD


def test_save_right_after_save_as_goes_to_the_new_file(qtbot: QtBot, sample: Path) -> None:
    window = _open(qtbot, sample)
    page = window.page
    copy = sample.parent / "copy.conf"
    page.editor.go_to_line(1)
    QTest.keyClicks(page.editor, "# mine ")
    page.save_as(str(copy))
    QTest.keyClicks(page.editor, "again ")
    page.save()  # the Save as… is still being written
    qtbot.waitUntil(lambda: copy.exists() and copy.read_bytes().startswith(b"# mine again "), timeout=20000)
    qtbot.waitUntil(lambda: not page.dirty, timeout=5000)
    assert sample.read_text() == SAMPLE
    assert page.source.path == str(copy)


def test_find_counts_and_moves_between_matches(qtbot: QtBot, sample: Path) -> None:
    window = _open(qtbot, sample)
    page = window.page
    page.find_action.trigger()
    bar = page.find_bar
    assert bar.isVisible()
    QTest.keyClicks(bar.field, "sync")
    assert bar.count == 2
    assert page.editor.textCursor().selectedText() == "sync"
    first = page.editor.current_line()
    assert bar.count_label.text() == "1 of 2 matches"
    QTest.keyClick(bar.field, Qt.Key.Key_Return)
    assert page.editor.current_line() == first + 1
    assert bar.count_label.text() == "2 of 2 matches"
    QTest.keyClick(bar.field, Qt.Key.Key_Return)  # wraps around
    assert page.editor.current_line() == first
    QTest.keyClick(bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert page.editor.current_line() == first + 1
    bar.field.setText("no such text")
    assert bar.count_label.text() == "no matches"
    QTest.keyClick(bar.field, Qt.Key.Key_Escape)
    assert not bar.isVisible()
    page.go_to_line(12)
    assert page.editor.current_line() == 12


def test_undo_and_redo_keys_in_the_text(qtbot: QtBot, sample: Path) -> None:
    window = _open(qtbot, sample)
    page = window.page
    editor = page.editor
    editor.go_to_line(3)
    editor.moveCursor(QTextCursor.MoveOperation.EndOfBlock)
    QTest.keyClicks(editor, "X")
    assert b"EXAMPLEX" in page.buffer.render()
    QTest.keyClick(editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert page.buffer.render() == sample.read_bytes()
    QTest.keyClick(
        editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    assert b"EXAMPLEX" in page.buffer.render()


def test_closing_with_unsaved_changes_asks(qtbot: QtBot, sample: Path) -> None:
    window = _open(qtbot, sample)
    editor = window.page.editor
    editor.go_to_line(3)
    QTest.keyClicks(editor, "#")
    window.close()
    box = window.page.findChild(QMessageBox, "discardChangesBox")
    assert box is not None and window.isVisible()
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert window.isVisible()
    window.close()
    box = next(b for b in window.page.findChildren(QMessageBox, "discardChangesBox") if b.isVisible())
    box.button(QMessageBox.StandardButton.Discard).click()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=5000)
    assert sample.read_text() == SAMPLE


def test_main_window_opens_a_local_file(qtbot: QtBot, sample: Path) -> None:
    main = MainWindow()
    qtbot.addWidget(main)
    main.show()
    window = main.open_conf_file(str(sample))
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: window.page.loaded, timeout=20000)
    assert window.page.buffer.render() == sample.read_bytes()
    QTest.keyClicks(window.page.editor, "# note")
    QTest.keyClick(window.page.editor, Qt.Key.Key_Return)
    assert main.unsaved_pages() == [window.page]
    main.close()  # asks first
    box = main.findChild(QMessageBox, "quitUnsavedBox")
    assert box is not None and main.isVisible()
    box.button(QMessageBox.StandardButton.Discard).click()
    qtbot.waitUntil(lambda: not main.isVisible() and not window.isVisible(), timeout=5000)


def _screenshot_with_popup(window: QWidget, popup: QWidget, screenshot: Screenshot, name: str) -> None:
    """A popup is a window of its own; paint it onto the window's picture where it shows."""
    picture: QPixmap = window.grab()
    painter = QPainter(picture)
    where = window.mapFromGlobal(popup.mapToGlobal(QPoint(0, 0)))
    painter.drawPixmap(where, popup.grab())
    painter.end()

    class Shot:
        def grab(self) -> QPixmap:
            return picture

    screenshot(Shot(), name)


def test_included_files_open_read_only(qtbot: QtBot, tmp_path: Path) -> None:
    shares = tmp_path / "shares.conf"
    shares.write_text("[data]\n   path = /srv/data\n   oplocks = maybe\n")
    main_file = tmp_path / "smb.conf"
    main_file.write_text(
        f"[global]\n   workgroup = X\n   include = {shares}\n   include = {tmp_path / 'missing.conf'}\n"
    )
    window = _open(qtbot, main_file)
    page = window.page
    assert page.includes.isVisible()
    assert "missing.conf" in page.includes.text() and "(missing)" in page.includes.text()
    # The included file's problem is listed with its file, not put in this file's gutter.
    assert any(page.findings.row(n).where == f"{shares}:3" for n in range(page.findings.row_count()))
    assert page.editor.markers_at(3) == []
    page.includes.linkActivated.emit("0")
    included = page.windows[-1]
    assert isinstance(included, ConfFileWindow)
    qtbot.addWidget(included)
    qtbot.waitUntil(lambda: included.page.loaded, timeout=10000)
    assert included.page.buffer.render() == shares.read_bytes()
    assert included.page.editor.isReadOnly()
    assert "(read-only)" in included.windowTitle()
    QTest.keyClicks(included.page.editor, "x")
    assert included.page.buffer.render() == shares.read_bytes()


def test_go_to_line_asks_for_a_number(qtbot: QtBot, sample: Path) -> None:
    from PySide6.QtWidgets import QInputDialog

    window = _open(qtbot, sample)
    page = window.page
    page.goto_action.trigger()
    dialog = page.findChild(QInputDialog, "goToLineDialog")
    assert dialog is not None and dialog.intMaximum() == SAMPLE.count("\n")
    dialog.setIntValue(14)
    dialog.accept()
    assert page.editor.current_line() == 14


def test_the_check_runs_in_a_child_that_ends_with_the_editor(qtbot: QtBot, sample: Path) -> None:
    """Lint runs in a process of its own (typing never waits for it, see
    bench/editor_typing.py); the form view still gets the effective view, built here
    only while it shows; closing the editor ends the child."""
    window = _open(qtbot, sample)
    page = window.page
    child = page.lint.process._process
    assert child is not None and child.poll() is None
    result = page.lint.current
    assert result is not None and result.view is None  # the text view needs none
    # read prediction went in Samba 2.2: not a setting, so [global] makes six.
    assert result.settings_in("projects") == 8 and result.settings_in("GLOBAL") == 6
    assert {m.severity for markers in result.markers.values() for m in markers} >= {"warning"}
    page.show_view(FORM_VIEW)
    qtbot.waitUntil(
        lambda: page.lint.current is not None and page.lint.current.view is not None, timeout=20000
    )
    qtbot.waitUntil(lambda: page.form.sections.count() == 2, timeout=5000)
    page.show_view(TEXT_VIEW)
    assert not page.lint.want_view
    window.close()
    qtbot.waitUntil(lambda: child.poll() is not None, timeout=5000)


def test_a_check_of_the_file_before_a_reload_never_passes_for_the_new_one(qtbot: QtBot, sample: Path) -> None:
    """A document counts its edits from 0, so a reloaded file (a restore, the live file
    followed) reaches the same numbers again: the old file's check, with its errors, must
    not be taken for the new text's (the apply would warn about errors that are not there)."""
    window = _open(qtbot, sample)
    page = window.page
    page.editor.moveCursor(QTextCursor.MoveOperation.End)
    QTest.keyClick(page.editor, Qt.Key.Key_Return)
    QTest.keyClicks(page.editor, "[broken")
    _checked(qtbot, page)
    stale = page.lint.current
    assert stale is not None and any(f.severity == "error" for f in stale.findings)
    page.lint.stop()  # no more checks: only the old result is left
    page.buffer.load(SAMPLE.encode(), str(sample))
    page.editor.moveCursor(QTextCursor.MoveOperation.End)
    for _ in range(stale.generation[1] + 3):
        QTest.keyClicks(page.editor, "#")
        assert page.lint.current is None
    # The reload started the page's own background work again: let it end with the window.
    window.close()
    qtbot.waitUntil(lambda: not any(task.running for task in page._tasks), timeout=20000)


def test_form_edits_land_where_samba_reads_them_or_say_which_file_to_edit(
    qtbot: QtBot, tmp_path: Path, screenshot: Screenshot
) -> None:
    """Unraid's shape: [global] ends with the include that opens the shares."""
    shares = tmp_path / "smb-shares.conf"
    shares.write_text("[data]\n   path = /srv/data\n")
    main_file = tmp_path / "smb.conf"
    main_file.write_text(f"[global]\n   workgroup = X\n   include = {shares}\n")
    window = _open(qtbot, main_file)
    page, form = window.page, window.page.form
    page.show_view(FORM_VIEW)
    qtbot.waitUntil(lambda: form.sections.count() == 2, timeout=5000)
    form.select_section("global")
    form.new_name.setText("deadtime")
    form.new_value.setText("15")
    form.add_button.click()
    assert (
        page.buffer.render()
        == f"[global]\n   workgroup = X\n   deadtime = 15\n   include = {shares}\n".encode()
    )
    _checked(qtbot, page)
    # [data] lives in the included file: the form says so and adds nothing here.
    form.select_section("data")
    assert "defined in <span" in form.title.text() and "smb-shares.conf</span>, line 1" in form.title.text()
    assert str(shares) in form.title.text()  # the whole path, on hover
    assert not form.add_button.isEnabled() and not form.remove_share_button.isEnabled()
    qtbot.wait(50)  # let the layout take the new text in before the picture
    screenshot(window, "editor-form-included-share")
    form.select_section("global")
    assert form.add_button.isEnabled()


def test_a_refused_form_edit_says_why_in_full(qtbot: QtBot, tmp_path: Path, screenshot: Screenshot) -> None:
    late = tmp_path / "late.conf"
    late.write_text("   deadtime = 30\n")
    main_file = tmp_path / "smb.conf"
    main_file.write_text(f"[global]\n   deadtime = 10\n   include = {late}\n[data]\n   path = /srv\n")
    window = _open(qtbot, main_file)
    page, form = window.page, window.page.form
    page.show_view(FORM_VIEW)
    qtbot.waitUntil(lambda: form.sections.count() == 2, timeout=5000)
    form.select_section("global")
    before = page.buffer.render()
    form.new_name.setText("deadtime")
    form.new_value.setText("15")
    form.add_button.click()
    assert page.buffer.render() == before
    assert f"deadtime = 30 later, in {late} line 1" in form.status.text()
    qtbot.wait(50)  # let the layout take the new text in before the picture
    screenshot(window, "editor-form-refused")


def test_a_narrow_form_shows_each_note_under_its_parameter(
    qtbot: QtBot, sample: Path, screenshot: Screenshot
) -> None:
    """At 1180x780 the form's table is narrower than the Notes column needs: the notes
    were in tooltips only. Now each is a grey line under its parameter's name."""
    window = _open(qtbot, sample)
    page = window.page
    page.show_view(FORM_VIEW)
    form = page.form
    qtbot.waitUntil(lambda: form.sections.count() == 2, timeout=5000)
    form.select_section("global")
    qtbot.waitUntil(lambda: form.table.viewport().width() > 0, timeout=5000)
    assert form.table.viewport().width() < NOTES_NEED and form.table.isColumnHidden(NOTES)
    model = form.table.model()
    noted = [r for r in range(form.table.rowCount()) if form.names.note(model.index(r, NAME))]
    assert noted
    line = form.table.fontMetrics().height()
    for row in noted:
        note = form.names.note(model.index(row, NAME))
        assert note == item_at(form.table, row, NOTES).text()
        assert form.table.rowHeight(row) >= line * 1.8  # the name, and the note under it
    screenshot(form, "editor-form-narrow-notes")
    # Wide enough, the column comes back and the names are one line again.
    window.resize(1800, 780)
    qtbot.waitUntil(lambda: not form.table.isColumnHidden(NOTES), timeout=5000)
    assert not form.names.note(model.index(noted[0], NAME))


def test_a_long_path_or_sentence_never_widens_the_window(qtbot: QtBot, tmp_path: Path) -> None:
    """What names the file (opening it) and the findings' sentence wrap: the window an
    admin sized stays that size, however deep the smb.conf lives (the test bed's own
    temp paths once grew it by 50 pixels for good)."""
    deep = tmp_path.joinpath(*["an-include-folder-with-a-rather-long-name"] * 12)
    deep.mkdir(parents=True)
    path = deep / "smb.conf"
    path.write_text(SAMPLE)
    window = _open(qtbot, path)
    page = window.page
    page._show_loading(f"Reading {path} again…")
    page.findings.summary.setText("No findings: " + "Samba reads this file the way it looks. " * 6)
    qtbot.wait(100)
    assert (window.width(), window.height()) == (1180, 780)
    assert page.minimumSizeHint().width() < 1180
