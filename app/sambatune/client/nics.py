"""Network interfaces and their MTUs, read from what each OS's own tools print.

The parsers are plain functions over text so they run (and are tested) anywhere:
``ip -j addr`` (Linux), ``ifconfig`` plus ``networksetup -listallhardwareports``
(macOS), a PowerShell JSON dump or ``netsh interface ipv4 show subinterfaces``
(Windows), and the Tcpip\\Parameters\\Interfaces keys of a registry.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import re
import socket
from dataclasses import dataclass
from typing import Any

from sambatune.errors import InvalidInput
from sambatune.json_fields import StoredFields

TCPIP_INTERFACES_KEY = (
    "HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Services\\Tcpip\\Parameters\\Interfaces"
)


@dataclass(frozen=True)
class NetworkInterface(StoredFields):
    name: str  # Linux ifname, Windows alias ("Ethernet"), macOS device ("en0")
    mtu: int | None
    index: int | None = None
    #: Windows only: the {GUID} under Tcpip\Parameters\Interfaces.
    guid: str | None = None
    addresses: tuple[str, ...] = ()
    up: bool = True
    speed_bps: float | None = None
    kind: str = ""  # "loopback", "ethernet", "wireless", "virtual", ...
    description: str = ""  # Windows adapter description, macOS hardware port
    #: True when this NIC is an example standing in for a machine we are not running on.
    example: bool = False

    @property
    def is_loopback(self) -> bool:
        return self.kind == "loopback"


# -- Linux -----------------------------------------------------------------------------


def parse_ip_json(text: str, speeds: dict[str, float] | None = None) -> list[NetworkInterface]:
    """``ip -j addr show`` (iproute2) -> interfaces."""
    try:
        entries = json.loads(text or "[]")
    except json.JSONDecodeError as exc:
        raise InvalidInput("ip -j addr printed something that is not JSON.") from exc
    result = []
    for entry in entries:
        name = entry.get("ifname")
        if not name:
            continue
        flags = entry.get("flags") or []
        link_type = entry.get("link_type", "")
        kind = (
            "loopback"
            if link_type == "loopback" or "LOOPBACK" in flags
            else ("ethernet" if link_type == "ether" else link_type or "")
        )
        addresses = tuple(f"{a['local']}" for a in entry.get("addr_info") or [] if a.get("local"))
        result.append(
            NetworkInterface(
                name=name,
                mtu=entry.get("mtu"),
                index=entry.get("ifindex"),
                addresses=addresses,
                up="UP" in flags and entry.get("operstate") not in ("DOWN", "LOWERLAYERDOWN"),
                speed_bps=(speeds or {}).get(name),
                kind=kind,
            )
        )
    return result


# -- macOS -----------------------------------------------------------------------------

_IFCONFIG_HEAD = re.compile(r"^(?P<name>[A-Za-z0-9_.\-]+): flags=\w+<(?P<flags>[^>]*)>.*?mtu (?P<mtu>\d+)")


def parse_ifconfig(text: str, hardware_ports: dict[str, str] | None = None) -> list[NetworkInterface]:
    """macOS/BSD ``ifconfig -a`` -> interfaces (``hardware_ports``: device -> port name)."""
    ports = hardware_ports or {}
    result: list[NetworkInterface] = []
    current: dict[str, Any] | None = None

    def flush() -> None:
        if current is not None:
            result.append(NetworkInterface(**current))

    for line in text.splitlines():
        head = _IFCONFIG_HEAD.match(line)
        if head:
            flush()
            flags = head.group("flags").split(",")
            name = head.group("name")
            current = {
                "name": name,
                "mtu": int(head.group("mtu")),
                "addresses": (),
                "up": "UP" in flags,
                "kind": "loopback" if "LOOPBACK" in flags else ("ethernet" if name in ports else ""),
                "description": ports.get(name, ""),
            }
            continue
        stripped = line.strip()
        if current is not None and stripped.startswith("inet "):
            current["addresses"] = (*current["addresses"], stripped.split()[1])
        elif current is not None and stripped.startswith("status:"):
            current["up"] = current["up"] and stripped.split(":", 1)[1].strip() == "active"
    flush()
    return result


def parse_hardware_ports(text: str) -> dict[str, str]:
    """``networksetup -listallhardwareports`` -> {device: hardware port name}."""
    ports: dict[str, str] = {}
    port = None
    for line in text.splitlines():
        if line.startswith("Hardware Port:"):
            port = line.split(":", 1)[1].strip()
        elif line.startswith("Device:") and port is not None:
            ports[line.split(":", 1)[1].strip()] = port
            port = None
    return ports


# -- Windows ---------------------------------------------------------------------------


def parse_windows_nic_json(text: str) -> list[NetworkInterface]:
    """The JSON printed by :data:`sambatune.client.windows_system.NIC_SCRIPT`.

    PowerShell's ConvertTo-Json turns a one-element list into a bare object, so
    every list here may also arrive as a single object.
    """
    try:
        data = json.loads(text or "{}")
    except json.JSONDecodeError as exc:
        raise InvalidInput("The Windows interface list is not JSON.", details=text[:500]) from exc

    def as_list(value: Any) -> list[dict[str, Any]]:
        if value is None:
            return []
        return value if isinstance(value, list) else [value]

    adapters = {a.get("InterfaceIndex"): a for a in as_list(data.get("adapters"))}
    addresses: dict[Any, list[str]] = {}
    for entry in as_list(data.get("addresses")):
        addresses.setdefault(entry.get("InterfaceIndex"), []).append(str(entry.get("IPAddress")))
    result = []
    for entry in as_list(data.get("interfaces")):
        index = entry.get("InterfaceIndex")
        adapter = adapters.get(index) or {}
        alias = str(entry.get("InterfaceAlias") or adapter.get("Name") or f"interface {index}")
        mtu = entry.get("NlMtu")
        loopback = alias.lower().startswith("loopback") or mtu == 4294967295
        connected = entry.get("ConnectionState") in (1, "Connected")
        speed = adapter.get("Speed")
        result.append(
            NetworkInterface(
                name=alias,
                mtu=None if mtu in (None, 4294967295) else int(mtu),
                index=index,
                guid=adapter.get("InterfaceGuid"),
                addresses=tuple(addresses.get(index, [])),
                up=connected,
                speed_bps=float(speed) if speed else None,
                kind="loopback" if loopback else ("ethernet" if adapter else "virtual"),
                description=str(adapter.get("InterfaceDescription") or ""),
            )
        )
    return result


_SUBINTERFACE_LINE = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S.*?)\s*$")


def parse_netsh_subinterfaces(text: str) -> dict[str, int]:
    """``netsh interface ipv4 show subinterfaces`` -> {interface name: MTU}.

    Only the numeric columns are relied on, so a translated header does not matter.
    """
    result: dict[str, int] = {}
    for line in text.splitlines():
        match = _SUBINTERFACE_LINE.match(line)
        if match:
            result[match.group(5)] = int(match.group(1))
    return result


def nics_from_registry(store: Any) -> list[NetworkInterface]:
    """Interfaces as Windows 2000/XP/2003 (and 9x-less NT in general) list them in the registry.

    Each {GUID} key under Tcpip\\Parameters\\Interfaces holds IPAddress /
    DhcpIPAddress and, if someone set it, MTU.
    """
    from sambatune.client.regvalue import REG_DWORD

    result = []
    for guid in store.subkeys(TCPIP_INTERFACES_KEY):
        key = f"{TCPIP_INTERFACES_KEY}\\{guid}"
        values = {name.lower(): value for name, value in store.values(key).items()}
        addresses: list[str] = []
        for name in ("ipaddress", "dhcpipaddress"):
            value = values.get(name)
            if value is None:
                continue
            items = value.data if isinstance(value.data, tuple) else (value.data,)
            addresses += [str(a) for a in items if str(a) and str(a) != "0.0.0.0"]
        mtu_value = values.get("mtu")
        mtu = mtu_value.data if mtu_value is not None and mtu_value.type == REG_DWORD else None
        if not addresses:
            continue
        result.append(
            NetworkInterface(
                name=guid,
                mtu=int(mtu) if isinstance(mtu, int) and mtu != 0xFFFFFFFF else 1500,
                guid=guid,
                addresses=tuple(addresses),
                kind="ethernet",
                description="MTU from the registry value"
                if mtu_value is not None
                else "MTU assumed: Ethernet's 1500 (no MTU value in the registry)",
            )
        )
    return result


# -- which interface leads to a server -------------------------------------------------


def local_address_towards(host: str, port: int = 445) -> str | None:
    """The local IP address this computer would use to reach ``host`` (no packet is sent).

    Connecting a UDP socket only asks the routing table; ``getsockname`` then names
    the source address, which names the interface.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)
    except socket.gaierror:
        return None
    for family, socktype, proto, _canon, sockaddr in infos:
        with contextlib.suppress(OSError), socket.socket(family, socktype, proto) as sock:
            sock.connect(sockaddr)
            return str(sock.getsockname()[0])
    return None


def interface_for_address(interfaces: list[NetworkInterface], address: str | None) -> NetworkInterface | None:
    if address is None:
        return None
    try:
        wanted = ipaddress.ip_address(address)
    except ValueError:
        return None
    for nic in interfaces:
        for candidate in nic.addresses:
            with contextlib.suppress(ValueError):
                if ipaddress.ip_address(candidate.split("%")[0].split("/")[0]) == wanted:
                    return nic
    return None


def choose_interface(
    interfaces: list[NetworkInterface], *, name: str | None = None, server: str | None = None
) -> NetworkInterface | None:
    """The interface to tune: the one named, else the one towards the server, else the
    first that is up and not loopback."""
    if name:
        for nic in interfaces:
            if nic.name == name or (nic.guid and nic.guid.lower() == name.lower()):
                return nic
        raise InvalidInput(
            f"No network interface named {name!r}.",
            details="Interfaces: " + ", ".join(n.name for n in interfaces),
        )
    if server:
        found = interface_for_address(interfaces, local_address_towards(server))
        if found is not None:
            return found
    for nic in interfaces:
        if nic.up and not nic.is_loopback and nic.mtu:
            return nic
    return None
