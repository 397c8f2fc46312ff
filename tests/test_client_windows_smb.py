"""Windows' SMB client configuration and the adapter's offloads (issue 21, items 1 and 2):
the PowerShell JSON parsers, the plans (never lowering, never weakening), and apply and
restore over an in-memory registry with Get/Set-SmbClientConfiguration and
Get/Set-NetAdapterAdvancedProperty answering as documented (tests/client_doubles.py)."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import pytest

from client_doubles import FakeWindowsNet, windows_system
from sambatune.cli.main import main
from sambatune.client.apply import apply_plan, out_of_scope, restart_for, restore_backup
from sambatune.client.backups import BackupStore
from sambatune.client.catalog import catalog_problems, entry, find_entry
from sambatune.client.nics import NetworkInterface
from sambatune.client.osinfo import (
    VER_PLATFORM_WIN32_NT,
    WINDOWS_GENERATIONS,
    classify_windows,
    forced_profile,
)
from sambatune.client.plan import ClientPlan, PlannedChange
from sambatune.client.planner import Measurements, build_plan
from sambatune.client.registry import InMemoryRegistry
from sambatune.client.regvalue import REG_DWORD, RegValue
from sambatune.client.settings import (
    AdapterPropertyRef,
    RegistryValueRef,
    SmbClientConfigRef,
    ref_from_json,
)
from sambatune.client.system import ProfileSystem
from sambatune.client.windows_catalog import ENTRIES
from sambatune.client.windows_system import (
    WindowsNetCommands,
    WindowsSystem,
    parse_adapter_properties,
    parse_smb_client_configuration,
    windows_operations,
)
from sambatune.errors import InvalidInput

LANMAN = "HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Services\\LanmanWorkstation\\Parameters"

# What Windows PowerShell 5.1 prints for an Intel adapter (trimmed to a few properties): a
# list of objects, string arrays for the values, null where a property has no list (a
# numeric range) and no display name (the -AllProperties extras).
INTEL_ADAPTER_JSON = (
    '[{"RegistryKeyword":"*JumboPacket","RegistryValue":["1514"],'
    '"ValidRegistryValues":["1514","4088","9014"],"DisplayName":"Jumbo Packet","DisplayValue":"Disabled"},'
    '{"RegistryKeyword":"*RSS","RegistryValue":["1"],"ValidRegistryValues":["0","1"],'
    '"DisplayName":"Receive Side Scaling","DisplayValue":"Enabled"},'
    '{"RegistryKeyword":"*NumRSSQueues","RegistryValue":["2"],"ValidRegistryValues":["1","2","4","8"],'
    '"DisplayName":"Maximum Number of RSS Queues","DisplayValue":"2 Queues"},'
    '{"RegistryKeyword":"*InterruptModeration","RegistryValue":["1"],"ValidRegistryValues":["0","1"],'
    '"DisplayName":"Interrupt Moderation","DisplayValue":"Enabled"},'
    '{"RegistryKeyword":"*ReceiveBuffers","RegistryValue":["512"],"ValidRegistryValues":null,'
    '"DisplayName":"Receive Buffers","DisplayValue":"512"},'
    '{"RegistryKeyword":"NetCfgInstanceId","RegistryValue":["{2F4C1A0E-5B1D-4C3A-9D2E-1234567890AB}"],'
    '"ValidRegistryValues":null,"DisplayName":null,"DisplayValue":null}]\r\n'
)

# Get-SmbClientConfiguration | Select-Object * -ExcludeProperty Cim*,PSComputerName as
# Windows 11 24H2 prints it (a selection): booleans, numbers, an enum written as a number,
# a string, and an array the parser leaves out.
SMB_CLIENT_JSON = (
    '{"ConnectionCountPerRssNetworkInterface":4,"DirectoryCacheEntriesMax":16,'
    '"DirectoryCacheLifetime":10,"EnableBandwidthThrottling":true,"EnableInsecureGuestLogons":false,'
    '"EnableLargeMtu":true,"EnableMultiChannel":true,"EncryptionCiphers":"AES_128_GCM, AES_128_CCM",'
    '"FileInfoCacheLifetime":10,"FileNotFoundCacheLifetime":5,"RequireEncryption":false,'
    '"RequireSecuritySignature":true,"CompressibilitySamplingSize":524288000,"SessionTimeout":60,'
    '"DialectMax":65535,"ExtraList":["a","b"]}\r\n'
)


def measured(
    rtt: float = 0.020,
    interface: NetworkInterface | None = None,
    multichannel: bool | None = True,
    signing: str | None = None,
    server: str | None = "fs1",
) -> Measurements:
    return Measurements(
        1e9,
        "entered",
        rtt,
        "entered",
        interface=interface,
        server=server,
        server_multichannel=multichannel,
        server_signing=signing,
    )


def by_id(plan: ClientPlan, item_id: str) -> PlannedChange:
    matches = [c for c in plan.changes if c.id == item_id or c.catalog_id == item_id]
    assert matches, f"{item_id} not in plan: {[c.id for c in plan.changes]}"
    return matches[0]


def adapter_net(**properties: str) -> FakeWindowsNet:
    """An adapter "Ethernet" whose driver offers exactly these keywords (plus *JumboPacket)."""
    net = FakeWindowsNet(
        properties={("Ethernet", "*JumboPacket"): "1514"}
        | {("Ethernet", keyword): value for keyword, value in properties.items()},
        valid_values={("Ethernet", "*NumRssQueues"): ["1", "2", "4", "8", "16"]},
    )
    return net


def windows_10(
    net: FakeWindowsNet, registry: InMemoryRegistry | None = None, processors: int | None = 8
) -> WindowsSystem:
    """A detected Windows 10 with this many logical processors."""
    os_info = windows_system("windows-10").os
    return WindowsSystem(os_info, registry or InMemoryRegistry(), WindowsNetCommands(net), True, processors)


def fast_nic(system: WindowsSystem, speed: float = 10e9) -> NetworkInterface:
    return dataclasses.replace(system.interfaces()[0], speed_bps=speed)


# -- parsers ---------------------------------------------------------------------------


def test_adapter_properties_parse_from_what_powershell_prints() -> None:
    table = parse_adapter_properties(INTEL_ADAPTER_JSON)
    # Keys are case-folded: registry names ignore case and drivers spell keywords their way.
    queues = table["*numrssqueues"]
    assert queues.keyword == "*NumRSSQueues" and queues.value == "2"
    assert queues.valid_values == ("1", "2", "4", "8")
    assert queues.display_name == "Maximum Number of RSS Queues"
    assert table["*receivebuffers"].valid_values == ()
    assert table["netcfginstanceid"].display_name == ""
    assert len(table) == 6

    # One property: ConvertTo-Json writes a lone object, not a list.
    single = parse_adapter_properties(
        '{"RegistryKeyword":"*RSS","RegistryValue":["0"],"ValidRegistryValues":["0","1"],'
        '"DisplayName":"Receive Side Scaling","DisplayValue":"Disabled"}'
    )
    assert single["*rss"].value == "0" and single["*rss"].display_value == "Disabled"
    # Windows PowerShell 5.1 writes some arrays as {"value": [...], "Count": n}; a BOM may lead.
    decorated = parse_adapter_properties(
        '\ufeff[{"RegistryKeyword":"*RscIPv4","RegistryValue":{"value":["1"],"Count":1},'
        '"ValidRegistryValues":{"value":["0","1"],"Count":2},"DisplayName":"Recv Segment Coalescing (IPv4)",'
        '"DisplayValue":"Enabled"},{"RegistryKeyword":"*LsoV2IPv4","RegistryValue":"1",'
        '"ValidRegistryValues":null,"DisplayName":null,"DisplayValue":null},'
        '{"RegistryKeyword":"*LsoV2IPv6","RegistryValue":null}]'
    )
    assert decorated["*rscipv4"].value == "1" and decorated["*rscipv4"].valid_values == ("0", "1")
    assert decorated["*lsov2ipv4"].value == "1"
    assert decorated["*lsov2ipv6"].value is None
    assert parse_adapter_properties("") == {}
    with pytest.raises(ValueError):
        parse_adapter_properties("Get-NetAdapterAdvancedProperty : Access denied")
    with pytest.raises(ValueError):
        parse_adapter_properties('["*RSS"]')


def test_smb_client_configuration_parses_from_what_powershell_prints() -> None:
    config = parse_smb_client_configuration(SMB_CLIENT_JSON)
    assert config["EnableMultiChannel"] is True and config["RequireSecuritySignature"] is True
    assert config["ConnectionCountPerRssNetworkInterface"] == 4
    assert config["EncryptionCiphers"] == "AES_128_GCM, AES_128_CCM"
    assert "ExtraList" not in config
    assert parse_smb_client_configuration("[" + SMB_CLIENT_JSON.strip() + "]")["DialectMax"] == 65535
    with pytest.raises(ValueError):
        parse_smb_client_configuration("[]")
    with pytest.raises(ValueError):
        parse_smb_client_configuration("not json")


def test_the_smb_client_setting_kind_reads_writes_and_refuses() -> None:
    with pytest.raises(InvalidInput, match="not an SMB client setting"):
        SmbClientConfigRef("MaxCmds")
    ref = SmbClientConfigRef("EnableMultiChannel")
    assert ref_from_json(ref.to_json()) == ref
    assert ref.check_value(True) == "true" and ref.check_value("$false") == "false"
    with pytest.raises(InvalidInput):
        ref.check_value("maybe")
    assert windows_operations(ref, "true") == [
        "powershell.exe -NoProfile -NonInteractive -ExecutionPolicy Bypass -Command "
        '"Set-SmbClientConfiguration -EnableMultiChannel $true -Force -ErrorAction Stop"'
    ]
    # Signing, encryption and guest logons are read, never written, whatever a file says.
    signing = SmbClientConfigRef("RequireSecuritySignature")
    with pytest.raises(InvalidInput, match="never writes"):
        WindowsNetCommands.set_smb_client_argv("RequireSecuritySignature", "false")
    assert "never writes" in (out_of_scope(signing, "false") or "")
    assert out_of_scope(ref, "true") is None
    assert restart_for(ref) == "reconnect"
    assert restart_for(AdapterPropertyRef("Ethernet", "*RSS")) == "adapter-restart"


def test_reads_come_from_one_powershell_call_until_a_write_or_five_seconds() -> None:
    now = [100.0]
    net = FakeWindowsNet()
    commands = WindowsNetCommands(net, clock=lambda: now[0])
    system = WindowsSystem(windows_system("windows-10").os, InMemoryRegistry(), commands, admin=True)

    def smb_reads() -> int:
        return sum("Get-SmbClientConfiguration" in argv[-1] for argv in net.log)

    assert system.read(SmbClientConfigRef("EnableMultiChannel")).value == "true"
    assert system.read(SmbClientConfigRef("RequireSecuritySignature")).value == "false"
    assert system.read(SmbClientConfigRef("RequireEncryption")).state == "absent"
    assert smb_reads() == 1
    system.write(SmbClientConfigRef("EnableMultiChannel"), "false")
    assert system.read(SmbClientConfigRef("EnableMultiChannel")).value == "false"
    assert smb_reads() == 2
    now[0] += 6  # an apply long after the plan reads the machine again
    system.read(SmbClientConfigRef("EnableMultiChannel"))
    assert smb_reads() == 3
    # Adapter properties likewise: one read for every keyword, case ignored.
    assert system.read(AdapterPropertyRef("Ethernet", "*jumbopacket")).value == "1514"
    assert system.read(AdapterPropertyRef("Ethernet", "*RSS")).state == "absent"
    assert sum("-AllProperties" in argv[-1] for argv in net.log) == 1
    # An adapter Windows does not know is unknown, not absent: nothing could be put back.
    assert system.read(AdapterPropertyRef("Wi-Fi 9", "*RSS")).state == "unknown"


# -- the catalog -----------------------------------------------------------------------


def test_every_new_setting_is_catalogued_for_every_windows_generation() -> None:
    assert catalog_problems() == []
    for raw in ENTRIES:
        item = entry(raw["id"])
        assert set(item.generations) == set(WINDOWS_GENERATIONS), item.id
        assert item.honour("win8plus").honoured and not item.honour("nt5").honoured
        assert item.sources
    assert find_entry("smb-client-config", name="EnableMultiChannel") == entry(
        "smb-client-enablemultichannel"
    )
    assert find_entry("smb-client-config", name="RequireSecuritySignature") is not None
    assert find_entry("smb-client-config", name="MaxCmds") is None
    assert find_entry("adapter-property", keyword="*NumRSSQueues") == entry("adapter-numrssqueues")
    assert find_entry("registry", key=LANMAN, name="FileNotFoundCacheLifetime") is not None
    assert entry("lanman-directorycachelifetime").honour("vista7").honoured
    assert not entry("smb-client-enablemultichannel").honour("vista7").honoured
    assert "restore" in entry("smb-client-enablemultichannel").what
    assert "drops" in entry("adapter-rss").restart_note
    assert not entry("smb-client-requiresecuritysignature").planned


# -- plans -----------------------------------------------------------------------------


def test_multichannel_is_turned_on_only_when_the_server_offers_it() -> None:
    for server, action in ((True, "set"), (False, "keep"), (None, "keep")):
        net = FakeWindowsNet()
        net.smb_client["EnableMultiChannel"] = False
        plan = build_plan(windows_system("windows-10", net=net), measured(multichannel=server))
        item = by_id(plan, "smb-client-enablemultichannel")
        assert item.action == action, server
        if server is None:
            assert "only for a server that offers it" in item.reason
        if action == "set":
            assert item.recommended == "true"
            assert "Set-SmbClientConfiguration -EnableMultiChannel $true -Force" in item.alternative
            assert "restore sets False back" in item.reason
        assert item.measure is not None and item.measure.test == "smb-client"
        assert item.measure.path == "\\\\fs1\\SHARE"
    # Windows 7 has no multichannel: labelled, not planned.
    seven = build_plan(windows_system("windows-7"), measured())
    assert by_id(seven, "smb-client-enablemultichannel").honoured is False


def test_nothing_is_ever_lowered_turned_off_or_lengthened() -> None:
    registry = InMemoryRegistry.with_values(
        [
            (LANMAN, "ConnectionCountPerRssNetworkInterface", RegValue.dword(8)),
            (LANMAN, "DirectoryCacheLifetime", RegValue.dword(30)),
            (LANMAN, "FileInfoCacheLifetime", RegValue.dword(10)),
        ]
    )
    net = adapter_net(**{"*RSS": "1", "*NumRssQueues": "16", "*LsoV2IPv4": "1", "*RscIPv4": "1"})
    system = windows_10(net, registry)
    for multichannel in (True, False, None):
        plan = build_plan(system, measured(interface=fast_nic(system), multichannel=multichannel))
        changing = {c.catalog_id: c for c in plan.actionable()}
        assert not any(c.startswith(("smb-client", "adapter-")) for c in changing), changing
        for name in (
            "connectioncountperrssnetworkinterface",
            "directorycachelifetime",
            "fileinfocachelifetime",
        ):
            assert f"lanman-{name}" not in changing
        assert by_id(plan, "adapter-numrssqueues").action == "keep"
    # Below the defaults, values are only ever taken out (back to the default), never set.
    low = InMemoryRegistry.with_values(
        [
            (LANMAN, "ConnectionCountPerRssNetworkInterface", RegValue.dword(1)),
            (LANMAN, "FileNotFoundCacheLifetime", RegValue.dword(2)),
        ]
    )
    plan = build_plan(windows_system("windows-10", registry=low), measured())
    assert by_id(plan, "lanman-connectioncountperrssnetworkinterface").action == "delete"
    lifetime = by_id(plan, "lanman-filenotfoundcachelifetime")
    assert lifetime.action == "delete" and "on purpose" in lifetime.reason
    assert lifetime.measure is not None and lifetime.measure.test == "files"
    # Without multichannel at the server, a low connection count makes no difference: kept.
    plan = build_plan(windows_system("windows-10", registry=low), measured(multichannel=False))
    assert by_id(plan, "lanman-connectioncountperrssnetworkinterface").action == "keep"
    # On a LAN the cache saves little: a shortened lifetime is left as chosen.
    lan = build_plan(windows_system("windows-10", registry=low), measured(rtt=0.0005))
    assert by_id(lan, "lanman-filenotfoundcachelifetime").action == "keep"


def test_rss_queues_grow_only_on_a_fast_link_with_rss_on_and_cores_to_serve_them() -> None:
    def queues(rss: str, speed: float, processors: int, have: str = "2") -> PlannedChange:
        net = adapter_net(**{"*RSS": rss, "*NumRssQueues": have})
        system = windows_10(net, processors=processors)
        return by_id(build_plan(system, measured(interface=fast_nic(system, speed))), "adapter-numrssqueues")

    raised = queues("1", 10e9, 8)
    assert raised.action == "set" and raised.recommended == "8", "largest listed value within 8 cores"
    assert "Set-NetAdapterRss -Name 'Ethernet' -NumberOfReceiveQueues 8" in raised.alternative
    assert raised.restart == "adapter-restart"
    assert queues("1", 1e9, 8).action == "keep"
    off = queues("0", 10e9, 8)
    assert off.action == "keep" and "RSS is not on" in off.reason
    assert queues("1", 10e9, 2).action == "keep", "no larger value fits 2 cores"
    assert queues("1", 25e9, 64, have="16").action == "keep", "16 is the largest the driver lists"


def test_an_offload_turned_off_is_turned_on_saying_why_it_may_have_been_off() -> None:
    net = adapter_net(**{"*RSS": "0", "*LsoV2IPv6": "0", "*RscIPv4": "1", "*InterruptModeration": "0"})
    system = windows_system("windows-10", net=net)
    plan = build_plan(system, measured(interface=system.interfaces()[0]))
    rss = by_id(plan, "adapter-rss:Ethernet")
    assert rss.action == "set" and rss.recommended == "1" and rss.restart == "adapter-restart"
    assert "Hyper-V" in rss.reason and "driver bug" in rss.reason and "drop" in rss.reason
    assert rss.alternative == "PowerShell: Enable-NetAdapterRss -Name 'Ethernet'"
    assert by_id(plan, "adapter-lsov2ipv6").alternative.endswith(
        "Enable-NetAdapterLso -Name 'Ethernet' -IPv6"
    )
    assert "latency" in by_id(plan, "adapter-interruptmoderation").reason
    assert by_id(plan, "adapter-rscipv4").action == "keep"
    assert plan.restart_needed() == "reboot"  # the LanmanWorkstation values of the same plan


def test_a_keyword_the_driver_does_not_offer_is_not_planned() -> None:
    net = adapter_net(RxIntModeration="3", **{"*NumRSSQueues": "2"})
    system = windows_system("windows-10", net=net)
    plan = build_plan(system, measured(interface=system.interfaces()[0]))
    adapter_items = {c.catalog_id for c in plan.changes if c.catalog_id.startswith("adapter-")}
    # *NumRSSQueues is found whatever the driver's spelling; the vendor keyword is not SambaTune's.
    assert adapter_items == {"adapter-numrssqueues"}
    assert isinstance(by_id(plan, "adapter-numrssqueues").ref, AdapterPropertyRef)
    note = next(n for n in plan.notes if "does not offer" in n)
    for keyword in ("*RSS", "*LsoV2IPv4", "*LsoV2IPv6", "*RscIPv4", "*RscIPv6", "*InterruptModeration"):
        assert keyword in note
    assert "RxIntModeration" not in note
    assert out_of_scope(AdapterPropertyRef("Ethernet", "RxIntModeration"), "0")
    assert out_of_scope(AdapterPropertyRef("Ethernet", "*rss"), "1") is None
    # A plan for another machine cannot know its driver: it says what to run there.
    profile = build_plan(ProfileSystem(forced_profile("windows-10")), measured())
    assert not [c for c in profile.changes if c.catalog_id.startswith("adapter-r")]
    assert any("Get-NetAdapterAdvancedProperty -Name 'Ethernet' -AllProperties" in n for n in profile.notes)


def windows_11_24h2(net: FakeWindowsNet, registry: InMemoryRegistry | None = None) -> WindowsSystem:
    os_info = classify_windows(10, 0, 26100, 1, VER_PLATFORM_WIN32_NT)
    return WindowsSystem(os_info, registry or InMemoryRegistry(), WindowsNetCommands(net), admin=True)


def test_the_24h2_signing_default_is_reported_and_a_server_that_refuses_signing_is_warned_about() -> None:
    net = FakeWindowsNet()
    net.smb_client |= {"RequireSecuritySignature": True, "RequireEncryption": False}
    system = windows_11_24h2(net)
    assert system.os.build == 26100
    plan = build_plan(system, measured(signing="disabled"))
    signing = by_id(plan, "smb-client-requiresecuritysignature")
    assert signing.action == "none" and signing.current.value == "true"
    assert "24H2" in signing.reason and "Server 2025" in signing.reason and "Home does not" in signing.reason
    assert "never weakens" in signing.reason
    warning = next(w for w in plan.warnings if "STATUS_INVALID_SIGNATURE" in w)
    assert "server signing = disabled" in warning and "on the server" in warning
    assert by_id(plan, "smb-client-requireencryption").action == "none"
    assert by_id(plan, "smb-client-enableinsecureguestlogons").action == "none"
    # One item per setting: the registry label is not shown beside the effective value.
    assert not [c for c in plan.changes if c.catalog_id == "lanman-requiresecuritysignature"]
    assert not [
        c for c in plan.changes if c.catalog_id.startswith("smb-client-require") and c.changes_something
    ]

    # A server that signs when asked: no warning.
    assert not any(
        "STATUS_INVALID_SIGNATURE" in w for w in build_plan(system, measured(signing="auto")).warnings
    )
    # Windows 10 has no such default and no RequireEncryption property: neither is mentioned.
    ten = build_plan(windows_system("windows-10"), measured(signing="disabled"))
    assert "24H2" not in by_id(ten, "smb-client-requiresecuritysignature").reason
    assert not any("STATUS_INVALID_SIGNATURE" in w for w in ten.warnings)
    assert not [c for c in ten.changes if c.catalog_id == "smb-client-requireencryption"]
    # A Server 2025 profile: unread, but required by default there, so the warning stands.
    server = build_plan(ProfileSystem(forced_profile("windows-server-2025")), measured(signing="disabled"))
    assert any("the default of this build" in w for w in server.warnings)
    # Windows 7 reports the registry value under the existing catalog entry.
    registry = InMemoryRegistry.with_values([(LANMAN, "RequireSecuritySignature", RegValue.dword(1))])
    seven = build_plan(windows_system("windows-7", registry=registry), measured(signing="off"))
    assert by_id(seven, "lanman-requiresecuritysignature").action == "none"
    assert any("STATUS_INVALID_SIGNATURE" in w for w in seven.warnings)


def test_a_plan_file_cannot_weaken_signing(tmp_path: Path) -> None:
    net = FakeWindowsNet()
    net.smb_client["RequireSecuritySignature"] = True
    system = windows_system("windows-10", net=net)
    plan = build_plan(system, measured())
    data = plan.to_json()
    for change in data["changes"]:
        if change["catalog_id"] == "smb-client-requiresecuritysignature":
            change["action"] = "set"
            change["recommended"] = "false"
    with pytest.raises(InvalidInput, match="never writes"):
        apply_plan(system, ClientPlan.from_json(data), store=BackupStore(tmp_path))
    assert net.smb_client["RequireSecuritySignature"] is True
    assert not [argv for argv in net.log if "Set-SmbClientConfiguration" in argv[-1]]


# -- apply and restore -----------------------------------------------------------------


def test_plan_apply_restore_puts_every_value_back_exactly(tmp_path: Path) -> None:
    registry = InMemoryRegistry.with_values(
        [
            (LANMAN, "ConnectionCountPerRssNetworkInterface", RegValue.dword(2)),
            (LANMAN, "DirectoryCacheLifetime", RegValue.dword(0)),
            (LANMAN, "FileNotFoundCacheLifetime", RegValue.dword(1)),
            (LANMAN, "DisableBandwidthThrottling", RegValue.dword(0)),
        ]
    )
    net = adapter_net(
        **{
            "*RSS": "1",
            "*NumRssQueues": "2",
            "*LsoV2IPv4": "0",
            "*LsoV2IPv6": "1",
            "*RscIPv4": "0",
            "*InterruptModeration": "0",
        }
    )
    net.smb_client["EnableMultiChannel"] = False
    system = windows_10(net, registry)
    original = (copy.deepcopy(registry.snapshot()), dict(net.properties), dict(net.smb_client))
    plan = build_plan(system, measured(interface=fast_nic(system)))
    # Planning read each source once, however many items it made from them.
    assert sum("Get-SmbClientConfiguration" in argv[-1] for argv in net.log) == 1
    assert sum("-AllProperties" in argv[-1] for argv in net.log) == 1
    planned = {c.id: c.action for c in plan.actionable()}
    for item_id, action in {
        "smb-client-enablemultichannel": "set",
        "lanman-connectioncountperrssnetworkinterface": "delete",
        "lanman-directorycachelifetime": "delete",
        "lanman-filenotfoundcachelifetime": "delete",
        "adapter-numrssqueues:Ethernet": "set",
        "adapter-lsov2ipv4:Ethernet": "set",
        "adapter-rscipv4:Ethernet": "set",
        "adapter-interruptmoderation:Ethernet": "set",
    }.items():
        assert planned.get(item_id) == action, item_id
    assert "lanman-fileinfocachelifetime" not in planned, "absent: the default already"
    # The plan survives its file form, the new kind included.
    plan = ClientPlan.from_json(json.loads(json.dumps(plan.to_json())))
    store = BackupStore(tmp_path)

    result = apply_plan(system, plan, store=store)

    assert result.ok, result.message
    assert net.smb_client["EnableMultiChannel"] is True
    assert net.properties[("Ethernet", "*NumRssQueues")] == "8"
    assert net.properties[("Ethernet", "*LsoV2IPv4")] == "1"
    assert net.properties[("Ethernet", "*RscIPv4")] == "1"
    assert net.properties[("Ethernet", "*InterruptModeration")] == "1"
    for name in (
        "ConnectionCountPerRssNetworkInterface",
        "DirectoryCacheLifetime",
        "FileNotFoundCacheLifetime",
    ):
        assert registry.get(LANMAN, name) is None, name
    folder = Path(result.backup_folder or "")
    script = (folder / "restore.cmd").read_text()
    assert "Set-SmbClientConfiguration -EnableMultiChannel $false -Force" in script
    assert "-RegistryKeyword '*NumRssQueues' -RegistryValue '2'" in script
    reg = (folder / "restore.reg").read_bytes().decode("utf-16")
    assert '"ConnectionCountPerRssNetworkInterface"=dword:00000002' in reg
    assert '"DirectoryCacheLifetime"=dword:00000000' in reg
    saved = json.loads((folder / "backup.json").read_text())
    kinds = {e["setting"]["kind"] for e in saved["entries"]}
    assert {"smb-client-config", "adapter-property", "registry"} <= kinds

    restored = restore_backup(system, result.backup_id or "", store=store)

    assert restored.ok, restored.message
    assert (registry.snapshot(), net.properties, net.smb_client) == original
    assert restored.restart_needed == "reboot"


def test_a_failing_adapter_write_puts_the_smb_client_back(tmp_path: Path) -> None:
    net = adapter_net(**{"*RSS": "0"})
    net.smb_client["EnableMultiChannel"] = False
    net.fail_when = lambda argv: "Set-NetAdapterAdvancedProperty" in argv[-1]
    registry = InMemoryRegistry()
    system = windows_system("windows-10", registry=registry, net=net)
    plan = build_plan(system, measured(interface=system.interfaces()[0]))
    result = apply_plan(system, plan, store=BackupStore(tmp_path))
    assert not result.ok and result.rolled_back
    assert net.smb_client["EnableMultiChannel"] is False
    assert net.properties[("Ethernet", "*RSS")] == "0"
    assert registry.snapshot() == {}


def test_the_cli_plan_lists_the_new_items(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "client",
            "plan",
            "--bandwidth",
            "1gbit",
            "--rtt",
            "20ms",
            "--os",
            "windows-11",
            "--server",
            "fs1.example",
            "--no-mtu-probe",
            "--server-multichannel",
            "yes",
            "--server-signing",
            "disabled",
            "--json",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 0, data
    changes = {c["catalog_id"]: c for c in data["changes"]}
    for catalog_id, test in (
        ("smb-client-enablemultichannel", "smb-client"),
        ("lanman-connectioncountperrssnetworkinterface", "smb-client"),
        ("lanman-directorycachelifetime", "files"),
        ("lanman-fileinfocachelifetime", "files"),
        ("lanman-filenotfoundcachelifetime", "files"),
        ("smb-client-requiresecuritysignature", "smb-client"),
        ("smb-client-enableinsecureguestlogons", "smb-client"),
    ):
        change = changes[catalog_id]
        assert change["label"] == "honoured" and change["action"] == "none", catalog_id
        assert change["measure"]["command"] == f"sambatune bench {test} --path '\\\\fs1.example\\SHARE'"
    assert changes["smb-client-enablemultichannel"]["setting"] == {
        "kind": "smb-client-config",
        "name": "EnableMultiChannel",
    }
    assert any("Get-NetAdapterRss" in n for n in data["notes"])
    # Windows 11 23H2 (the profile) does not require signing by default: no warning.
    assert not any("STATUS_INVALID_SIGNATURE" in w for w in data["warnings"])


def test_registry_value_refs_of_the_new_lanman_values_are_in_scope() -> None:
    for name in (
        "ConnectionCountPerRssNetworkInterface",
        "DirectoryCacheLifetime",
        "FileInfoCacheLifetime",
        "FileNotFoundCacheLifetime",
    ):
        assert out_of_scope(RegistryValueRef(LANMAN, name, REG_DWORD), None) is None
