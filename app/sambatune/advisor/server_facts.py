"""What the advisor needs to know about the server machine, taken from the survey."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sambatune.remote.client_audit import ClientAudit
from sambatune.remote.survey import Survey


@dataclass(frozen=True)
class Nic:
    name: str
    up: bool
    physical: bool
    speed_mbit: int | None = None
    mtu: int | None = None
    duplex: str | None = None
    addresses: tuple[str, ...] = ()

    @classmethod
    def from_survey(cls, data: Mapping[str, Any]) -> Nic:
        speed = data.get("speed_mbit")
        mtu = data.get("mtu")
        state = data.get("state")
        return cls(
            name=str(data.get("name", "?")),
            up=state == "up" if state else bool(data.get("up")),
            physical=not data.get("loopback") and not data.get("virtual"),
            speed_mbit=int(speed) if isinstance(speed, (int, float)) and speed > 0 else None,
            mtu=int(mtu) if isinstance(mtu, (int, float)) and mtu > 0 else None,
            duplex=data.get("duplex"),
            addresses=tuple(str(a) for a in data.get("addresses") or ()),
        )


@dataclass(frozen=True)
class ServerFacts:
    samba_version: tuple[int, int, int] | None = None
    #: ``platform.system()`` of the server: "Linux", "FreeBSD", ...
    os_system: str | None = None
    nics: tuple[Nic, ...] = ()
    #: The TCP sysctls the survey reads, e.g. ``net.ipv4.tcp_rmem``.
    tcp: Mapping[str, str] = field(default_factory=dict)
    #: Share name (lower case) -> file system type of its path, where the survey saw it.
    share_filesystems: Mapping[str, str] = field(default_factory=dict)
    label: str = ""
    #: Who was connected to the managed smbd at survey time, and how; None when not read.
    client_audit: ClientAudit | None = None
    #: ``platform.release()`` of the server (``uname -r``), e.g. "6.1.0-18-amd64".
    kernel_release: str | None = None
    #: Linux's ``kernel.io_uring_disabled`` (0 allowed, 1 privileged only, 2 refused);
    #: None where the kernel has no such switch (before 6.6) or it was not read.
    io_uring_disabled: int | None = None
    #: The names ``vfs objects`` can use on this smbd: built in, or a .so in its modules
    #: directory; None when the survey could not list them (unknown is not missing).
    vfs_modules: tuple[str, ...] | None = None
    #: Where smbd loads VFS modules from (MODULESDIR/vfs of ``smbd -b``).
    vfs_modules_dir: str | None = None

    @classmethod
    def from_survey(cls, survey: Survey) -> ServerFacts:
        filesystems = {}
        for share in survey.shares:
            fs = share.get("filesystem") or {}
            if fs.get("exists") and fs.get("fstype"):
                filesystems[str(share.get("name", "")).lower()] = str(fs["fstype"])
        os_data = survey.data.get("os") or {}
        modules = survey.samba.get("vfs_modules")
        disabled = os_data.get("io_uring_disabled")
        return cls(
            samba_version=survey.samba_version,
            os_system=os_data.get("system"),
            nics=tuple(Nic.from_survey(n) for n in survey.nics),
            tcp={str(k): str(v) for k, v in (survey.data.get("tcp") or {}).items()},
            share_filesystems=filesystems,
            label=survey.target,
            client_audit=survey.client_audit,
            kernel_release=str(os_data["kernel"]) if os_data.get("kernel") else None,
            io_uring_disabled=disabled if isinstance(disabled, int) else None,
            vfs_modules=tuple(str(m) for m in modules) if isinstance(modules, list) else None,
            vfs_modules_dir=survey.samba.get("vfs_modules_dir") or None,
        )

    @property
    def active_physical_nics(self) -> list[Nic]:
        return [n for n in self.nics if n.physical and n.up]

    @property
    def is_linux(self) -> bool:
        return (self.os_system or "").lower() == "linux"

    @property
    def kernel_version(self) -> tuple[int, int, int] | None:
        """The upstream version a kernel release starts with ("5.4.0-150-generic" is 5.4.0).

        Distributions number their own patch levels after it, so only the first three
        numbers mean the same on every system."""
        match = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", self.kernel_release or "")
        if match is None:
            return None
        return int(match[1]), int(match[2]), int(match[3] or 0)

    def has_vfs_module(self, name: str) -> bool | None:
        """Whether smbd can load the VFS module ``name``; None when the survey could not tell."""
        return None if self.vfs_modules is None else name in self.vfs_modules

    def tcp_buffer_ceiling(self, name: str) -> int | None:
        """The third number of ``net.ipv4.tcp_rmem`` / ``tcp_wmem``: the auto-tuning ceiling."""
        parts = self.tcp.get(name, "").split()
        return int(parts[2]) if len(parts) == 3 and parts[2].isdigit() else None
