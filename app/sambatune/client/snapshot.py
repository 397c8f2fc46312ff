"""``client show``: this computer's OS, interfaces and every relevant setting's current value,
each labelled honoured or ignored for this OS version; and all the client page shows
of a system."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sambatune.client.catalog import CatalogEntry, entries_for
from sambatune.client.nics import TCPIP_INTERFACES_KEY, NetworkInterface, choose_interface
from sambatune.client.regvalue import TYPE_NUMBERS
from sambatune.client.settings import (
    AdapterPropertyRef,
    FileRef,
    InterfaceMtuRef,
    Observed,
    RegistryValueRef,
    SettingRef,
    SmbClientConfigRef,
    SysctlRef,
    TcpAutotuningRef,
)
from sambatune.client.system import ClientSystem
from sambatune.errors import SambaTuneError

if TYPE_CHECKING:
    from sambatune.client.plan import ClientPlan


@dataclass
class SnapshotItem:
    catalog_id: str
    title: str
    ref: SettingRef | None
    current: Observed
    honoured: bool
    evidence: str
    restart: str
    what: str

    def to_json(self) -> dict[str, Any]:
        return {
            "catalog_id": self.catalog_id,
            "title": self.title,
            "setting": self.ref.to_json() if self.ref else None,
            "current": self.current.to_json(),
            "honoured": self.honoured,
            "label": "honoured" if self.honoured else "ignored",
            "evidence": self.evidence,
            "restart": self.restart,
            "what": self.what,
        }


@dataclass
class ClientSnapshot:
    system: ClientSystem
    interfaces: list[NetworkInterface]
    items: list[SnapshotItem] = field(default_factory=list)
    admin: bool = False
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "os": self.system.os.to_json(),
            "admin": self.admin,
            "can_apply": self.system.apply_blocker() is None,
            "apply_blocker": self.system.apply_blocker(),
            "interfaces": [n.to_json() for n in self.interfaces],
            "settings": [i.to_json() for i in self.items],
            "notes": list(self.notes),
        }


def take_snapshot(system: ClientSystem) -> ClientSnapshot:
    notes: list[str] = []
    try:
        interfaces = system.interfaces()
    except SambaTuneError as error:
        interfaces = []
        notes.append(f"Cannot list interfaces: {error.message}")
    snapshot = ClientSnapshot(system, interfaces, admin=system.is_admin(), notes=notes)
    for item in entries_for(system.os.family):
        honour = item.honour(system.os.generation)
        for ref in _refs(item, system, interfaces):
            if ref is None:
                current = Observed.unknown("not a readable setting")
            else:
                try:
                    current = system.read(ref)
                except SambaTuneError as error:
                    current = Observed.unknown(error.message)
            snapshot.items.append(
                SnapshotItem(
                    item.id,
                    item.title + (f" [{_scope(ref)}]" if _scope(ref) else ""),
                    ref,
                    current,
                    honour.honoured,
                    honour.evidence,
                    item.restart,
                    item.what,
                )
            )
    return snapshot


@dataclass
class SystemReading:
    """A system as the client page shows it, read in one go off the GUI thread."""

    system: ClientSystem
    snapshot: ClientSnapshot
    #: The interface towards the server (or the one a plan would tune).
    towards: NetworkInterface | None
    #: How a window gets administrator rights here (see ``graphical_elevation``).
    elevation: str | None
    plan: ClientPlan | None = None


def read_system(system: ClientSystem, server: str | None) -> SystemReading:
    """Its snapshot, the interface towards ``server`` and the way to rights (reads settings)."""
    # Not at the top: the apply engine it brings is no part of `client show`'s start-up.
    from sambatune.client.elevation import graphical_elevation

    snapshot = take_snapshot(system)
    try:
        towards = choose_interface(snapshot.interfaces, server=server)
    except SambaTuneError:
        towards = None
    return SystemReading(system, snapshot, towards, graphical_elevation())


def _scope(ref: SettingRef | None) -> str:
    if isinstance(ref, (InterfaceMtuRef, AdapterPropertyRef)):
        return ref.interface
    return ""


def _refs(
    item: CatalogEntry, system: ClientSystem, interfaces: list[NetworkInterface]
) -> list[SettingRef | None]:
    setting = item.setting
    kind = setting.get("kind")
    real = [n for n in interfaces if not n.is_loopback and n.mtu]
    if kind == "registry":
        key = setting["key"]
        value_type = TYPE_NUMBERS[setting["type"]]
        if key == "{interface_key}":
            return [
                RegistryValueRef(f"{TCPIP_INTERFACES_KEY}\\{n.guid}", setting["name"], value_type)
                for n in real
                if n.guid
            ] or [None]
        if key.startswith("{"):
            return [None]
        return [RegistryValueRef(key, setting["name"], value_type)]
    if kind == "sysctl":
        return [SysctlRef(setting["name"])]
    if kind == "mtu":
        return [InterfaceMtuRef(n.name) for n in real] or [None]
    if kind == "adapter-property":
        if system.os.generation != "win8plus":
            return [None]
        return [AdapterPropertyRef(n.name, setting["keyword"]) for n in real] or [None]
    if kind == "tcp-autotuning":
        return [TcpAutotuningRef()]
    if kind == "smb-client-config":
        # Get-SmbClientConfiguration exists from Windows 8 / Server 2012 on.
        return [SmbClientConfigRef(setting["name"])] if system.os.generation == "win8plus" else [None]
    if kind == "file":
        persistence = getattr(system, "persistence_file", None)
        return [persistence if isinstance(persistence, FileRef) else None]
    return [None]
