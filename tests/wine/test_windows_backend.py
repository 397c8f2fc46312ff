"""The Windows client backend on a real Windows Python and Wine's real registry.

Started by tests/test_windows_tier.py. What Wine's netsh and PowerShell cannot answer
is left out of an apply with its reason; everything else is written through winreg,
backed up, restored byte for byte, and rolled back when a write fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sambatune.client.apply import apply_plan, restore_backup
from sambatune.client.backups import BackupStore
from sambatune.client.plan import ClientPlan
from sambatune.client.planner import Measurements, build_plan
from sambatune.client.registry import RegistryError, RegistryStore, WinRegistry
from sambatune.client.regvalue import (
    REG_BINARY,
    REG_DWORD,
    REG_EXPAND_SZ,
    REG_MULTI_SZ,
    REG_QWORD,
    REG_SZ,
    RegValue,
)
from sambatune.client.settings import RegistryValueRef
from sambatune.client.snapshot import take_snapshot
from sambatune.client.system import local_system
from sambatune.client.windows_system import WindowsSystem

assert sys.platform == "win32", "the Windows tier runs on a Windows Python"

SCRATCH = "HKEY_CURRENT_USER\\Software\\SambaTune-Tests"


@pytest.fixture
def registry() -> WinRegistry:
    return WinRegistry()


@pytest.fixture
def scratch_key(registry: WinRegistry) -> Iterator[str]:
    """A key no one else uses, gone afterwards."""
    key = f"{SCRATCH}\\{uuid.uuid4().hex}"
    yield key
    if registry.key_exists(key):
        registry.delete_tree(key)


def picture(registry: RegistryStore, keys: list[str]) -> dict[str, object]:
    """Each key's values, or None when the key does not exist: what "exactly as before" compares."""
    return {key: registry.values(key) if registry.key_exists(key) else None for key in keys}


EVERY_TYPE = [
    ("Text", RegValue(REG_SZ, 'C:\\Share "x" é')),
    ("Empty", RegValue(REG_SZ, "")),
    ("Expand", RegValue(REG_EXPAND_SZ, "%SystemRoot%\\system32")),
    ("Blob", RegValue(REG_BINARY, bytes(range(256)))),
    ("NoBytes", RegValue(REG_BINARY, b"")),
    ("Count", RegValue(REG_DWORD, 0xFFFFFFFF)),
    ("Big", RegValue(REG_QWORD, 0x0123456789ABCDEF)),
    ("Multi", RegValue(REG_MULTI_SZ, ("a", "bb", "ccc"))),
]


def test_every_value_type_goes_in_and_comes_out_unchanged(registry: WinRegistry, scratch_key: str) -> None:
    assert not registry.key_exists(scratch_key) and registry.missing_keys(scratch_key)
    for name, value in EVERY_TYPE:
        registry.set(scratch_key, name, value)
    assert registry.values(scratch_key) == dict(EVERY_TYPE)
    for name, value in EVERY_TYPE:
        assert registry.get(scratch_key, name) == value
        registry.delete_value(scratch_key, name)
        assert registry.get(scratch_key, name) is None
    assert registry.values(scratch_key) == {}
    registry.delete_tree(scratch_key)
    assert not registry.key_exists(scratch_key)


def _plan(system: WindowsSystem) -> ClientPlan:
    # 1 Gbit/s at 20 ms: a path where the plan has registry changes to make on any Windows.
    return build_plan(system, Measurements(1e9, "entered", 0.020, "entered"))


def _keys(plan: ClientPlan) -> list[str]:
    refs = [c.ref for c in plan.changes if isinstance(c.ref, RegistryValueRef)]
    return sorted({ref.key for ref in refs})


@pytest.fixture
def system() -> WindowsSystem:
    found = local_system()
    assert isinstance(found, WindowsSystem) and isinstance(found.registry, WinRegistry)
    return found


def test_this_windows_is_detected_and_its_registry_read(system: WindowsSystem) -> None:
    assert system.os.family == "windows" and system.os.detected
    assert system.os.profile == os.environ.get("SAMBATUNE_TIER_PROFILE", system.os.profile)
    tcpip = "HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Services\\Tcpip\\Parameters"
    hostname = system.registry.get(tcpip, "Hostname")
    assert hostname is not None and hostname.type == REG_SZ
    plan = _plan(system)
    assert any(c.action == "set" and isinstance(c.ref, RegistryValueRef) for c in plan.changes)


def test_show_reads_each_registry_setting_as_winreg_has_it(system: WindowsSystem) -> None:
    """`client show`: every registry item of the snapshot is what the registry holds now."""
    lanman = "HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Services\\LanmanWorkstation\\Parameters"
    had = system.registry.get(lanman, "DisableBandwidthThrottling")
    system.registry.set(lanman, "DisableBandwidthThrottling", RegValue(REG_DWORD, 1))
    try:
        snapshot = take_snapshot(system)
        registry_items = [i for i in snapshot.items if isinstance(i.ref, RegistryValueRef)]
        assert registry_items and snapshot.to_json()["os"]["family"] == "windows"
        for item in registry_items:
            assert isinstance(item.ref, RegistryValueRef)
            now = system.registry.get(item.ref.key, item.ref.name)
            assert item.current.state == ("absent" if now is None else "present"), item.catalog_id
            assert item.current.value == (None if now is None else now), item.catalog_id
        [throttling] = [i for i in registry_items if i.catalog_id == "lanman-disablebandwidththrottling"]
        assert throttling.current.value == RegValue(REG_DWORD, 1)
    finally:
        if had is None:
            system.registry.delete_value(lanman, "DisableBandwidthThrottling")
        else:
            system.registry.set(lanman, "DisableBandwidthThrottling", had)


def test_apply_then_restore_puts_back_exactly_what_was_there(system: WindowsSystem, tmp_path: Path) -> None:
    plan = _plan(system)
    keys = _keys(plan)
    before = picture(system.registry, keys)
    store = BackupStore(tmp_path / "backups")
    result = apply_plan(system, plan, store=store)
    assert result.ok, result.message
    changed = [s for s in result.steps if s.status == "changed"]
    assert changed, [(s.setting, s.status, s.message) for s in result.steps]
    for change in plan.changes:
        if change.action == "set" and isinstance(change.ref, RegistryValueRef):
            assert system.registry.get(change.ref.key, change.ref.name) == change.recommended
    # What Wine's netsh or PowerShell cannot tell is left alone, and says so.
    for step in result.steps:
        if step.before.state == "unknown":
            assert step.status == "left-as-is" and "cannot be read here" in step.message
    assert result.backup_id is not None
    restored = restore_backup(system, result.backup_id, store=store)
    assert restored.ok, restored.message
    assert picture(system.registry, keys) == before


class _FailsOnSecondWrite(WinRegistry):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def set(self, key: str, name: str, value: RegValue) -> None:
        self.writes += 1
        if self.writes == 2:
            raise RegistryError(f"refused: {key}\\{name} (the test's failing write)")
        super().set(key, name, value)


def test_a_failed_write_rolls_back_what_was_written(system: WindowsSystem, tmp_path: Path) -> None:
    failing = WindowsSystem(system.os, _FailsOnSecondWrite(), system.commands, admin=True)
    plan = _plan(failing)
    keys = _keys(plan)
    before = picture(failing.registry, keys)
    result = apply_plan(failing, plan, store=BackupStore(tmp_path / "backups"))
    assert not result.ok and result.rolled_back, result.message
    assert any(s.status == "rolled-back" for s in result.steps)
    assert picture(failing.registry, keys) == before


def test_the_backups_reg_file_restores_through_regedit(system: WindowsSystem, tmp_path: Path) -> None:
    """The restore.reg a backup leaves is what an admin double-clicks; Wine's regedit imports it."""
    plan = _plan(system)
    keys = _keys(plan)
    before = picture(system.registry, keys)
    store = BackupStore(tmp_path / "backups")
    result = apply_plan(system, plan, store=store)
    assert result.ok and result.backup_folder, result.message
    assert picture(system.registry, keys) != before
    restore = Path(result.backup_folder) / "restore.reg"
    subprocess.run(["regedit", "/s", str(restore)], check=True, timeout=120)
    assert picture(system.registry, keys) == before
