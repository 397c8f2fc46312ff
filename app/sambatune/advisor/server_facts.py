"""What the advisor needs to know about the server machine, taken from the survey."""

from __future__ import annotations

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

    @classmethod
    def from_survey(cls, survey: Survey) -> ServerFacts:
        filesystems = {}
        for share in survey.shares:
            fs = share.get("filesystem") or {}
            if fs.get("exists") and fs.get("fstype"):
                filesystems[str(share.get("name", "")).lower()] = str(fs["fstype"])
        return cls(
            samba_version=survey.samba_version,
            os_system=(survey.data.get("os") or {}).get("system"),
            nics=tuple(Nic.from_survey(n) for n in survey.nics),
            tcp={str(k): str(v) for k, v in (survey.data.get("tcp") or {}).items()},
            share_filesystems=filesystems,
            label=survey.target,
            client_audit=survey.client_audit,
        )

    @property
    def active_physical_nics(self) -> list[Nic]:
        return [n for n in self.nics if n.physical and n.up]

    @property
    def is_linux(self) -> bool:
        return (self.os_system or "").lower() == "linux"

    def tcp_buffer_ceiling(self, name: str) -> int | None:
        """The third number of ``net.ipv4.tcp_rmem`` / ``tcp_wmem``: the auto-tuning ceiling."""
        parts = self.tcp.get(name, "").split()
        return int(parts[2]) if len(parts) == 3 and parts[2].isdigit() else None
