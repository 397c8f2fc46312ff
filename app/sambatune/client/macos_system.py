"""macOS backend: ``sysctl`` for the TCP buffers and window scaling, ``networksetup`` for MTUs.

``sysctl -w`` changes last until the next restart; macOS has no documented
equivalent of /etc/sysctl.d that we rely on, so the plan says the change is
runtime-only. ``networksetup -setMTU`` is stored in the network preferences and
does survive a restart.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

from sambatune.client.nics import NetworkInterface, parse_hardware_ports, parse_ifconfig
from sambatune.client.osinfo import OsInfo, detect_local_os
from sambatune.client.settings import (
    ConfKeyRef,
    DefaultsRef,
    InterfaceMtuRef,
    Observed,
    SettingRef,
    SettingValue,
    SysctlRef,
    normalize_sysctl_value,
)
from sambatune.client.system import ClientSystem, Runner, is_posix_root
from sambatune.errors import CommandFailed, InvalidInput

_MTU_LINE = re.compile(r"mtu (\d+)")


def nsmb_path_from_env() -> Path:
    """/etc/nsmb.conf, or below ``SAMBATUNE_ETC_DIR`` (a directory standing in for /etc)."""
    root = os.environ.get("SAMBATUNE_ETC_DIR")
    return Path(root) / "nsmb.conf" if root else Path("/etc/nsmb.conf")


class MacSystem(ClientSystem):
    def __init__(
        self, os_info: OsInfo | None = None, runner: Runner | None = None, nsmb_path: Path | None = None
    ) -> None:
        super().__init__(os_info or detect_local_os())
        self.nsmb_path = nsmb_path if nsmb_path is not None else nsmb_path_from_env()
        if runner is None:
            from sambatune.remote.local import LocalTransport

            runner = LocalTransport()
        self.runner = runner

    def interfaces(self) -> list[NetworkInterface]:
        ports = self.runner.run(["networksetup", "-listallhardwareports"], timeout=30)
        listing = self.runner.run(["ifconfig", "-a"], timeout=30)
        if not listing.ok:
            raise CommandFailed("ifconfig -a failed: " + listing.error_text.strip())
        return parse_ifconfig(listing.text, parse_hardware_ports(ports.text) if ports.ok else {})

    def is_admin(self) -> bool:
        return is_posix_root()

    def read(self, ref: SettingRef) -> Observed:
        if isinstance(ref, ConfKeyRef):
            from sambatune.client.nsmb_conf import read_file

            return read_file(ref)
        if isinstance(ref, DefaultsRef):
            result = self.runner.run(_defaults_user(["defaults", "read", ref.domain, ref.key]), timeout=30)
            if result.ok:
                return Observed.present(ref.check_value(result.text.strip()))
            if "does not exist" in result.error_text:
                return Observed.absent("not set: Finder's default (it writes .DS_Store files)")
            return Observed.unknown(result.error_text.strip() or "defaults read failed")
        if isinstance(ref, SysctlRef):
            result = self.runner.run(["sysctl", "-n", ref.name], timeout=30)
            if result.ok:
                return Observed.present(normalize_sysctl_value(result.text))
            if "unknown oid" in result.error_text.lower():
                return Observed.absent("this macOS has no such setting")
            return Observed.unknown(result.error_text.strip() or "sysctl failed")
        if isinstance(ref, InterfaceMtuRef):
            result = self.runner.run(["ifconfig", ref.interface], timeout=30)
            match = _MTU_LINE.search(result.text) if result.ok else None
            if not match:
                return Observed.unknown(result.error_text.strip() or "no MTU in ifconfig output")
            return Observed.present(int(match.group(1)))
        return Observed.unknown(f"macOS has no setting like {ref.label()}")

    def write(self, ref: SettingRef, value: SettingValue | None) -> None:
        if isinstance(ref, ConfKeyRef):
            from sambatune.client.nsmb_conf import write_file

            write_file(ref, None if value is None else str(ref.check_value(value)))
            return
        if isinstance(ref, DefaultsRef):
            self.runner.run(_defaults_argv(ref, value), timeout=60).check(f"Setting {ref.label()}")
            return
        if value is None:
            raise InvalidInput(f"{ref.label()} cannot be made absent; it always has a value.")
        argv = _write_argv(ref, value)
        if argv is None:
            raise self.unsupported(ref)
        self.runner.run(argv, timeout=60).check(f"Setting {ref.label()}")

    def operations(self, ref: SettingRef, value: SettingValue | None) -> list[str]:
        return macos_operations(ref, value)


def _write_argv(ref: SettingRef, value: SettingValue) -> list[str] | None:
    if isinstance(ref, SysctlRef):
        return ["sysctl", "-w", f"{ref.name}={ref.check_value(value)}"]
    if isinstance(ref, InterfaceMtuRef):
        return ["networksetup", "-setMTU", ref.interface, str(ref.check_value(value))]
    return None


def _defaults_user(argv: list[str]) -> list[str]:
    """Finder reads the default of the user at the screen: under sudo, act as that user."""
    user = os.environ.get("SUDO_USER")
    return ["sudo", "-u", user, *argv] if user and is_posix_root() else argv


def _defaults_argv(ref: DefaultsRef, value: SettingValue | None) -> list[str]:
    if value is None:
        return _defaults_user(["defaults", "delete", ref.domain, ref.key])
    return _defaults_user(["defaults", "write", ref.domain, ref.key, "-bool", str(ref.check_value(value))])


def macos_operations(ref: SettingRef, value: SettingValue | None) -> list[str]:
    if isinstance(ref, ConfKeyRef):
        if value is None:
            return [
                f"edit {ref.path}: remove the line {ref.key}= from [{ref.section}] "
                "(the file goes if SambaTune made it)"
            ]
        return [f"edit {ref.path}: {ref.key}={value} in [{ref.section}] (only that line changes)"]
    if isinstance(ref, DefaultsRef):
        return [shlex.join(_defaults_argv(ref, value))]
    if value is None:
        return [f"(cannot make {ref.label()} absent)"]
    argv = _write_argv(ref, value)
    return [shlex.join(argv)] if argv else [f"(no macOS equivalent for {ref.label()})"]
