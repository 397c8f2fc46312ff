"""Windows backend: a registry store plus the netsh / PowerShell commands Vista and later honour.

Thin by design. The registry side is a ``RegistryStore`` (``WinRegistry`` on a real
machine, ``InMemoryRegistry`` in tests); the command side builds argument lists and
parses what netsh and PowerShell print. Those parsers are ordinary functions, tested
on Linux against the documented output formats; every decision lives in the planner.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sambatune.client.nics import (
    NetworkInterface,
    nics_from_registry,
    parse_netsh_subinterfaces,
    parse_windows_nic_json,
)
from sambatune.client.osinfo import OsInfo
from sambatune.client.registry import RegistryStore
from sambatune.client.regvalue import RegValue
from sambatune.client.settings import (
    AUTOTUNING_LEVELS,
    AdapterPropertyRef,
    InterfaceMtuRef,
    Observed,
    RegistryValueRef,
    SettingRef,
    SettingValue,
    SmbClientConfigRef,
    TcpAutotuningRef,
)
from sambatune.client.system import ClientSystem, Runner
from sambatune.errors import CommandFailed, InvalidInput

POWERSHELL = ("powershell.exe", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-Command")

# Interfaces, adapters and addresses in one JSON document. @(...) keeps one-element
# results as lists; Speed is the link speed in bits per second.
NIC_SCRIPT = (
    "[Console]::OutputEncoding = [Text.Encoding]::UTF8; "
    "$i = @(Get-NetIPInterface -AddressFamily IPv4 | "
    "Select-Object InterfaceAlias,InterfaceIndex,NlMtu,ConnectionState); "
    "$a = @(Get-NetAdapter | "
    "Select-Object Name,InterfaceIndex,InterfaceGuid,InterfaceDescription,Speed,Status); "
    "$d = @(Get-NetIPAddress -AddressFamily IPv4 | Select-Object InterfaceIndex,IPAddress); "
    "@{interfaces=$i; adapters=$a; addresses=$d} | ConvertTo-Json -Depth 4 -Compress"
)


#: Every SMB client property in one JSON object. Select-Object drops the CIM plumbing
#: (CimClass, CimInstanceProperties, ...) that would otherwise be serialised with it.
SMB_CLIENT_SCRIPT = (
    "[Console]::OutputEncoding = [Text.Encoding]::UTF8; "
    "Get-SmbClientConfiguration -ErrorAction Stop | "
    "Select-Object -Property * -ExcludeProperty Cim*,PSComputerName | "
    "ConvertTo-Json -Depth 2 -Compress"
)

#: How long one read of Get-SmbClientConfiguration or of an adapter's properties answers
#: further reads. Each PowerShell start costs about a second, and a plan reads a dozen
#: values in a row; an apply that follows later must still see what the machine holds
#: now, not what the plan saw (writes drop the cache at once).
READ_CACHE_SECONDS = 5.0


def ps_quote(text: str) -> str:
    """A PowerShell single-quoted string literal (only ' needs doubling inside)."""
    return "'" + text.replace("'", "''") + "'"


def command_line(argv: list[str]) -> str:
    """How Windows would see the argument list (subprocess uses the same rules)."""
    return subprocess.list2cmdline(argv)


class WindowsNetCommands:
    """netsh and PowerShell, as argument lists in and parsed results out."""

    def __init__(self, runner: Runner, clock: Callable[[], float] = time.monotonic) -> None:
        self.runner = runner
        self.clock = clock
        self._cache: dict[tuple[str, ...], tuple[float, Any]] = {}

    # auto-tuning ---------------------------------------------------------------------
    SHOW_GLOBAL = ("netsh", "interface", "tcp", "show", "global")

    @staticmethod
    def set_autotuning_argv(level: str) -> list[str]:
        return ["netsh", "interface", "tcp", "set", "global", f"autotuninglevel={level}"]

    def autotuning_level(self) -> Observed:
        result = self.runner.run(self.SHOW_GLOBAL, timeout=60)
        if not result.ok:
            return Observed.unknown(result.error_text.strip() or result.text.strip() or "netsh failed")
        level = parse_autotuning_level(result.text)
        if level is None:
            return Observed.unknown("netsh printed no auto-tuning level SambaTune can read")
        return Observed.present(level)

    # MTU -----------------------------------------------------------------------------
    SHOW_SUBINTERFACES = ("netsh", "interface", "ipv4", "show", "subinterfaces")

    @staticmethod
    def set_mtu_argv(interface: str, mtu: int) -> list[str]:
        return [
            "netsh",
            "interface",
            "ipv4",
            "set",
            "subinterface",
            interface,
            f"mtu={mtu}",
            "store=persistent",
        ]

    def subinterface_mtus(self) -> dict[str, int]:
        result = self.runner.run(self.SHOW_SUBINTERFACES, timeout=60)
        result.check("netsh interface ipv4 show subinterfaces")
        return parse_netsh_subinterfaces(result.text)

    # adapter advanced properties (*JumboPacket, *RSS, offloads) ---------------------
    @staticmethod
    def adapter_properties_argv(interface: str) -> list[str]:
        return [
            *POWERSHELL,
            "[Console]::OutputEncoding = [Text.Encoding]::UTF8; "
            f"Get-NetAdapterAdvancedProperty -Name {ps_quote(interface)} -AllProperties -ErrorAction Stop | "
            "Select-Object RegistryKeyword,RegistryValue,ValidRegistryValues,DisplayName,DisplayValue | "
            "ConvertTo-Json -Depth 3 -Compress",
        ]

    @staticmethod
    def set_property_argv(interface: str, keyword: str, value: str) -> list[str]:
        return [
            *POWERSHELL,
            f"Set-NetAdapterAdvancedProperty -Name {ps_quote(interface)} "
            f"-RegistryKeyword {ps_quote(keyword)} -RegistryValue {ps_quote(value)}",
        ]

    def adapter_properties(self, interface: str) -> dict[str, AdapterKeyword]:
        """What the adapter's driver offers, by case-folded keyword (CommandFailed if unreadable)."""
        cached = self._cached(("adapter", interface))
        if cached is not None:
            return dict(cached)
        result = self.runner.run(self.adapter_properties_argv(interface), timeout=60)
        result.check(f"Reading the advanced properties of {interface}")
        try:
            table = parse_adapter_properties(result.text)
        except ValueError as exc:
            raise CommandFailed(
                f"Get-NetAdapterAdvancedProperty printed something SambaTune cannot read: {exc}"
            ) from exc
        self._remember(("adapter", interface), table)
        return dict(table)

    def adapter_property(self, interface: str, keyword: str) -> Observed:
        try:
            table = self.adapter_properties(interface)
        except CommandFailed as error:
            return Observed.unknown(error.message)
        found = table.get(keyword.casefold())
        if found is None:
            return Observed.absent("the driver has no such property")
        if found.value is None:
            return Observed.absent("the driver offers it without a value")
        return Observed.present(found.value)

    # SMB client configuration (Windows 8 / Server 2012 and later) --------------------
    @staticmethod
    def set_smb_client_argv(name: str, value: SettingValue) -> list[str]:
        ref = SmbClientConfigRef(name)
        if not ref.writable:
            raise InvalidInput(
                f"SambaTune reads {name} but never writes it: it is a security setting, left to your policy."
            )
        literal = powershell_literal(ref.check_value(value))
        # -Force: no confirmation prompt (there is no one to answer it).
        return [*POWERSHELL, f"Set-SmbClientConfiguration -{name} {literal} -Force -ErrorAction Stop"]

    def smb_client_configuration(self) -> dict[str, Any]:
        """Every property Get-SmbClientConfiguration reports (CommandFailed if unreadable)."""
        cached = self._cached(("smb-client",))
        if cached is not None:
            return dict(cached)
        result = self.runner.run([*POWERSHELL, SMB_CLIENT_SCRIPT], timeout=60)
        result.check("Get-SmbClientConfiguration")
        try:
            config = parse_smb_client_configuration(result.text)
        except ValueError as exc:
            raise CommandFailed(
                f"Get-SmbClientConfiguration printed something SambaTune cannot read: {exc}"
            ) from exc
        self._remember(("smb-client",), config)
        return dict(config)

    def smb_client_setting(self, name: str) -> Observed:
        try:
            config = self.smb_client_configuration()
        except CommandFailed as error:
            return Observed.unknown(error.message)
        if name not in config or config[name] is None:
            return Observed.absent("this Windows's SMB client has no such property")
        return Observed.present(SmbClientConfigRef(name).check_value(config[name]))

    # the read cache ------------------------------------------------------------------
    def forget_reads(self) -> None:
        """Drop what was read: after a write, every later read asks Windows again."""
        self._cache.clear()

    def _cached(self, key: tuple[str, ...]) -> Any:
        found = self._cache.get(key)
        if found is None or self.clock() - found[0] > READ_CACHE_SECONDS:
            return None
        return found[1]

    def _remember(self, key: tuple[str, ...], value: Any) -> None:
        self._cache[key] = (self.clock(), value)

    # interfaces ----------------------------------------------------------------------
    def interfaces_json(self) -> list[NetworkInterface]:
        result = self.runner.run([*POWERSHELL, NIC_SCRIPT], timeout=120)
        result.check("Listing network interfaces with PowerShell")
        return parse_windows_nic_json(result.text)


@dataclass(frozen=True)
class AdapterKeyword:
    """One advanced property of a network adapter's driver, as Get-NetAdapterAdvancedProperty
    reports it. ``valid_values`` is empty when the driver takes a number from a range."""

    keyword: str
    value: str | None
    valid_values: tuple[str, ...] = ()
    display_name: str = ""
    display_value: str = ""


def _strings(data: Any) -> tuple[str, ...]:
    """A PowerShell string array as ConvertTo-Json writes it: a list, one bare string, null,
    or (Windows PowerShell 5.1, for arrays it has decorated) {"value": [...], "Count": n}."""
    if isinstance(data, dict) and "value" in data:
        data = data["value"]
    if data is None:
        return ()
    if isinstance(data, list):
        return tuple(str(item) for item in data if item is not None)
    return (str(data),)


def parse_adapter_properties(text: str) -> dict[str, AdapterKeyword]:
    """Get-NetAdapterAdvancedProperty -AllProperties as JSON -> keyword (case-folded) -> property.

    ConvertTo-Json writes one object when the adapter has one property and a list
    otherwise; RegistryValue and ValidRegistryValues are string arrays. Keys are
    case-folded because registry names ignore case and drivers spell the standardized
    keywords differently (*NumRssQueues, *NumRSSQueues); each entry keeps the driver's own.
    """
    stripped = text.strip().lstrip("\ufeff")
    if not stripped:
        return {}
    data = json.loads(stripped)
    rows = data if isinstance(data, list) else [data]
    table: dict[str, AdapterKeyword] = {}
    for row in rows:
        if not isinstance(row, dict):
            raise ValueError(f"expected an object per property, got {row!r}")
        keyword = row.get("RegistryKeyword")
        if not isinstance(keyword, str) or not keyword:
            continue
        values = _strings(row.get("RegistryValue"))
        table[keyword.casefold()] = AdapterKeyword(
            keyword=keyword,
            value=values[0] if values else None,
            valid_values=_strings(row.get("ValidRegistryValues")),
            display_name=str(row.get("DisplayName") or ""),
            display_value=str(row.get("DisplayValue") or ""),
        )
    return table


def parse_smb_client_configuration(text: str) -> dict[str, Any]:
    """Get-SmbClientConfiguration as JSON -> property name -> bool, number or text."""
    data = json.loads(text.strip().lstrip("\ufeff") or "null")
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if not isinstance(data, dict):
        raise ValueError("expected one object of SMB client properties")
    return {name: value for name, value in data.items() if not isinstance(value, (dict, list))}


def powershell_literal(value: SettingValue) -> str:
    """A checked SMB client value as PowerShell reads it: $true/$false, or a whole number."""
    if value in ("true", "false"):
        return f"${value}"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise InvalidInput(f"{value!r} is not a value SambaTune writes to the SMB client configuration.")


def parse_autotuning_level(text: str) -> str | None:
    """The auto-tuning level from ``netsh interface tcp show global``.

    English output names the line "Receive Window Auto-Tuning Level". For translated
    output the line is found by its value, if the level is printed untranslated: no
    other line can read "highlyrestricted", "restricted", "normal" or "experimental".
    Anything else is reported as unknown, and an unknown value is never changed.
    """
    fallback = None
    for line in text.splitlines():
        if ":" not in line:
            continue
        label, _, value = line.rpartition(":")
        value = value.strip().lower()
        if "auto-tuning" in label.lower() or "autotuning" in label.lower():
            return value if value in AUTOTUNING_LEVELS else None
        if value in AUTOTUNING_LEVELS and value != "disabled" and fallback is None:
            fallback = value
    return fallback


class WindowsSystem(ClientSystem):
    def __init__(
        self,
        os_info: OsInfo,
        registry: RegistryStore,
        commands: WindowsNetCommands | None,
        admin: bool | None = None,
        processors: int | None = None,
    ) -> None:
        super().__init__(os_info)
        self.registry = registry
        self.commands = commands
        self._admin = admin
        self._processors = processors

    def processor_count(self) -> int | None:
        """Logical processors: the most RSS queues that can each have a core of their own."""
        return self._processors or os.cpu_count()

    def adapter_properties(self, interface: str) -> dict[str, AdapterKeyword]:
        """What the driver of ``interface`` offers (CommandFailed or InvalidInput if it cannot tell)."""
        if self.os.generation != "win8plus" or self.commands is None:
            raise InvalidInput("Get-NetAdapterAdvancedProperty arrived with Windows 8 / Server 2012.")
        return self.commands.adapter_properties(interface)

    def interfaces(self) -> list[NetworkInterface]:
        if self.os.generation == "win8plus" and self.commands is not None:
            return self.commands.interfaces_json()
        if self.os.generation == "vista7" and self.commands is not None:
            mtus = self.commands.subinterface_mtus()
            return [
                NetworkInterface(
                    name=name,
                    mtu=None if mtu == 4294967295 else mtu,
                    kind="loopback" if mtu == 4294967295 else "ethernet",
                )
                for name, mtu in mtus.items()
            ]
        return nics_from_registry(self.registry)

    def is_admin(self) -> bool:
        if self._admin is None:
            self._admin = is_windows_admin()
        return self._admin

    def read(self, ref: SettingRef) -> Observed:
        if isinstance(ref, RegistryValueRef):
            value = self.registry.get(ref.key, ref.name)
            return Observed.absent() if value is None else Observed.present(value)
        if self.commands is None:
            return Observed.unknown("no netsh/PowerShell on this backend")
        try:
            if isinstance(ref, TcpAutotuningRef):
                return self.commands.autotuning_level()
            if isinstance(ref, InterfaceMtuRef):
                mtus = self.commands.subinterface_mtus()
                if ref.interface not in mtus:
                    return Observed.unknown(f"netsh lists no interface named {ref.interface!r}")
                return Observed.present(mtus[ref.interface])
            if isinstance(ref, AdapterPropertyRef):
                return self.commands.adapter_property(ref.interface, ref.keyword)
            if isinstance(ref, SmbClientConfigRef):
                if self.os.generation != "win8plus":
                    return Observed.unknown("Get-SmbClientConfiguration arrived with Windows 8 / Server 2012")
                return self.commands.smb_client_setting(ref.name)
        except CommandFailed as error:
            return Observed.unknown(error.message)
        return Observed.unknown(f"Windows has no setting like {ref.label()}")

    def write(self, ref: SettingRef, value: SettingValue | None) -> None:
        if self.commands is not None:
            self.commands.forget_reads()
        if isinstance(ref, RegistryValueRef):
            if value is None:
                self.registry.delete_value(ref.key, ref.name)
            else:
                checked = ref.check_value(value)
                assert isinstance(checked, RegValue)
                self.registry.set(ref.key, ref.name, checked)
            return
        if value is None:
            raise InvalidInput(f"{ref.label()} cannot be made absent; it always has a value.")
        argv = _command_argv(ref, value)
        if argv is None:
            raise self.unsupported(ref)
        if self.commands is None:
            raise InvalidInput("This backend cannot run netsh or PowerShell.")
        self.commands.runner.run(argv, timeout=120).check(f"Setting {ref.label()}")

    def operations(self, ref: SettingRef, value: SettingValue | None) -> list[str]:
        return windows_operations(ref, value)


def _command_argv(ref: SettingRef, value: SettingValue) -> list[str] | None:
    if isinstance(ref, TcpAutotuningRef):
        return WindowsNetCommands.set_autotuning_argv(str(ref.check_value(value)))
    if isinstance(ref, InterfaceMtuRef):
        mtu = ref.check_value(value)
        assert isinstance(mtu, int)
        return WindowsNetCommands.set_mtu_argv(ref.interface, mtu)
    if isinstance(ref, AdapterPropertyRef):
        return WindowsNetCommands.set_property_argv(ref.interface, ref.keyword, str(value))
    if isinstance(ref, SmbClientConfigRef):
        return WindowsNetCommands.set_smb_client_argv(ref.name, value)
    return None


def windows_operations(ref: SettingRef, value: SettingValue | None) -> list[str]:
    if isinstance(ref, RegistryValueRef):
        if value is None:
            return [f"registry: delete the value {ref.key}\\{ref.name}"]
        checked = ref.check_value(value)
        assert isinstance(checked, RegValue)
        return [f"registry: set {ref.key}\\{ref.name} = {checked.display()}"]
    if value is None:
        return [f"(cannot make {ref.label()} absent)"]
    argv = _command_argv(ref, value)
    return [command_line(argv)] if argv else [f"(no Windows equivalent for {ref.label()})"]


def is_windows_admin() -> bool:
    """True when this process runs elevated (shell32 IsUserAnAdmin)."""
    if sys.platform != "win32":
        return False
    try:  # pragma: no cover - Windows only
        import ctypes

        return bool(ctypes.windll.shell32.IsUserAnAdmin())
    except (AttributeError, OSError):  # pragma: no cover
        return False


def local_windows_system(os_info: OsInfo) -> WindowsSystem:  # pragma: no cover - Windows only
    from sambatune.client.registry import WinRegistry
    from sambatune.remote.local import LocalTransport

    return WindowsSystem(os_info, WinRegistry(), WindowsNetCommands(LocalTransport()))
