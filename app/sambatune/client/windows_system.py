"""Windows backend: a registry store plus the netsh / PowerShell commands Vista and later honour.

Thin by design. The registry side is a ``RegistryStore`` (``WinRegistry`` on a real
machine, ``InMemoryRegistry`` in tests); the command side builds argument lists and
parses what netsh and PowerShell print. Those parsers are ordinary functions, tested
on Linux against the documented output formats; every decision lives in the planner.
"""

from __future__ import annotations

import json
import subprocess
import sys

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


def ps_quote(text: str) -> str:
    """A PowerShell single-quoted string literal (only ' needs doubling inside)."""
    return "'" + text.replace("'", "''") + "'"


def command_line(argv: list[str]) -> str:
    """How Windows would see the argument list (subprocess uses the same rules)."""
    return subprocess.list2cmdline(argv)


class WindowsNetCommands:
    """netsh and PowerShell, as argument lists in and parsed results out."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner

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

    # adapter advanced properties (*JumboPacket) --------------------------------------
    @staticmethod
    def get_property_argv(interface: str, keyword: str) -> list[str]:
        return [
            *POWERSHELL,
            f"Get-NetAdapterAdvancedProperty -Name {ps_quote(interface)} "
            f"-RegistryKeyword {ps_quote(keyword)} -ErrorAction Stop | "
            "Select-Object -ExpandProperty RegistryValue | ConvertTo-Json -Compress",
        ]

    @staticmethod
    def set_property_argv(interface: str, keyword: str, value: str) -> list[str]:
        return [
            *POWERSHELL,
            f"Set-NetAdapterAdvancedProperty -Name {ps_quote(interface)} "
            f"-RegistryKeyword {ps_quote(keyword)} -RegistryValue {ps_quote(value)}",
        ]

    def adapter_property(self, interface: str, keyword: str) -> Observed:
        result = self.runner.run(self.get_property_argv(interface, keyword), timeout=60)
        if not result.ok:
            text = (result.error_text or result.text).strip()
            if "No matching" in text or "ObjectNotFound" in text:
                return Observed.absent("the driver has no such property")
            return Observed.unknown(text or "Get-NetAdapterAdvancedProperty failed")
        try:
            data = json.loads(result.text)
        except json.JSONDecodeError:
            return Observed.unknown("PowerShell printed something that is not JSON")
        if isinstance(data, list):
            data = data[0] if data else None
        return Observed.absent() if data is None else Observed.present(str(data))

    # interfaces ----------------------------------------------------------------------
    def interfaces_json(self) -> list[NetworkInterface]:
        result = self.runner.run([*POWERSHELL, NIC_SCRIPT], timeout=120)
        result.check("Listing network interfaces with PowerShell")
        return parse_windows_nic_json(result.text)


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
    ) -> None:
        super().__init__(os_info)
        self.registry = registry
        self.commands = commands
        self._admin = admin

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
        except CommandFailed as error:
            return Observed.unknown(error.message)
        return Observed.unknown(f"Windows has no setting like {ref.label()}")

    def write(self, ref: SettingRef, value: SettingValue | None) -> None:
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
