"""Registry stores: the real one through ``winreg`` (Windows only) and one in memory.

Both behave like the Windows registry where it matters to a backup: key and value
names are case-insensitive but keep their case, a missing value is different from an
empty one, writing a value into a missing key creates the key (and its parents).
The in-memory store is what the tests (and forced profiles) use on Linux.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sambatune.client.regvalue import REG_MULTI_SZ, RegValue
from sambatune.errors import InvalidInput, SambaTuneError

HIVES = {
    "HKEY_LOCAL_MACHINE": "HKEY_LOCAL_MACHINE",
    "HKLM": "HKEY_LOCAL_MACHINE",
    "HKEY_CURRENT_USER": "HKEY_CURRENT_USER",
    "HKCU": "HKEY_CURRENT_USER",
    "HKEY_CLASSES_ROOT": "HKEY_CLASSES_ROOT",
    "HKCR": "HKEY_CLASSES_ROOT",
    "HKEY_USERS": "HKEY_USERS",
    "HKU": "HKEY_USERS",
    "HKEY_CURRENT_CONFIG": "HKEY_CURRENT_CONFIG",
    "HKCC": "HKEY_CURRENT_CONFIG",
}


class RegistryError(SambaTuneError):
    code = "registry-error"


def normalize_key(path: str) -> str:
    """``HKLM\\System\\X`` -> ``HKEY_LOCAL_MACHINE\\System\\X`` (hive spelled out, no stray \\)."""
    parts = [p for p in path.replace("/", "\\").split("\\") if p]
    if not parts:
        raise InvalidInput("An empty registry key path.")
    hive = HIVES.get(parts[0].upper())
    if hive is None:
        raise InvalidInput(f"{path!r} does not start with a hive such as HKEY_LOCAL_MACHINE.")
    return "\\".join([hive, *parts[1:]])


def split_hive(path: str) -> tuple[str, str]:
    key = normalize_key(path)
    hive, _, rest = key.partition("\\")
    return hive, rest


class RegistryStore(abc.ABC):
    """What SambaTune needs from a registry."""

    @abc.abstractmethod
    def get(self, key: str, name: str) -> RegValue | None:
        """The value, or None when the value (or its key) does not exist."""

    @abc.abstractmethod
    def set(self, key: str, name: str, value: RegValue) -> None:
        """Create or replace the value, creating the key if needed."""

    @abc.abstractmethod
    def delete_value(self, key: str, name: str) -> None:
        """Remove the value; nothing happens if it is already absent."""

    @abc.abstractmethod
    def key_exists(self, key: str) -> bool: ...

    @abc.abstractmethod
    def create_key(self, key: str) -> None: ...

    @abc.abstractmethod
    def delete_tree(self, key: str) -> None:
        """Remove the key with everything below it (what ``[-KEY]`` in a .reg file does)."""

    @abc.abstractmethod
    def subkeys(self, key: str) -> list[str]:
        """Names (not paths) of the direct subkeys; empty if the key does not exist."""

    @abc.abstractmethod
    def values(self, key: str) -> dict[str, RegValue]:
        """Every value of the key, by name as stored."""

    def missing_keys(self, key: str) -> list[str]:
        """The keys a value written into ``key`` would create: it and its missing parents,
        deepest first. A hive always exists."""
        parts = normalize_key(key).split("\\")
        missing = []
        for depth in range(len(parts), 1, -1):
            path = "\\".join(parts[:depth])
            if self.key_exists(path):
                break
            missing.append(path)
        return missing


@dataclass
class _Key:
    name: str
    values: dict[str, tuple[str, RegValue]] = field(default_factory=dict)


class InMemoryRegistry(RegistryStore):
    """A registry in a dict, with the real one's case rules."""

    def __init__(self) -> None:
        self._keys: dict[str, _Key] = {}

    def _lookup(self, key: str) -> _Key | None:
        return self._keys.get(normalize_key(key).lower())

    def create_key(self, key: str) -> None:
        parts = normalize_key(key).split("\\")
        for depth in range(1, len(parts) + 1):
            path = "\\".join(parts[:depth])
            self._keys.setdefault(path.lower(), _Key(path))

    def key_exists(self, key: str) -> bool:
        return self._lookup(key) is not None

    def get(self, key: str, name: str) -> RegValue | None:
        node = self._lookup(key)
        if node is None:
            return None
        found = node.values.get(name.lower())
        return found[1] if found else None

    def set(self, key: str, name: str, value: RegValue) -> None:
        self.create_key(key)
        node = self._lookup(key)
        assert node is not None
        existing = node.values.get(name.lower())
        # Like RegSetValueEx: replacing a value keeps the name's original spelling.
        node.values[name.lower()] = (existing[0] if existing else name, value)

    def delete_value(self, key: str, name: str) -> None:
        node = self._lookup(key)
        if node is not None:
            node.values.pop(name.lower(), None)

    def delete_tree(self, key: str) -> None:
        prefix = normalize_key(key).lower()
        for path in [p for p in self._keys if p == prefix or p.startswith(prefix + "\\")]:
            del self._keys[path]

    def subkeys(self, key: str) -> list[str]:
        prefix = normalize_key(key).lower() + "\\"
        names = []
        for path, node in self._keys.items():
            if path.startswith(prefix) and "\\" not in path[len(prefix) :]:
                names.append(node.name.rsplit("\\", 1)[-1])
        return sorted(names, key=str.lower)

    def values(self, key: str) -> dict[str, RegValue]:
        node = self._lookup(key)
        if node is None:
            return {}
        return {name: value for name, value in node.values.values()}

    def snapshot(self) -> dict[str, dict[str, RegValue]]:
        """Every key (as spelled) with its values: for comparing whole states in tests."""
        return {node.name: self.values(node.name) for node in self._keys.values()}

    @classmethod
    def with_values(
        cls, entries: Iterable[tuple[str, str, RegValue]], keys: Iterable[str] = ()
    ) -> InMemoryRegistry:
        store = cls()
        for key in keys:
            store.create_key(key)
        for key, name, value in entries:
            store.set(key, name, value)
        return store


class WinRegistry(RegistryStore):
    """The real registry through ``winreg``. Thin on purpose: every decision is made above it.

    ``KEY_WOW64_64KEY`` makes a 32-bit Python see the same keys as 64-bit tools; the
    keys we touch live under HKLM\\SYSTEM, which WOW64 shares anyway.
    """

    def __init__(self) -> None:
        try:
            import winreg
        except ImportError as exc:  # pragma: no cover - only reachable off Windows
            raise RegistryError("The Windows registry is only available on Windows.") from exc
        # Typed loosely: off Windows the type checker sees an empty winreg stub.
        self._winreg: Any = winreg
        self._wow = getattr(winreg, "KEY_WOW64_64KEY", 0)

    def _open(self, key: str, access: int, create: bool = False) -> Any:
        hive_name, sub = split_hive(key)
        hive = getattr(self._winreg, hive_name)
        if create:
            return self._winreg.CreateKeyEx(hive, sub, 0, access | self._wow)
        return self._winreg.OpenKey(hive, sub, 0, access | self._wow)

    def get(self, key: str, name: str) -> RegValue | None:  # pragma: no cover - Windows
        try:
            with self._open(key, self._winreg.KEY_READ) as handle:
                data, value_type = self._winreg.QueryValueEx(handle, name)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise RegistryError(f"Cannot read {key}\\{name}: {exc.strerror or exc}") from exc
        return _from_winreg(value_type, data)

    def set(self, key: str, name: str, value: RegValue) -> None:  # pragma: no cover - Windows
        data: object = value.data
        if value.type == REG_MULTI_SZ:
            data = list(value.data)  # type: ignore[arg-type]
        try:
            with self._open(key, self._winreg.KEY_SET_VALUE, create=True) as handle:
                self._winreg.SetValueEx(handle, name, 0, value.type, data)
        except OSError as exc:
            raise RegistryError(f"Cannot write {key}\\{name}: {exc.strerror or exc}") from exc

    def delete_value(self, key: str, name: str) -> None:  # pragma: no cover - Windows
        try:
            with self._open(key, self._winreg.KEY_SET_VALUE) as handle:
                self._winreg.DeleteValue(handle, name)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise RegistryError(f"Cannot delete {key}\\{name}: {exc.strerror or exc}") from exc

    def key_exists(self, key: str) -> bool:  # pragma: no cover - Windows
        try:
            with self._open(key, self._winreg.KEY_READ):
                return True
        except FileNotFoundError:
            return False

    def create_key(self, key: str) -> None:  # pragma: no cover - Windows
        with self._open(key, self._winreg.KEY_WRITE, create=True):
            pass

    def delete_tree(self, key: str) -> None:  # pragma: no cover - Windows
        for sub in self.subkeys(key):
            self.delete_tree(key + "\\" + sub)
        hive_name, sub_path = split_hive(key)
        parent, _, leaf = sub_path.rpartition("\\")
        try:
            with self._open(f"{hive_name}\\{parent}", self._winreg.KEY_WRITE) as handle:
                self._winreg.DeleteKeyEx(handle, leaf, self._wow, 0)
        except FileNotFoundError:
            return

    def subkeys(self, key: str) -> list[str]:  # pragma: no cover - Windows
        names: list[str] = []
        try:
            with self._open(key, self._winreg.KEY_READ) as handle:
                index = 0
                while True:
                    try:
                        names.append(self._winreg.EnumKey(handle, index))
                    except OSError:
                        return names
                    index += 1
        except FileNotFoundError:
            return names

    def values(self, key: str) -> dict[str, RegValue]:  # pragma: no cover - Windows
        found: dict[str, RegValue] = {}
        try:
            with self._open(key, self._winreg.KEY_READ) as handle:
                index = 0
                while True:
                    try:
                        name, data, value_type = self._winreg.EnumValue(handle, index)
                    except OSError:
                        return found
                    found[name] = _from_winreg(value_type, data)
                    index += 1
        except FileNotFoundError:
            return found


def _from_winreg(value_type: int, data: object) -> RegValue:
    """winreg hands back Python objects; turn them into a RegValue of the same type."""
    if data is None:
        return (
            RegValue(value_type, b"")
            if value_type not in (1, 2, 4, 7, 11)
            else RegValue(value_type, "" if value_type in (1, 2) else (() if value_type == 7 else 0))
        )
    if isinstance(data, list):
        return RegValue(value_type, tuple(str(s) for s in data))
    if isinstance(data, (int, str, bytes)):
        try:
            return RegValue(value_type, data)
        except InvalidInput:
            pass
    if isinstance(data, bytes):
        return RegValue.from_bytes(value_type, data)
    return RegValue(value_type, str(data).encode("utf-8"))
