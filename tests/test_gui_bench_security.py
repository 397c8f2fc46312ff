"""Signing and encryption compared from the Benchmarks page, as an admin would run it:
"SMB from this computer" with sessions to compare, against a real smbd whose session
list the page reads through the server's connection to name what each one negotiated."""

from __future__ import annotations

import os
from html import escape

import pytest
from PySide6.QtWidgets import QScrollArea
from pytestqt.qtbot import QtBot

from sambatune.bench import smb_wire
from sambatune.bench.smb_wire import PROBE_PREFIX
from sambatune.ui.bench.form import SECURITY_MODES, SECURITY_PATH_TIP
from sambatune.ui.bench.page import BenchmarksPage
from sambatune.ui.main_window import MainWindow
from screen_checks import problems_of
from screenshots import Screenshot
from testbed.smbd import SmbServer

#: Real runs against the test bed's smbd through the page: seconds each.
pytestmark = pytest.mark.slow

PASSWORD = "Security-pass-1"
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="adds root to the test smbd's passdb")


def open_page(qtbot: QtBot, config_path: str = "") -> BenchmarksPage:
    """This computer's workspace, managing ``config_path``'s smbd, on its Benchmarks tab."""
    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1180, 780)
    window.show()
    session = window.session("local")
    if config_path:
        session.profile.config_path = config_path
    workspace = window.workspaces["local"]
    workspace.connect_panel.connect_button.click()
    qtbot.waitUntil(lambda: session.survey is not None, timeout=60000)
    workspace.tabs.setCurrentWidget(workspace.benchmarks)
    page = workspace.benchmarks
    page.window_under_test = window  # type: ignore[attr-defined]
    return page


@pytest.fixture
def page(qtbot: QtBot) -> BenchmarksPage:
    return open_page(qtbot)


@pytest.fixture
def smb_root(fresh_smbd: SmbServer) -> SmbServer:
    """root as a Samba user of this test's own smbd (its own passdb)."""
    return fresh_smbd.add_user("root", PASSWORD)


def fill_in(page: BenchmarksPage, smbd: SmbServer, *modes: str, user: str = "root") -> None:
    form = page.form
    form.select_test("smb-client")
    form.server.setText("127.0.0.1")
    form.port.setValue(smbd.port)
    form.share.setCurrentText(smbd.share)
    form.user.setText(user)
    form.password.setText(PASSWORD if user else "")
    form.file_size.setText("4MiB")
    form.block.setText("1MiB")
    form.runs.setValue(2)
    form.warmup.setValue(0)
    for mode, box in form.security_boxes.items():
        box.setChecked(mode in modes)


def fits(page: BenchmarksPage) -> None:
    """The form's column is not cut on the right, and no label is cut short."""
    scroll = page.findChild(QScrollArea)
    assert scroll is not None
    column = scroll.widget()
    assert column is not None
    assert column.minimumSizeHint().width() <= scroll.viewport().width()
    assert not problems_of(page)


def cells(page: BenchmarksPage, row: int) -> list[str]:
    table = page.security.table
    return [item.text() if (item := table.item(row, c)) else "" for c in range(table.columnCount())]


def test_the_row_is_for_sambatunes_own_client_only(page: BenchmarksPage, qtbot: QtBot) -> None:
    form = page.form
    # The form names the core's session kinds without loading the SMB client at start.
    assert SECURITY_MODES == smb_wire.SECURITY_MODES
    form.select_test("smb-client")
    qtbot.wait(150)  # the layout follows the rows shown
    assert form.form.isRowVisible(form.security)
    assert list(form.security_boxes) == ["plain", "signed", "encrypted"]
    assert not any(box.isChecked() for box in form.security_boxes.values())
    assert "once in a session of each kind" in form.security.toolTip()
    fits(page)
    form.select_test("small-files")
    assert not form.form.isRowVisible(form.security)

    form.select_test("smb-client")
    form.security_boxes["signed"].setChecked(True)
    form.security_boxes["plain"].setChecked(True)
    form.server.setText("127.0.0.1")
    form.share.setCurrentText("data")
    form.user.setText("someone")
    assert form.request().security == ("plain", "signed"), "in the order they run, plain first"
    # A mounted path keeps its mount's session: the row is off and says why.
    form.server.setText("")
    form.share.setCurrentText("")
    form.path.setText("/mnt/share")
    assert not form.security.isEnabled()
    assert form.security.toolTip() == SECURITY_PATH_TIP
    assert all(box.toolTip() == SECURITY_PATH_TIP for box in form.security_boxes.values())
    assert form.request().security == ()
    form.path.setText("")
    assert form.security.isEnabled() and "baseline" in form.security.toolTip()


def test_signed_as_a_guest_is_a_message_not_a_run(
    page: BenchmarksPage, qtbot: QtBot, smbd: SmbServer
) -> None:
    fill_in(page, smbd, "plain", "signed", user="")
    page.run_button.click()
    assert not page.running and page.run_button.isEnabled()
    bar = page.window_under_test.message_bar  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: "need a user" in bar.message, timeout=5000)
    assert "Traceback" not in bar.message + bar._details
    assert page.live.points == 0


@needs_root
def test_plain_and_signed_each_named_from_the_servers_session_list(
    qtbot: QtBot, smb_root: SmbServer, screenshot: Screenshot
) -> None:
    page = open_page(qtbot, str(smb_root.config))
    window = page.window_under_test  # type: ignore[attr-defined]
    fill_in(page, smb_root, "plain", "signed")
    page.form.note.setText("signing cost")
    qtbot.wait(150)
    screenshot(window, "bench-security-form")
    page.run_button.click()
    assert page.running
    qtbot.waitUntil(lambda: not page.running, timeout=120000)
    result = page.last_result
    assert result is not None, page.status.text()
    assert set(result.series) == {"write-plain", "read-plain", "write-signed", "read-signed"}
    assert all(len(series.counted) == 2 for series in result.series.values())
    security = result.extra["security"]
    # Read from the server through the page's own connection, not guessed here.
    assert security["plain"]["server"] is not None and security["signed"]["server"] is not None
    assert security["signed"]["server"]["signing_degree"] == "full"

    # The answer asked for, shown at the end in a tab of its own: the table, then the
    # sentences behind it; the Run tab's notes point there instead of repeating them.
    said = [n for n in result.notes if "session: SMB3_11" in n]
    assert len(said) == 2 and all(n.endswith("as the server's smbstatus reports it.") for n in said)
    assert len(result.extra["security_cost"]) == 2
    assert not any(n in page.notes.text() for n in said)
    assert "the Signing & encryption tab" in page.notes.text()
    status = page.status.text()
    assert status.startswith(f"Done, saved as session {result.session_id}: plain read ")
    assert ", signed read " in status and status.endswith("(see Signing & encryption).")
    assert page.views.currentWidget() is page.security
    view = page.security
    assert view.table.rowCount() == 2
    plain, signed = cells(page, 0), cells(page, 1)
    assert plain[0] == "plain" and plain[1] == "SMB3_11\nnot signed (only its logon)\nnot encrypted"
    algorithm = security["signed"]["server"]["signing"]
    assert signed[0] == "signed" and signed[1] == f"SMB3_11\nsigned with {algorithm}\nnot encrypted"
    assert plain[2].endswith("MB/s\nthe baseline") or plain[2].endswith("GB/s\nthe baseline")
    for figure in signed[2:]:
        rate, verdict, p_value = figure.split("\n")
        assert rate.endswith("/s") and p_value.startswith("p = ")
        assert verdict == "no clear difference" or verdict.endswith(("slower", "faster"))
    assert "smbstatus" in view.caption.text() and f"session {result.session_id}" in view.caption.text()
    details = view.details.text()
    for text in said + [c["text"] for c in result.extra["security_cost"]]:
        assert f"ℹ {escape(text)}" in details
    assert not [p for p in smb_root.share_path.iterdir() if p.name.startswith(PROBE_PREFIX)]
    qtbot.wait(150)
    screenshot(window, "bench-security-result")
    fits(page)
    page.views.setCurrentIndex(0)
    qtbot.wait(150)
    screenshot(window, "bench-security-run-tab")


@needs_root
def test_without_plain_the_first_session_checked_is_the_baseline(
    qtbot: QtBot, smb_root: SmbServer, screenshot: Screenshot
) -> None:
    page = open_page(qtbot, str(smb_root.config))
    fill_in(page, smb_root, "signed", "encrypted")
    page.run_button.click()
    qtbot.waitUntil(lambda: not page.running, timeout=120000)
    result = page.last_result
    assert result is not None, page.status.text()
    assert set(result.series) == {"write-signed", "read-signed", "write-encrypted", "read-encrypted"}
    cipher = result.extra["security"]["encrypted"]["server"]["encryption"]
    signed, encrypted = cells(page, 0), cells(page, 1)
    assert signed[2].endswith("the baseline") and not encrypted[2].endswith("the baseline")
    assert encrypted[1] == f"SMB3_11\nauthenticated by its encryption\nencrypted with {cipher}"
    assert "compared with the signed session's" in page.security.caption.text()
    qtbot.wait(150)
    screenshot(page.window_under_test, "bench-security-encrypted")  # type: ignore[attr-defined]
    fits(page)
