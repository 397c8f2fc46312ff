"""The apply flow and a restore from history, driven through the GUI against real servers."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from sambatune.conf.apply import ApplyStep, StepEvent
from sambatune.profiles import ServerProfile
from sambatune.ui.apply_dialog import ApplyDialog
from sambatune.ui.main_window import MainWindow
from screenshots import Screenshot
from testbed.smbd import SmbServer
from testbed.sshd import SshServer, current_user


@pytest.fixture
def server(fresh_smbd: SmbServer) -> SmbServer:
    return fresh_smbd


@pytest.fixture
def connected(
    qtbot: QtBot, sshd: SshServer, user_key: Path, server: SmbServer, isolated_home: Path
) -> MainWindow:
    (isolated_home / ".ssh" / "known_hosts").write_text(sshd.known_hosts_line)
    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1100, 760)
    window.show()
    profile = ServerProfile(
        name="Apply bed",
        host="127.0.0.1",
        port=sshd.port,
        user=current_user(),
        identity_file=str(user_key),
        config_path=str(server.config),
    )
    window.add_profile(profile)
    window.connect_server(profile.id)
    session = window.sessions[profile.id]
    qtbot.waitUntil(lambda: session.survey is not None, timeout=30000)
    return window


def test_apply_then_restore_from_history(
    connected: MainWindow,
    qtbot: QtBot,
    server: SmbServer,
    screenshot: Screenshot,
) -> None:
    profile_id = connected.server_list.current_id()
    assert profile_id is not None
    session = connected.sessions[profile_id]
    original = server.config.read_bytes()
    candidate = original + f"\n[fresh]\n  path = {server.share_path}\n  guest ok = yes\n".encode()
    dialog = ApplyDialog(
        session,
        path=str(server.config),
        original=original,
        candidate=candidate,
        summary="add the fresh share",
        parent=connected,
    )
    qtbot.addWidget(dialog)
    dialog.show()
    assert "+[fresh]" in dialog.diff.toPlainText()
    qtbot.waitUntil(lambda: dialog.plan is not None, timeout=30000)
    assert "A reload applies this change" in dialog.plan_label.text()
    assert not dialog.allow_restart.isVisible()
    screenshot(dialog, "apply-review")
    # Catch the dialog in the middle of the run: the backup step is under way.
    shown_running: list[str] = []
    step_event = dialog._event

    def watching(event: StepEvent) -> None:
        step_event(event)
        if event.step == "backup" and event.state == "running":
            shown_running.append(dialog.progress.format())
            screenshot(dialog, "apply-progress")

    dialog._event = watching  # type: ignore[method-assign]
    dialog.apply_button.click()
    qtbot.waitUntil(lambda: dialog.outcome is not None, timeout=60000)
    assert dialog.outcome is not None
    assert dialog.outcome.ok, dialog.outcome.message
    assert shown_running == ["Step 3 of 6: Back up the live file"]
    assert dialog.outcome.backup is not None
    assert Path(dialog.outcome.backup.path).name in dialog.details_title.text()
    assert "+[fresh]" in dialog.result_diff.toPlainText()
    assert [
        dialog.step_state(ApplyStep(s))
        for s in ("upload", "testparm", "backup", "install", "reload", "health")
    ] == ["done"] * 6
    qtbot.wait(100)  # let the Close button be laid out
    screenshot(dialog, "apply-result")
    assert "fresh" in server.list_shares()
    dialog.close()

    workspace = connected.workspaces[profile_id]
    workspace.tabs.setCurrentWidget(workspace.history)
    history = workspace.history
    qtbot.waitUntil(lambda: history.table.rowCount() == 1, timeout=30000)
    history.table.selectRow(0)
    qtbot.waitUntil(lambda: "-[fresh]" in history.diff.toPlainText(), timeout=30000)
    screenshot(connected, "history")
    history.restore_button.click()
    restore = history.dialog
    assert isinstance(restore, ApplyDialog)
    restore.apply_button.click()
    qtbot.waitUntil(lambda: restore.outcome is not None, timeout=60000)
    assert restore.outcome is not None and restore.outcome.ok
    assert server.config.read_bytes() == original
    assert "fresh" not in server.list_shares()


def test_rejected_change_shows_why(
    connected: MainWindow,
    qtbot: QtBot,
    server: SmbServer,
    screenshot: Screenshot,
) -> None:
    profile_id = connected.server_list.current_id()
    assert profile_id is not None
    original = server.config.read_bytes()
    dialog = ApplyDialog(
        connected.sessions[profile_id],
        path=str(server.config),
        original=original,
        candidate=original + b"[x]\n oplocks = maybe\n",
        parent=connected,
    )
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.apply_button.click()
    qtbot.waitUntil(lambda: dialog.outcome is not None, timeout=60000)
    assert dialog.outcome is not None and dialog.outcome.status == "refused"
    assert dialog.step_state(ApplyStep.TESTPARM) == "failed"
    assert "testparm rejects" in dialog.result_label.text()
    assert "What testparm said" in dialog.details_title.text()
    assert "value is not boolean" in dialog.result_diff.toPlainText()
    qtbot.wait(100)
    screenshot(dialog, "apply-refused")
    assert server.config.read_bytes() == original


@pytest.mark.parametrize(("stop_at", "status"), [("testparm", "cancelled"), ("reload", "applied")])
def test_escape_while_applying_stops_before_the_swap_and_never_hides_the_outcome(
    connected: MainWindow,
    qtbot: QtBot,
    server: SmbServer,
    stop_at: str,
    status: str,
) -> None:
    profile_id = connected.server_list.current_id()
    assert profile_id is not None
    original = server.config.read_bytes()
    candidate = original + b"\n# stopped or not\n"
    dialog = ApplyDialog(
        connected.sessions[profile_id],
        path=str(server.config),
        original=original,
        candidate=candidate,
        parent=connected,
    )
    qtbot.addWidget(dialog)
    dialog.show()
    step_event = dialog._event

    def watching(event: StepEvent) -> None:
        step_event(event)
        if event.step == stop_at and event.state == "running":
            QTest.keyClick(dialog, Qt.Key.Key_Escape)

    dialog._event = watching  # type: ignore[method-assign]
    dialog.apply_button.click()
    qtbot.waitUntil(lambda: dialog.outcome is not None, timeout=60000)
    assert dialog.isVisible()  # Escape stopped the steps, it did not hide where they ended
    assert dialog.outcome is not None and dialog.outcome.status == status
    if status == "cancelled":
        assert server.config.read_bytes() == original
        assert dialog.step_state(ApplyStep.INSTALL) == "skipped"
    else:  # past the swap the pipeline finishes: the new file is live and verified
        assert server.config.read_bytes() == candidate
        assert dialog.step_state(ApplyStep.HEALTH) == "done"
    assert dialog.close_button.isVisible()
