"""Linux backend: sysctl (live values in /proc/sys, writes with ``sysctl -w``), a file in
/etc/sysctl.d so the values survive a reboot, and ``ip link`` for interface MTUs.

Everything runs in the network namespace of this process, which is how the tests
change "this computer" without touching the host: they run SambaTune inside a
namespace they created. ``SAMBATUNE_SYSCTL_DIR`` (or the ``sysctl_dir`` argument)
moves the persistence file somewhere else, for the same reason.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
from pathlib import Path

from sambatune.client.cifs_mounts import EtcPaths, MountScan, read_option, scan_mounts, write_option
from sambatune.client.nics import NetworkInterface, parse_ip_json
from sambatune.client.osinfo import OsInfo, detect_local_os
from sambatune.client.settings import (
    FileRef,
    InterfaceMtuRef,
    MountOptionRef,
    Observed,
    SettingRef,
    SettingValue,
    SysctlRef,
    normalize_sysctl_value,
)
from sambatune.client.system import ClientSystem, Runner, is_posix_root
from sambatune.errors import CommandFailed, InvalidInput

DEFAULT_SYSCTL_DIR = "/etc/sysctl.d"
SYSCTL_FILE_NAME = "90-sambatune.conf"
#: Where systemd-sysctl looks, in the order it reads them (sysctl.d(5)); later files win.
SYSCTL_SEARCH_DIRS = ("/usr/lib/sysctl.d", "/lib/sysctl.d", "/run/sysctl.d", "/etc/sysctl.d")


def sysctl_dir_from_env() -> Path:
    return Path(os.environ.get("SAMBATUNE_SYSCTL_DIR") or DEFAULT_SYSCTL_DIR)


def etc_paths_from_env() -> EtcPaths:
    """Where fstab, mount units and autofs maps are read; ``SAMBATUNE_ETC_DIR`` stands in for /etc."""
    root = os.environ.get("SAMBATUNE_ETC_DIR")
    return EtcPaths.under(Path(root)) if root else EtcPaths()


class LinuxSystem(ClientSystem):
    def __init__(
        self,
        os_info: OsInfo | None = None,
        runner: Runner | None = None,
        sysctl_dir: Path | None = None,
        proc_sys: Path = Path("/proc/sys"),
        etc: EtcPaths | None = None,
    ) -> None:
        super().__init__(os_info or detect_local_os())
        if runner is None:
            from sambatune.remote.local import LocalTransport

            runner = LocalTransport()
        self.runner = runner
        self.sysctl_dir = sysctl_dir if sysctl_dir is not None else sysctl_dir_from_env()
        self.proc_sys = proc_sys
        self.etc = etc if etc is not None else etc_paths_from_env()

    def cifs_mounts(self) -> MountScan:
        """The cifs mounts fstab, systemd units and autofs maps name on this computer."""
        return scan_mounts(self.etc)

    @property
    def persistence_file(self) -> FileRef:
        return FileRef(str(self.sysctl_dir / SYSCTL_FILE_NAME))

    # -- reading -------------------------------------------------------------------
    def interfaces(self) -> list[NetworkInterface]:
        result = self.runner.run(["ip", "-j", "addr", "show"], timeout=30)
        try:
            entries = json.loads(result.text or "[]") if result.ok else None
        except json.JSONDecodeError:
            entries = None
        if entries is None:
            # iproute2 before 4.13 has no JSON output: names and MTUs from sysfs will do.
            return _interfaces_from_sysfs(Path("/sys/class/net"))
        names = [entry.get("ifname") for entry in entries]
        return parse_ip_json(result.text, speeds=_link_speeds([n for n in names if n]))

    def is_admin(self) -> bool:
        return is_posix_root()

    def read(self, ref: SettingRef) -> Observed:
        if isinstance(ref, SysctlRef):
            path = self.proc_sys / ref.name.replace(".", "/")
            try:
                return Observed.present(normalize_sysctl_value(path.read_text()))
            except FileNotFoundError:
                return Observed.absent("this kernel has no such setting")
            except OSError as exc:
                return Observed.unknown(f"cannot read {path}: {exc.strerror or exc}")
        if isinstance(ref, InterfaceMtuRef):
            result = self.runner.run(["ip", "-j", "link", "show", "dev", ref.interface], timeout=30)
            if not result.ok:
                return Observed.unknown(result.error_text.strip() or "ip link failed")
            entries = json.loads(result.text or "[]")
            if not entries or "mtu" not in entries[0]:
                return Observed.unknown(f"ip link shows no MTU for {ref.interface}")
            return Observed.present(int(entries[0]["mtu"]))
        if isinstance(ref, MountOptionRef):
            return read_option(ref, self.etc)
        if isinstance(ref, FileRef):
            try:
                return Observed.present(Path(ref.path).read_text(encoding="utf-8"))
            except FileNotFoundError:
                return Observed.absent()
            except (OSError, UnicodeDecodeError) as exc:
                return Observed.unknown(f"cannot read {ref.path}: {exc}")
        return Observed.unknown(f"Linux has no setting like {ref.label()}")

    def sysctl_read_only(self, name: str) -> bool:
        """True when this namespace may only read the value (mode 0444 in /proc/sys).

        Inside a container or network namespace, recent kernels show some net.core
        values (rmem_max, wmem_max, ...) read-only: they belong to the host.
        """
        try:
            mode = (self.proc_sys / name.replace(".", "/")).stat().st_mode
        except OSError:
            return False
        return not mode & 0o222

    # -- writing -------------------------------------------------------------------
    def write(self, ref: SettingRef, value: SettingValue | None) -> None:
        if isinstance(ref, MountOptionRef):
            write_option(ref, None if value is None else str(ref.check_value(value)), self.etc)
            return
        if isinstance(ref, FileRef):
            path = Path(ref.path)
            if value is None:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                return
            from sambatune.remote.local import write_local_file_atomic

            path.parent.mkdir(parents=True, exist_ok=True)
            write_local_file_atomic(str(path), str(ref.check_value(value)).encode(), mode=0o644)
            return
        if value is None:
            raise InvalidInput(f"{ref.label()} cannot be made absent; it always has a value.")
        argv = _write_argv(ref, value)
        if argv is None:
            raise self.unsupported(ref)
        result = self.runner.run(argv, timeout=60).check(f"Setting {ref.label()}")
        if isinstance(ref, SysctlRef) and result.error_text.strip():
            # procps sysctl reports a refused key on stderr but may still exit 0.
            raise CommandFailed(f"Setting {ref.label()} failed: {result.error_text.strip()}")

    def operations(self, ref: SettingRef, value: SettingValue | None) -> list[str]:
        return linux_operations(ref, value)


def _write_argv(ref: SettingRef, value: SettingValue) -> list[str] | None:
    if isinstance(ref, SysctlRef):
        return ["sysctl", "-w", f"{ref.name}={ref.check_value(value)}"]
    if isinstance(ref, InterfaceMtuRef):
        return ["ip", "link", "set", "dev", ref.interface, "mtu", str(ref.check_value(value))]
    return None


def linux_operations(ref: SettingRef, value: SettingValue | None) -> list[str]:
    if isinstance(ref, MountOptionRef):
        what = {"fstab": "line", "systemd": "Options= line", "autofs": "map entry"}[ref.source]
        if value is None:
            return [f"edit {ref.path}: remove {ref.option} from the options of the {what} for {ref.entry}"]
        return [
            f"edit {ref.path}: set {value} in the options of the {what} for {ref.entry} "
            "(only that field changes)"
        ]
    if isinstance(ref, FileRef):
        if value is None:
            return [f"delete the file {ref.path}"]
        return [f"write the file {ref.path}:\n{value}"]
    if value is None:
        return [f"(cannot make {ref.label()} absent)"]
    argv = _write_argv(ref, value)
    return [shlex.join(argv)] if argv else [f"(no Linux equivalent for {ref.label()})"]


def _interfaces_from_sysfs(root: Path) -> list[NetworkInterface]:
    result = []
    with contextlib.suppress(OSError):
        for entry in sorted(root.iterdir()):
            with contextlib.suppress(OSError, ValueError):
                mtu = int((entry / "mtu").read_text().strip())
                state = (entry / "operstate").read_text().strip()
                loopback = entry.name == "lo"
                result.append(
                    NetworkInterface(
                        name=entry.name,
                        mtu=mtu,
                        up=state in ("up", "unknown"),
                        speed_bps=_link_speeds([entry.name]).get(entry.name),
                        kind="loopback" if loopback else "",
                    )
                )
    return result


def _link_speeds(names: list[str]) -> dict[str, float]:
    """Link speed in bits/s from /sys/class/net/*/speed (Mbit/s there; -1 = unknown)."""
    speeds: dict[str, float] = {}
    for name in names:
        with contextlib.suppress(OSError, ValueError):
            mbit = int(Path(f"/sys/class/net/{name}/speed").read_text().strip())
            if mbit > 0:
                speeds[name] = mbit * 1e6
    return speeds


def render_sysctl_file(values: dict[str, str], header: str) -> str:
    """The persistence file: a comment saying who wrote it, then ``name = value`` lines."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    lines += [f"{name} = {value}" for name, value in values.items()]
    return "\n".join(lines) + "\n"


SYSCTL_FILE_HEADER = (
    "Written by SambaTune (sambatune client apply) so these values survive a reboot.\n"
    "Undo with 'sambatune client restore BACKUP' (see 'sambatune client backups'),\n"
    "or delete this file and reboot."
)


def merge_sysctl_file(existing: str | None, values: dict[str, str]) -> str:
    """SambaTune's own file: the values it already holds, updated with ``values``."""
    merged = parse_sysctl_file(existing) if existing is not None else {}
    merged.update(values)
    return render_sysctl_file(merged, SYSCTL_FILE_HEADER)


def parse_sysctl_file(text: str) -> dict[str, str]:
    """``name = value`` lines of a sysctl.d file (comments, blanks and a '-' prefix dropped)."""
    values: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")) or "=" not in line:
            continue
        name, _, value = line.partition("=")
        values[name.strip().lstrip("-").replace("/", ".")] = normalize_sysctl_value(value)
    return values


def boot_time_overrides(names: list[str], own_file: Path) -> dict[str, list[str]]:
    """Other sysctl.d files (or /etc/sysctl.conf) that set the same names and are read after ours.

    systemd-sysctl sorts all files by name across the directories and applies them in
    that order, so a later file silently undoes ours at boot; the plan warns about it.
    """
    files: dict[str, Path] = {}
    for directory in SYSCTL_SEARCH_DIRS:
        with contextlib.suppress(OSError):
            for entry in sorted(Path(directory).glob("*.conf")):
                files[entry.name] = entry  # /etc wins over /run wins over /usr/lib
    legacy = Path("/etc/sysctl.conf")
    found: dict[str, list[str]] = {}
    ordered = sorted(files.items())
    candidates = [path for name, path in ordered if name > own_file.name]
    if legacy.exists() and not any(p.resolve() == legacy.resolve() for _, p in ordered):
        candidates.append(legacy)
    for path in candidates:
        try:
            values = parse_sysctl_file(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        for name in names:
            if name in values:
                found.setdefault(name, []).append(str(path))
    return found
