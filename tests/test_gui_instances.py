"""The instance choice and the restart warning, driven through the GUI on real servers."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QPushButton, QTableWidget
from pytestqt.qtbot import QtBot

from sambatune.conf.apply import ApplyStep
from sambatune.profiles import ServerProfile
from sambatune.remote.survey import Survey
from sambatune.ui.apply_dialog import ApplyDialog
from sambatune.ui.main_window import MainWindow
from sambatune.ui.overview_page import OverviewPage
from screenshots import Screenshot
from table_items import item_at
from test_instances import HeldSession
from testbed.smbd import SmbServer
from testbed.sshd import SshServer, current_user


def _window(
    qtbot: QtBot, sshd: SshServer, user_key: Path, home: Path, config_path: str = ""
) -> tuple[MainWindow, ServerProfile]:
    (home / ".ssh" / "known_hosts").write_text(sshd.known_hosts_line)
    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1180, 780)
    window.show()
    profile = ServerProfile(
        name="Two smbd",
        host="127.0.0.1",
        port=sshd.port,
        user=current_user(),
        identity_file=str(user_key),
        config_path=config_path,
    )
    window.add_profile(profile)
    window.connect_server(profile.id)
    qtbot.waitUntil(lambda: window.sessions[profile.id].survey is not None, timeout=30000)
    return window, profile


def test_connecting_draws_the_overview_once(
    qtbot: QtBot,
    sshd: SshServer,
    user_key: Path,
    isolated_home: Path,
    fresh_smbd: SmbServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pages are built when the state turns to connected, with the survey; the
    survey's own signal follows. Drawn twice, the first table was deleted under a test's
    (or an admin's) click on it."""
    drawn: list[object] = []
    draw = OverviewPage.show_survey

    def counted(page: OverviewPage, survey: Survey) -> None:
        drawn.append(survey)
        draw(page, survey)

    monkeypatch.setattr(OverviewPage, "show_survey", counted)
    window, profile = _window(qtbot, sshd, user_key, isolated_home, str(fresh_smbd.config))
    qtbot.wait(100)
    assert len(drawn) == 1
    assert drawn[0] is window.sessions[profile.id].survey


def test_the_admin_chooses_which_smbd_to_manage(
    qtbot: QtBot,
    sshd: SshServer,
    user_key: Path,
    isolated_home: Path,
    fresh_smbd: SmbServer,
    second_smbd: SmbServer,
    screenshot: Screenshot,
) -> None:
    window, profile = _window(qtbot, sshd, user_key, isolated_home)
    session = window.sessions[profile.id]
    workspace = window.workspaces[profile.id]
    overview = workspace.overview
    assert session.survey is not None and session.survey.ambiguous
    table = overview.findChild(QTableWidget, "instanceTable")
    assert table is not None
    configs = [item_at(table, r, 1).text() for r in range(table.rowCount())]
    assert {str(fresh_smbd.config), str(second_smbd.config)} <= set(configs)
    # Nothing is edited or applied while the choice is open: no silent default.
    with pytest.raises(Exception, match="Several smbd run"):
        session.config_path()
    qtbot.wait(200)
    screenshot(window, "overview-choose-instance")

    row = configs.index(str(second_smbd.config))
    manage = table.cellWidget(row, 4)
    assert isinstance(manage, QPushButton)
    manage.click()
    qtbot.waitUntil(lambda: session.survey is not None and not session.survey.ambiguous, timeout=30000)
    assert profile.config_path == str(second_smbd.config)
    assert session.config_path() == str(second_smbd.config)
    assert session.survey.smb_port() == second_smbd.port
    assert window.store.load()[-1].config_path == str(second_smbd.config), "not remembered"
    # Every page follows: the benchmarks' SMB port is the managed instance's.
    qtbot.waitUntil(lambda: workspace.benchmarks.form.port.value() == second_smbd.port, timeout=10000)
    workspace.tabs.setCurrentWidget(workspace.editor)
    qtbot.waitUntil(lambda: workspace.editor.loaded, timeout=30000)
    assert workspace.editor.source.path == str(second_smbd.config)
    workspace.tabs.setCurrentWidget(overview)
    qtbot.wait(100)
    screenshot(window, "overview-instances")


def test_the_review_warns_before_a_restart_and_needs_consent(
    qtbot: QtBot,
    sshd: SshServer,
    user_key: Path,
    isolated_home: Path,
    fresh_smbd: SmbServer,
    screenshot: Screenshot,
) -> None:
    window, profile = _window(qtbot, sshd, user_key, isolated_home, str(fresh_smbd.config))
    held = HeldSession(fresh_smbd.port)
    try:
        original = fresh_smbd.config.read_bytes()
        candidate = original.replace(b"interfaces = lo", b"interfaces = 127.0.0.1/8")
        dialog = ApplyDialog(
            window.sessions[profile.id],
            path=str(fresh_smbd.config),
            original=original,
            candidate=candidate,
            parent=window,
        )
        qtbot.addWidget(dialog)
        dialog.show()
        qtbot.waitUntil(lambda: dialog.plan is not None, timeout=30000)
        text = dialog.plan_label.text()
        assert "needs smbd to restart" in text and "1 session(s) from 1 machine(s)" in text
        assert "interfaces" in text
        assert dialog.allow_restart.isVisible() and not dialog.apply_button.isEnabled()
        screenshot(dialog, "apply-restart-warning")
        assert fresh_smbd.config.read_bytes() == original and held.still_works()

        dialog.allow_restart.setChecked(True)
        assert dialog.apply_button.isEnabled()
        assert dialog.apply_button.text() == "Apply and restart smbd"
        dialog.apply_button.click()
        qtbot.waitUntil(lambda: dialog.outcome is not None, timeout=60000)
        assert dialog.outcome is not None
        assert dialog.outcome.ok, dialog.outcome.message
        assert dialog.step_state(ApplyStep.RESTART) == "done"
        rows = [dialog.steps.item(i).text() for i in range(dialog.steps.count())]
        assert [r.split("  ", 1)[1].split(" — ")[0] for r in rows][-2:] == [
            "Restart smbd",
            "Check smbd answers and lists the shares",
        ], rows
        screenshot(dialog, "apply-restart-done")
        assert fresh_smbd.config.read_bytes() == candidate
    finally:
        try:
            held.close()
        except Exception:  # the restart cut it off, as it said it would
            pass
