"""Who is connected and how: every session's dialect, signing, encryption and channels,
and whether the server offers multichannel on several interfaces.

Collected on the server (smbstatus with the instance's own smb.conf, ``ss`` for the
channels, ``testparm -sv`` for the effective values) and stored in the survey under
``client_audit``; the advisor's client rules (:mod:`sambatune.advisor.rules.clients`)
and the Overview read it from there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from sambatune.cancellation import CancelToken
from sambatune.errors import SambaTuneError
from sambatune.json_fields import StoredFields
from sambatune.remote.smb_ports import SMB_PORTS, SMB_TRANSPORTS, tcp_ports
from sambatune.remote.smb_sessions import SmbSession, connected_clients, count_channels
from sambatune.remote.transport import Transport

#: The effective [global] values the audit reports.
AUDITED_PARAMETERS = (
    "server multi channel support",
    "interfaces",
    "bind interfaces only",
    "server signing",
    SMB_PORTS,
    SMB_TRANSPORTS,
)


@dataclass(frozen=True)
class AdvertisedInterface(StoredFields):
    """An interface smbd lists to a multichannel client (FSCTL_QUERY_NETWORK_INTERFACE_INFO)."""

    name: str
    addresses: tuple[str, ...] = ()
    speed_mbit: int | None = None
    #: "RSS" when smb.conf's ``interfaces`` says so (Samba cannot detect it itself).
    capability: str = ""


@dataclass
class ClientAudit(StoredFields):
    sessions: list[SmbSession] = field(default_factory=list)
    #: "smbstatus --json" or "smbstatus -b" (older Samba: no channel field either way).
    source: str = ""
    #: ``server multi channel support`` as testparm reports it (effective, default included).
    multichannel: bool | None = None
    server_signing: str = ""
    interfaces: list[AdvertisedInterface] = field(default_factory=list)
    #: True when smbstatus ran as root: otherwise only this account's sessions are seen.
    complete: bool = True
    #: Why something could not be read (the audit is best effort: the survey goes on).
    notes: list[str] = field(default_factory=list)

    @property
    def several_interfaces(self) -> bool:
        """Multichannel has somewhere to go: two interfaces, or one with RSS."""
        return len(self.interfaces) >= 2 or any(i.capability == "RSS" for i in self.interfaces)


def audit_clients(
    transport: Transport,
    config_path: str,
    nics: list[dict[str, Any]],
    *,
    sudo: bool = False,
    cancel: CancelToken | None = None,
    globals_: dict[str, str] | None = None,
) -> ClientAudit:
    """The audit of the smbd serving ``config_path``; ``nics`` are the survey's NICs
    (name, addresses, speed), which give the advertised interfaces their speeds.
    ``globals_``: the effective [global] values when the caller has them from its own
    ``testparm -sv`` (one run of it less on the server)."""
    audit = ClientAudit(complete=sudo)
    if not sudo:
        audit.notes.append("smbstatus ran without root: only this account's own sessions are listed.")
    if globals_ is not None:
        values = {name: globals_[name] for name in AUDITED_PARAMETERS if name in globals_}
    else:
        values = effective_globals(transport, config_path, sudo=sudo, cancel=cancel)
    if values:
        audit.multichannel = _yes(values.get("server multi channel support", ""))
        audit.server_signing = values.get("server signing", "")
        audit.interfaces = advertised_interfaces(values.get("interfaces", ""), nics)
    else:
        audit.notes.append("testparm did not report the effective settings.")
    try:
        clients = connected_clients(transport, config_path, sudo=sudo, cancel=cancel)
    except SambaTuneError as exc:
        audit.notes.append(f"smbstatus failed: {exc}")
        return audit
    audit.source = clients.source
    ports = tcp_ports(values)
    counts = None
    if clients.sessions and not all(s.channels is not None for s in clients.sessions):
        counts = count_channels(transport, ports, sudo=sudo, cancel=cancel)
        if not counts:
            audit.notes.append("ss could not name the smbd holding each connection: channels not counted.")
    audit.sessions = [
        replace(s, channels=counts[s.pid]) if s.channels is None and counts and s.pid in counts else s
        for s in clients.sessions
    ]
    return audit


def effective_globals(
    transport: Transport, config_path: str, *, sudo: bool = False, cancel: CancelToken | None = None
) -> dict[str, str]:
    """The audited [global] values with Samba's defaults filled in (``testparm -sv``)."""
    result = transport.run(
        ["testparm", "-s", "-v", "--suppress-prompt", config_path], sudo=sudo, timeout=120, cancel=cancel
    )
    if not result.ok:
        return {}
    values: dict[str, str] = {}
    in_global = False
    for line in result.text.splitlines():
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            in_global = stripped[1:-1].strip().lower() == "global"
        elif in_global and "=" in stripped:
            name, _, value = stripped.partition("=")
            if name.strip() in AUDITED_PARAMETERS:
                values[name.strip()] = value.strip()
    return values


def advertised_interfaces(interfaces: str, nics: list[dict[str, Any]]) -> list[AdvertisedInterface]:
    """What smbd offers a multichannel client: the NICs ``interfaces`` names (by name,
    address or network; ``"eth0;speed=10000000000,capability=RSS"`` sets speed and RSS),
    or, when it is empty, every interface that is up except loopback, as Samba does."""
    found: list[AdvertisedInterface] = []
    usable = [n for n in nics if n.get("state") != "down"]
    if not interfaces.strip():
        for nic in usable:
            if not nic.get("loopback"):
                found.append(_interface(nic))
        return found
    for word in _interface_words(interfaces):
        name, _, options = word.partition(";")
        if not name:
            continue
        speed_bits = re.search(r"speed=(\d+)", options)
        capability = "RSS" if "capability=rss" in options.lower() else ""
        key = name.split("/")[0]
        for nic in usable:
            addresses = [a.split("/")[0] for a in nic.get("addresses") or []]
            if nic.get("name") == name or key in addresses:
                interface = _interface(nic)
                if speed_bits:
                    interface = replace(interface, speed_mbit=int(speed_bits.group(1)) // 1_000_000)
                if any(i.name == interface.name for i in found):
                    continue
                found.append(replace(interface, capability=capability or interface.capability))
    return found


def _interface_words(interfaces: str) -> list[str]:
    """The list's entries: blanks or commas separate them, but a comma after ``;`` belongs
    to the entry's options (``"eth0;speed=1000000000,capability=RSS"``)."""
    words: list[str] = []
    for token in interfaces.replace('"', " ").split():
        words.extend([token] if ";" in token else [w for w in token.split(",") if w])
    return words


def _interface(nic: dict[str, Any]) -> AdvertisedInterface:
    speed = nic.get("speed_mbit")
    return AdvertisedInterface(
        name=str(nic.get("name", "?")),
        addresses=tuple(str(a) for a in nic.get("addresses") or ()),
        speed_mbit=int(speed) if isinstance(speed, (int, float)) and speed > 0 else None,
    )


def _yes(value: str) -> bool | None:
    lowered = value.strip().lower()
    if lowered in ("yes", "true", "1", "on"):
        return True
    if lowered in ("no", "false", "0", "off"):
        return False
    return None
