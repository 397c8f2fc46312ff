"""macOS planning, apply and restore with sysctl / ifconfig / networksetup answering as on a Mac
(profiles included: a plan for a Mac it cannot read never lowers a ceiling), and the
Windows snapshot for the GUI's "current values" column."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from client_doubles import FakeWindowsNet, windows_system
from sambatune.client.apply import apply_plan, restore_backup
from sambatune.client.backups import BackupEntry, BackupStore
from sambatune.client.macos_system import MacSystem
from sambatune.client.osinfo import OsInfo, forced_profile
from sambatune.client.plan import ClientPlan
from sambatune.client.planner import Measurements, build_plan
from sambatune.client.settings import Observed, SysctlRef
from sambatune.client.snapshot import take_snapshot
from sambatune.client.system import ProfileSystem
from sambatune.remote.transport import CommandResult

MAC = OsInfo("macos", "macos", "macOS 14.5", "14.5", "macos")


@dataclass
class FakeMac:
    sysctls: dict[str, str] = field(
        default_factory=lambda: {
            "net.inet.tcp.win_scale_factor": "3",
            "net.inet.tcp.sendspace": "131072",
            "net.inet.tcp.recvspace": "131072",
            "net.inet.tcp.autorcvbufmax": "4194304",
            "net.inet.tcp.autosndbufmax": "4194304",
            "net.inet.tcp.doautorcvbuf": "1",
            "kern.ipc.maxsockbuf": "8388608",
        }
    )
    mtu: int = 1500
    log: list[list[str]] = field(default_factory=list)

    def run(
        self, argv: Sequence[str], *, stdin: bytes | None = None, timeout: float | None = 120.0
    ) -> CommandResult:
        args = list(argv)
        self.log.append(args)
        if args[:2] == ["sysctl", "-n"]:
            if args[2] not in self.sysctls:
                return CommandResult(tuple(args), 1, b"", f"sysctl: unknown oid '{args[2]}'\n".encode())
            return CommandResult(tuple(args), 0, (self.sysctls[args[2]] + "\n").encode(), b"")
        if args[:2] == ["sysctl", "-w"]:
            name, _, value = args[2].partition("=")
            if name == "net.inet.tcp.autorcvbufmax" and int(value) > int(self.sysctls["kern.ipc.maxsockbuf"]):
                return CommandResult(tuple(args), 1, b"", b"sysctl: Invalid argument\n")
            self.sysctls[name] = value
            return CommandResult(tuple(args), 0, f"{name}: old -> {value}\n".encode(), b"")
        if args[:2] == ["ifconfig", "-a"] or args == ["ifconfig", "en0"]:
            text = (
                f"en0: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu {self.mtu}"
                "\n\tinet 192.168.1.30 netmask 0xffffff00\n\tstatus: active\n"
            )
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
    plan = build_plan(
        system, Measurements(1e9, "entered", 0.050, "entered", requested_mtu=1400, interface=nic)
    )
    by_id = {c.catalog_id: c for c in plan.changes}
    # 1 Gbit/s x 50 ms = 6,250,000 bytes, about twice that as buffer. The kernel picks the
    # window scale from autorcvbufmax, so win_scale_factor is reported, never planned.
    assert "macos-win-scale-factor" not in by_id
    assert any("win_scale_factor (here 3)" in note for note in plan.notes)
    # Nor are the starting buffers old guides raise: auto-tuning grows SMB's past them.
    assert any("(here sendspace 131,072, recvspace 131,072 bytes)" in note for note in plan.notes)
    assert not any("space" in c.catalog_id for c in plan.changes)
    assert by_id["macos-autorcvbufmax"].recommended == "12500000"
    assert by_id["macos-maxsockbuf"].recommended == "12500000"
    order = [c.catalog_id for c in plan.actionable()]
    assert order.index("macos-maxsockbuf") < order.index("macos-autorcvbufmax")
    assert any("restart" in note for note in plan.notes)

    original = dict(mac.sysctls)
    store = BackupStore(tmp_path)
    result = apply_plan(system, plan, store=store)
    assert result.ok, result.message
    assert mac.sysctls["net.inet.tcp.autorcvbufmax"] == "12500000" and mac.mtu == 1400
    assert mac.sysctls["net.inet.tcp.win_scale_factor"] == "3"
    script = (Path(result.backup_folder or "") / "restore.sh").read_text()
    assert "networksetup -setMTU en0 1500" in script
    assert "sysctl -w net.inet.tcp.autorcvbufmax=4194304" in script
    assert "win_scale_factor" not in script and "sendspace" not in script

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
    # Read through Get-SmbClientConfiguration, not shown as "not a readable setting".
    multichannel = settings["smb-client-enablemultichannel"]
    assert multichannel["current"]["state"] == "present", multichannel
    assert str(multichannel["current"]["value"]).lower() == "true"


def test_a_macos_profile_plan_never_lowers_the_default_ceilings(tmp_path: Path) -> None:
    """A Mac's defaults (maxsockbuf 8 MiB, auto-tuning ceilings 4 MiB from 4 GiB of memory)
    already cover 1 Gbit/s x 10 ms: a plan for a Mac it cannot read must not ask for less."""
    near = build_plan(ProfileSystem(forced_profile("macos")), Measurements(1e9, "entered", 0.010, "entered"))
    by_id = {c.catalog_id: c for c in near.changes}
    for catalog_id in ("macos-maxsockbuf", "macos-autorcvbufmax", "macos-autosndbufmax"):
        assert by_id[catalog_id].action == "keep", catalog_id
    assert "4,194,304 bytes, leaves room for the 2,500,000-byte" in (by_id["macos-autorcvbufmax"].reason)
    assert "macos-win-scale-factor" not in by_id and not near.actionable()
    assert any("win_scale_factor is only the smallest factor" in n for n in near.notes)

    # 1 Gbit/s x 50 ms needs 12.5 MB: more than the defaults, so minimums, settled on the Mac.
    far = build_plan(ProfileSystem(forced_profile("macos")), Measurements(1e9, "entered", 0.050, "entered"))
    data = far.to_json()
    changes = {c["catalog_id"]: c for c in data["changes"]}
    for catalog_id in ("macos-maxsockbuf", "macos-autorcvbufmax", "macos-autosndbufmax"):
        assert changes[catalog_id]["action"] == "set" and changes[catalog_id]["at_least"]
        assert changes[catalog_id]["recommended_display"] == "at least 12500000"
    mac = FakeMac()
    mac.sysctls["net.inet.tcp.autosndbufmax"] = "16777216"  # tuned higher by someone
    original = dict(mac.sysctls)
    system = MacSystem(MAC, runner=mac)
    system.is_admin = lambda: True  # type: ignore[method-assign]
    store = BackupStore(tmp_path)
    result = apply_plan(system, ClientPlan.from_json(data), store=store)
    assert result.ok, result.message
    assert mac.sysctls["kern.ipc.maxsockbuf"] == "12500000"
    assert mac.sysctls["net.inet.tcp.autorcvbufmax"] == "12500000"
    assert mac.sysctls["net.inet.tcp.autosndbufmax"] == "16777216"
    step = next(s for s in result.steps if s.setting == "net.inet.tcp.autosndbufmax")
    assert step.status == "left-as-is"
    assert step.message == "already 16777216, higher than the 12500000 this plan needs; left as is"
    assert restore_backup(system, result.backup_id or "", store=store).ok
    assert mac.sysctls == original


def test_win_scale_factor_is_never_set_but_an_old_backup_still_restores_it(tmp_path: Path) -> None:
    mac = FakeMac()
    system = MacSystem(MAC, runner=mac)
    system.is_admin = lambda: True  # type: ignore[method-assign]
    data = build_plan(system, Measurements(1e9, "entered", 0.050, "entered")).to_json()
    # A plan file from a SambaTune that still planned the scale factor.
    old_item = dict(next(c for c in data["changes"] if c["catalog_id"] == "macos-autorcvbufmax"))
    old_item.update(
        id="macos-win-scale-factor",
        catalog_id="macos-win-scale-factor",
        setting={"kind": "sysctl", "name": "net.inet.tcp.win_scale_factor"},
        current={"state": "present", "value": "3"},
        recommended="7",
    )
    data["changes"].insert(0, old_item)
    store = BackupStore(tmp_path)
    result = apply_plan(system, ClientPlan.from_json(data), store=store)
    assert result.ok, result.message
    step = next(s for s in result.steps if s.setting == "net.inet.tcp.win_scale_factor")
    assert step.status == "left-as-is" and "no longer set" in step.message
    assert mac.sysctls["net.inet.tcp.win_scale_factor"] == "3"
    assert not [argv for argv in mac.log if "net.inet.tcp.win_scale_factor=7" in " ".join(argv)]

    # A backup that older SambaTune took before setting it puts the old value back exactly.
    mac.sysctls["net.inet.tcp.win_scale_factor"] = "7"
    old = store.create(MAC, [BackupEntry(SysctlRef("net.inet.tcp.win_scale_factor"), Observed.present("3"))])
    assert restore_backup(system, old.id, store=store).ok
    assert mac.sysctls["net.inet.tcp.win_scale_factor"] == "3"
