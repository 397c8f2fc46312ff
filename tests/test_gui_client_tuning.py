""" "Tune this computer" driven like an admin would: in a server's workspace over real SSH,
for Windows 10 / XP profiles, on an in-memory Windows 10 registry (apply and restore),
and for real inside a network namespace as root (apply and restore of an MTU and
sysctl plan, read back with ip link and sysctl)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from client_doubles import FakeWindowsNet, windows_system
from sambatune.client.backups import BackupStore
from sambatune.client.linux_system import LinuxSystem
from sambatune.client.plan import ClientPlan
from sambatune.client.registry import InMemoryRegistry
from sambatune.client.regvalue import RegValue
from sambatune.client.system import ClientSystem, system_for
from sambatune.profiles import ServerProfile
from sambatune.ui.client.bdp_calculator import BdpCalculator
from sambatune.ui.client.tuning_page import ClientTuningPage
from sambatune.ui.main_window import MainWindow
from sambatune.ui.tasks import TaskRunner
from screenshots import Screenshot
from table_items import item_at
from testbed.smbd import SmbServer
from testbed.sshd import SshServer, current_user

LANMAN = "HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Services\\LanmanWorkstation\\Parameters"
TCPIP = "HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Services\\Tcpip\\Parameters"
LAB_ENV = "SAMBATUNE_CLIENT_GUI_LAB"


def plan_with(
    qtbot: QtBot, page: ClientTuningPage, profile: str | None, bandwidth: str, rtt: str = ""
) -> None:
    """Choose a profile, fill the fields, press Make plan and wait for the plan."""
    if profile is not None:
        page.profile.setCurrentIndex(page.profile.findData(profile))
    qtbot.waitUntil(lambda: not page.busy, timeout=30000)
    page.inputs.bandwidth.edit.setText(bandwidth)
    page.inputs.rtt.edit.setText(rtt)
    with qtbot.waitSignal(page.plan_shown, timeout=60000):
        page.inputs.plan_button.click()
    qtbot.waitUntil(lambda: not page.busy, timeout=30000)


def shot(qtbot: QtBot, screenshot: Screenshot, widget: QWidget, name: str) -> None:
    """Let pending layout requests (a progress row just hidden) run, then save the PNG."""
    qtbot.wait(150)
    screenshot(widget, name)


def run_and_wait(qtbot: QtBot, page: ClientTuningPage, action: Callable[[], object]) -> None:
    with qtbot.waitSignal(page.result_shown, timeout=60000):
        action()
    qtbot.waitUntil(lambda: not page.busy, timeout=30000)


def accept(qtbot: QtBot, page: ClientTuningPage) -> None:
    qtbot.waitUntil(lambda: page.confirm_box is not None, timeout=5000)
    box = page.confirm_box
    assert box is not None
    box.button(QMessageBox.StandardButton.Yes).click()


@pytest.fixture
def runner() -> Iterator[TaskRunner]:
    """A task runner that waits for its tasks before the page goes away."""
    tasks = TaskRunner()
    yield tasks
    assert tasks.shutdown(10000)


# -- in a server's workspace, over real SSH ----------------------------------------------


@pytest.fixture
def connected(
    qtbot: QtBot, sshd: SshServer, user_key: Path, smbd: SmbServer, isolated_home: Path
) -> Iterator[MainWindow]:
    (isolated_home / ".ssh" / "known_hosts").write_text(sshd.known_hosts_line)
    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1180, 780)
    window.show()
    profile = ServerProfile(
        name="files1",
        host="127.0.0.1",
        port=sshd.port,
        user=current_user(),
        identity_file=str(user_key),
        config_path=str(smbd.config),
    )
    window.add_profile(profile)
    window.connect_server(profile.id)
    session = window.sessions[profile.id]
    qtbot.waitUntil(lambda: session.survey is not None, timeout=30000)
    yield window
    window.runner.shutdown(5000)


def test_the_page_plans_for_this_computer_and_for_windows_10_and_xp(
    connected: MainWindow,
    qtbot: QtBot,
    smbd: SmbServer,
    tmp_path: Path,
    screenshot: Screenshot,
) -> None:
    profile_id = connected.server_list.current_id()
    assert profile_id is not None
    workspace = connected.workspaces[profile_id]
    page = workspace.client_tuning
    workspace.tabs.setCurrentWidget(page)
    qtbot.waitUntil(lambda: page.snapshot is not None and not page.busy, timeout=30000)
    assert page.profile.itemText(0).startswith("This computer (")

    # This computer towards files1: the RTT is measured with TCP connects to the port its
    # smbd listens on (as the survey found it; 445 may be another smbd's), the path MTU
    # probed over loopback.
    plan_with(qtbot, page, None, "1gbit")
    plan = page.plan
    assert plan is not None and plan.os.detected and plan.os.family == "linux"
    assert f"TCP connects to 127.0.0.1 port {smbd.port}" in plan.measurements["rtt_source"]
    assert plan.mtu["probe"]["probed"]
    assert "Measured RTT" in page.inputs.measured.text()
    assert not page.banner.isVisible()
    assert page.plan_view.badge_text("linux-tcp-rmem") == "✔ honoured"
    shot(qtbot, screenshot, connected, "client-tuning-linux")
    page.tabs.setCurrentWidget(page.system_view)
    nics = page.system_view.nics
    assert nics.rowCount() >= 1 and all(item_at(nics, r, 1).text() for r in range(nics.rowCount()))
    shot(qtbot, screenshot, connected, "client-tuning-this-computer")
    page.tabs.setCurrentWidget(page.plan_view)

    # Windows 10: TcpWindowSize is there, labelled ignored, and never planned.
    plan_with(qtbot, page, "windows-10", "1gbit", "20ms")
    assert page.plan is not None and page.plan.os.name == "Windows 10"
    # The path-MTU probe runs from this (Linux) computer: none of it in a Windows plan.
    assert not page.inputs.probe.isEnabled() and not page.inputs.probe.isChecked()
    assert page.plan.mtu["probe"] is None
    assert "ping" not in page.plan_view.summary.text().lower()
    assert "another machine" in page.plan.mtu["decision"]["reason"]
    assert page.plan_view.badge_text("tcpip-tcpwindowsize") == "✖ ignored"
    assert page.plan_view.badge_text("netsh-autotuninglevel") == "✔ honoured"
    window_item = next(c for c in page.plan.changes if c.catalog_id == "tcpip-tcpwindowsize")
    assert window_item.action == "none"
    assert page.banner.isVisible() and "another system" in page.banner.text()
    assert not page.apply_button.isEnabled()
    assert "2,500,000-byte receive window" in page.plan_view.summary.text()
    page.plan_view.table.selectRow(page.plan_view.row_of("tcpip-tcpwindowsize"))
    assert "Ignored on Windows 10" in page.plan_view.details.toPlainText()
    shot(qtbot, screenshot, connected, "client-tuning-windows-10")

    # Windows XP: the same value is honoured there and planned, rounded to whole segments.
    plan_with(qtbot, page, "windows-xp", "1gbit", "20ms")
    assert page.plan_view.badge_text("tcpip-tcpwindowsize") == "✔ honoured"
    assert page.plan_view.badge_text("netsh-autotuninglevel") == "✖ ignored"
    row = page.plan_view.row_of("tcpip-tcpwindowsize")
    assert item_at(page.plan_view.table, row, 3).text() == "2,500,980 (DWORD)"
    page.plan_view.table.selectRow(row)
    # The notes for an old Windows (SMB1, NTLM, an example interface) scroll in their own
    # pane: the table keeps room for its rows at the default window size.
    notes = page.plan_view.notes
    assert notes.isVisible() and "Check first:" in notes.toHtml()
    assert "SMB1" in notes.toPlainText()
    table = page.plan_view.table
    assert table.viewport().height() >= 6 * table.verticalHeader().defaultSectionSize()
    shot(qtbot, screenshot, connected, "client-tuning-windows-xp")

    # Dry run: the exact registry writes, for that machine; nothing here is touched.
    run_and_wait(qtbot, page, page.dry_run_button.click)
    output = page.output.toPlainText()
    assert f"registry: set {TCPIP}\\TcpWindowSize = REG_DWORD 0x00262974 (2500980)" in output
    assert "[planned for that machine]" in output and "Nothing on" in output
    assert "+ HKLM\\SYSTEM\\CurrentControlSet\\Services\\Tcpip\\Parameters\\Tcp1323Opts" in (
        page.diff.toPlainText()
    )
    shot(qtbot, screenshot, connected, "client-tuning-dry-run-xp")
    reg = tmp_path / "xp.reg"
    page.save_reg(reg)
    qtbot.waitUntil(lambda: reg.exists() and not page.busy, timeout=10000)
    assert page.plan is not None
    regfile = page.plan.reg_file()
    assert regfile is not None and reg.read_bytes() == regfile.encode()
    saved = tmp_path / "xp-plan.json"
    page.save_plan(saved)
    qtbot.waitUntil(lambda: saved.exists() and not page.busy, timeout=10000)
    assert ClientPlan.from_json(json.loads(saved.read_text())).id == page.plan.id
    assert "sambatune client apply" in page.notice.text()

    page.tabs.setCurrentWidget(page.calculator)
    page.calculator.set_inputs("1gbit", "10ms")
    assert "1,250,000 bytes" in page.calculator.window_value.text()
    shot(qtbot, screenshot, connected, "client-tuning-calculator")


# -- the bandwidth-delay calculator, through its widgets ------------------------------------


def type_into(qtbot: QtBot, calculator: BdpCalculator, bandwidth: str, rtt: str, current: str = "") -> None:
    for field, text in (
        (calculator.bandwidth, bandwidth),
        (calculator.rtt, rtt),
        (calculator.current, current),
    ):
        field.edit.clear()
        qtbot.keyClicks(field.edit, text)


def test_the_calculator_worked_examples_update_as_you_type(qtbot: QtBot) -> None:
    calculator = BdpCalculator()
    qtbot.addWidget(calculator)
    calculator.show()

    type_into(qtbot, calculator, "1gbit", "10ms")
    assert "1,250,000 bytes" in calculator.window_value.text()
    assert calculator.scale_value.text().startswith("<b>5</b>")
    assert calculator.sizing is not None and calculator.sizing.required_window == 1_250_000

    # 65,535 bytes is the most a window holds without scaling: shift 0 exactly there.
    type_into(qtbot, calculator, "52.428mbit", "10ms")
    assert "65,535 bytes" in calculator.window_value.text()
    assert "no scaling needed" in calculator.scale_value.text()
    type_into(qtbot, calculator, "52.4281mbit", "10ms")
    assert calculator.scale_value.text().startswith("<b>1</b>")

    # The RFC 7323 bound: 65,535 x 2^14, just under 1 GiB.
    type_into(qtbot, calculator, "100gbit", "100ms")
    assert "1,073,725,440 bytes" in calculator.window_value.text()
    assert calculator.scale_value.text().startswith("<b>14</b>")
    assert "cannot fill this link" in calculator.warning.text()

    # What a 64 KiB window allows at 20 ms: 65,536 x 8 / 0.02 s = 26.2 Mbit/s.
    type_into(qtbot, calculator, "1gbit", "20ms", "64KiB")
    assert "allow at most 26.2 Mbit/s at 20 ms" in calculator.current_value.text()
    assert "2.6% of the link" in calculator.current_value.text()
    assert calculator.fill.value() == 26

    # Bad input is said under its field, the results blank; no dialog, no stale numbers.
    calculator.rtt.edit.clear()
    qtbot.keyClicks(calculator.rtt.edit, "20")
    assert calculator.rtt.error.isVisible() and "no unit" in calculator.rtt.error.text()
    assert calculator.window_value.text() == "—" and calculator.sizing is None
    qtbot.keyClicks(calculator.rtt.edit, "ms")
    assert not calculator.rtt.error.isVisible()
    assert "2,500,000 bytes" in calculator.window_value.text()


# -- apply and restore on an in-memory Windows 10 --------------------------------------------


def test_apply_and_restore_on_an_in_memory_windows_10(
    qtbot: QtBot,
    tmp_path: Path,
    runner: TaskRunner,
    screenshot: Screenshot,
) -> None:
    # An old tweak left TcpWindowSize behind; the SMB client values are all absent.
    registry = InMemoryRegistry.with_values([(TCPIP, "TcpWindowSize", RegValue.dword(64240))], keys=[LANMAN])
    net = FakeWindowsNet(autotuning="restricted")
    here = windows_system("windows-10", registry=registry, net=net, admin=True)

    def factory(profile: str | None) -> ClientSystem:
        return here if profile is None else system_for(profile)

    store = BackupStore(tmp_path / "backups")
    page = ClientTuningPage(runner, system_factory=factory, store=store)
    qtbot.addWidget(page)
    page.resize(920, 690)
    page.show()
    qtbot.waitUntil(lambda: page.snapshot is not None and not page.busy, timeout=30000)
    assert page.profile.itemText(0) == "This computer (Windows 10)"

    plan_with(qtbot, page, None, "1gbit", "20ms")
    assert page.plan is not None and page.plan.os.detected
    assert page.plan_view.badge_text("tcpip-tcpwindowsize") == "✖ ignored"
    ids = {c.catalog_id: c for c in page.plan.actionable()}
    assert ids["netsh-autotuninglevel"].recommended == "normal"
    assert "lanman-disablebandwidththrottling" in ids
    assert page.apply_button.isEnabled() and page.apply_button.text() == "Apply…"

    run_and_wait(qtbot, page, page.dry_run_button.click)
    output = page.output.toPlainText()
    assert "$ netsh interface tcp set global autotuninglevel=normal" in output
    assert f"$ registry: set {LANMAN}\\DisableBandwidthThrottling = REG_DWORD 0x00000001 (1)" in output
    assert net.autotuning == "restricted" and registry.get(LANMAN, "DisableBandwidthThrottling") is None

    page.apply_button.click()
    with qtbot.waitSignal(page.result_shown, timeout=60000):
        accept(qtbot, page)
    qtbot.waitUntil(lambda: not page.busy, timeout=30000)
    result = page.last_result
    assert result is not None and result.ok and not result.dry_run, result and result.message
    assert net.autotuning == "normal"
    assert registry.get(LANMAN, "DisableBandwidthThrottling") is not None
    assert registry.get(TCPIP, "TcpWindowSize") is not None, "an ignored value is left alone"
    assert "Restart the computer" in page.notice.text()
    assert not page.apply_button.isEnabled(), "the same plan is not applied twice"
    shot(qtbot, screenshot, page, "client-tuning-windows-10-applied")

    qtbot.waitUntil(lambda: page.backups.table.rowCount() == 1, timeout=10000)
    page.tabs.setCurrentWidget(page.backups)
    page.backups.table.selectRow(0)
    qtbot.waitUntil(lambda: "restore.reg" in page.backups.details.toPlainText(), timeout=10000)
    details = page.backups.details.toPlainText()
    assert '"DisableBandwidthThrottling"=-' in details, "absent before, absent after restore"
    assert "netsh interface tcp set global autotuninglevel=restricted" in details
    shot(qtbot, screenshot, page, "client-tuning-backups")

    page.backups.restore_button.click()
    with qtbot.waitSignal(page.result_shown, timeout=60000):
        accept(qtbot, page)
    qtbot.waitUntil(lambda: not page.busy, timeout=30000)
    assert page.last_result is not None and page.last_result.ok
    assert net.autotuning == "restricted"
    for name in ("DisableBandwidthThrottling", "FileInfoCacheEntriesMax"):
        assert registry.get(LANMAN, name) is None, f"{name} must be absent again"
    qtbot.waitUntil(lambda: page.backups.table.rowCount() == 2, timeout=10000)
    assert item_at(page.backups.table, 1, 3).text() != "no", "the first backup is marked restored"


def test_without_administrator_rights_apply_says_how_to_get_them(
    qtbot: QtBot, tmp_path: Path, runner: TaskRunner
) -> None:
    from sambatune.client.elevation import graphical_elevation, rights_advice

    here = windows_system("windows-10", admin=False)
    page = ClientTuningPage(
        runner, system_factory=lambda profile: here, store=BackupStore(tmp_path / "backups")
    )
    qtbot.addWidget(page)
    page.show()
    qtbot.waitUntil(lambda: page.snapshot is not None and not page.busy, timeout=30000)
    assert "no administrator rights" in page.system_view.heading.text()
    plan_with(qtbot, page, None, "1gbit", "20ms")
    route = graphical_elevation()
    assert page.apply_button.toolTip() == rights_advice(route)
    if route is None:  # no elevation prompt here (offscreen, no pkexec): say what to run
        assert not page.apply_button.isEnabled()
        assert "sudo sambatune client apply PLAN.json" in page.apply_button.toolTip()
    else:
        assert page.apply_button.text() == "Apply as administrator…"
    run_and_wait(qtbot, page, page.dry_run_button.click)  # a dry run needs no rights
    assert page.last_result is not None and page.last_result.ok


@pytest.mark.slow  # a real iperf3 run
@pytest.mark.skipif(shutil.which("iperf3") is None, reason="needs iperf3")
def test_the_bandwidth_comes_from_a_real_iperf3_result(
    qtbot: QtBot, tmp_path: Path, runner: TaskRunner
) -> None:
    from testbed.iperf3 import iperf3_result

    page = ClientTuningPage(runner, system_factory=system_for, store=BackupStore(tmp_path / "backups"))
    qtbot.addWidget(page)
    page.show()
    qtbot.waitUntil(lambda: page.snapshot is not None and not page.busy, timeout=30000)

    broken = tmp_path / "broken.json"
    broken.write_text('{"start": {}}')
    page.load_bandwidth_file(broken)
    qtbot.waitUntil(lambda: not page.busy, timeout=10000)
    assert page.inputs.bandwidth.error.isVisible()
    assert "No throughput" in page.inputs.bandwidth.error.text()

    result = iperf3_result(tmp_path)
    end = json.loads(result.read_text())["end"]
    measured = end["sum_received"]["bits_per_second"]
    page.load_bandwidth_file(result)
    qtbot.waitUntil(lambda: bool(page.inputs.bandwidth.text()) and not page.busy, timeout=10000)
    assert not page.inputs.bandwidth.error.isVisible()
    page.profile.setCurrentIndex(page.profile.findData("windows-10"))
    qtbot.waitUntil(lambda: not page.busy, timeout=30000)
    page.inputs.rtt.edit.setText("10ms")
    with qtbot.waitSignal(page.plan_shown, timeout=30000):
        page.inputs.plan_button.click()
    assert page.plan is not None
    assert page.plan.measurements["bandwidth_bps"] == measured
    assert (
        "iperf3 end.sum_received.bits_per_second in iperf3.json"
        in (page.plan.measurements["bandwidth_source"])
    )


# -- for real, inside a network namespace (root) ---------------------------------------------


@pytest.mark.needs_root
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to create network namespaces")
@pytest.mark.skipif(shutil.which("ip") is None, reason="needs iproute2")
def test_apply_and_restore_through_the_page_inside_a_namespace(tmp_path: Path) -> None:
    """The page runs in a pytest started inside the client namespace (the GUI then changes
    that namespace's MTU and sysctls, never the host's); this test builds the namespaces,
    starts it, and checks from outside that everything is back as it was."""
    from testbed.netlab import SERVER_IP, SYSCTLS, host_values, lab

    made = lab(tmp_path, blackhole=True)
    netlab = next(made)
    try:
        host_before = host_values()
        original = {name: netlab.sysctl(name) for name in SYSCTLS}
        netlab.home.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            LAB_ENV: json.dumps(
                {
                    "server": SERVER_IP,
                    "dev": netlab.client_dev,
                    "home": str(netlab.home),
                    "sysctl_dir": str(netlab.sysctl_dir),
                }
            ),
        }
        done = subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                netlab.client,
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                f"{__file__}::test_inside_the_namespace",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=280,
            cwd=Path(__file__).resolve().parents[1],
        )
        assert done.returncode == 0 and " passed" in done.stdout, done.stdout + done.stderr
        assert netlab.mtu() == 1500
        assert {name: netlab.sysctl(name) for name in SYSCTLS} == original
        assert not (netlab.sysctl_dir / "90-sambatune.conf").exists()
        assert host_values() == host_before, "the host's own settings must not change"
    finally:
        made.close()


@pytest.mark.skipif(LAB_ENV not in os.environ, reason="runs inside the namespace test only")
def test_inside_the_namespace(qtbot: QtBot, runner: TaskRunner, screenshot: Screenshot) -> None:
    from sambatune.ui.client.plan_inputs import PlanTarget

    lab = json.loads(os.environ[LAB_ENV])
    sysctl_dir = Path(lab["sysctl_dir"])

    def read(*argv: str) -> str:
        return " ".join(subprocess.run(list(argv), capture_output=True, text=True, check=True).stdout.split())

    def mtu() -> int:
        return int(json.loads(read("ip", "-j", "link", "show", "dev", lab["dev"]))[0]["mtu"])

    before_probing = read("sysctl", "-n", "net.ipv4.tcp_mtu_probing")
    page = ClientTuningPage(
        runner,
        lambda: PlanTarget(lab["server"], "the lab server"),
        system_factory=lambda profile: LinuxSystem(sysctl_dir=sysctl_dir),
        store=BackupStore(Path(lab["home"]) / "backups"),
    )
    qtbot.addWidget(page)
    page.resize(920, 690)
    page.show()
    qtbot.waitUntil(lambda: page.snapshot is not None and not page.busy, timeout=30000)

    # Cancel in the middle of the path-MTU probe (lost probes wait for their timeout).
    page.inputs.bandwidth.edit.setText("10gbit")
    page.inputs.rtt.edit.setText("200ms")
    page.inputs.plan_button.click()
    qtbot.waitUntil(lambda: "probing the path MTU" in page.progress_label.text(), timeout=30000)
    assert page.cancel_button.isVisible()
    page.cancel_button.click()
    qtbot.waitUntil(lambda: not page.busy, timeout=15000)
    assert page.plan is None and "cancelled" in page.notice.text()
    assert mtu() == 1500

    plan_with(qtbot, page, None, "10gbit", "20ms")  # the path MTU is probed
    plan = page.plan
    assert plan is not None and plan.mtu["probe"]["black_hole"], plan and plan.mtu
    ids = {c.catalog_id: c for c in plan.actionable()}
    assert ids["linux-interface-mtu"].recommended == 1400
    assert ids["linux-tcp-mtu-probing"].recommended == "1"
    assert mtu() == 1500

    run_and_wait(qtbot, page, page.dry_run_button.click)
    assert f"$ ip link set dev {lab['dev']} mtu 1400" in page.output.toPlainText()
    assert mtu() == 1500 and not (sysctl_dir / "90-sambatune.conf").exists()

    page.apply_button.click()
    with qtbot.waitSignal(page.result_shown, timeout=60000):
        accept(qtbot, page)
    qtbot.waitUntil(lambda: not page.busy, timeout=30000)
    assert page.last_result is not None and page.last_result.ok, page.output.toPlainText()
    assert mtu() == 1400
    assert read("sysctl", "-n", "net.ipv4.tcp_mtu_probing") == "1"
    assert read("sysctl", "-n", "net.ipv4.tcp_rmem") == ids["linux-tcp-rmem"].recommended
    assert (sysctl_dir / "90-sambatune.conf").exists()
    shot(qtbot, screenshot, page, "client-tuning-linux-applied")

    qtbot.waitUntil(lambda: page.backups.table.rowCount() == 1, timeout=10000)
    page.backups.table.selectRow(0)
    page.backups.restore_button.click()
    with qtbot.waitSignal(page.result_shown, timeout=60000):
        accept(qtbot, page)
    qtbot.waitUntil(lambda: not page.busy, timeout=30000)
    assert page.last_result is not None and page.last_result.ok
    assert mtu() == 1500
    assert read("sysctl", "-n", "net.ipv4.tcp_mtu_probing") == before_probing
    assert not (sysctl_dir / "90-sambatune.conf").exists()


def test_a_missing_figure_is_marked_at_its_field_in_the_page_s_words(
    qtbot: QtBot, tmp_path: Path, runner: TaskRunner
) -> None:
    """A profile has no link speed: the plan needs the bandwidth typed in, and the page
    says so at that field, without the command line's flags."""
    page = ClientTuningPage(runner, system_factory=system_for, store=BackupStore(tmp_path / "backups"))
    qtbot.addWidget(page)
    page.show()
    qtbot.waitUntil(lambda: page.snapshot is not None and not page.busy, timeout=30000)
    page.profile.setCurrentIndex(page.profile.findData("windows-10"))
    qtbot.waitUntil(lambda: not page.busy, timeout=30000)
    page.inputs.bandwidth.edit.setText("")
    page.inputs.rtt.edit.setText("10ms")
    page.inputs.plan_button.click()
    qtbot.waitUntil(lambda: page.inputs.bandwidth.error.isVisible(), timeout=30000)
    assert "bandwidth" in page.inputs.bandwidth.error.text()
    assert "--" not in page.inputs.bandwidth.error.text()
