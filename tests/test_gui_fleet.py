"""The Fleet window against the real multi-host test bed (tests/testbed/fleet.py): five
servers on 127.0.0.2-6, each its own sshd and smbd, driven the way an admin would."""

from __future__ import annotations

import argparse
import hashlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QBrush
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from sambatune.appdirs import known_hosts_file
from sambatune.fleet.inventory import FleetHost
from sambatune.fleet.rollout_store import HostState, RolloutStatus, RolloutStore
from sambatune.fleet.survey import findings_counts, findings_words
from sambatune.ui.fleet.context import BY_HAND, INVENTORY, FleetSource
from sambatune.ui.fleet.drift_tab import DIFFERS
from sambatune.ui.fleet.hosts_tab import FINDINGS, STATUS
from sambatune.ui.fleet.window import ANSIBLE_TAB, DRIFT_TAB, ROLLOUT_TAB, FleetWindow
from screen_checks import problems_of
from screenshots import Screenshot
from table_items import item_at
from testbed.fleet import FleetBed

LOG_LEVEL = "[global] log level = 1"


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def bed(fleet_bed: FleetBed) -> Iterator[FleetBed]:
    """The session's bed, every host's smb.conf put back afterwards."""
    saved = {h.name: h.smbd.config.read_bytes() for h in fleet_bed.hosts}
    yield fleet_bed
    for host in fleet_bed.hosts:
        fleet_bed.bring_up(host.name)
        if host.smbd.config.read_bytes() != saved[host.name]:
            host.smbd.config.write_bytes(saved[host.name])


@pytest.fixture
def inventory(bed: FleetBed, tmp_path: Path) -> Path:
    return bed.write_inventory(tmp_path / "hosts.ini")


def trust(bed: FleetBed, names: list[str] | None = None) -> None:
    """The hosts' keys in SambaTune's own known_hosts, as after connecting to each once."""
    path = known_hosts_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    bed.write_known_hosts(path, names)


@pytest.fixture
def opened() -> list[FleetHost]:
    """The hosts the window asked the main window to open as servers."""
    return []


@pytest.fixture
def window(qtbot: QtBot, opened: list[FleetHost]) -> FleetWindow:
    win = FleetWindow(open_server=opened.append)
    qtbot.addWidget(win)
    win.show()
    return win


def load(window: FleetWindow, qtbot: QtBot, source: FleetSource) -> None:
    window.load(source)
    qtbot.waitUntil(lambda: window.loaded is not None and window.loaded.source == source, timeout=10_000)


def status_of(window: FleetWindow, name: str) -> str:
    return item_at(window.hosts_tab.table, window.hosts_tab.row_of(name), STATUS).text()


def test_survey_fills_in_as_hosts_answer_one_down_one_key_unknown(
    bed: FleetBed,
    inventory: Path,
    window: FleetWindow,
    opened: list[FleetHost],
    qtbot: QtBot,
    screenshot: Screenshot,
) -> None:
    trust(bed, ["nas01", "nas02", "nas03", "nas04"])  # nas05's key was never accepted
    load(window, qtbot, FleetSource(INVENTORY, str(inventory)))
    tab = window.hosts_tab
    assert tab.table.rowCount() == 5 and status_of(window, "nas01") == "not surveyed"
    tab.timeout.setValue(90)  # the first host reads the catalog over SSH: slow under load
    bed.take_down("nas03")
    tab.survey_button.click()
    # The refused host shows while the others are still being surveyed.
    qtbot.waitUntil(lambda: "nas03" in tab.results, timeout=20_000)
    assert tab.running and status_of(window, "nas03") == "unreachable"
    qtbot.waitUntil(lambda: not tab.running, timeout=180_000)
    # Refused at once (nas03) or at the key (nas05): both before any survey finished.
    assert set(list(tab.results)[:2]) == {"nas03", "nas05"}
    # Why, in words, under the table: no row needs opening to find out.
    why = next(line for line in tab.summary.text().splitlines() if line.startswith("• nas03"))
    assert "refused" in why and "sshd" in why
    assert status_of(window, "nas05") == "unknown host key"
    for name in ("nas01", "nas02", "nas04"):
        assert status_of(window, name) == "surveyed", tab.summary.text()
        assert tab.results[name].config_sha256 == sha(bed.host(name).smbd.config)
    assert "3 of 5 hosts reachable" in tab.summary.text()
    assert not tab.detail_scroll.isVisible()  # no host chosen: no empty box under the table
    # The unknown key is offered nothing but opening that one server to compare its key.
    tab.table.selectRow(tab.row_of("nas05"))
    assert tab.open_button.isVisible() and "fingerprint" in tab.detail.text()
    assert tab.detail_scroll.isVisible()
    tab.table.selectRow(tab.row_of("nas03"))
    assert not tab.open_button.isVisible()
    tab.table.selectRow(tab.row_of("nas05"))
    tab.open_button.click()
    assert [h.name for h in opened] == ["nas05"]
    assert bed.host("nas05").sshd.known_hosts_line not in known_hosts_file().read_text()  # nothing trusted
    # A surveyed host shows what the advisor found there, not only that it was surveyed.
    nas01 = tab.results["nas01"]
    assert nas01.finding_titles, nas01.to_json()
    tab.table.selectRow(tab.row_of("nas01"))
    shown = tab.detail.text()
    assert all(title in shown for _, title, _ in nas01.finding_titles), shown
    counts = item_at(tab.table, tab.row_of("nas01"), FINDINGS)
    assert counts.text() == findings_counts(nas01.findings)
    assert counts.toolTip() == findings_words(nas01.findings)
    screenshot(window, "fleet-hosts")
    assert problems_of(window) == []


def test_cancel_stops_a_hung_survey_promptly(window: FleetWindow, qtbot: QtBot) -> None:
    # Ports that accept TCP and never say a word: each SSH connect waits for a banner.
    listeners = []
    for _ in range(3):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listeners.append(listener)
    try:
        hosts = ", ".join(f"127.0.0.1:{s.getsockname()[1]}" for s in listeners)
        load(window, qtbot, FleetSource(BY_HAND, hosts))
        tab = window.hosts_tab
        tab.timeout.setValue(120)
        tab.survey_button.click()
        qtbot.wait(700)
        assert tab.running
        began = time.monotonic()
        tab.cancel_button.click()
        qtbot.waitUntil(lambda: not tab.running, timeout=10_000)
        assert time.monotonic() - began < 5
        assert window.loaded is not None
        statuses = {h.name: status_of(window, h.name) for h in window.loaded.hosts}
        assert set(statuses.values()) == {"cancelled"}, statuses
        assert "Cancelled" in tab.summary.text()
    finally:
        for listener in listeners:
            listener.close()


def test_drift_shows_a_planted_difference(
    bed: FleetBed, inventory: Path, window: FleetWindow, qtbot: QtBot, screenshot: Screenshot
) -> None:
    trust(bed)
    config = bed.host("nas02").smbd.config
    config.write_text(config.read_text().replace("[global]\n", "[global]\n  log level = 2\n", 1))
    load(window, qtbot, FleetSource(INVENTORY, str(inventory), "nas01:nas02:nas03"))
    window.tabs.setCurrentIndex(DRIFT_TAB)
    tab = window.drift_tab
    tab.compare_button.click()
    qtbot.waitUntil(lambda: tab.report is not None, timeout=120_000)
    table = tab.table
    headers = [table.model().headerData(c, Qt.Orientation.Horizontal) for c in range(table.columnCount())]
    assert headers[2:5] == ["nas01", "nas02", "nas03"]
    rows = {item_at(table, r, 0).text(): r for r in range(table.rowCount())}
    row = rows["[global] log level"]
    assert item_at(table, row, 1).text() == "0"
    assert item_at(table, row, 3).text() == "2"
    assert item_at(table, row, 3).background() == QBrush(DIFFERS)
    assert item_at(table, row, 2).background() != QBrush(DIFFERS)
    assert item_at(table, row, len(headers) - 1).text() == "reload"
    assert item_at(table, row, len(headers) - 2).text() == "nas02"
    assert "1 parameter differs" in tab.summary.text()
    screenshot(window, "fleet-drift")
    assert problems_of(window) == []


def plan(window: FleetWindow, qtbot: QtBot, edits: str) -> None:
    window.tabs.setCurrentIndex(ROLLOUT_TAB)
    tab = window.rollout_tab
    tab.form.edits_text.setPlainText(edits)
    tab.form.measure.setCurrentIndex(tab.form.measure.findData("none"))
    tab.plan_button.click()
    qtbot.waitUntil(lambda: tab.plan is not None, timeout=120_000)
    # The buttons follow in the plan's finish handler, which may come after its result.
    qtbot.waitUntil(lambda: not tab.busy, timeout=10_000)


def confirm(window: FleetWindow, qtbot: QtBot) -> None:
    tab = window.rollout_tab
    tab.rollout_button.click()
    box = tab.findChild(QMessageBox, "fleetRolloutConfirm")
    assert box is not None and "Roll this change out to" in box.text()
    box.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: tab.record is not None, timeout=180_000)
    qtbot.waitUntil(lambda: not tab.busy, timeout=10_000)


def test_a_reload_change_rolled_out_through_the_window_ends_done(
    bed: FleetBed, inventory: Path, window: FleetWindow, qtbot: QtBot, screenshot: Screenshot
) -> None:
    trust(bed)
    load(window, qtbot, FleetSource(INVENTORY, str(inventory), "nas01:nas02:nas03"))
    plan(window, qtbot, LOG_LEVEL)
    tab = window.rollout_tab
    assert tab.plan is not None and not tab.plan.refusals
    assert {h.name: h.wave for h in tab.plan.hosts} == {"nas01": 0, "nas02": 1, "nas03": 1}
    assert "reload" in tab.status.text() and tab.rollout_button.isEnabled()
    confirm(window, qtbot)
    record = tab.record
    assert record is not None and record.status is RolloutStatus.DONE
    assert "done" in tab.banner.text() and tab.banner.isVisible()
    timeline = tab.timeline
    steps = {
        (item_at(timeline, r, 1).text(), item_at(timeline, r, 2).text()) for r in range(timeline.rowCount())
    }
    for name in ("nas01", "nas02", "nas03"):
        assert (name, "applied") in steps
        assert b"log level = 1" in bed.host(name).smbd.config.read_bytes()
    assert all(h.state is HostState.APPLIED for h in record.hosts)
    qtbot.waitUntil(lambda: tab.past.rowCount() >= 1, timeout=10_000)
    assert item_at(tab.past, 0, 1).text() == "done"
    screenshot(window, "fleet-rollout")
    assert problems_of(window) == []


def test_a_halted_rollout_says_why_and_that_the_touched_hosts_were_put_back(
    bed: FleetBed, inventory: Path, window: FleetWindow, qtbot: QtBot, screenshot: Screenshot
) -> None:
    trust(bed)
    before = {name: sha(bed.host(name).smbd.config) for name in ("nas01", "nas02", "nas03")}
    load(window, qtbot, FleetSource(INVENTORY, str(inventory), "nas01:nas02:nas03"))
    plan(window, qtbot, LOG_LEVEL)
    bed.take_down("nas02")  # after the plan: the canary goes through, its wave cannot
    confirm(window, qtbot)
    tab = window.rollout_tab
    record = tab.record
    assert record is not None and record.status is RolloutStatus.HALTED
    text = tab.banner.text()
    assert "halted" in text and "nas02" in text
    assert "Put back byte for byte" in text and "nas01" in text
    assert RolloutStore().load(record.id).host("nas01").state is HostState.RESTORED
    bed.bring_up("nas02")
    assert {name: sha(bed.host(name).smbd.config) for name in before} == before
    screenshot(window, "fleet-rollout-halted")


def test_server_menu_opens_the_fleet_window_with_the_hosts_used_last(
    qtbot: QtBot, bed: FleetBed, inventory: Path, opened: list[FleetHost]
) -> None:
    from sambatune.ui.fleet.settings import remember_source
    from sambatune.ui.main_window import MainWindow

    remember_source(FleetSource(INVENTORY, str(inventory), "nas01"))
    main = MainWindow()
    qtbot.addWidget(main)
    main.show()
    action = main.findChild(QAction, "fleetAction")
    assert action is not None
    action.trigger()
    fleet = main.findChild(FleetWindow)
    assert fleet is not None and fleet.isVisible()
    qtbot.waitUntil(lambda: fleet.loaded is not None, timeout=10_000)
    assert fleet.loaded is not None and fleet.loaded.fleet.names == ("nas01",)
    assert fleet.source_bar.inventory.text() == str(inventory)


def test_ansible_tab_exports_the_change_and_lists_what_it_wrote(
    bed: FleetBed, inventory: Path, window: FleetWindow, qtbot: QtBot, tmp_path: Path, screenshot: Screenshot
) -> None:
    trust(bed)
    # For Ansible (Check runs it): the bed's python3 (discovery would find pyenv's shims
    # first), and no ssh master left running after the test.
    inventory.write_text(
        inventory.read_text()
        + "ansible_python_interpreter=/usr/bin/python3\nansible_ssh_args=-o ControlMaster=no\n"
    )
    load(window, qtbot, FleetSource(INVENTORY, str(inventory), "nas01:nas02"))
    window.rollout_tab.form.edits_text.setPlainText(LOG_LEVEL)
    window.tabs.setCurrentIndex(ANSIBLE_TAB)
    tab = window.ansible_tab
    tab.export_to(tmp_path / "project")
    qtbot.waitUntil(lambda: tab.last_export is not None, timeout=120_000)
    assert (tmp_path / "project" / "site.yml").is_file()
    assert "site.yml" in tab.files.text() and "ansible-playbook site.yml" in tab.status.text()
    assert [item_at(tab.exported, r, 2).text() for r in range(tab.exported.rowCount())] == [
        "reload",
        "reload",
    ]
    qtbot.waitUntil(lambda: "Checking" not in tab.availability.text(), timeout=10_000)
    # The export's finish handler enables Run; it may come after its result arrived.
    qtbot.waitUntil(lambda: tab.task is None, timeout=10_000)
    assert tab.run_button.isEnabled() == tab.check_button.isEnabled() == (tab.unavailable is None)
    if tab.unavailable is None:
        # Check: ansible-playbook --check --diff validates both hosts and changes neither.
        live = {name: bed.host(name).smbd.config.read_bytes() for name in ("nas01", "nas02")}
        tab.check_button.click()
        qtbot.waitUntil(lambda: tab.task is None and tab.last_run is not None, timeout=300_000)
        events = [
            " | ".join(item_at(tab.events, r, c).text() for c in range(1, 5))
            for r in range(tab.events.rowCount())
        ]
        assert "Check passed" in tab.status.text(), "\n".join(events)
        assert {name: bed.host(name).smbd.config.read_bytes() for name in live} == live
    screenshot(window, "fleet-ansible")
    assert problems_of(window) == []


def test_quitting_the_app_during_fleet_work_asks_first(qtbot: QtBot) -> None:
    from sambatune.ui.main_window import MainWindow

    main = MainWindow()
    qtbot.addWidget(main)
    main.show()
    fleet = main.open_fleet(browse=False)
    assert isinstance(fleet, FleetWindow)
    listener = socket.socket()  # accepts TCP and never says a word: the survey hangs
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    try:
        load(fleet, qtbot, FleetSource(BY_HAND, f"127.0.0.1:{listener.getsockname()[1]}"))
        fleet.hosts_tab.timeout.setValue(120)
        fleet.hosts_tab.survey_button.click()
        qtbot.waitUntil(lambda: fleet.hosts_tab.running, timeout=10_000)
        main.close()
        qtbot.waitUntil(
            lambda: any(b.isVisible() for b in main.findChildren(QMessageBox, "quitRunningBox")), timeout=5000
        )
        box = next(b for b in main.findChildren(QMessageBox, "quitRunningBox") if b.isVisible())
        assert "Fleet: a survey" in box.text()
        assert "Nothing on the servers is changed" in box.text()
        box.button(QMessageBox.StandardButton.Cancel).click()  # Keep running
        qtbot.wait(200)
        assert main.isVisible() and fleet.hosts_tab.running
        fleet.hosts_tab.cancel()
        qtbot.waitUntil(lambda: not fleet.hosts_tab.running, timeout=10_000)
        assert main.running_work() == []
    finally:
        listener.close()


def test_hosts_typed_with_blanks_are_recorded_as_the_command_line_reads_them() -> None:
    """The window's field takes blanks or commas; a rollout record keeps them as --hosts
    takes them (commas), so `fleet apply --resume` finds the same hosts."""
    from sambatune.cli.fleet_apply import _fleet

    source = FleetSource(BY_HAND, "admin@nas1:2222  nas2, nas3")
    record = source.to_record()
    assert record["hosts"] == "admin@nas1:2222,nas2,nas3"
    no_vault = argparse.Namespace(ask_vault_pass=False, vault_password_file=[])
    read_again = FleetSource.from_record(record).load()
    assert _fleet(record, no_vault).names == source.load().names == read_again.names


def test_an_inventory_with_vault_data_asks_for_its_password_once(tmp_path: Path, qtbot: QtBot) -> None:
    """The window asks for the vault password when the inventory needs it, reads the
    inventory with it, and keeps it (in memory) for this window's next reads."""
    from PySide6.QtWidgets import QInputDialog

    from sambatune.fleet.ansible_inventory import ansible_core

    ansible_core()
    from ansible.parsing.vault import VaultLib, VaultSecret

    secret = VaultSecret(b"window vault words")
    folder = tmp_path / "inventory"
    (folder / "host_vars").mkdir(parents=True)
    (folder / "hosts.ini").write_text("[fileservers]\nnas1 ansible_host=192.0.2.1\n")
    vaulted = VaultLib([("default", secret)]).encrypt("ansible_user: from-vault\n", secret)
    (folder / "host_vars" / "nas1.yml").write_bytes(vaulted)
    window = FleetWindow()
    qtbot.addWidget(window)
    window.show()
    window.load(FleetSource(INVENTORY, str(folder)))
    qtbot.waitUntil(lambda: window.findChild(QInputDialog, "vaultPasswordDialog") is not None, timeout=10_000)
    dialog = window.findChild(QInputDialog, "vaultPasswordDialog")
    assert dialog is not None and "no vault password was given" in dialog.labelText()
    dialog.setTextValue("window vault words")
    dialog.accept()
    qtbot.waitUntil(lambda: window.loaded is not None, timeout=10_000)
    assert window.loaded is not None and window.loaded.hosts[0].user == "from-vault"
    assert "window vault words" not in repr(window.loaded.source)
    window.loaded = None
    window.load(FleetSource(INVENTORY, str(folder)))  # read again: no second question
    qtbot.waitUntil(lambda: window.loaded is not None, timeout=10_000)
    assert window.findChildren(QInputDialog, "vaultPasswordDialog") == [dialog]


def test_the_drift_table_fits_eight_hosts_at_the_windows_size(qtbot: QtBot, screenshot: Screenshot) -> None:
    """Long values (socket options, paths) made each host's column as wide as its value:
    two to four hosts fitted. Capped and elided (whole in the tooltip), eight fit, the
    rest scroll."""
    from sambatune.conf.activation import Activation
    from sambatune.fleet.drift import DriftReport, HostDifference, HostStatus, ParameterDrift

    names = [f"fileserver{i:02d}" for i in range(1, 11)]
    long_value = "TCP_NODELAY SO_RCVBUF=131072 SO_SNDBUF=131072 IPTOS_LOWDELAY"
    values = {name: long_value for name in names} | {"fileserver02": "TCP_NODELAY"}
    report = DriftReport(
        golden=None,
        hosts=[HostStatus(name, f"192.0.2.{i}", True, None, 0.5) for i, name in enumerate(names, 1)],
        parameters=[
            ParameterDrift(
                "global",
                "socket options",
                values,
                long_value,
                [
                    HostDifference(
                        "fileserver02", "TCP_NODELAY", long_value, Activation.RESTART, "set at start"
                    )
                ],
            )
        ],
        shares=[],
        seconds=1.0,
    )
    window = FleetWindow()
    qtbot.addWidget(window)
    window.show()
    window.tabs.setEnabled(True)
    window.tabs.setCurrentIndex(DRIFT_TAB)
    window.drift_tab.show_report(report)
    table = window.drift_tab.table
    qtbot.waitUntil(lambda: table.viewport().width() > 0)
    visible = [
        c
        for c in range(2, 2 + len(names))
        if table.columnViewportPosition(c) + table.columnWidth(c) <= table.viewport().width()
    ]
    assert len(visible) >= 8, [table.columnWidth(c) for c in range(table.columnCount())]
    assert item_at(table, 0, 2).toolTip() == long_value
    screenshot(window, "fleet-drift-ten-hosts")
