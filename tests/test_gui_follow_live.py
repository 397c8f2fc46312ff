"""Every page follows the live smb.conf and the newest survey, against real sshd and smbd.

A restore from history, then an edit and an apply: the editor shows what is live, its
review compares with what is live, and history tells applied versions from a refused
attempt. A re-survey after the managed smb.conf changed: the wizard's share, the
Benchmarks page, the editor, smb.conf history and the Overview follow it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel, QMessageBox, QPushButton, QTableWidget
from pytestqt.qtbot import QtBot

import sambatune.merge
from sambatune.applied_versions import AppliedVersions
from sambatune.conf.apply import ApplyRequest, apply_config
from sambatune.merge import merge3
from sambatune.profiles import ServerProfile
from sambatune.remote.connection import ConnectionOptions, open_target
from sambatune.remote.prompts import NoPrompts
from sambatune.ui.apply_dialog import ApplyDialog
from sambatune.ui.editor.page import ConfEditorPage
from sambatune.ui.history_page import HistoryPage
from sambatune.ui.main_window import MainWindow
from sambatune.ui.overview_page import OverviewPage
from sambatune.ui.profile_dialog import ProfileDialog
from sambatune.ui.workspace import ServerWorkspace
from screenshots import Screenshot
from table_items import item_at
from testbed.ports import free_port
from testbed.smbd import SmbServer
from testbed.sshd import SshServer, current_user

SLOW = 60_000


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
def workspace(
    window: MainWindow, qtbot: QtBot, sshd: SshServer, user_key: Path, server: SmbServer, isolated_home: Path
) -> ServerWorkspace:
    (isolated_home / ".ssh" / "known_hosts").write_text(sshd.known_hosts_line)
    profile = ServerProfile(
        name="Follow bed",
        host="127.0.0.1",
        port=sshd.port,
        user=current_user(),
        identity_file=str(user_key),
        config_path=str(server.config),
    )
    window.add_profile(profile)
    window.connect_server(profile.id)
    qtbot.waitUntil(lambda: window.sessions[profile.id].survey is not None, timeout=SLOW)
    return window.workspaces[profile.id]


def _open_editor(qtbot: QtBot, workspace: ServerWorkspace) -> ConfEditorPage:
    workspace.tabs.setCurrentWidget(workspace.editor)
    page = workspace.editor
    qtbot.waitUntil(lambda: page.loaded and page.lint.current is not None, timeout=SLOW)
    return page


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


def _apply_from_editor(qtbot: QtBot, page: ConfEditorPage) -> ApplyDialog:
    qtbot.waitUntil(lambda: page.lint.current is not None and page.apply_button.isEnabled(), timeout=20_000)
    page.apply_button.click()
    # The review follows a background description of the change: on a loaded CI machine
    # that can take more than the 10 s this waited once, so wait as long as the rest does.
    qtbot.waitUntil(
        lambda: isinstance(page.apply_dialog, ApplyDialog) and page.apply_dialog.isVisible(), timeout=SLOW
    )
    dialog = page.apply_dialog
    assert isinstance(dialog, ApplyDialog)
    return dialog


def _run(qtbot: QtBot, dialog: ApplyDialog) -> str:
    qtbot.waitUntil(lambda: dialog.plan is not None or dialog.plan_task is None, timeout=SLOW)
    dialog.apply_button.click()
    qtbot.waitUntil(lambda: dialog.outcome is not None, timeout=SLOW)
    assert dialog.outcome is not None
    return dialog.outcome.status


def _close(qtbot: QtBot, dialog: ApplyDialog, page: ConfEditorPage) -> None:
    """Close the dialog; the editor then reads the live file again (Apply waits for it)."""
    dialog.close()
    qtbot.waitUntil(lambda: page._live_check is None, timeout=SLOW)


def _history_rows(history: HistoryPage) -> list[tuple[str, str]]:
    return [
        (item_at(history.table, row, 2).text(), item_at(history.table, row, 1).text())
        for row in range(history.table.rowCount())
    ]


def test_a_restore_then_an_edit_applies_and_history_tells_what_happened(
    qtbot: QtBot,
    window: MainWindow,
    workspace: ServerWorkspace,
    server: SmbServer,
    screenshot: Screenshot,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    original = server.config.read_bytes()
    page = _open_editor(qtbot, workspace)

    # 1. An apply from the editor.
    _type_at_end(page, ["", "[fresh]", f"  path = {server.share_path}", "  guest ok = yes"])
    dialog = _apply_from_editor(qtbot, page)
    dialog.summary.setText("add [fresh]")
    assert _run(qtbot, dialog) == "applied"
    _close(qtbot, dialog, page)
    assert "fresh" in server.list_shares()

    # 2. A restore from history, of the file before that.
    history = workspace.history
    workspace.tabs.setCurrentWidget(history)
    qtbot.waitUntil(lambda: history.table.rowCount() == 1, timeout=SLOW)
    history.table.selectRow(0)
    qtbot.waitUntil(lambda: history.restore_button.isEnabled(), timeout=SLOW)
    history.restore_button.click()
    restore = history.dialog
    assert isinstance(restore, ApplyDialog)
    assert _run(qtbot, restore) == "applied"
    restore.close()
    assert server.config.read_bytes() == original
    qtbot.waitUntil(lambda: history.table.rowCount() == 2, timeout=SLOW)

    # 3. The editor follows: without unsaved edits it shows the live file.
    workspace.tabs.setCurrentWidget(page)
    qtbot.waitUntil(lambda: page.buffer.render() == original, timeout=SLOW)
    assert page.buffer.baseline == original and not page.dirty
    assert "Reloaded" in page.status.text() and "restore" in page.status.text()

    # 4. An edit and an apply: the review's "(live)" is what is live, and it applies.
    _type_at_end(page, ["", "[second]", f"  path = {server.share_path}"])
    dialog = _apply_from_editor(qtbot, page)
    assert dialog.original == server.config.read_bytes()
    assert "+[second]" in dialog.diff.toPlainText()
    assert "[fresh]" not in dialog.diff.toPlainText()
    dialog.summary.setText("add [second]")
    assert _run(qtbot, dialog) == "applied", dialog.outcome and dialog.outcome.message
    _close(qtbot, dialog, page)
    assert "second" in server.list_shares() and "fresh" not in server.list_shares()
    assert not page.dirty

    # 5. Someone else changes the file under an unsaved edit: the review says so
    # before anything is tried ...
    _type_at_end(page, ["", "[third]", f"  path = {server.share_path}"])
    theirs = b"# changed by someone else\n" + server.config.read_bytes()
    server.config.write_bytes(theirs)
    dialog = _apply_from_editor(qtbot, page)
    qtbot.waitUntil(lambda: dialog.plan_task is None, timeout=SLOW)
    assert "changed on the server after it was read" in dialog.plan_label.text()
    assert not dialog.apply_button.isEnabled()
    assert "+# changed by someone else" in dialog.diff.toPlainText()
    screenshot(dialog, "apply-review-file-changed-meanwhile")
    merged_on: list[str] = []

    def recorded_merge(base: bytes, mine: bytes, live: bytes) -> bytes | None:
        merged_on.append(threading.current_thread().name)
        return merge3(base, mine, live)

    monkeypatch.setattr(sambatune.merge, "merge3", recorded_merge)
    dialog.close()
    # Typed on while the editor reads the live file again: merged again, off the GUI thread.
    _type_at_end(page, ["# typed while it was read"])
    # ... and the editor offers to put the edit on the live file.
    qtbot.waitUntil(lambda: page.follow_box is not None and page.follow_box.isVisible(), timeout=SLOW)
    box = page.follow_box
    assert box is not None and "put on the live file" in box.text()
    assert merged_on and threading.main_thread().name not in merged_on
    screenshot(box, "editor-live-changed-under-edits")
    next(b for b in box.buttons() if b.text() == "Keep my edits").click()
    assert page.dirty and page.buffer.baseline == theirs
    assert page.buffer.render().startswith(b"# changed by someone else\n")
    assert b"[third]" in page.buffer.render() and b"# typed while it was read" in page.buffer.render()

    # 6. Changed again between the review and Apply: refused, and recorded as refused.
    dialog = _apply_from_editor(qtbot, page)
    dialog.summary.setText("add [third], first try")
    qtbot.waitUntil(lambda: dialog.plan is not None, timeout=SLOW)
    assert dialog.apply_button.isEnabled()
    theirs = theirs.replace(b"# changed by someone else", b"# changed by someone else, twice")
    server.config.write_bytes(theirs)
    assert _run(qtbot, dialog) == "refused"
    assert server.config.read_bytes() == theirs
    dialog.close()
    qtbot.waitUntil(lambda: page.follow_box is not None and page.follow_box.isVisible(), timeout=SLOW)
    box = page.follow_box
    assert box is not None
    next(b for b in box.buttons() if b.text() == "Keep my edits").click()
    mine = page.buffer.render()
    assert page.dirty and page.buffer.baseline == theirs
    assert mine.startswith(b"# changed by someone else, twice\n") and b"[third]" in mine
    dialog = _apply_from_editor(qtbot, page)
    assert dialog.original == theirs
    diff = dialog.diff.toPlainText()
    assert "+[third]" in diff and "# changed by someone else" not in diff
    dialog.summary.setText("add [third]")
    assert _run(qtbot, dialog) == "applied", dialog.outcome and dialog.outcome.message
    _close(qtbot, dialog, page)
    assert server.config.read_bytes() == mine and not page.dirty

    # History: three versions applied and one restore among them, each with its backup.
    # The refused attempt made none (it was refused before anything happened on the
    # server); this computer's record keeps it, as refused with the other version live.
    workspace.tabs.setCurrentWidget(history)
    qtbot.waitUntil(lambda: history.table.rowCount() == 4, timeout=SLOW)
    rows = _history_rows(history)
    assert [summary for summary, _ in rows] == ["add [third]", "add [second]", rows[2][0], "add [fresh]"]
    assert rows[2][0].startswith("restored the backup of")
    assert [what for _, what in rows] == ["Applied"] * 4
    runs = AppliedVersions().for_server(workspace.session.require_transport().label, str(server.config))
    refused = [r for r in runs if r.summary == "add [third], first try"]
    assert [(r.outcome, r.live, r.content) for r in refused] == [("refused", "old", theirs)]
    history.table.selectRow(1)
    qtbot.waitUntil(lambda: history.restore_button.isEnabled(), timeout=SLOW)
    qtbot.wait(200)
    screenshot(window, "history-applied")


def test_a_resurvey_after_the_smb_conf_changed_moves_every_page_along(
    qtbot: QtBot,
    window: MainWindow,
    workspace: ServerWorkspace,
    server: SmbServer,
    tmp_path: Path,
    screenshot: Screenshot,
) -> None:
    page = _open_editor(qtbot, workspace)
    wizard = workspace.wizard
    qtbot.waitUntil(lambda: wizard.start_view.share.currentText() == server.share, timeout=SLOW)
    bench_port = workspace.benchmarks.form.port.value()
    assert bench_port == server.port
    bench_share = workspace.benchmarks.form.share
    qtbot.waitUntil(lambda: bench_share.currentText() == server.share, timeout=SLOW)

    # A second smbd, with its own smb.conf and another share.
    other = SmbServer(tmp_path, "archive-smbd")
    other.port = free_port()
    other.start(other.default_config().replace("[bench]", "[archive]"))
    try:
        # The admin points the server's settings at the other smb.conf.
        window.edit_server(workspace.session.profile.id)
        dialog = window.findChild(ProfileDialog)
        assert dialog is not None
        dialog.config_path.setText(str(other.config))
        dialog._accept()
        qtbot.waitUntil(lambda: wizard.start_view.share.currentText() == "archive", timeout=SLOW)
        assert [wizard.start_view.share.itemText(i) for i in range(wizard.start_view.share.count())] == [
            "archive"
        ]
        # The Benchmarks page follows the other smbd's port (it was not typed over).
        qtbot.waitUntil(lambda: workspace.benchmarks.form.port.value() == other.port, timeout=SLOW)
        # And its share list: the old smbd's share is not offered for the new one.
        qtbot.waitUntil(lambda: bench_share.currentText() == "archive", timeout=SLOW)
        assert [bench_share.itemText(i) for i in range(bench_share.count())] == ["archive"]
        # The editor, which had the old file open without edits, shows the new one.
        qtbot.waitUntil(lambda: page.loaded and page.source.path == str(other.config), timeout=SLOW)
        assert page.buffer.render() == other.config.read_bytes()
        workspace.tabs.setCurrentWidget(wizard)
        qtbot.wait(200)
        screenshot(window, "wizard-start-after-resurvey")
        # A share the admin typed stays when the survey runs again.
        wizard.start_view.share.setEditText("typed")
        bench_share.setEditText("typed too")
        surveyed = workspace.session.survey
        workspace.session.refresh_survey()
        qtbot.waitUntil(
            lambda: (
                workspace.session.survey is not surveyed
                and workspace.session.survey is not None
                and workspace.session.survey.config_path == str(other.config)
            ),
            timeout=SLOW,
        )
        qtbot.wait(300)  # the pages hear of the survey through queued signals
        assert wizard.start_view.share.currentText() == "typed"
        assert bench_share.currentText() == "typed too"
    finally:
        other.stop()


def _overview_text(overview: OverviewPage) -> str:
    """Every label the Overview shows for the newest survey."""
    return "\n".join(label.text() for widget in overview._content for label in widget.findChildren(QLabel))


def _instance_rows(overview: OverviewPage) -> dict[str, str]:
    """The Overview's smbd instances: smb.conf -> "managed" or ""."""
    tables = [t for w in overview._content for t in w.findChildren(QTableWidget, "instanceTable")]
    assert len(tables) == 1
    table = tables[0]
    return {item_at(table, row, 1).text(): item_at(table, row, 0).text() for row in range(table.rowCount())}


def _manage(qtbot: QtBot, window: MainWindow, workspace: ServerWorkspace, config: Path) -> None:
    """The admin points the server's settings at ``config``."""
    window.edit_server(workspace.session.profile.id)
    dialog = window.findChild(ProfileDialog)
    assert dialog is not None
    dialog.config_path.setText(str(config))
    dialog._accept()
    qtbot.waitUntil(
        lambda: workspace.session.survey is not None and workspace.session.survey.config_path == str(config),
        timeout=SLOW,
    )


def test_a_resurvey_moves_history_and_the_overview_to_the_managed_smbd(
    qtbot: QtBot,
    window: MainWindow,
    workspace: ServerWorkspace,
    server: SmbServer,
    ssh_options: ConnectionOptions,
    tmp_path: Path,
    screenshot: Screenshot,
) -> None:
    # One version applied to the first smbd's file: its history has a backup.
    transport = open_target(ssh_options, NoPrompts())
    try:
        original = server.config.read_bytes()
        journal = AppliedVersions().journal(transport.label, str(server.config))
        request = ApplyRequest(
            str(server.config), original, original + b"# one change\n", summary="one change"
        )
        assert apply_config(transport, request, journal=journal).ok
    finally:
        transport.close()
    history = workspace.history
    overview = workspace.overview
    workspace.tabs.setCurrentWidget(history)
    qtbot.waitUntil(
        lambda: history.path == str(server.config) and history.table.rowCount() == 1, timeout=SLOW
    )
    assert item_at(history.table, 0, 2).text() == "one change"
    assert server.process is not None
    first = _overview_text(overview)
    assert f"{server.config}  (" in first and f"127.0.0.1:{server.port}" in first
    assert "smbd running" in first and f"parent pid {server.process.pid}" in first

    other = SmbServer(tmp_path, "archive-smbd")
    other.port = free_port()
    other.start(other.default_config().replace("[bench]", "[archive]"))
    try:
        # With smb.conf history on screen, the admin manages the other smbd instead.
        _manage(qtbot, window, workspace, other.config)
        qtbot.waitUntil(lambda: history.path == str(other.config), timeout=SLOW)
        assert history.table.rowCount() == 0, "the other file's backups are shown"
        assert str(other.config) in history.where.text() and str(server.config) not in history.where.text()
        assert "No backups yet" in history.diff.toPlainText()
        assert other.process is not None
        qtbot.waitUntil(lambda: str(other.config) in _overview_text(overview), timeout=SLOW)
        shown = _overview_text(overview)
        assert f"127.0.0.1:{other.port}" in shown and f"parent pid {other.process.pid}" in shown
        assert "smbd running" in shown
        assert f"127.0.0.1:{server.port}" not in shown  # the instance table lists it, no label
        instances = _instance_rows(overview)
        assert instances[str(other.config)] == "managed" and instances[str(server.config)] == ""
        workspace.tabs.setCurrentWidget(overview)
        qtbot.wait(200)
        screenshot(window, "overview-after-resurvey")

        # The managed smbd stops: Survey again says so, and names no port of another.
        other.stop()
        surveyed = workspace.session.survey
        workspace.tabs.setCurrentWidget(history)
        (again,) = [b for w in overview._content for b in w.findChildren(QPushButton, "refreshSurvey")]
        again.click()
        qtbot.waitUntil(lambda: workspace.session.survey is not surveyed, timeout=SLOW)
        qtbot.waitUntil(lambda: "smbd NOT running" in _overview_text(overview), timeout=SLOW)
        stopped = _overview_text(overview)
        assert f"smbd is not running for {other.config}" in stopped
        assert "smbd running" not in stopped and "parent pid" not in stopped
        assert f"127.0.0.1:{server.port}" not in stopped
        assert history.path == str(other.config) and history.table.rowCount() == 0
    finally:
        other.stop()

    # Back to the first smbd: its history and its running state again.
    _manage(qtbot, window, workspace, server.config)
    qtbot.waitUntil(
        lambda: history.path == str(server.config) and history.table.rowCount() == 1, timeout=SLOW
    )
    qtbot.waitUntil(lambda: "smbd running" in _overview_text(overview), timeout=SLOW)
    back = _overview_text(overview)
    assert f"{server.config}  (" in back and f"parent pid {server.process.pid}" in back


def test_unsaved_edits_of_the_old_smb_conf_are_not_dropped_without_asking(
    qtbot: QtBot,
    window: MainWindow,
    workspace: ServerWorkspace,
    server: SmbServer,
    tmp_path: Path,
) -> None:
    page = _open_editor(qtbot, workspace)
    _type_at_end(page, ["# not applied yet"])
    second = tmp_path / "second.conf"
    second.write_bytes(server.config.read_bytes())
    window.edit_server(workspace.session.profile.id)
    dialog = window.findChild(ProfileDialog)
    assert dialog is not None
    dialog.config_path.setText(str(second))
    dialog._accept()
    qtbot.waitUntil(
        lambda: any(b.isVisible() for b in page.findChildren(QMessageBox, "discardChangesBox")), timeout=SLOW
    )
    box = next(b for b in page.findChildren(QMessageBox, "discardChangesBox") if b.isVisible())
    assert f"now manages {second}" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert page.dirty and page.source.path == str(server.config)
