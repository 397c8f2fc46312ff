"""OS and interface detection: Windows version numbers, and each OS tool's output format."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sambatune.client.catalog import catalog_problems, entries_for, load_catalog
from sambatune.client.linux_system import _interfaces_from_sysfs
from sambatune.client.nics import (
    NetworkInterface,
    choose_interface,
    interface_for_address,
    nics_from_registry,
    parse_hardware_ports,
    parse_ifconfig,
    parse_ip_json,
    parse_netsh_subinterfaces,
    parse_windows_nic_json,
)
from sambatune.client.osinfo import (
    PROFILE_NAMES,
    classify_windows,
    detect_local_os,
    forced_profile,
)
from sambatune.client.registry import InMemoryRegistry
from sambatune.client.regvalue import REG_MULTI_SZ, RegValue
from sambatune.errors import InvalidInput


@pytest.mark.parametrize(
    ("numbers", "name", "generation"),
    [
        ((4, 0, 950, 1, 1), "Windows 95", "win9x"),
        ((4, 10, 2222, 1, 1), "Windows 98", "win9x"),
        ((4, 90, 3000, 1, 1), "Windows ME", "win9x"),
        ((5, 0, 2195, 1, 2), "Windows 2000", "nt5"),
        ((5, 1, 2600, 1, 2), "Windows XP", "nt5"),
        ((5, 2, 3790, 3, 2), "Windows Server 2003", "nt5"),
        ((5, 2, 3790, 1, 2), "Windows XP Professional x64", "nt5"),
        ((6, 0, 6002, 1, 2), "Windows Vista", "vista7"),
        ((6, 1, 7601, 1, 2), "Windows 7", "vista7"),
        ((6, 1, 7601, 3, 2), "Windows Server 2008 R2", "vista7"),
        ((6, 2, 9200, 1, 2), "Windows 8", "win8plus"),
        ((6, 3, 9600, 3, 2), "Windows Server 2012 R2", "win8plus"),
        ((10, 0, 19045, 1, 2), "Windows 10", "win8plus"),
        ((10, 0, 22631, 1, 2), "Windows 11", "win8plus"),
        ((10, 0, 17763, 3, 2), "Windows Server 2019", "win8plus"),
        ((10, 0, 20348, 2, 2), "Windows Server 2022", "win8plus"),
        ((10, 0, 26100, 3, 2), "Windows Server 2025", "win8plus"),
    ],
)
def test_windows_versions(numbers: tuple[int, int, int, int, int], name: str, generation: str) -> None:
    info = classify_windows(*numbers)
    assert (info.name, info.generation, info.family) == (name, generation, "windows")
    assert info.detected


def test_forced_profiles_are_marked_as_not_this_computer() -> None:
    for name in PROFILE_NAMES:
        info = forced_profile(name)
        assert info.profile == name and not info.detected
    assert forced_profile("Windows-10").name == "Windows 10"
    with pytest.raises(InvalidInput) as caught:
        forced_profile("os/2")
    assert "windows-xp" in caught.value.details


def test_this_computer_is_detected() -> None:
    info = detect_local_os()
    if sys.platform.startswith("linux"):
        assert info.family == "linux" and info.generation == "linux" and info.detected
        assert info.version


def test_ip_json_from_the_real_ip_command() -> None:
    text = subprocess.run(["ip", "-j", "addr", "show"], capture_output=True, text=True, check=True).stdout
    nics = parse_ip_json(text)
    loopback = [n for n in nics if n.name == "lo"]
    assert loopback and loopback[0].is_loopback and "127.0.0.1" in loopback[0].addresses
    assert all(isinstance(n.mtu, int) for n in nics)


def test_interfaces_from_sysfs_when_ip_has_no_json(tmp_path: Path) -> None:
    for name, mtu, state in (("lo", 65536, "unknown"), ("eth0", 9000, "up"), ("eth1", 1500, "down")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "mtu").write_text(f"{mtu}\n")
        (tmp_path / name / "operstate").write_text(f"{state}\n")
    nics = {n.name: n for n in _interfaces_from_sysfs(tmp_path)}
    assert nics["eth0"].mtu == 9000 and nics["eth0"].up
    assert not nics["eth1"].up and nics["lo"].is_loopback


def test_ifconfig_and_hardware_ports_from_macos() -> None:
    ifconfig = (
        "lo0: flags=8049<UP,LOOPBACK,RUNNING,MULTICAST> mtu 16384\n"
        "\toptions=1203<RXCSUM,TXCSUM,TXSTATUS,SW_TIMESTAMP>\n"
        "\tinet 127.0.0.1 netmask 0xff000000\n"
        "en0: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n"
        "\tether 3c:22:fb:00:00:01\n"
        "\tinet 192.168.1.30 netmask 0xffffff00 broadcast 192.168.1.255\n"
        "\tstatus: active\n"
        "en1: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 9000\n"
        "\tstatus: inactive\n"
    )
    ports = parse_hardware_ports(
        "\nHardware Port: Ethernet\nDevice: en0\nEthernet Address: 3c:22:fb:00:00:01\n\n"
        "Hardware Port: Thunderbolt Ethernet\nDevice: en1\nEthernet Address: N/A\n"
    )
    assert ports == {"en0": "Ethernet", "en1": "Thunderbolt Ethernet"}
    nics = {n.name: n for n in parse_ifconfig(ifconfig, ports)}
    assert nics["lo0"].is_loopback and nics["lo0"].mtu == 16384
    assert nics["en0"].mtu == 1500 and nics["en0"].addresses == ("192.168.1.30",)
    assert nics["en0"].description == "Ethernet" and nics["en0"].up
    assert nics["en1"].mtu == 9000 and not nics["en1"].up


def test_windows_powershell_json_single_objects_and_lists() -> None:
    data = {
        "interfaces": [
            {"InterfaceAlias": "Ethernet 2", "InterfaceIndex": 7, "NlMtu": 9000, "ConnectionState": 1},
            {
                "InterfaceAlias": "Loopback Pseudo-Interface 1",
                "InterfaceIndex": 1,
                "NlMtu": 4294967295,
                "ConnectionState": 1,
            },
        ],
        # ConvertTo-Json makes a one-element list a bare object.
        "adapters": {
            "Name": "Ethernet 2",
            "InterfaceIndex": 7,
            "InterfaceGuid": "{AAAA0000-0000-0000-0000-000000000001}",
            "InterfaceDescription": "Mellanox ConnectX-4",
            "Speed": 25000000000,
        },
        "addresses": {"InterfaceIndex": 7, "IPAddress": "10.0.0.5"},
    }
    nics = {n.name: n for n in parse_windows_nic_json(json.dumps(data))}
    eth = nics["Ethernet 2"]
    assert eth.mtu == 9000 and eth.guid == "{AAAA0000-0000-0000-0000-000000000001}"
    assert eth.addresses == ("10.0.0.5",) and eth.speed_bps == 25e9
    assert nics["Loopback Pseudo-Interface 1"].is_loopback
    with pytest.raises(InvalidInput):
        parse_windows_nic_json("Get-NetIPInterface : not recognized")


def test_netsh_subinterfaces_rely_on_numbers_not_headers() -> None:
    text = (
        "\r\n   MTU  MediaSenseState   Bytes In  Bytes Out  Interface\r\n"
        "------  ---------------  ---------  ---------  -------------\r\n"
        "4294967295                1          0      21766  Loopback Pseudo-Interface 1\r\n"
        "  1500                1  3172512318  216870322  Ethernet\r\n"
        "  1400                5          0          0  WLAN mit Leerzeichen\r\n"
    )
    assert parse_netsh_subinterfaces(text) == {
        "Loopback Pseudo-Interface 1": 4294967295,
        "Ethernet": 1500,
        "WLAN mit Leerzeichen": 1400,
    }


def test_xp_interfaces_come_from_the_registry() -> None:
    key = (
        "HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Services\\Tcpip\\Parameters\\"
        "Interfaces\\{11111111-2222-3333-4444-555555555555}"
    )
    registry = InMemoryRegistry.with_values(
        [
            (key, "IPAddress", RegValue(REG_MULTI_SZ, ("0.0.0.0",))),
            (key, "DhcpIPAddress", RegValue.string("192.168.5.9")),
            (key, "MTU", RegValue.dword(1492)),
            (key.replace("1111", "9999"), "IPAddress", RegValue(REG_MULTI_SZ, ("0.0.0.0",))),
        ]
    )
    nics = nics_from_registry(registry)
    assert len(nics) == 1
    assert nics[0].addresses == ("192.168.5.9",) and nics[0].mtu == 1492


def test_choosing_the_interface_towards_a_server() -> None:
    nics = [
        NetworkInterface("lo", 65536, addresses=("127.0.0.1",), kind="loopback"),
        NetworkInterface("eth0", 1500, addresses=("192.0.2.10",)),
    ]
    assert choose_interface(nics, server="127.0.0.1").name == "lo"  # type: ignore[union-attr]
    assert choose_interface(nics).name == "eth0"  # type: ignore[union-attr]
    assert interface_for_address(nics, "192.0.2.10") is nics[1]
    with pytest.raises(InvalidInput):
        choose_interface(nics, name="wlan9")


def test_the_settings_catalog_is_complete() -> None:
    assert catalog_problems() == []
    catalog = load_catalog()
    assert len(entries_for("windows")) >= 20
    window = catalog["tcpip-tcpwindowsize"]
    assert window.honour("nt5").honoured and not window.honour("win8plus").honoured
    assert not window.honour("vista7").honoured


def test_the_client_core_never_imports_qt() -> None:
    code = (
        "import sys, sambatune.client.apply, sambatune.client.planner, "
        "sambatune.client.snapshot, sambatune.client.elevation, sambatune.cli.client; "
        "qt = ('PySide6', 'shiboken6', 'pyqtgraph'); "
        "print([m for m in sys.modules if m.startswith(qt)])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
