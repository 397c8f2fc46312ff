"""Long measurements never look frozen: against a slow smbd (fixed 8 KiB socket buffers,
a get at about 2 MB/s) the Benchmarks page and the wizard say which step and which run of
how many, the live figure and the time left, and the plot fills while the copies crawl.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from sambatune.profiles import ServerProfile
from sambatune.ui.bench.page import BenchmarksPage
from sambatune.ui.main_window import MainWindow
from sambatune.wizard.machine import CHOOSE
from screenshots import Screenshot
from test_gui_wizard import LONG, open_window
from testbed.smbd import SmbServer
from testbed.sshd import SshServer, current_user


@pytest.fixture
def slow_page(qtbot: QtBot, troubled_smbd: SmbServer) -> BenchmarksPage:
    """This computer's Benchmarks page, managing the slow smbd."""
    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1180, 780)
    window.show()
    session = window.session("local")
    session.profile.config_path = str(troubled_smbd.config)
    workspace = window.workspaces["local"]
    workspace.connect_panel.connect_button.click()
    qtbot.waitUntil(lambda: session.survey is not None, timeout=60000)
    workspace.tabs.setCurrentWidget(workspace.benchmarks)
    page = workspace.benchmarks
    page.window_under_test = window  # type: ignore[attr-defined]
    return page


def test_smb_on_a_slow_server_says_where_it_is_then_shows_its_own_runs(
    slow_page: BenchmarksPage,
    qtbot: QtBot,
    troubled_smbd: SmbServer,
    screenshot: Screenshot,
) -> None:
    page = slow_page
    window = page.window_under_test  # type: ignore[attr-defined]
    form = page.form
    form.select_test("smb")
    assert form.file_size.text() == "auto", "the SMB test sizes its file unless told"
    form.select_test("disk")
    assert form.file_size.text() == "256MiB"
    form.select_test("smb-client")
    assert form.file_size.text() == "auto"
    form.select_test("smb")
    form.share.setCurrentText(troubled_smbd.share)
    form.file_size.setText("8MiB")  # a size given is used: no probe, three steps
    form.runs.setValue(1)
    form.warmup.setValue(0)
    page.run_button.click()

    def crawling() -> bool:
        text = page.status.text()
        return "SMB get" in text and "MB/s" in text and "left" in text and page.live.points > 0

    qtbot.waitUntil(crawling, timeout=60000)
    text = page.status.text()
    assert text.startswith("Step 1 of 3 · SMB get"), text
    assert "run 1 of 1" in text
    assert page.progress.maximum() == 1000 and 0 < page.progress.value() < 1000
    assert page.live.plot.getPlotItem().titleLabel.text.startswith("Step 1 of 3")
    qtbot.wait(150)
    screenshot(window, "bench-smb-slow-server-running")

    qtbot.waitUntil(lambda: "Step 2 of 3" in page.status.text(), timeout=60000)
    qtbot.waitUntil(lambda: not page.running, timeout=120000)
    result = page.last_result
    assert result is not None, page.status.text()
    assert {"put", "get", "tcp-loopback"} <= set(result.series)
    assert result.parameters["size"] == 8 << 20
    # The plot shows the SMB runs again, not the raw TCP measured last.
    assert {series for series, _attempt in page.live.lines} == {"put", "get"}
    title = page.live.plot.getPlotItem().titleLabel.text
    assert title.startswith("SMB put and get"), title
    assert "SMB get" in page.live.legend.text() and "Raw TCP" not in page.live.legend.text()
    assert page.runs.table.rowCount() >= 3
    qtbot.wait(150)
    screenshot(window, "bench-smb-slow-server-done")


@pytest.fixture
def profile(sshd: SshServer, user_key: Path, troubled_smbd: SmbServer, isolated_home: Path) -> ServerProfile:
    (isolated_home / ".ssh" / "known_hosts").write_text(sshd.known_hosts_line)
    return ServerProfile(
        name="Slow bed",
        host="127.0.0.1",
        port=sshd.port,
        user=current_user(),
        identity_file=str(user_key),
        config_path=str(troubled_smbd.config),
    )


def test_the_wizard_baseline_shows_run_figure_and_time_left(
    qtbot: QtBot,
    profile: ServerProfile,
    screenshot: Screenshot,
) -> None:
    window, page = open_window(qtbot, profile)
    page.start_view.file_size.setValue(6)
    page.start_view.runs.setValue(2)
    page.start_view.warmup.setValue(1)
    page.primary.click()  # Start the wizard
    qtbot.waitUntil(
        lambda: page.task is None and page.stack.currentWidget() is page.findings_view, timeout=LONG
    )
    page.primary.click()  # Measure the baseline

    def measuring() -> bool:
        text = page.status.text()
        return "Read (server → client): " in text and "MB/s" in text and "left" in text

    qtbot.waitUntil(measuring, timeout=LONG)
    text = page.status.text()
    assert " of 2" in text or "warm-up 1 of 1" in text, text
    assert page.progress.maximum() == 1000 and 0 < page.progress.value() < 1000
    qtbot.wait(150)
    screenshot(window, "wizard-baseline-progress")
    qtbot.waitUntil(
        lambda: page.task is None and page.wizard is not None and page.wizard.stage == CHOOSE, timeout=LONG
    )
