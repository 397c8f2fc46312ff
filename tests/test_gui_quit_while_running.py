"""Quitting while a measurement or a wizard step runs asks first (minutes of work are at stake)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from sambatune.bench.results_db import ResultsDatabase
from sambatune.profiles import ServerProfile
from sambatune.ui.main_window import MainWindow
from sambatune.wizard.machine import BASELINE, TuningWizard
from sambatune.wizard.store import WizardStore
from screenshots import Screenshot
from testbed.smbd import SmbServer
from testbed.sshd import SshServer, current_user

LONG = 180_000


def _quit_question(qtbot: QtBot, window: MainWindow) -> QMessageBox:
    window.close()
    qtbot.waitUntil(
        lambda: any(b.isVisible() for b in window.findChildren(QMessageBox, "quitRunningBox")), timeout=5000
    )
    return next(b for b in window.findChildren(QMessageBox, "quitRunningBox") if b.isVisible())


def test_quitting_during_a_benchmark_asks_and_keep_running_keeps_it(
    qtbot: QtBot,
    screenshot: Screenshot,
) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1180, 780)
    window.show()
    workspace = window.workspaces["local"]
    workspace.connect_panel.connect_button.click()
    qtbot.waitUntil(lambda: workspace.session.survey is not None, timeout=60_000)
    workspace.tabs.setCurrentWidget(workspace.benchmarks)
    page = workspace.benchmarks
    page.form.select_test("net")
    page.form.duration.setValue(30.0)
    before = len(ResultsDatabase().sessions())
    page.run_button.click()
    qtbot.waitUntil(lambda: page.live.points > 0, timeout=60_000)

    box = _quit_question(qtbot, window)
    assert "This computer: Benchmark" in box.text()
    assert "The measurement under way is lost." in box.text()
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    screenshot(box, "quit-while-running")
    box.button(QMessageBox.StandardButton.Cancel).click()  # Keep running
    qtbot.wait(300)
    assert window.isVisible() and page.running

    box = _quit_question(qtbot, window)
    assert box.button(QMessageBox.StandardButton.Discard).text() == "Stop and quit"
    box.button(QMessageBox.StandardButton.Discard).click()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=10_000)
    qtbot.waitUntil(lambda: not window.runner.active, timeout=30_000)
    assert len(ResultsDatabase().sessions()) == before  # the stopped run saved nothing


def test_quitting_during_a_wizard_step_asks_and_the_wizard_resumes_later(
    qtbot: QtBot,
    sshd: SshServer,
    user_key: Path,
    fresh_smbd: SmbServer,
    isolated_home: Path,
    screenshot: Screenshot,
) -> None:
    (isolated_home / ".ssh" / "known_hosts").write_text(sshd.known_hosts_line)
    profile = ServerProfile(
        name="Quit bed",
        host="127.0.0.1",
        port=sshd.port,
        user=current_user(),
        identity_file=str(user_key),
        config_path=str(fresh_smbd.config),
    )
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    window.add_profile(profile)
    window.connect_server(profile.id)
    qtbot.waitUntil(lambda: window.sessions[profile.id].survey is not None, timeout=60_000)
    wizard_action = window.findChild(QAction, "wizardAction")
    assert wizard_action is not None
    wizard_action.trigger()
    page = window.workspaces[profile.id].wizard
    qtbot.waitUntil(lambda: page.start_view.share.count() > 0 and page.task is None, timeout=30_000)
    page.start_view.file_size.setValue(64)
    page.start_view.runs.setValue(20)
    page.primary.click()  # Start the wizard
    qtbot.waitUntil(
        lambda: page.task is None and page.wizard is not None and page.wizard.stage == BASELINE, timeout=LONG
    )
    assert page.wizard is not None
    wizard_id = page.wizard.id
    page.primary.click()  # Measure the baseline
    qtbot.waitUntil(lambda: page.measure_view.runs.table.rowCount() >= 1, timeout=LONG)

    box = _quit_question(qtbot, window)
    assert "Quit bed: tuning wizard, measuring the baseline" in box.text()
    assert "can be resumed" in box.text()
    screenshot(box, "quit-during-a-wizard-step")
    box.button(QMessageBox.StandardButton.Discard).click()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=10_000)
    qtbot.waitUntil(lambda: not window.runner.active, timeout=30_000)
    stored = TuningWizard.resume(WizardStore(), wizard_id)
    assert stored.stage == BASELINE and not stored.finished
