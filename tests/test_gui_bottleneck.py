"""The Bottleneck view with sessions run under different smb.conf versions and file sizes.

Each row names the session behind its figure; sessions run with another smb.conf than
the newest are left out until the user ticks them, and then the view says the figures
mix settings.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from bench_sessions import AFTER_CONF, BEFORE_CONF, context, disk, throughput
from sambatune.bench.bottleneck_inputs import (
    SessionFacts,
    default_selection,
    figures_from_results,
    figures_from_sessions,
)
from sambatune.bench.records import BenchResult
from sambatune.bench.results_db import ResultsDatabase
from sambatune.ui.bench.bottleneck_panel import SESSION_COLUMN, BottleneckPanel
from screenshots import Screenshot
from table_items import item_at

NET = {"direction": "download", "seconds": 2.0}
DOWNLOAD = "Download (server to this computer)"
SMB_READ = "SMB read from this computer (SambaTune's client)"


def record_mixed(database: ResultsDatabase) -> dict[str, int]:
    """A disk test and a network test with the old smb.conf (v1), then the change, then
    an SMB read of a 64 MiB file and a network test with the new one (v2)."""

    def save(result: BenchResult, conf: bytes | None, note: str = "") -> int:
        return database.save(result, context(conf) if conf is not None else None, note=note)

    return {
        "disk": save(
            disk(read_mb=180.0, write_mb=150.0, ops=2500.0), BEFORE_CONF, "before: fixed socket buffers"
        ),
        "net_before": save(
            throughput("net", "download", DOWNLOAD, [71.0, 72.5, 70.8], parameters=NET), BEFORE_CONF
        ),
        "smb": save(
            throughput("smb-client", "read", SMB_READ, [104.0, 105.1, 104.6], parameters={"size": 64 << 20}),
            AFTER_CONF,
            "after: socket options removed",
        ),
        "net_after": save(
            throughput("net", "download", DOWNLOAD, [111.2, 112.0, 111.6], parameters=NET), AFTER_CONF
        ),
    }


def test_sessions_with_another_smb_conf_are_combined_only_when_chosen() -> None:
    database = ResultsDatabase()
    ids = record_mixed(database)
    sessions = [database.load(i) for i in ids.values()]
    facts = {s.id: SessionFacts.of(s) for s in sessions}
    assert default_selection(facts) == {ids["smb"], ids["net_after"]}

    figures = figures_from_sessions(sessions)
    assert figures.disk_read is None and figures.sources["network"] == ids["net_after"]
    assert figures.network == pytest.approx(111.6e6, rel=1e-3)
    assert not figures.mixed and figures.elsewhere == {
        "disk read": ids["disk"],
        "disk write": ids["disk"],
        "file operations": ids["disk"],
    }
    assert figures.report().limiting == "unknown"
    assert figures.describe_source("SMB read") == (
        f"{ids['smb']}: SMB from this computer, 64.0 MiB, smb.conf v2"
    )
    assert figures.describe_source("disk read") == ""
    assert "all run with smb.conf v2" in figures.basis()
    [disk_line] = [line for line in figures.left_out() if "disk read" in line]
    assert f"session {ids['disk']} (disk test, 1.0 GiB, smb.conf v1)" in disk_line

    chosen = figures_from_sessions(sessions, chosen={ids["disk"], ids["smb"], ids["net_after"]})
    assert chosen.mixed and chosen.chosen_by_user and chosen.elsewhere == {}
    assert chosen.sources["disk read"] == ids["disk"]
    assert chosen.report().limiting == "network"
    assert "As you chose" in chosen.basis() and f"smb.conf v1: session {ids['disk']}" in chosen.basis()

    # Without the sessions' smb.conf (the HTML report's call) every result counts, as before.
    legacy = figures_from_results([s.result for s in sessions])
    assert legacy.sources["disk read"] == ids["disk"] and legacy.sessions == {}


def test_a_session_without_a_recorded_smb_conf_is_not_taken_for_the_same_one() -> None:
    database = ResultsDatabase()
    with_conf = database.save(disk(read_mb=180.0, write_mb=150.0, ops=2500.0), context(AFTER_CONF))
    bare = database.save(throughput("net", "download", DOWNLOAD, [111.0, 112.0], parameters=NET))
    figures = figures_from_sessions([database.load(with_conf), database.load(bare)])
    assert figures.sources == {"network": bare, "link": bare}
    assert figures.elsewhere["disk read"] == with_conf
    assert "whose smb.conf was not recorded" in figures.basis()


def cell(panel: BottleneckPanel, layer: str, column: int) -> str:
    for row in range(panel.table.rowCount()):
        if item_at(panel.table, row, 0).text() == layer:
            return item_at(panel.table, row, column).text()
    raise AssertionError(f"no row {layer}")


def tick(panel: BottleneckPanel, session_id: int) -> None:
    for row in range(panel.sessions.rowCount()):
        item = item_at(panel.sessions, row, 0)
        if item.data(Qt.ItemDataRole.UserRole) == session_id:
            item.setCheckState(Qt.CheckState.Checked)  # what a click on the box does
            return
    raise AssertionError(f"session {session_id} is not listed")


def test_the_panel_names_each_rows_session_and_mixes_settings_only_when_ticked(
    qtbot: QtBot,
    screenshot: Screenshot,
) -> None:
    database = ResultsDatabase()
    ids = record_mixed(database)
    panel = BottleneckPanel()
    qtbot.addWidget(panel)
    panel.resize(545, 650)  # what the Benchmarks page gives it in a 1180x780 window
    panel.show()
    # As the Benchmarks page hands them over: stored sessions, newest first.
    panel.show_results([database.load(i) for i in reversed(list(ids.values()))])

    listed = [item_at(panel.sessions, r, 0).text() for r in range(panel.sessions.rowCount())]
    assert listed == [str(ids[k]) for k in ("net_after", "smb", "net_before", "disk")]
    ticked = {
        item_at(panel.sessions, r, 0).text()
        for r in range(panel.sessions.rowCount())
        if item_at(panel.sessions, r, 0).checkState() == Qt.CheckState.Checked
    }
    assert ticked == {str(ids["smb"]), str(ids["net_after"])}
    versions = [item_at(panel.sessions, r, 3).text() for r in range(panel.sessions.rowCount())]
    assert versions == ["v2", "v2", "v1", "v1"]

    assert cell(panel, "network", SESSION_COLUMN) == f"{ids['net_after']}: network test, smb.conf v2"
    assert cell(panel, "SMB read", SESSION_COLUMN) == (
        f"{ids['smb']}: SMB from this computer, 64.0 MiB, smb.conf v2"
    )
    verdict = panel.verdict.text()
    assert "Limit: unknown." in verdict
    assert cell(panel, "network", 6) == "slowest so far"  # not "limits" while disk is unknown
    assert (
        "The disk read throughput, the disk write throughput and the file-operation rate "
        f"were measured only in session {ids['disk']} (disk test, 1.0 GiB, smb.conf v1), "
        "which is left out"
    ) in verdict
    assert "all run with smb.conf v2" in panel.basis.text()
    assert not panel.default_button.isEnabled()
    qtbot.wait(100)
    screenshot(panel, "bottleneck-sessions-default")

    tick(panel, ids["disk"])
    assert panel.chosen == {ids["disk"], ids["smb"], ids["net_after"]}
    assert "Limit: network." in panel.verdict.text()
    assert "left out" not in panel.verdict.text()
    assert cell(panel, "network", 6) == "◀ limits"
    assert cell(panel, "disk read", SESSION_COLUMN) == f"{ids['disk']}: disk test, 1.0 GiB, smb.conf v1"
    basis = panel.basis.text()
    assert "Mixed settings." in basis and "As you chose" in basis
    assert f"smb.conf v1: session {ids['disk']}" in basis
    assert f"smb.conf v2: sessions {ids['smb']}, {ids['net_after']}" in basis
    panel.direction.setCurrentIndex(1)  # writes: the choice stays
    assert panel.chosen == {ids["disk"], ids["smb"], ids["net_after"]}
    assert cell(panel, "disk write", SESSION_COLUMN).startswith(f"{ids['disk']}: disk test")
    panel.direction.setCurrentIndex(0)
    qtbot.wait(100)
    screenshot(panel, "bottleneck-sessions-chosen")
    screenshot(panel.content, "bottleneck-sessions-chosen-whole")  # past the scroll too
    panel.resize(1100, 900)  # the same page in a 1920x1080 window
    qtbot.wait(100)
    screenshot(panel, "bottleneck-sessions-chosen-large")

    panel.default_button.click()
    assert panel.chosen is None and "Limit: unknown." in panel.verdict.text()

    # In another order, the same view.
    panel.show_results([database.load(i) for i in ids.values()])
    assert cell(panel, "network", SESSION_COLUMN) == f"{ids['net_after']}: network test, smb.conf v2"
    assert "Limit: unknown." in panel.verdict.text()
