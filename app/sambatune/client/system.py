"""One interface over every way of reading and changing this computer's network settings.

A ``ClientSystem`` knows its OS, lists its interfaces, reads a setting (present,
absent, unknown), writes one (None = make it absent) and says *exactly* what a
write would do, for dry runs and for the plan's diff. The backends are thin:
``LinuxSystem`` (sysctl, /etc/sysctl.d, ip link), ``MacSystem`` (sysctl,
networksetup), ``WindowsSystem`` (a registry store plus netsh/PowerShell) and
``ProfileSystem`` (a forced profile: another machine, nothing can be read or written).
"""

from __future__ import annotations

import abc
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from sambatune.client.nics import NetworkInterface
from sambatune.client.osinfo import OsInfo, detect_local_os, forced_profile
from sambatune.client.settings import Observed, SettingRef, SettingValue
from sambatune.errors import InvalidInput, SambaTuneError
from sambatune.remote.transport import CommandResult


class Runner(Protocol):
    """Runs an argument list and returns what it printed (``LocalTransport`` is one)."""

    def run(
        self, argv: Sequence[str], *, stdin: bytes | None = None, timeout: float | None = 120.0
    ) -> CommandResult: ...


class NeedsAdmin(SambaTuneError):
    """The change needs administrator (root) rights this process does not have."""

    code = "needs-admin"


class CannotApplyHere(SambaTuneError):
    """The plan is for another kind of machine, or this backend cannot write."""

    code = "cannot-apply-here"


class ClientSystem(abc.ABC):
    def __init__(self, os_info: OsInfo) -> None:
        self.os = os_info

    @abc.abstractmethod
    def interfaces(self) -> list[NetworkInterface]: ...

    @abc.abstractmethod
    def is_admin(self) -> bool: ...

    def apply_blocker(self) -> str | None:
        """Why nothing can be written here at all (besides rights), or None."""
        return None

    @abc.abstractmethod
    def read(self, ref: SettingRef) -> Observed: ...

    @abc.abstractmethod
    def write(self, ref: SettingRef, value: SettingValue | None) -> None:
        """Set the value; None makes it absent (deletes a registry value or a file)."""

    @abc.abstractmethod
    def operations(self, ref: SettingRef, value: SettingValue | None) -> list[str]:
        """The exact registry write, command line or file content a write would perform."""

    def unsupported(self, ref: SettingRef) -> InvalidInput:
        return InvalidInput(f"{self.os.name} has no setting like {ref.label()}.")


class ProfileSystem(ClientSystem):
    """A machine we are not running on (``--os windows-xp``): example NICs, values unknown."""

    def __init__(self, os_info: OsInfo, interfaces: list[NetworkInterface] | None = None) -> None:
        super().__init__(os_info)
        self._interfaces = interfaces if interfaces is not None else example_interfaces(os_info)

    def interfaces(self) -> list[NetworkInterface]:
        return list(self._interfaces)

    def is_admin(self) -> bool:
        return False

    def apply_blocker(self) -> str | None:
        return (
            f"This is a plan for a {self.os.name} profile, not for this computer: "
            "take the plan (or its .reg file) to that machine."
        )

    def read(self, ref: SettingRef) -> Observed:
        return Observed.unknown(f"planning for a {self.os.profile} profile, not this computer")

    def write(self, ref: SettingRef, value: SettingValue | None) -> None:
        raise CannotApplyHere(self.apply_blocker() or "Cannot write here.")

    def operations(self, ref: SettingRef, value: SettingValue | None) -> list[str]:
        return describe_operations(self.os, ref, value)


def example_interfaces(os_info: OsInfo) -> list[NetworkInterface]:
    """A stand-in interface for a forced profile, clearly marked as an example."""
    if os_info.family == "windows":
        return [
            NetworkInterface(
                name="Ethernet",
                mtu=1500,
                index=12,
                guid="{00000000-0000-0000-0000-000000000000}",
                kind="ethernet",
                description="example interface (planning for another machine)",
                example=True,
            )
        ]
    name = "en0" if os_info.family == "macos" else "eth0"
    return [
        NetworkInterface(
            name=name,
            mtu=1500,
            kind="ethernet",
            description="example interface (planning for another machine)",
            example=True,
        )
    ]


def describe_operations(os_info: OsInfo, ref: SettingRef, value: SettingValue | None) -> list[str]:
    """What a write does, by OS family, without needing that OS."""
    if os_info.family == "windows":
        from sambatune.client.windows_system import windows_operations

        return windows_operations(ref, value)
    if os_info.family == "macos":
        from sambatune.client.macos_system import macos_operations

        return macos_operations(ref, value)
    from sambatune.client.linux_system import linux_operations

    return linux_operations(ref, value)


def local_system(sysctl_dir: Path | None = None) -> ClientSystem:
    """The backend for the computer this process runs on (``sysctl_dir``: Linux only)."""
    os_info = detect_local_os()
    if os_info.family == "windows":
        from sambatune.client.windows_system import local_windows_system

        return local_windows_system(os_info)
    if os_info.family == "macos":
        from sambatune.client.macos_system import MacSystem

        return MacSystem(os_info)
    from sambatune.client.linux_system import LinuxSystem

    return LinuxSystem(os_info, sysctl_dir=sysctl_dir)


def system_for(profile: str | None, sysctl_dir: Path | None = None) -> ClientSystem:
    """This computer, or a forced profile; forcing this computer's own family keeps it real."""
    if not profile:
        return local_system(sysctl_dir)
    forced = forced_profile(profile)
    try:
        here = detect_local_os()
    except InvalidInput:
        here = None
    if here is not None and (
        here.profile == forced.profile or (here.family == forced.family and here.family in ("linux", "macos"))
    ):
        return local_system(sysctl_dir)
    return ProfileSystem(forced)


def is_posix_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0
