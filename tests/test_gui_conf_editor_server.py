"""The editor on a real server's smb.conf: over SSH and on this computer, through safe apply."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from sambatune.conf.apply import ApplyStep
from sambatune.profiles import ServerProfile
from sambatune.ui.apply_dialog import ApplyDialog
from sambatune.ui.editor.page import ConfEditorPage
from sambatune.ui.main_window import MainWindow
from sambatune.ui.workspace import ServerWorkspace
from screenshots import Screenshot
from testbed.smbd import SmbServer
from testbed.sshd import SshServer, current_user


@pytest.fixture
def server(fresh_smbd: SmbServer) -> SmbServer:
    return fresh_smbd


@pytest.fixture
def window(qtbot: QtBot) -> Iterator[MainWindow]:
    main = MainWindow()
    qtbot.addWidget(main)
    main.resize(1180, 780)
    main.show()
    yield main
    main.quit_without_asking()


@pytest.fixture
def over_ssh(
    window: MainWindow, qtbot: QtBot, sshd: SshServer, user_key: Path, server: SmbServer, isolated_home: Path
) -> ServerWorkspace:
    (isolated_home / ".ssh" / "known_hosts").write_text(sshd.known_hosts_line)
    profile = ServerProfile(
        name="Editor bed",
        host="127.0.0.1",
        port=sshd.port,
        user=current_user(),
        identity_file=str(user_key),
        config_path=str(server.config),
    )
    window.add_profile(profile)
    window.connect_server(profile.id)
    qtbot.waitUntil(lambda: window.sessions[profile.id].survey is not None, timeout=30000)
    return window.workspaces[profile.id]


def _open_editor(qtbot: QtBot, workspace: ServerWorkspace) -> ConfEditorPage:
    workspace.tabs.setCurrentWidget(workspace.editor)
    page = workspace.editor
    qtbot.waitUntil(lambda: page.loaded and page.lint.current is not None, timeout=30000)
    return page


def _line_of(page: ConfEditorPage, text: str) -> int:
    for number, line in enumerate(page.buffer.text.display_lines(), 1):
        if text in line:
            return number
    raise AssertionError(f"{text!r} is not in the file")


def _type_at_end(page: ConfEditorPage, lines: list[str]) -> None:
    editor = page.editor
    editor.moveCursor(QTextCursor.MoveOperation.End)
    for line in lines:
        QTest.keyClick(editor, Qt.Key.Key_Return)
        cursor = editor.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.StartOfBlock, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()  # Enter copied the indentation; type it ourselves
        QTest.keyClicks(editor, line)
        page.completion.hide()


def _apply(qtbot: QtBot, page: ConfEditorPage) -> ApplyDialog:
    qtbot.waitUntil(lambda: page.lint.current is not None, timeout=20000)
    page.apply_button.click()
    qtbot.waitUntil(
        lambda: isinstance(page.apply_dialog, ApplyDialog) and page.apply_dialog.isVisible(), timeout=5000
    )
    dialog = page.apply_dialog
    assert isinstance(dialog, ApplyDialog)
    return dialog


def test_the_servers_smb_conf_opens_over_ssh_with_its_own_catalog(
    qtbot: QtBot,
    over_ssh: ServerWorkspace,
    server: SmbServer,
) -> None:
    page = _open_editor(qtbot, over_ssh)
    assert over_ssh.tabs.tabText(over_ssh.tabs.indexOf(page)) == "smb.conf"
    assert page.source.path == str(server.config)
    assert page.buffer.render() == server.config.read_bytes()
    assert page.source.where.startswith(current_user())
    # The hints come from the server's testparm (built once, then cached).
    qtbot.waitUntil(lambda: page.catalog is not None and page.catalog.origin != "bundled", timeout=120000)
    assert "from its testparm" in page.status.text()
    line = _line_of(page, "map to guest")
    page.editor.go_to_line(line)
    qtbot.waitUntil(lambda: page.panel.parameter == "map to guest", timeout=5000)
    page.panel.man_button.click()
    qtbot.waitUntil(lambda: "map to guest" in page.panel.man_pages, timeout=30000)
    if page.panel.man_pages["map to guest"] is not None:
        assert "smb.conf(5)" in page.panel.browser.toPlainText()
        # The entry is brought into view, not appended below the fold.
        assert page.panel.browser.verticalScrollBar().value() > 0
    else:
        assert "no smb.conf(5) entry" in page.panel.man_status.text()


def test_apply_from_the_editor_then_history_and_restore(
    qtbot: QtBot,
    over_ssh: ServerWorkspace,
    server: SmbServer,
    screenshot: Screenshot,
) -> None:
    page = _open_editor(qtbot, over_ssh)
    original = server.config.read_bytes()
    _type_at_end(page, ["", "[fresh]", f"  path = {server.share_path}", "  guest ok = yes"])
    assert page.dirty
    assert over_ssh.tabs.tabText(over_ssh.tabs.indexOf(page)) == "smb.conf •"
    dialog = _apply(qtbot, page)
    assert "+[fresh]" in dialog.diff.toPlainText()
    assert dialog.summary.text() == "add [fresh]"
    qtbot.waitUntil(lambda: dialog.plan is not None, timeout=30000)
    assert "A reload applies this change" in dialog.plan_label.text()
    screenshot(dialog, "editor-apply-review")
    dialog.apply_button.click()
    qtbot.waitUntil(lambda: dialog.outcome is not None, timeout=60000)
    assert dialog.outcome is not None
    assert dialog.outcome.ok, dialog.outcome.message
    assert [
        dialog.step_state(ApplyStep(s))
        for s in ("upload", "testparm", "backup", "install", "reload", "health")
    ] == ["done"] * 6
    qtbot.wait(100)  # let the Close button be laid out
    screenshot(dialog, "editor-apply-result")
    assert "fresh" in server.list_shares()
    live = server.config.read_bytes()
    assert live == page.buffer.render() == page.buffer.baseline
    assert live.startswith(original)
    assert not page.dirty
    dialog.close()
    # History saw it; restoring goes through the same dialog and steps.
    history = over_ssh.history
    qtbot.waitUntil(lambda: history.table.rowCount() == 1, timeout=30000)
    over_ssh.tabs.setCurrentWidget(history)
    history.table.selectRow(0)
    qtbot.waitUntil(lambda: "-[fresh]" in history.diff.toPlainText(), timeout=30000)
    history.restore_button.click()
    restore = history.dialog
    assert isinstance(restore, ApplyDialog)
    restore.apply_button.click()
    qtbot.waitUntil(lambda: restore.outcome is not None, timeout=60000)
    assert restore.outcome is not None and restore.outcome.ok
    assert server.config.read_bytes() == original


def test_a_change_testparm_refuses_is_shown_at_its_line(
    qtbot: QtBot,
    over_ssh: ServerWorkspace,
    server: SmbServer,
    screenshot: Screenshot,
) -> None:
    page = _open_editor(qtbot, over_ssh)
    original = server.config.read_bytes()
    _type_at_end(page, ["  oplocks = maybe"])
    bad_line = page.buffer.text.line_count
    qtbot.waitUntil(
        lambda: (
            page.lint.current is not None
            and any(m.severity == "error" for m in page.editor.markers_at(bad_line))
        ),
        timeout=20000,
    )
    page.apply_button.click()
    # Our own check warns first; testparm on the server has the last word.
    box = page.findChild(QMessageBox, "lintErrorsBox")
    assert box is not None and "line" in box.text()
    go_on = next(b for b in box.buttons() if b.text() == "Review and apply")
    go_on.click()
    qtbot.waitUntil(lambda: isinstance(page.apply_dialog, ApplyDialog), timeout=5000)
    dialog = page.apply_dialog
    assert isinstance(dialog, ApplyDialog)
    dialog.apply_button.click()
    qtbot.waitUntil(lambda: dialog.outcome is not None, timeout=60000)
    assert dialog.outcome is not None and dialog.outcome.status == "refused"
    assert dialog.step_state(ApplyStep.TESTPARM) == "failed"
    qtbot.wait(100)
    screenshot(dialog, "editor-apply-refused")
    dialog.close()
    assert server.config.read_bytes() == original
    assert page.dirty  # the edit is still there to fix
    testparm = [m for m in page.editor.markers_at(bad_line) if m.source == "testparm"]
    assert testparm and "maybe" in testparm[0].message
    assert page.editor.current_line() == bad_line
    assert page.findings.row(0).message.startswith("testparm on the server")
    qtbot.wait(200)
    screenshot(over_ssh.window(), "editor-testparm-refused")


def test_someone_elses_change_is_not_overwritten(
    qtbot: QtBot,
    over_ssh: ServerWorkspace,
    server: SmbServer,
) -> None:
    page = _open_editor(qtbot, over_ssh)
    _type_at_end(page, ["# mine"])
    theirs = server.config.read_bytes() + b"# theirs\n"
    dialog = _apply(qtbot, page)
    # Between the review's check and Apply (a change before the review is caught there:
    # test_gui_follow_live).
    qtbot.waitUntil(lambda: dialog.plan is not None, timeout=60000)
    server.config.write_bytes(theirs)
    dialog.apply_button.click()
    qtbot.waitUntil(lambda: dialog.outcome is not None, timeout=60000)
    assert dialog.outcome is not None and dialog.outcome.status == "refused"
    assert "+# theirs" in dialog.outcome.live_diff
    assert server.config.read_bytes() == theirs
    assert page.dirty


def test_this_computer_applies_through_the_same_steps(
    qtbot: QtBot,
    window: MainWindow,
    server: SmbServer,
) -> None:
    session = window.session("local")
    session.profile.config_path = str(server.config)
    session.connect_and_survey()
    workspace = window.workspaces["local"]
    qtbot.waitUntil(lambda: session.survey is not None, timeout=30000)
    page = _open_editor(qtbot, workspace)
    assert page.source.where == "this computer"
    assert page.buffer.render() == server.config.read_bytes()
    _type_at_end(page, ["", "[local-fresh]", f"  path = {server.share_path}"])
    dialog = _apply(qtbot, page)
    dialog.apply_button.click()
    qtbot.waitUntil(lambda: dialog.outcome is not None, timeout=60000)
    assert dialog.outcome is not None
    assert dialog.outcome.ok, dialog.outcome.message
    assert "local-fresh" in server.list_shares()
    assert not page.dirty
    dialog.close()


def test_disconnecting_with_unsaved_edits_asks(
    qtbot: QtBot,
    over_ssh: ServerWorkspace,
) -> None:
    page = _open_editor(qtbot, over_ssh)
    _type_at_end(page, ["# not applied"])
    over_ssh.disconnect_server()
    box = page.findChild(QMessageBox, "discardChangesBox")
    assert box is not None
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert over_ssh.session.transport is not None and page.dirty
    over_ssh.disconnect_server()
    box = next(b for b in page.findChildren(QMessageBox, "discardChangesBox") if b.isVisible())
    box.button(QMessageBox.StandardButton.Discard).click()
    qtbot.waitUntil(lambda: over_ssh.session.transport is None, timeout=5000)
    assert not page.loaded and not page.dirty
