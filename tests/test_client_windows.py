"""Windows plans per generation, and apply / backup / restore on an in-memory registry with
netsh and PowerShell answering as documented (tests/client_doubles.py)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from client_doubles import FakeWindowsNet, windows_system
from reg_reader import import_reg, parse_reg
from sambatune.client.apply import PlanStale, apply_plan, restore_backup
from sambatune.client.backups import BackupStore
from sambatune.client.nics import TCPIP_INTERFACES_KEY, NetworkInterface
from sambatune.client.osinfo import PROFILE_NAMES, forced_profile
from sambatune.client.plan import ClientPlan, PlannedChange
from sambatune.client.planner import Measurements, build_plan
from sambatune.client.regfile import decode_reg_bytes
from sambatune.client.registry import InMemoryRegistry
from sambatune.client.regvalue import REG_DWORD, REG_MULTI_SZ, REG_SZ, RegValue
from sambatune.client.settings import InterfaceMtuRef, RegistryValueRef, TcpAutotuningRef
from sambatune.client.system import CannotApplyHere, NeedsAdmin, ProfileSystem, system_for
from sambatune.client.windows_system import parse_autotuning_level
from sambatune.errors import InvalidInput

DATA = Path(__file__).parent / "data" / "client"
TCPIP = "HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Services\\Tcpip\\Parameters"
LANMAN = "HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Services\\LanmanWorkstation\\Parameters"
GUID = "{2F4C1A0E-5B1D-4C3A-9D2E-1234567890AB}"
IFACE = f"{TCPIP_INTERFACES_KEY}\\{GUID}"


def measured(
    bandwidth: float = 1e9,
    rtt: float = 0.010,
    mtu: int | None = None,
    interface: NetworkInterface | None = None,
) -> Measurements:
    return Measurements(bandwidth, "entered", rtt, "entered", requested_mtu=mtu, interface=interface)


def by_id(plan: ClientPlan, item_id: str) -> PlannedChange:
    matches = [c for c in plan.changes if c.id == item_id or c.catalog_id == item_id]
    assert matches, f"{item_id} not in plan: {[c.id for c in plan.changes]}"
    return matches[0]


def xp_registry() -> InMemoryRegistry:
    """What an XP machine with one Ethernet card and an old tweak looks like."""
    return InMemoryRegistry.with_values(
        [
            (TCPIP, "TcpWindowSize", RegValue.dword(64240)),
            (TCPIP, "GlobalMaxTcpWindowSize", RegValue.dword(65535)),
            (TCPIP, "Hostname", RegValue.string("xp-pc")),
            (IFACE, "IPAddress", RegValue(REG_MULTI_SZ, ("192.168.1.20",))),
            (IFACE, "EnableDHCP", RegValue.dword(0)),
        ]
    )


# -- plans per generation --------------------------------------------------------------


def test_windows_10_labels_tcpwindowsize_ignored_and_plans_what_is_honoured() -> None:
    plan = build_plan(ProfileSystem(forced_profile("windows-10")), measured())
    window = by_id(plan, "tcpip-tcpwindowsize")
    assert window.honoured is False and window.action == "none"
    assert "Ignored on Windows 10" in window.reason
    autotuning = by_id(plan, "netsh-autotuninglevel")
    assert autotuning.honoured and autotuning.action == "set" and autotuning.recommended == "normal"
    assert autotuning.operations == ["netsh interface tcp set global autotuninglevel=normal"]
    throttling = by_id(plan, "lanman-disablebandwidththrottling")
    assert throttling.action == "set" and throttling.recommended == RegValue.dword(1)
    assert by_id(plan, "lanman-maxcmds").honoured is False
    regfile = plan.reg_file()
    assert regfile is not None and regfile.version == 5
    assert "TcpWindowSize" not in regfile.text()
    assert "LanmanWorkstation" in regfile.text()


def test_windows_xp_plans_tcpwindowsize_and_scaling() -> None:
    plan = build_plan(ProfileSystem(forced_profile("windows-xp")), measured())
    window = by_id(plan, "tcpip-tcpwindowsize")
    assert window.honoured and window.action == "set"
    # 1,250,000 bytes rounded up to whole 1460-byte segments.
    assert window.recommended == RegValue.dword(1_251_220)
    assert window.restart == "reboot"
    # Unknown there: absent means TechNet's default 3; writing 1 would turn timestamps off.
    assert by_id(plan, "tcpip-tcp1323opts").recommended == RegValue.dword(3)
    registry_plan = plan.registry_plan()
    assert [(e["name"], e["after"]) for e in registry_plan.to_json()] == [
        ("TcpWindowSize", "REG_DWORD 0x00131794 (1251220)"),
        ("Tcp1323Opts", "REG_DWORD 0x00000003 (3)"),
    ]
    autotuning = by_id(plan, "netsh-autotuninglevel")
    assert autotuning.honoured is False and autotuning.action == "none"
    assert plan.restart_needed() == "reboot"


def test_windows_98_uses_strings_and_the_misspelled_global_max() -> None:
    plan = build_plan(ProfileSystem(forced_profile("windows-98")), measured(100e6, 0.020))
    rcv = by_id(plan, "win9x-defaultrcvwindow")
    assert rcv.recommended == RegValue(REG_SZ, "251120")  # 250,000 -> 172 x 1460
    assert by_id(plan, "win9x-tcp1323opts").recommended == RegValue(REG_SZ, "1")
    misspelled = by_id(plan, "win9x-globalmaxtcpwindosize")
    assert isinstance(misspelled.ref, RegistryValueRef)
    assert misspelled.ref.name == "GlobalMaxTcpWindoSize"
    assert by_id(plan, "tcpip-tcpwindowsize").honoured is False
    regfile = plan.reg_file()
    assert regfile is not None and regfile.version == 4
    assert regfile.encode().startswith(b"REGEDIT4\r\n")
    assert '"DefaultRcvWindow"="251120"' in regfile.text()


def test_windows_95_has_no_window_scaling() -> None:
    plan = build_plan(ProfileSystem(forced_profile("windows-95")), measured(100e6, 0.020))
    assert by_id(plan, "win9x-defaultrcvwindow").recommended == RegValue.string("64240")
    assert by_id(plan, "win9x-tcp1323opts").action == "none"


@pytest.mark.parametrize("profile", [p for p in PROFILE_NAMES if p.startswith("windows")])
@pytest.mark.parametrize(("bandwidth", "rtt"), [(100e6, 0.0005), (1e9, 0.010), (10e9, 0.080)])
def test_every_item_is_labelled_and_only_honoured_values_are_written(
    profile: str, bandwidth: float, rtt: float
) -> None:
    plan = build_plan(ProfileSystem(forced_profile(profile)), measured(bandwidth, rtt, mtu=9000))
    assert plan.changes
    for change in plan.changes:
        data = change.to_json()
        assert data["label"] in ("honoured", "ignored")
        assert change.honoured_note and change.reason and change.what
        if change.changes_something:
            assert change.honoured, f"{profile}: plans a write to ignored {change.id}"
            assert change.operations
    ids = {c.catalog_id for c in plan.changes}
    assert "tcpip-tcpwindowsize" in ids
    # A plan survives a round trip through its JSON form.
    again = ClientPlan.from_json(plan.to_json())
    assert again.to_json()["changes"] == plan.to_json()["changes"]


def test_autotuning_decisions() -> None:
    for level, action in (
        ("disabled", "set"),
        ("highlyrestricted", "set"),
        ("restricted", "set"),
        ("normal", "keep"),
        ("experimental", "set"),
    ):
        system = windows_system("windows-10", net=FakeWindowsNet(autotuning=level))
        item = by_id(build_plan(system, measured(1e9, 0.010)), "netsh-autotuninglevel")
        assert item.action == action, level
        assert item.current.value == level
    # A LAN (12.5 KB in flight) is covered even by "restricted": nothing to change.
    system = windows_system("windows-10", net=FakeWindowsNet(autotuning="restricted"))
    lan = build_plan(system, measured(100e6, 0.001))
    assert by_id(lan, "netsh-autotuninglevel").action == "keep"
    # Beyond normal's 16,776,960 bytes SambaTune still keeps normal and says why.
    system = windows_system("windows-10")
    item = by_id(build_plan(system, measured(10e9, 0.100)), "netsh-autotuninglevel")
    assert item.action == "keep" and "experimental" in item.reason


def test_vista_has_no_large_mtu_and_seven_gets_it_explicitly() -> None:
    vista = build_plan(ProfileSystem(forced_profile("windows-vista")), measured())
    assert by_id(vista, "lanman-disablelargemtu").honoured is False
    seven = windows_system("windows-7")
    item = by_id(build_plan(seven, measured()), "lanman-disablelargemtu")
    assert item.action == "set" and item.recommended == RegValue.dword(0)

    # Planned for a Windows 7 machine elsewhere: Windows 8's default is not its status.
    def offline_plan(profile: str) -> PlannedChange:
        return by_id(build_plan(ProfileSystem(forced_profile(profile)), measured()), "lanman-disablelargemtu")

    offline = offline_plan("windows-7")
    assert offline.action == "set" and offline.recommended == RegValue.dword(0)
    assert "Windows 8" not in offline.reason.split(";")[0] and "Not read here" in offline.reason
    eight = offline_plan("windows-8")
    assert eight.action == "keep" and "On from Windows 8" in eight.reason


def test_netsh_output_parsers() -> None:
    text = (
        FakeWindowsNet(autotuning="highlyrestricted")
        .run(["netsh", "interface", "tcp", "show", "global"])
        .text
    )
    assert parse_autotuning_level(text) == "highlyrestricted"
    translated = "TCP-Globalparameter\r\n----\r\nECN-Funktion : disabled\r\nFoo : restricted\r\n"
    assert parse_autotuning_level(translated) == "restricted"
    assert parse_autotuning_level("nothing here") is None


# -- apply, backup, restore ------------------------------------------------------------


def test_xp_apply_writes_a_byte_exact_backup_and_restore_brings_back_absent_values(
    tmp_path: Path,
) -> None:
    registry = xp_registry()
    original = copy.deepcopy(registry.snapshot())
    system = windows_system("windows-xp", registry=registry)
    nic = system.interfaces()[0]
    assert nic.guid == GUID
    plan = build_plan(system, measured(mtu=1400, interface=nic))
    store = BackupStore(tmp_path / "backups")

    result = apply_plan(system, plan, store=store)

    assert result.ok, result.message
    assert result.restart_needed == "reboot"
    # MSS = 1400 - 40 = 1360; 1,250,000 -> 920 segments = 1,251,200 bytes.
    assert registry.get(TCPIP, "TcpWindowSize") == RegValue.dword(1_251_200)
    assert registry.get(TCPIP, "GlobalMaxTcpWindowSize") == RegValue.dword(1_251_200)
    assert registry.get(TCPIP, "Tcp1323Opts") == RegValue.dword(3)
    assert registry.get(IFACE, "MTU") == RegValue.dword(1400)

    backup = Path(result.backup_folder or "")
    assert (backup / "restore.reg").read_bytes() == (DATA / "xp-backup-v5.reg").read_bytes()
    # As the page shows it: the .reg file decoded from its own encoding, the others as text.
    loaded = store.load(result.backup_id or "")
    texts = loaded.restore_file_texts()
    assert set(texts) == set(loaded.files) and "restore.reg" in texts
    assert texts["restore.reg"] == decode_reg_bytes((DATA / "xp-backup-v5.reg").read_bytes())
    assert texts["restore.reg"].startswith("Windows Registry Editor Version 5.00")
    (backup / "restore.reg").unlink()
    assert store.load(result.backup_id or "").restore_file_texts()["restore.reg"].startswith("(cannot read:")
    (backup / "restore.reg").write_bytes((DATA / "xp-backup-v5.reg").read_bytes())

    # Importing the .reg alone (as regedit would) puts back the exact prior state.
    imported = copy.deepcopy(registry)
    import_reg(imported, parse_reg((backup / "restore.reg").read_bytes()))
    assert imported.snapshot() == original
    assert imported.get(TCPIP, "Tcp1323Opts") is None

    # And the one-call restore does the same through the engine.
    restored = restore_backup(system, result.backup_id or "", store=store)
    assert restored.ok, restored.message
    assert registry.snapshot() == original
    assert registry.get(IFACE, "MTU") is None
    listed = store.list()
    assert [e["kind"] for e in listed] == ["before-apply", "before-restore"]
    assert listed[0]["restored_at"]


def test_windows_10_apply_and_restore_through_netsh(tmp_path: Path) -> None:
    net = FakeWindowsNet(autotuning="disabled")
    registry = InMemoryRegistry.with_values([(LANMAN, "DisableBandwidthThrottling", RegValue.dword(0))])
    original = copy.deepcopy(registry.snapshot())
    system = windows_system("windows-10", registry=registry, net=net)
    nic = system.interfaces()[0]
    plan = build_plan(system, measured(1e9, 0.010, mtu=9000, interface=nic))
    store = BackupStore(tmp_path / "b")

    dry = apply_plan(system, plan, store=store, dry_run=True)
    assert dry.ok and dry.dry_run
    assert net.autotuning == "disabled" and net.mtus["Ethernet"] == 1500
    assert not store.list() and not (tmp_path / "b").exists()
    operations = [op for step in dry.steps for op in step.operations]
    assert "netsh interface tcp set global autotuninglevel=normal" in operations
    assert "netsh interface ipv4 set subinterface Ethernet mtu=9000 store=persistent" in operations
    assert any(
        "Set-NetAdapterAdvancedProperty -Name 'Ethernet' -RegistryKeyword '*JumboPacket' "
        "-RegistryValue '9014'" in op
        for op in operations
    )
    assert f"registry: set {LANMAN}\\DisableBandwidthThrottling = REG_DWORD 0x00000001 (1)" in operations

    result = apply_plan(system, plan, store=store)
    assert result.ok, result.message
    assert net.autotuning == "normal"
    assert net.mtus["Ethernet"] == 9000
    assert net.properties[("Ethernet", "*JumboPacket")] == "9014"
    assert result.restart_needed == "reboot"  # LanmanWorkstation values
    script = (Path(result.backup_folder or "") / "restore.cmd").read_text()
    assert "netsh interface tcp set global autotuninglevel=disabled" in script
    assert "netsh interface ipv4 set subinterface Ethernet mtu=1500 store=persistent" in script
    assert 'reg import "%~dp0restore.reg"' in script

    restored = restore_backup(system, result.backup_id or "", store=store)
    assert restored.ok, restored.message
    assert net.autotuning == "disabled"
    assert net.mtus["Ethernet"] == 1500
    assert net.properties[("Ethernet", "*JumboPacket")] == "1514"
    assert registry.snapshot() == original
    assert any("adapter's default" in w for w in restored.warnings)


def test_a_failing_command_rolls_back_what_was_already_written(tmp_path: Path) -> None:
    net = FakeWindowsNet(
        autotuning="disabled", fail_when=lambda argv: "subinterface" in argv and "set" in argv
    )
    registry = InMemoryRegistry()
    system = windows_system("windows-10", registry=registry, net=net)
    plan = build_plan(system, measured(1e9, 0.010, mtu=1400, interface=system.interfaces()[0]))
    result = apply_plan(system, plan, store=BackupStore(tmp_path))
    assert not result.ok and result.rolled_back
    assert net.autotuning == "disabled", "the auto-tuning change was put back"
    assert registry.snapshot() == {}
    statuses = [s.status for s in result.steps]
    assert "failed" in statuses and "rolled-back" in statuses
    assert "elevation" in result.message


def test_a_plan_gone_stale_is_refused_unless_forced(tmp_path: Path) -> None:
    registry = xp_registry()
    system = windows_system("windows-xp", registry=registry)
    plan = build_plan(system, measured(interface=system.interfaces()[0]))
    registry.set(TCPIP, "TcpWindowSize", RegValue.dword(12345))
    with pytest.raises(PlanStale):
        apply_plan(system, plan, store=BackupStore(tmp_path))
    assert registry.get(TCPIP, "TcpWindowSize") == RegValue.dword(12345)
    assert apply_plan(system, plan, store=BackupStore(tmp_path), force=True).ok


def test_refusals(tmp_path: Path) -> None:
    plan = build_plan(ProfileSystem(forced_profile("windows-10")), measured())
    with pytest.raises(NeedsAdmin):
        apply_plan(windows_system("windows-10", admin=False), plan, store=BackupStore(tmp_path))
    with pytest.raises(CannotApplyHere):
        apply_plan(ProfileSystem(forced_profile("windows-10")), plan, store=BackupStore(tmp_path))
    with pytest.raises(CannotApplyHere):
        apply_plan(windows_system("windows-xp"), plan, store=BackupStore(tmp_path))
    # A dry run of it still says what it would do on a Windows 10 machine, reading nothing.
    xp_registry = InMemoryRegistry()
    store = BackupStore(tmp_path / "backups")
    elsewhere = apply_plan(
        windows_system("windows-xp", registry=xp_registry), plan, dry_run=True, store=store
    )
    assert elsewhere.ok and {s.status for s in elsewhere.steps} == {"planned"}
    assert ["netsh interface tcp set global autotuninglevel=normal"] in [
        s.operations for s in elsewhere.steps
    ]
    assert not xp_registry.subkeys("HKEY_LOCAL_MACHINE") and not store.root.exists()
    # netsh cannot be read (as under Wine): the level could not be put back, so it is left
    # alone and says why; the rest of the plan is applied and backed up as usual.
    net = FakeWindowsNet(fail_when=lambda argv: "show" in argv and "global" in argv)
    system = windows_system("windows-10", net=net)
    result = apply_plan(system, plan, store=BackupStore(tmp_path))
    assert result.ok, result.message
    [level] = [step for step in result.steps if step.setting == TcpAutotuningRef().label()]
    assert level.status == "left-as-is" and "cannot be read here" in level.message
    assert not [argv for argv in net.log if "set" in argv and "global" in argv]
    assert any(step.status == "changed" for step in result.steps)
    assert result.backup_id is not None
    assert restore_backup(system, result.backup_id, store=BackupStore(tmp_path)).ok


def test_system_for_forced_profiles_and_dry_run_needs_no_admin(tmp_path: Path) -> None:
    assert isinstance(system_for("windows-xp"), ProfileSystem)
    with pytest.raises(InvalidInput):
        system_for("windows-3.11")
    system = windows_system("windows-10", admin=False, net=FakeWindowsNet(autotuning="disabled"))
    plan = build_plan(system, measured())
    result = apply_plan(system, plan, dry_run=True, store=BackupStore(tmp_path))
    assert result.ok and result.backup_preview is not None
    refs = [s["setting"] for s in result.backup_preview["settings"]]
    assert TcpAutotuningRef().to_json() in refs
    assert InterfaceMtuRef("Ethernet").to_json() not in refs, "no MTU change was planned"


def test_a_plan_may_only_touch_catalogued_settings(tmp_path: Path) -> None:
    registry = InMemoryRegistry()
    system = windows_system("windows-10", registry=registry)
    plan = build_plan(system, measured())
    data = plan.to_json()
    for change in data["changes"]:
        if change["catalog_id"] == "lanman-disablebandwidththrottling":
            change["setting"]["key"] = "HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Windows\\Run"
            change["setting"]["name"] = "Evil"
    with pytest.raises(InvalidInput, match="not a setting SambaTune manages"):
        apply_plan(system, ClientPlan.from_json(data), store=BackupStore(tmp_path))
    assert registry.snapshot() == {}
    # Per-interface keys must look like an interface GUID.
    from sambatune.client.apply import out_of_scope

    good = RegistryValueRef(IFACE, "MTU", REG_DWORD)
    bad = RegistryValueRef(IFACE + "\\..\\..\\Other", "MTU", REG_DWORD)
    assert out_of_scope(good, RegValue.dword(1400)) is None
    assert out_of_scope(bad, RegValue.dword(1400))


def test_a_window_without_an_elevation_prompt_is_told_what_to_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from sambatune.client.elevation import graphical_elevation, rights_advice

    # No display: pkexec could not show its password dialog, and sudo has no terminal.
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert graphical_elevation() is None
    assert "sudo sambatune client apply PLAN.json" in rights_advice(None)
    assert "elevation prompt" in rights_advice("uac")
    assert "pkexec" in rights_advice("pkexec")


# -- plans for another machine carry minimums ------------------------------------------


def xp_profile_plan() -> ClientPlan:
    """An XP plan made on another computer (values unread), carried over as a file."""
    plan = build_plan(ProfileSystem(forced_profile("windows-xp")), measured())
    return ClientPlan.from_json(plan.to_json())


def test_tcp1323opts_sets_the_scaling_bit_and_keeps_timestamps() -> None:
    """TechNet documents Tcp1323Opts' default as 3 (scaling and timestamps): writing 1
    would turn timestamps off. Only bit 0 is SambaTune's to set."""
    opts = by_id(xp_profile_plan(), "tcpip-tcp1323opts")
    assert opts.recommended == RegValue.dword(3) and opts.to_json()["at_least"]
    assert "Writing 1 would turn timestamps off" in opts.reason
    for present, planned in ((None, 3), (0, 1), (2, 3)):
        registry = xp_registry()
        if present is not None:
            registry.set(TCPIP, "Tcp1323Opts", RegValue.dword(present))
        item = by_id(
            build_plan(windows_system("windows-xp", registry=registry), measured()), "tcpip-tcp1323opts"
        )
        assert item.action == "set" and item.recommended == RegValue.dword(planned), present
    registry = xp_registry()
    registry.set(TCPIP, "Tcp1323Opts", RegValue.dword(1))
    item = by_id(build_plan(windows_system("windows-xp", registry=registry), measured()), "tcpip-tcp1323opts")
    assert item.action == "keep"


@pytest.mark.parametrize(
    ("before", "after", "status"),
    [
        (None, 3, "changed"),  # absent: the documented default 3, made explicit
        (0, 1, "changed"),  # both off there: scaling on, timestamps stay off
        (2, 3, "changed"),
        (1, 1, "left-as-is"),  # scaling already on; timestamps stay off as someone chose
    ],
)
def test_an_xp_profile_plan_applied_ors_the_scaling_bit_into_what_is_there(
    tmp_path: Path, before: int | None, after: int, status: str
) -> None:
    registry = xp_registry()
    if before is not None:
        registry.set(TCPIP, "Tcp1323Opts", RegValue.dword(before))
    original = copy.deepcopy(registry.snapshot())
    system = windows_system("windows-xp", registry=registry)
    store = BackupStore(tmp_path)
    result = apply_plan(system, xp_profile_plan(), store=store)
    assert result.ok, result.message
    assert registry.get(TCPIP, "Tcp1323Opts") == RegValue.dword(after)
    step = next(s for s in result.steps if s.setting.endswith("\\Tcp1323Opts"))
    assert step.status == status
    assert restore_backup(system, result.backup_id or "", store=store).ok
    assert registry.snapshot() == original


def test_an_xp_profile_plan_never_lowers_a_larger_window(tmp_path: Path) -> None:
    registry = xp_registry()
    registry.set(TCPIP, "TcpWindowSize", RegValue.dword(4_194_304))
    registry.set(TCPIP, "Tcp1323Opts", RegValue.dword(3))
    original = copy.deepcopy(registry.snapshot())
    system = windows_system("windows-xp", registry=registry)
    plan = xp_profile_plan()
    window = by_id(plan, "tcpip-tcpwindowsize")
    assert window.to_json()["recommended_display"].startswith("at least REG_DWORD")
    assert "this is a minimum" in window.reason

    dry = apply_plan(system, plan, dry_run=True, store=BackupStore(tmp_path / "dry"))
    assert {s.setting.rsplit("\\", 1)[1]: s.status for s in dry.steps} == {
        "TcpWindowSize": "left-as-is",
        "Tcp1323Opts": "unchanged",
    }
    assert dry.backup_preview is None
    result = apply_plan(system, plan, store=BackupStore(tmp_path))
    assert result.ok and result.backup_id is None, "nothing written, nothing to back up"
    step = next(s for s in result.steps if s.setting.endswith("\\TcpWindowSize"))
    assert step.message == "already 4194304, higher than the 1251220 this plan needs; left as is"
    assert registry.snapshot() == original


def test_the_xp_plan_says_what_smb1_costs() -> None:
    notes = " ".join(xp_profile_plan().notes)
    assert "Windows XP speaks only SMB1" in notes
    assert "server min protocol = NT1" in notes and "Samba 4.11" in notes
    assert "WannaCry" in notes and "EternalBlue" in notes and "1709" in notes
    assert "encryption" in notes and "signing" in notes
    # NTLMv1 went off by default in Samba 4.5 (WHATSNEW 4.5.0); 4.7 only renamed the value.
    assert "Samba 4.5 and later also refuse the older NTLM logon (NTLMv1)" in notes
    ten = build_plan(ProfileSystem(forced_profile("windows-10")), measured())
    assert not any("SMB1" in note for note in ten.notes)
