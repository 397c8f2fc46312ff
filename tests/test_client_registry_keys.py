"""Registry keys an apply created are gone again after a restore or a rollback.

Windows itself has no service key for LanmanWorkstation parameters until someone sets
one, and an interface's key can be missing too: writing a value creates the key and
any missing parents. The backup records them; restoring (SambaTune's or the .reg file)
removes them, deepest first, while nothing else was put in them. Everything above the
in-memory registry is the real engine.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from client_doubles import FakeWindowsNet, windows_system
from reg_reader import import_reg, parse_reg
from sambatune.client.apply import apply_plan, restore_backup
from sambatune.client.backups import BackupEntry, BackupStore
from sambatune.client.nics import TCPIP_INTERFACES_KEY
from sambatune.client.plan import ClientPlan
from sambatune.client.planner import Measurements, build_plan
from sambatune.client.registry import InMemoryRegistry, RegistryError
from sambatune.client.regvalue import REG_DWORD, REG_MULTI_SZ, RegValue
from sambatune.client.settings import Observed, RegistryValueRef

SERVICES = "HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Services"
TCPIP = f"{SERVICES}\\Tcpip\\Parameters"
LANMAN_SERVICE = f"{SERVICES}\\LanmanWorkstation"
LANMAN = f"{LANMAN_SERVICE}\\Parameters"
GUID = "{2F4C1A0E-5B1D-4C3A-9D2E-1234567890AB}"
IFACE = f"{TCPIP_INTERFACES_KEY}\\{GUID}"


def windows_10_registry() -> InMemoryRegistry:
    """A Windows 10 registry without any LanmanWorkstation key yet."""
    return InMemoryRegistry.with_values(
        [(TCPIP, "Hostname", RegValue.string("pc"))], keys=[f"{SERVICES}\\Tcpip\\Linkage"]
    )


def measured(**kw: object) -> Measurements:
    return Measurements(1e9, "entered", 0.010, "entered", **kw)  # type: ignore[arg-type]


def lanman_plan(registry: InMemoryRegistry) -> tuple[ClientPlan, object]:
    system = windows_system("windows-10", registry=registry, net=FakeWindowsNet())
    plan = build_plan(system, measured())
    assert any(c.ref is not None and getattr(c.ref, "key", "") == LANMAN for c in plan.actionable())
    return plan, system


def test_missing_keys_are_the_key_and_its_missing_parents() -> None:
    registry = windows_10_registry()
    assert registry.missing_keys(LANMAN) == [LANMAN, LANMAN_SERVICE]
    assert registry.missing_keys(TCPIP) == []
    assert InMemoryRegistry().missing_keys("HKLM\\Software\\X") == [
        "HKEY_LOCAL_MACHINE\\Software\\X",
        "HKEY_LOCAL_MACHINE\\Software",
    ]


def test_restore_removes_the_keys_apply_created(tmp_path: Path) -> None:
    registry = windows_10_registry()
    original = copy.deepcopy(registry.snapshot())
    plan, system = lanman_plan(registry)
    store = BackupStore(tmp_path)

    result = apply_plan(system, plan, store=store)  # type: ignore[arg-type]

    assert result.ok, result.message
    assert registry.key_exists(LANMAN)
    recorded = json.loads((Path(result.backup_folder or "") / "backup.json").read_text())
    lanman_entries = [e for e in recorded["entries"] if e["setting"].get("key") == LANMAN]
    assert lanman_entries
    for entry in lanman_entries:
        assert entry["key_existed"] is False
        assert entry["created_keys"] == [LANMAN, LANMAN_SERVICE]

    # regedit with the backup's .reg alone: the outer created key goes, with all below.
    by_hand = copy.deepcopy(registry)
    regfile = parse_reg((Path(result.backup_folder or "") / "restore.reg").read_bytes())
    assert [b.key for b in regfile.blocks if b.delete] == [LANMAN_SERVICE]
    import_reg(by_hand, regfile)
    assert by_hand.snapshot() == original

    restored = restore_backup(system, result.backup_id or "", store=store)  # type: ignore[arg-type]
    assert restored.ok, restored.message
    assert registry.snapshot() == original
    assert not registry.key_exists(LANMAN_SERVICE)
    assert not any("registry key" in w for w in restored.warnings)


def test_a_created_key_someone_else_used_meanwhile_stays(tmp_path: Path) -> None:
    registry = windows_10_registry()
    plan, system = lanman_plan(registry)
    store = BackupStore(tmp_path)
    result = apply_plan(system, plan, store=store)  # type: ignore[arg-type]
    assert result.ok, result.message
    registry.set(LANMAN, "SomeoneElses", RegValue.dword(7))

    restored = restore_backup(system, result.backup_id or "", store=store)  # type: ignore[arg-type]

    assert restored.ok, restored.message
    assert registry.values(LANMAN) == {"SomeoneElses": RegValue.dword(7)}
    assert registry.key_exists(LANMAN_SERVICE)
    assert [w for w in restored.warnings if "registry key" in w] == [
        f"SambaTune created the registry key {LANMAN}; it was left in place because it is not empty.",
        f"SambaTune created the registry key {LANMAN_SERVICE}; it was left in place because it is not empty.",
    ]


class RefusingRegistry(InMemoryRegistry):
    """Refuses to write one value, as a registry ACL can."""

    def __init__(self, refused: str) -> None:
        super().__init__()
        self.refused = refused

    def set(self, key: str, name: str, value: RegValue) -> None:
        if name.lower() == self.refused.lower():
            raise RegistryError(f"Cannot write {key}\\{name}: Access is denied.")
        super().set(key, name, value)


def test_a_rolled_back_apply_removes_the_keys_it_created(tmp_path: Path) -> None:
    registry = RefusingRegistry("DirectoryCacheEntriesMax")
    registry.set(TCPIP, "Hostname", RegValue.string("pc"))
    registry.create_key(f"{SERVICES}\\Tcpip\\Linkage")
    original = copy.deepcopy(registry.snapshot())
    plan, system = lanman_plan(registry)

    result = apply_plan(system, plan, store=BackupStore(tmp_path))  # type: ignore[arg-type]

    assert not result.ok and result.rolled_back
    assert "rolled-back" in [s.status for s in result.steps], "a value was written first"
    assert registry.snapshot() == original


def test_an_interface_key_created_for_its_mtu_goes_again(tmp_path: Path) -> None:
    """XP keeps an interface's MTU in its own key; here the key is not there yet."""
    with_interface = InMemoryRegistry.with_values(
        [
            (TCPIP, "Hostname", RegValue.string("xp-pc")),
            (IFACE, "IPAddress", RegValue(REG_MULTI_SZ, ("192.168.1.20",))),
        ]
    )
    nic = windows_system("windows-xp", registry=with_interface).interfaces()[0]
    plan = build_plan(
        windows_system("windows-xp", registry=with_interface), measured(requested_mtu=1400, interface=nic)
    )
    registry = InMemoryRegistry.with_values(
        [(TCPIP, "Hostname", RegValue.string("xp-pc"))], keys=[TCPIP_INTERFACES_KEY]
    )
    original = copy.deepcopy(registry.snapshot())
    system = windows_system("windows-xp", registry=registry)
    store = BackupStore(tmp_path)

    result = apply_plan(system, plan, store=store)

    assert result.ok, result.message
    assert registry.get(IFACE, "MTU") == RegValue.dword(1400)
    restored = restore_backup(system, result.backup_id or "", store=store)
    assert restored.ok, restored.message
    assert registry.snapshot() == original


@pytest.mark.parametrize("key_existed, created", [(False, [LANMAN]), (True, []), (None, [])])
def test_backups_written_before_created_keys_still_remove_their_key(
    key_existed: bool | None,
    created: list[str],
) -> None:
    ref = RegistryValueRef(LANMAN, "DisableBandwidthThrottling", REG_DWORD)
    data: dict[str, Any] = {"setting": ref.to_json(), "prior": Observed.absent().to_json()}
    if key_existed is not None:
        data["key_existed"] = key_existed
    entry = BackupEntry.from_json(data)
    assert entry.created_keys == created
    assert BackupEntry.from_json(entry.to_json()) == entry
