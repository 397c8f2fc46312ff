"""Any wizard can be discarded from its page, at any step; a failed baseline included.

Against real sshd and smbd: the wizard measures a share that does not exist, its
baseline fails, and the admin discards it from the page, without restarting the app.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from sambatune.profiles import ServerProfile
from sambatune.ui.main_window import MainWindow
from sambatune.ui.wizard.page import WizardPage
from sambatune.wizard.machine import BASELINE, TuningWizard
from sambatune.wizard.store import WizardStore
from screenshots import Screenshot
from testbed.smbd import SmbServer
from testbed.sshd import SshServer, current_user

LONG = 180_000


@pytest.fixture
def profile(sshd: SshServer, user_key: Path, fresh_smbd: SmbServer, isolated_home: Path) -> ServerProfile:
    (isolated_home / ".ssh" / "known_hosts").write_text(sshd.known_hosts_line)
    return ServerProfile(
        name="Discard bed",
        host="127.0.0.1",
        port=sshd.port,
        user=current_user(),
        identity_file=str(user_key),
        config_path=str(fresh_smbd.config),
    )


def open_wizard(qtbot: QtBot, profile: ServerProfile) -> tuple[MainWindow, WizardPage]:
    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1180, 780)
    window.show()
    window.add_profile(profile)
    window.connect_server(profile.id)
    session = window.sessions[profile.id]
    qtbot.waitUntil(lambda: session.survey is not None, timeout=60_000)
    wizard_action = window.findChild(QAction, "wizardAction")
    assert wizard_action is not None
    wizard_action.trigger()
    page = window.workspaces[profile.id].wizard
    qtbot.waitUntil(lambda: page.start_view.share.count() > 0 and page.task is None, timeout=30_000)
    return window, page


def test_a_wizard_whose_baseline_failed_is_discarded_from_the_page(
    qtbot: QtBot,
    profile: ServerProfile,
    fresh_smbd: SmbServer,
    screenshot: Screenshot,
) -> None:
    original = fresh_smbd.config.read_bytes()
    window, page = open_wizard(qtbot, profile)
    assert not page.discard_button.isVisible()  # no wizard yet, none unfinished
    page.start_view.share.setEditText("no-such-share")
    page.start_view.file_size.setValue(1)
    page.start_view.runs.setValue(2)
    page.start_view.warmup.setValue(0)
    page.primary.click()  # Start the wizard
    qtbot.waitUntil(
        lambda: page.task is None and page.stack.currentWidget() is page.findings_view, timeout=LONG
    )
    assert page.discard_button.isVisible() and page.discard_button.isEnabled()
    wizard = page.wizard
    assert wizard is not None
    wizard_id = wizard.id

    page.primary.click()  # Measure the baseline: the share does not exist
    assert page.discard_button.isVisible() and not page.discard_button.isEnabled()
    qtbot.waitUntil(lambda: page.task is None, timeout=LONG)
    assert page.status.text().startswith("Stopped:")
    assert wizard.stage == BASELINE
    assert page.discard_button.isVisible() and page.discard_button.isEnabled()
    qtbot.wait(100)
    screenshot(window, "wizard-baseline-failed")

    page.discard_button.click()
    question = page.findChild(QMessageBox, "discardWizardQuestion")
    assert question is not None and question.isVisible()
    assert "stays exactly as it is now" in question.text() and "discarded" in question.text()
    screenshot(question, "wizard-discard-question")
    # Cancel keeps it.
    question.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.wait(50)
    assert page.wizard is wizard and page.task is None

    page.discard_button.click()
    question = next(q for q in page.findChildren(QMessageBox, "discardWizardQuestion") if q.isVisible())
    next(b for b in question.buttons() if b.text() == f"Discard wizard {wizard_id}").click()
    qtbot.waitUntil(lambda: page.task is None and page.wizard is None, timeout=LONG)
    assert page.stack.currentWidget() is page.start_view
    assert f"Wizard {wizard_id} discarded" in page.status.text()
    qtbot.waitUntil(lambda: page.start_view.unfinished.count() == 0, timeout=30_000)
    assert not page.discard_button.isVisible()
    stored = TuningWizard.resume(WizardStore(), wizard_id)
    assert stored.finished and stored.discarded
    assert fresh_smbd.config.read_bytes() == original
    # A new wizard can start right away.
    assert page.primary.text() == "Start the wizard" and page.primary.isEnabled()
    screenshot(window, "wizard-after-discard")


def test_an_unfinished_wizard_is_discarded_from_the_start_page(
    qtbot: QtBot,
    profile: ServerProfile,
) -> None:
    window, page = open_wizard(qtbot, profile)
    page.start_view.file_size.setValue(1)
    page.primary.click()
    qtbot.waitUntil(lambda: page.task is None and page.wizard is not None, timeout=LONG)
    assert page.wizard is not None
    wizard_id = page.wizard.id
    window.close()  # nothing runs: no question
    window, page = open_wizard(qtbot, profile)
    qtbot.waitUntil(lambda: page.start_view.unfinished.count() == 1, timeout=30_000)
    assert page.discard_button.isVisible()
    assert page.discard_button.text() == "Discard the selected wizard…"
    page.discard_button.click()
    question = page.findChild(QMessageBox, "discardWizardQuestion")
    assert question is not None
    next(b for b in question.buttons() if b.text() == f"Discard wizard {wizard_id}").click()
    qtbot.waitUntil(lambda: page.task is None and page.start_view.unfinished.count() == 0, timeout=LONG)
    assert TuningWizard.resume(WizardStore(), wizard_id).discarded
