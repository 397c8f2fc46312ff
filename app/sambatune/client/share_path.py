"""Is a folder on an SMB share as this computer mounted it, or on a local disk?

A client plan changes how this computer talks SMB, so its before-and-after check must
measure through an SMB mount: a folder on the laptop's own disk would show the disk.
Each system says where a path lives in its own way:

- Linux: ``/proc/self/mountinfo``; the mount whose mount point is the longest prefix of
  the resolved path holds it, and its file-system type follows the `` - `` separator
  (``cifs``, or ``smb3`` from ``mount -t smb3``);
- macOS: ``mount`` lists ``//user@server/share on /Volumes/data (smbfs, ...)``;
- Windows: a UNC path (``\\\\server\\share``) is a network share; a drive letter is one
  when ``GetDriveTypeW`` says DRIVE_REMOTE (a mapped drive).

When none of that can be read the answer is "unknown", and the check goes ahead.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

SMB_FILESYSTEMS = ("cifs", "smb3", "smbfs")
MOUNTINFO = Path("/proc/self/mountinfo")
#: GetDriveTypeW's answer for a network drive (fileapi.h).
DRIVE_REMOTE = 4
#: macOS ``mount``: ``//guest@nas/data on /Volumes/data (smbfs, nodev, nosuid, ...)``.
_MACOS_LINE = re.compile(r"^(?P<source>.+?) on (?P<point>/.*) \((?P<type>[^,)]+)")


@dataclass(frozen=True)
class PathFilesystem:
    path: str
    #: "cifs", "ext4", "smbfs", "network drive", "local drive"...; None: not known.
    filesystem: str | None
    #: Where that file system is mounted (Linux, macOS), or the drive / share root.
    mount_point: str | None = None

    @property
    def on_smb(self) -> bool | None:
        """True on an SMB mount, False elsewhere, None when it could not be told."""
        if self.filesystem is None:
            return None
        return self.filesystem in (*SMB_FILESYSTEMS, "UNC path", "network drive")

    def describe(self) -> str:
        """``/srv/data is on ext4 (mounted at /)``."""
        where = f" (mounted at {self.mount_point})" if self.mount_point else ""
        return f"{self.path} is on {self.filesystem or 'a file system that could not be read'}{where}"


def _unescape(field: str) -> str:
    """mountinfo writes blanks, tabs, newlines and backslashes as octal escapes."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _holder(path: str, mounts: Iterable[tuple[str, str]]) -> PathFilesystem:
    """The mount (point, type) whose point is the longest prefix of ``path``; of several on
    the same point the last, since a later mount hides the earlier ones."""
    best: tuple[str, str] | None = None
    for point, fstype in mounts:
        inside = path == point or path.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) >= len(best[0])):
            best = (point, fstype)
    return PathFilesystem(path, best[1] or None, best[0]) if best else PathFilesystem(path, None)


def from_mountinfo(path: str, text: str) -> PathFilesystem:
    """Which mount of ``text`` (mountinfo) holds ``path`` (already resolved)."""
    mounts = []
    for line in text.splitlines():
        fields = line.split(" ")
        if "-" in fields and len(fields) >= 10:
            mounts.append((_unescape(fields[4]), fields[fields.index("-") + 1]))
    return _holder(path, mounts)


def from_macos_mount(path: str, text: str) -> PathFilesystem:
    """Which line of macOS ``mount`` output holds ``path``."""
    found = (_MACOS_LINE.match(line) for line in text.splitlines())
    return _holder(path, ((m.group("point"), m.group("type").strip()) for m in found if m))


def _windows(path: str) -> PathFilesystem:
    if path.startswith(("\\\\", "//")):
        return PathFilesystem(path, "UNC path", None)
    drive = os.path.splitdrive(os.path.abspath(path))[0]
    if not drive:
        return PathFilesystem(path, None)
    import ctypes

    kind = ctypes.windll.kernel32.GetDriveTypeW(drive + "\\")  # type: ignore[attr-defined]
    return PathFilesystem(path, "network drive" if kind == DRIVE_REMOTE else "local drive", drive + "\\")


def filesystem_of(path: str) -> PathFilesystem:
    """Where ``path`` lives on this computer (see the module docstring)."""
    if sys.platform == "win32":
        return _windows(path)
    resolved = os.path.realpath(path)
    if sys.platform == "darwin":
        try:
            listed = subprocess.run(
                ["/sbin/mount"], capture_output=True, text=True, timeout=10, check=False
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return PathFilesystem(path, None)
        found = from_macos_mount(resolved, listed)
    else:
        try:
            found = from_mountinfo(resolved, MOUNTINFO.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            return PathFilesystem(path, None)
    return PathFilesystem(path, found.filesystem, found.mount_point)
