"""What a benchmark session is measured against: the server as surveyed and its live smb.conf.

Every session keeps the exact smb.conf bytes it ran with, so two sessions can later be
compared knowing what changed between them (the method allows ONE change at a time).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sambatune.cancellation import CancelToken
from sambatune.errors import InvalidInput, SambaTuneError
from sambatune.remote.agents import AgentEvent
from sambatune.remote.config_location import several_smbd
from sambatune.remote.samba_ops import serving_address
from sambatune.remote.survey import Survey, run_survey
from sambatune.remote.transport import Transport

LOOPBACK = "127.0.0.1"


@dataclass
class BenchContext:
    #: Where this computer reaches the server for the benchmarks' own TCP connections.
    data_address: str
    survey: Survey | None = None
    smb_conf_path: str | None = None
    smb_conf: bytes | None = None
    link_speed_bits: int | None = None
    notes: list[str] = field(default_factory=list)

    @classmethod
    def bare(cls, transport: Transport, link_speed_bits: int | None = None) -> BenchContext:
        """No survey: enough to run a test, with nothing recorded about the server."""
        return cls(data_address=data_address(transport), link_speed_bits=link_speed_bits)

    def share(self, name: str) -> dict[str, Any]:
        """The surveyed share called ``name`` (case-insensitive, as Samba matches them)."""
        shares = self.survey.shares if self.survey else []
        for share in shares:
            if str(share.get("name", "")).lower() == name.lower():
                return share
        known = ", ".join(str(s.get("name")) for s in shares) or "none found"
        raise InvalidInput(
            f"The server has no share called '{name}'.",
            details=f"Shares in {self.smb_conf_path or 'smb.conf'}: {known}.",
        )

    def share_path(self, name: str) -> str:
        path = str(self.share(name).get("path") or "")
        if not path or "%" in path:
            raise InvalidInput(
                f"The path of share '{name}' is not a plain directory ({path or 'none'}).",
                details="Give the directory on the server with --directory.",
            )
        return path

    def smb_port(self) -> int:
        """smbd's port for this smb.conf: the smbd running with it, else its "smb ports"."""
        if self.survey is None:
            return 445
        if self.survey.ambiguous and not self.smb_conf_path:
            # 445 could well be another instance's port: never measure the wrong smbd.
            raise several_smbd(
                "this server", self.survey.config_candidates, "with --config-path, or give the SMB port"
            )
        for instance in self.survey.samba.get("instances") or []:
            if self.smb_conf_path and instance.get("config") == self.smb_conf_path:
                ports = [int(p["port"]) for p in instance.get("listening") or []]
                if ports:
                    return 445 if 445 in ports else ports[0]
        return self.survey.smb_port() or 445

    def smb_address(self) -> str:
        """Where the server's own SMB client reaches this smbd: an address it listens on
        (the survey's listening sockets), loopback when unknown."""
        addresses = self._listening_addresses()
        return serving_address(addresses) if addresses else LOOPBACK

    def client_smb_address(self) -> str:
        """Where this computer reaches this smbd: the address SSH reached, when smbd
        listens on every address or on that one; else an address smbd listens on (with
        bind interfaces only it may serve SMB on another address than SSH's)."""
        addresses = self._listening_addresses()
        if not addresses or self.data_address in addresses or {"0.0.0.0", "::"} & set(addresses):
            return self.data_address
        if self.data_address.startswith("127.") or self.data_address == "::1":
            # This computer is the server (or reaches it through a tunnel): any of them.
            return serving_address(addresses).strip("[]")
        outside = [a for a in addresses if not a.startswith("127.") and a != "::1"]
        return (outside or addresses)[0]

    def _listening_addresses(self) -> list[str]:
        """The addresses this smbd listens on at its SMB port (none when unknown)."""
        port = self.smb_port()
        for instance in self._instances():
            return [str(p["address"]) for p in instance.get("listening") or [] if int(p["port"]) == port]
        return []

    def _instances(self) -> list[dict[str, Any]]:
        """The smbd serving this smb.conf, first; the managed one when no path was given."""
        if self.survey is None:
            return []
        instances = self.survey.instances
        if self.smb_conf_path:
            return [i for i in instances if i.get("config") == self.smb_conf_path]
        return [i for i in instances if i.get("managed")]

    def tcp_setting(self, name: str) -> str | None:
        tcp = (self.survey.data.get("tcp") or {}) if self.survey else {}
        value = tcp.get(name)
        return str(value) if value is not None else None


def data_address(transport: Transport) -> str:
    """The server's address as this computer reached it (loopback for this computer)."""
    peer = getattr(transport, "peer_address", None)
    return str(peer()) if callable(peer) else LOOPBACK


def collect_context(
    transport: Transport,
    *,
    config_path: str | None = None,
    link_speed_bits: int | None = None,
    survey: Survey | None = None,
    cancel: CancelToken | None = None,
    on_event: Callable[[AgentEvent], None] | None = None,
) -> BenchContext:
    """Survey the server (unless ``survey`` is a fresh one) and read its live smb.conf bytes."""
    if survey is None:
        # The sessions connected now are no part of a benchmark's context.
        survey = run_survey(
            transport, config_path=config_path, cancel=cancel, on_event=on_event, audit_clients=False
        )
    context = BenchContext(data_address=data_address(transport), survey=survey)
    context.link_speed_bits = link_speed_bits or survey.link_speed_bits(context.data_address)
    context.smb_conf_path = config_path or survey.config_path
    if context.smb_conf_path:
        context.smb_conf = _read_config(transport, context.smb_conf_path, context.notes)
    else:
        context.notes.append("No smb.conf was found, so none is recorded with this session.")
    return context


def _read_config(transport: Transport, path: str, notes: list[str]) -> bytes | None:
    try:
        return transport.read_file(path)
    except SambaTuneError as first:
        try:
            transport.check_sudo()  # raises when root needs a password nobody gave
            return transport.read_file(path, sudo=True)
        except SambaTuneError:
            pass
        notes.append(f"{path} could not be read ({first.message}); it is not recorded.")
        return None
