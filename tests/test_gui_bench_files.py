"""The small-file test on the Benchmarks page, filled in and run as an admin would."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QScrollArea
from pytestqt.qtbot import QtBot

from sambatune.bench.results_db import ResultsDatabase
from sambatune.bench.small_files import LISTINGS, OPERATION_NAMES
from sambatune.bench.smb_wire import PROBE_PREFIX
from sambatune.ui.bench.page import BenchmarksPage
from sambatune.ui.main_window import MainWindow
from screen_checks import problems_of
from screenshots import Screenshot
from testbed.smbd import SmbServer

#: Real runs against the test bed's smbd through the page: seconds each.
pytestmark = pytest.mark.slow

COUNT = 300


@pytest.fixture
def page(qtbot: QtBot) -> BenchmarksPage:
    """This computer's workspace, connected and surveyed, on its Benchmarks tab."""
    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1180, 780)
    window.show()
    workspace = window.workspaces["local"]
    workspace.connect_panel.connect_button.click()
    qtbot.waitUntil(lambda: workspace.session.survey is not None, timeout=60000)
    workspace.tabs.setCurrentWidget(workspace.benchmarks)
    workspace.benchmarks.window_under_test = window  # type: ignore[attr-defined]
    return workspace.benchmarks


def fill_in(
    page: BenchmarksPage, smbd: SmbServer, count: str, outstanding: int, connections: int = 1
) -> None:
    form = page.form
    form.select_test("small-files")
    form.server.setText("127.0.0.1")
    form.port.setValue(smbd.port)
    form.share.setCurrentText(smbd.share)
    form.count.setText(count)
    form.outstanding.setValue(outstanding)
    form.connections.setValue(connections)


def left_on(share: Path) -> list[str]:
    return [p.name for p in share.iterdir() if p.name.startswith(PROBE_PREFIX)]


def cells(page: BenchmarksPage, row: int) -> list[str]:
    table = page.operations.table
    return [item.text() if (item := table.item(row, c)) else "" for c in range(table.columnCount())]


def fits(page: BenchmarksPage) -> None:
    """Nothing an admin would notice: the form's column is not cut on the right (its scroll
    area never scrolls sideways, so a wider form would be), no label is cut short."""
    scroll = page.findChild(QScrollArea)
    assert scroll is not None
    form_column = scroll.widget()
    assert form_column is not None
    assert form_column.minimumSizeHint().width() <= scroll.viewport().width()
    assert not problems_of(page)
    # Every test's name reads whole in its combo (the arrow takes about 30 px).
    combo = page.form.test
    room = combo.width() - 30
    cut = [
        t
        for t in map(combo.itemText, range(combo.count()))
        if combo.fontMetrics().horizontalAdvance(t) > room
    ]
    assert not cut, (combo.width(), cut)


def test_the_form_offers_the_share_and_the_small_file_settings(page: BenchmarksPage, qtbot: QtBot) -> None:
    form = page.form
    form.select_test("small-files")
    qtbot.wait(150)  # the layout follows the rows shown
    fits(page)
    # No throughput curves for this test: its table, waiting for the run.
    assert page.figures.currentWidget() is page.operations and not page.runs.isVisible()
    visible = {key for key, widget in form.rows.items() if form.form.isRowVisible(widget)}
    assert visible == {
        "share",
        "server",
        "port",
        "user",
        "password",
        "remember",
        "path",
        "count",
        "size",
        "outstanding",
        "connections",
    }
    assert form.connections.value() == 1 and "smbd process" in form.connections.toolTip()
    form.path.setText("/mnt/share")  # a mount's one connection is not SambaTune's to choose
    assert not form.connections.isEnabled()
    form.path.clear()
    assert form.connections.isEnabled()
    assert form.count.text() == "2000" and form.file_size.text() == "4KiB"
    assert form.outstanding.value() == 1
    assert (form.runs.value(), form.warmup.value()) == (1, 0)
    assert "robocopy /MT" in form.outstanding.toolTip()
    assert "removed at the end" in page.explanation.text()
    # Back to the large-file test: its own defaults again, not the small-file ones.
    form.select_test("smb-client")
    assert form.file_size.text() == "auto" and form.outstanding.value() == 4
    assert (form.runs.value(), form.warmup.value()) == (5, 1)
    assert page.figures.currentWidget() is page.live and page.runs.isVisible()


def test_every_operation_counted_with_rate_and_latency_and_the_share_left_clean(
    page: BenchmarksPage, qtbot: QtBot, smbd: SmbServer, screenshot: Screenshot
) -> None:
    window = page.window_under_test  # type: ignore[attr-defined]
    fill_in(page, smbd, f"{COUNT:,}", 4, connections=2)
    page.form.note.setText("small files")
    qtbot.wait(150)
    screenshot(window, "bench-small-files-form")
    page.run_button.click()
    assert page.running and page.cancel_button.isEnabled() and not page.run_button.isEnabled()
    assert page.figures.currentWidget() is page.operations
    # While it runs: the first operation's row fills in, the bar moves, the window answers.
    # (Both while it runs: with each file one compound, the create step can end before
    # the bar's first update, so the one is not waited for and the other then asserted.)
    qtbot.waitUntil(
        lambda: page.running and cells(page, 0)[1] == f"{COUNT:,}" and page.progress.value() > 0,
        timeout=60000,
    )
    screenshot(window, "bench-small-files-running")
    qtbot.waitUntil(lambda: not page.running, timeout=120000)
    result = page.last_result
    assert result is not None, page.status.text()
    assert result.test == "small-files" and page.status.text().startswith("Done, saved as session")

    for row, name in enumerate(OPERATION_NAMES):
        operation, done, rate, p50, p99, what = cells(page, row)
        assert operation == name and what
        assert done == f"{LISTINGS if name == 'list' else COUNT:,}"
        assert rate.endswith(" ops/s") and float(rate.split()[0].replace(",", "")) > 0
        assert p50.endswith("ms") and p99.endswith("ms")
        assert float(p50.split()[0]) <= float(p99.split()[0])
    caption = page.operations.caption.text()
    assert caption == (
        f"{COUNT} files of 4 KiB, 4 at a time over 2 connections, on //127.0.0.1:{smbd.port}/{smbd.share}."
    )
    assert result.extra["client"]["connections"] == 2
    assert page.status.text().startswith(f"Done, saved as session {result.session_id}: create ")
    # One run per operation: no run table repeating the figures above.
    assert not page.runs.isVisible()
    assert ResultsDatabase().sessions(test="small-files")[0].id == result.session_id
    assert left_on(smbd.share_path) == []
    qtbot.wait(150)
    fits(page)
    screenshot(window, "bench-small-files-result")


def test_through_a_mounted_path_the_systems_own_client(
    page: BenchmarksPage, qtbot: QtBot, smbd: SmbServer
) -> None:
    """The path row alone is enough: the server and share rows are for SambaTune's client."""
    form = page.form
    form.select_test("small-files")
    form.server.setText("")
    form.share.setCurrentText("")
    form.path.setText(str(smbd.share_path))
    form.count.setText("40")
    page.run_button.click()
    qtbot.waitUntil(lambda: not page.running, timeout=60000)
    result = page.last_result
    assert result is not None, page.status.text()
    assert result.parameters["client"] == "os-path"
    assert page.operations.caption.text() == f"40 files of 4 KiB, one at a time, on {smbd.share_path}."
    assert [cells(page, row)[1] for row in range(len(OPERATION_NAMES))] == ["40"] * 4 + [f"{LISTINGS}", "40"]
    assert left_on(smbd.share_path) == []


def test_cancel_stops_the_run_saves_nothing_and_cleans_the_share(
    page: BenchmarksPage, qtbot: QtBot, smbd: SmbServer
) -> None:
    fill_in(page, smbd, "50k", 2)
    before = len(ResultsDatabase().sessions())
    page.run_button.click()
    qtbot.waitUntil(lambda: page.progress.value() > 0, timeout=60000)
    assert left_on(smbd.share_path)  # the test directory is there, files going in
    page.cancel_button.click()
    qtbot.waitUntil(lambda: not page.running, timeout=30000)
    assert "Cancelled" in page.status.text()
    assert len(ResultsDatabase().sessions()) == before
    assert left_on(smbd.share_path) == []
    assert page.run_button.isEnabled()


@pytest.mark.parametrize(
    ("field", "text", "said"),
    [
        ("count", "0", "The file count must be between 1 and 100,000 (not 0)."),
        ("count", "200,000", "The file count must be between 1 and 100,000 (not 200,000)."),
        ("count", "lots", "'lots' is not a number of files."),
        ("size", "1MiB", "The file size must be between 0 and 64 KiB"),
    ],
)
def test_bad_input_is_a_message_not_a_run(
    page: BenchmarksPage, qtbot: QtBot, field: str, text: str, said: str
) -> None:
    form = page.form
    form.select_test("small-files")
    form.server.setText("127.0.0.1")
    form.share.setCurrentText("data")
    (form.count if field == "count" else form.file_size).setText(text)
    page.run_button.click()
    assert not page.running
    bar = page.window_under_test.message_bar  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: said in bar.message, timeout=5000)
    assert "Traceback" not in bar.message + bar._details
