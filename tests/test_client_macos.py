"""macOS planning, apply and restore with sysctl / ifconfig / networksetup answering as on a Mac,
and the Windows snapshot for the GUI's "current values" column."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from client_doubles import FakeWindowsNet, windows_system
from sambatune.client.apply import apply_plan, restore_backup
from sambatune.client.backups import BackupStore
from sambatune.client.macos_system import MacSystem
from sambatune.client.osinfo import OsInfo
from sambatune.client.planner import Measurements, build_plan
from sambatune.client.snapshot import take_snapshot
from sambatune.remote.transport import CommandResult

MAC = OsInfo("macos", "macos", "macOS 14.5", "14.5", "macos")


@dataclass
class FakeMac:
    sysctls: dict[str, str] = field(default_factory=lambda: {
        "net.inet.tcp.win_scale_factor": "3",
        "net.inet.tcp.autorcvbufmax": "4194304",
        "net.inet.tcp.autosndbufmax": "4194304",
        "net.inet.tcp.doautorcvbuf": "1",
        "kern.ipc.maxsockbuf": "8388608",
    })
    mtu: int = 1500
    log: list[list[str]] = field(default_factory=list)

    def run(self, argv: Sequence[str], *, stdin: bytes | None = None,
            timeout: float | None = 120.0) -> CommandResult:
        args = list(argv)
        self.log.append(args)
        if args[:2] == ["sysctl", "-n"]:
            if args[2] not in self.sysctls:
                return CommandResult(tuple(args), 1, b"", f"sysctl: unknown oid '{args[2]}'\n"
                                     .encode())
            return CommandResult(tuple(args), 0, (self.sysctls[args[2]] + "\n").encode(), b"")
        if args[:2] == ["sysctl", "-w"]:
            name, _, value = args[2].partition("=")
            if name == "net.inet.tcp.autorcvbufmax" and int(value) > int(
                    self.sysctls["kern.ipc.maxsockbuf"]):
                return CommandResult(tuple(args), 1, b"", b"sysctl: Invalid argument\n")
            self.sysctls[name] = value
            return CommandResult(tuple(args), 0, f"{name}: old -> {value}\n".encode(), b"")
        if args[:2] == ["ifconfig", "-a"] or args == ["ifconfig", "en0"]:
            text = (f"en0: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu {self.mtu}"
                    "\n\tinet 192.168.1.30 netmask 0xffffff00\n\tstatus: active\n")
            return CommandResult(tuple(args), 0, text.encode(), b"")
        if args == ["networksetup", "-listallhardwareports"]:
            return CommandResult(tuple(args), 0, b"Hardware Port: Ethernet\nDevice: en0\n", b"")
        if args[:2] == ["networksetup", "-setMTU"]:
            self.mtu = int(args[3])
            return CommandResult(tuple(args), 0, b"", b"")
        return CommandResult(tuple(args), 127, b"", b"not found\n")


def test_macos_plan_apply_and_restore(tmp_path: Path) -> None:
    mac = FakeMac()
    system = MacSystem(MAC, runner=mac)
    system.is_admin = lambda: True  # type: ignore[method-assign]
    nic = system.interfaces()[0]
    assert nic.name == "en0" and nic.description == "Ethernet"
    plan = build_plan(system, Measurements(1e9, "entered", 0.050, "entered", requested_mtu=1400,
                                           interface=nic))
    by_id = {c.catalog_id: c for c in plan.changes}
    # 1 Gbit/s x 50 ms = 6,250,000 bytes: scale factor 7 (65,535 x 128 = 8,388,480).
    assert by_id["macos-win-scale-factor"].recommended == "7"
    assert by_id["macos-autorcvbufmax"].recommended == "12500000"
    assert by_id["macos-maxsockbuf"].recommended == "12500000"
    order = [c.catalog_id for c in plan.actionable()]
    assert order.index("macos-maxsockbuf") < order.index("macos-autorcvbufmax")
    assert any("restart" in note for note in plan.notes)

    original = dict(mac.sysctls)
    store = BackupStore(tmp_path)
    result = apply_plan(system, plan, store=store)
    assert result.ok, result.message
    assert mac.sysctls["net.inet.tcp.win_scale_factor"] == "7" and mac.mtu == 1400
    script = (Path(result.backup_folder or "") / "restore.sh").read_text()
    assert "networksetup -setMTU en0 1500" in script
    assert "sysctl -w net.inet.tcp.win_scale_factor=3" in script

    assert restore_backup(system, result.backup_id or "", store=store).ok
    assert mac.sysctls == original and mac.mtu == 1500


def test_windows_snapshot_labels_current_values() -> None:
    system = windows_system("windows-10", net=FakeWindowsNet(autotuning="restricted"))
    snapshot = take_snapshot(system).to_json()
    assert snapshot["os"]["name"] == "Windows 10" and snapshot["can_apply"]
    settings = {s["catalog_id"]: s for s in snapshot["settings"]}
    assert settings["netsh-autotuninglevel"]["current"]["value"] == "restricted"
    assert settings["tcpip-tcpwindowsize"]["label"] == "ignored"
    assert settings["tcpip-tcpwindowsize"]["current"]["state"] == "absent"
    mtu = [s for s in snapshot["settings"] if s["catalog_id"] == "netsh-interface-mtu"]
    assert mtu[0]["current"]["value"] == 1500 and "Ethernet" in mtu[0]["title"]
    jumbo = settings["adapter-jumbopacket"]
    assert jumbo["current"]["value"] == "1514" and jumbo["restart"] == "adapter-restart"
