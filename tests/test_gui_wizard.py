"""The tuning wizard driven through its Qt face, as an admin would, against real sshd and smbd.

One change is applied, measured, judged and reverted (smb.conf byte for byte as before);
a second change is applied and the window is closed while it is being measured; a new
window resumes the wizard from the database, keeps the change, and writes the report.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from sambatune.profiles import ServerProfile
from sambatune.ui.main_window import MainWindow
from sambatune.ui.wizard.page import WizardPage
from sambatune.wizard.machine import CHOOSE, DONE, MEASURE, TuningWizard
from sambatune.wizard.store import WizardStep, WizardStore
from sambatune.wizard.verdict import decision_order
from screenshots import Screenshot
from testbed.smbd import SmbServer
from testbed.sshd import SshServer, current_user

LONG = 180_000


def open_window(qtbot: QtBot, profile: ServerProfile) -> tuple[MainWindow, WizardPage]:
    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1180, 780)
    window.show()
    if window.profile(profile.id) is None:
        window.add_profile(profile)
    window.connect_server(profile.id)
    session = window.sessions[profile.id]
    qtbot.waitUntil(lambda: session.survey is not None, timeout=60_000)
    wizard_action = window.findChild(QAction, "wizardAction")
    assert wizard_action is not None
    wizard_action.trigger()
    workspace = window.workspaces[profile.id]
    assert workspace.tabs.currentWidget() is workspace.wizard
    page = workspace.wizard
    qtbot.waitUntil(lambda: page.start_view.share.count() > 0 and page.task is None, timeout=30_000)
    return window, page


def idle(page: WizardPage) -> bool:
    return page.task is None


def pick(page: WizardPage, rule_id: str) -> None:
    index = next(i for i, f in enumerate(page.findings_view.findings) if f["id"] == rule_id)
    page.findings_view.list.setCurrentRow(index)


@pytest.fixture
def profile(sshd: SshServer, user_key: Path, troubled_smbd: SmbServer, isolated_home: Path) -> ServerProfile:
    (isolated_home / ".ssh" / "known_hosts").write_text(sshd.known_hosts_line)
    return ServerProfile(
        name="Wizard bed",
        host="127.0.0.1",
        port=sshd.port,
        user=current_user(),
        identity_file=str(user_key),
        config_path=str(troubled_smbd.config),
    )


def test_the_whole_wizard_through_the_gui_with_a_resume(
    qtbot: QtBot,
    profile: ServerProfile,
    troubled_smbd: SmbServer,
    tmp_path: Path,
    screenshot: Screenshot,
) -> None:
    config = troubled_smbd.config
    original = config.read_bytes()
    window, page = open_window(qtbot, profile)
    assert page.start_view.share.currentText() == troubled_smbd.share
    page.start_view.test_kind.setCurrentIndex(page.start_view.test_kind.findData("smb"))
    page.start_view.file_size.setValue(4)
    page.start_view.runs.setValue(3)
    page.start_view.warmup.setValue(1)
    screenshot(window, "wizard-1-start")

    page.primary.click()  # Start the wizard
    qtbot.waitUntil(lambda: idle(page) and page.stack.currentWidget() is page.findings_view, timeout=LONG)
    found = {f["id"] for f in page.findings_view.findings}
    assert {"socket-options-fixed-buffers", "log-level-high", "sync-always"} <= found
    assert page.primary.text() == "Measure the baseline"
    screenshot(window, "wizard-2-findings")

    page.primary.click()  # Measure the baseline
    qtbot.waitUntil(lambda: page.measure_view.runs.table.rowCount() >= 3, timeout=LONG)
    screenshot(window, "wizard-3-baseline-running")
    qtbot.waitUntil(
        lambda: idle(page) and page.wizard is not None and page.wizard.stage == CHOOSE, timeout=LONG
    )
    assert page.primary.text() == "Apply this change and measure"
    # The baseline's figures stay in sight while choosing what to change.
    status = page.status.text()
    assert re.match(r"Baseline \(session \d+\): \w+ [\d.,]+ [kMG]?B/s", status), status
    assert page.wizard is not None and page.wizard.baseline_text() in page.findings_view.hint.text()
    pick(page, "measure-throughput")
    assert not page.primary.isEnabled()  # not an smb.conf change
    pick(page, "socket-options-fixed-buffers")
    assert page.primary.isEnabled()
    details = page.findings_view.details.toPlainText()
    assert "Needs a restart of smbd, which disconnects every client" in details
    screenshot(window, "wizard-4-choose")

    # Every line the status shows from here on, to see the apply steps count their seconds.
    shown: list[str] = []
    set_status = page.status.setText

    def recorded(text: str) -> None:
        shown.append(text)
        set_status(text)

    page.status.setText = recorded  # type: ignore[method-assign]
    page.primary.click()  # Apply this change and measure: a restart is asked for first
    question = page.findChild(QMessageBox, "restartQuestion")
    assert question is not None and "restart" in question.text()
    assert config.read_bytes() == original
    question.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: page.measure_view.runs.table.rowCount() >= 2, timeout=LONG)
    assert "-  socket options = SO_RCVBUF=8192 SO_SNDBUF=8192" in page.measure_view.diff.toPlainText()
    steps = [page.measure_view.steps.item(i).text() for i in range(page.measure_view.steps.count())]
    assert any(s.startswith("✓ Validate it with testparm") for s in steps), steps
    screenshot(window, "wizard-5-apply-and-measure")
    assert any(re.fullmatch(r"Restart smbd[^·]*… · \d+ s", line) for line in shown), shown
    qtbot.waitUntil(lambda: idle(page) and page.stack.currentWidget() is page.verdict_view, timeout=LONG)
    assert page.verdict_view.table.rowCount() == 2
    headline = page.verdict_view.headline.text()
    assert any(word in headline for word in ("Faster", "Slower", "Mixed", "No real difference"))
    screenshot(window, "wizard-6-verdict")

    # The decision offered first is the one the CLI names first (keep, unless measured worse).
    assert page.wizard is not None and page.wizard.verdict is not None
    first, second = decision_order(page.wizard.verdict["recommendation"])
    labels = {"keep": "Keep the change", "revert": "Revert it"}
    assert (page.primary.text(), page.secondary.text()) == (labels[first], labels[second])
    revert = page.primary if page.primary.text() == "Revert it" else page.secondary
    revert.click()
    qtbot.waitUntil(
        lambda: idle(page) and page.wizard is not None and page.wizard.stage == CHOOSE, timeout=LONG
    )
    assert config.read_bytes() == original
    assert "byte for byte" in page.status.text()

    # A second change: closed mid-measurement (after it was applied).
    pick(page, "log-level-high")
    page.primary.click()
    assert page.wizard is not None
    wizard_id = page.wizard.id
    qtbot.waitUntil(
        lambda: (
            page.wizard is not None
            and page.wizard.stage == MEASURE
            and page.measure_view.runs.table.rowCount() >= 1
        ),
        timeout=LONG,
    )
    window.close()  # asks first: a measurement is running
    box = window.findChild(QMessageBox, "quitRunningBox")
    assert box is not None and "measuring again" in box.text()
    box.button(QMessageBox.StandardButton.Discard).click()  # Stop and quit
    qtbot.waitUntil(lambda: not window.runner.active, timeout=30_000)
    applied = config.read_bytes()
    assert b"log level = 1" in applied

    window, page = open_window(qtbot, profile)
    qtbot.waitUntil(lambda: page.start_view.unfinished.count() == 1, timeout=30_000)
    assert page.start_view.selected_wizard() == wizard_id
    assert page.secondary.text() == "Resume the selected wizard" and page.secondary.isEnabled()
    page.secondary.click()
    qtbot.waitUntil(lambda: idle(page) and page.wizard is not None, timeout=LONG)
    assert page.wizard is not None
    assert page.wizard.stage == MEASURE
    assert page.primary.text() == "Continue: measure again"
    screenshot(window, "wizard-7-resumed")
    page.primary.click()
    qtbot.waitUntil(lambda: idle(page) and page.stack.currentWidget() is page.verdict_view, timeout=LONG)
    keep = page.primary if page.primary.text() == "Keep the change" else page.secondary
    keep.click()
    qtbot.waitUntil(
        lambda: idle(page) and page.wizard is not None and page.wizard.stage == CHOOSE, timeout=LONG
    )
    assert config.read_bytes() == applied
    page.secondary.click()  # Finish and write the report
    qtbot.waitUntil(lambda: idle(page) and page.stack.currentWidget() is page.finish_view, timeout=LONG)
    assert page.wizard is not None
    assert page.wizard.stage == DONE
    assert "log level = 1" in page.finish_view.diff.toPlainText()
    screenshot(window, "wizard-8-finished")
    report = tmp_path / "wizard.html"
    page.save_report(str(report))
    qtbot.waitUntil(lambda: idle(page) and page.last_report == str(report), timeout=LONG)
    html = report.read_text()
    assert "Change 1: Fixed socket buffers" in html and "Change 2: Log level 3" in html
    assert "Reverted" in html and "Kept." in html
    stored = TuningWizard.resume(WizardStore(), wizard_id)
    assert stored.finished and [r[WizardStep.DECIDE].data["decision"] for r in stored.rounds()] == [
        "revert",
        "keep",
    ]
