"""When smbd puts a changed parameter into effect, and who notices.

``smbcontrol smbd reload-config`` makes the parent smbd and every per-client child
re-read smb.conf. That is enough for most parameters, but not for all:

- RESTART: the parent opens its listening sockets once, at start, and a reload never
  touches them. A new port, a new address to bind, or a socket option taken away
  (accepted sockets inherit the listening socket's buffers) waits for a restart, and a
  restart ends every client's connection.
- NEW_CONNECTIONS: settled once per connection (the negotiate of dialect, signing,
  sizes and credits) or per tree connect (the share's path, its VFS modules). After a
  reload, clients that connect afterwards get the new value; connected ones keep the
  old one until they reconnect.
- RELOAD: everything else; each smbd process uses the new value once it re-read the
  file, open sessions included.

tests/test_activation.py proves each class against a real smbd for the parameters the
tables name as tested (``TESTED``); the others follow from where Samba reads them
(source3/smbd/negprot.c, smb2_negprot.c, smb2_tcon.c, server.c).
"""

from __future__ import annotations

from dataclasses import dataclass

from sambatune.conf.testparm_output import parse_dump
from sambatune.states import TextState


class Activation(TextState):
    RELOAD = "reload"
    NEW_CONNECTIONS = "new connections"
    RESTART = "restart"


_LISTENING = "smbd opens its listening sockets once, when it starts; a reload keeps them"

RESTART_PARAMETERS: dict[str, str] = {
    "smb ports": _LISTENING,
    "bind interfaces only": _LISTENING,
    # With "bind interfaces only" the interface list decides the addresses listened on.
    "interfaces": _LISTENING,
    "server smb transports": _LISTENING,  # Samba 4.23 and later (WHATSNEW 4.23.0)
    # 4.25: how handle state is stored is chosen once, when smbd opens its databases
    # (source3/locking/share_mode_lock.c locking_init_internal, smbXsrv_open.c).
    "persistent handles": "smbd chooses how it keeps handle state once, when it starts",
}

NEW_CONNECTION_PARAMETERS: dict[str, str] = {
    "server min protocol": "the dialect is agreed once, when a client connects",
    "server max protocol": "the dialect is agreed once, when a client connects",
    "server signing": "signing is agreed once, when a client connects",
    "server smb3 signing algorithms": "signing is agreed once, when a client connects",
    "server smb3 encryption algorithms": "the cipher is agreed once, when a client connects",
    "smb2 max read": "the largest read is agreed once, when a client connects",
    "smb2 max write": "the largest write is agreed once, when a client connects",
    "smb2 max trans": "the largest transaction is agreed once, when a client connects",
    "smb2 max credits": "each connection's credit limit is set when it starts",
    "server multi channel support": "multichannel is agreed once, when a client connects",
    "socket options": "smbd sets them on each new connection's socket",
    "path": "a client's connection to a share keeps the directory it started with",
    "vfs objects": "the VFS modules are loaded when a client connects to the share",
    # Newer releases (source3/smbd/smb2_negprot.c, smb2_tcon.c, smb2_service.c):
    "smb3 directory leases": "the directory-leasing capability is agreed once, when a client connects",
    "smb3 unix extensions": "the POSIX extensions are offered once, when a client connects",
    "server smb encryption over quic": "trust in a QUIC connection is agreed once, when a client connects",
    "server addresses": "the address check runs when a client connects to the share",
    "continuous availability": "the share's capabilities are set when a client connects to it",
    "smbd profiling share": "the share's counters are attached when a client connects to it",
}

#: Parameters whose class tests/test_activation.py checks against a real smbd.
TESTED = frozenset(
    {
        "smb ports",
        "bind interfaces only",
        "interfaces",
        "socket options",
        "server min protocol",
        "server max protocol",
        "server signing",
        "server smb3 signing algorithms",
        "server smb3 encryption algorithms",
        "smb2 max read",
        "smb2 max write",
        "smb2 max trans",
        "smb2 max credits",
        "server multi channel support",
        "path",
        "vfs objects",
    }
)


@dataclass(frozen=True)
class ParameterChange:
    section: str
    name: str
    old: str | None  # None: not set (Samba's default)
    new: str | None
    activation: Activation
    why: str

    def describe(self) -> str:
        where = "" if self.section == "global" else f"[{self.section}] "
        return f"{where}{self.name}: {_shown(self.old)} -> {_shown(self.new)}"

    def to_json(self) -> dict[str, str | None]:
        return {
            "section": self.section,
            "parameter": self.name,
            "old": self.old,
            "new": self.new,
            "activation": self.activation.value,
            "why": self.why,
        }


def _shown(value: str | None) -> str:
    return "(default)" if value is None else (value or '""')


def _socket_options(value: str | None) -> set[str]:
    # Not set means Samba's default, TCP_NODELAY.
    text = "TCP_NODELAY" if value is None else value
    return {option.split("=", 1)[0].upper() for option in text.split()}


def classify_parameter(
    section: str, name: str, old: str | None, new: str | None, binds_interfaces: bool
) -> tuple[Activation, str]:
    """When smbd applies one parameter's change from ``old`` to ``new`` (None: unset)."""
    if section == "global":
        if name == "interfaces" and not binds_interfaces:
            return Activation.RELOAD, "without bind interfaces only it names local networks"
        if name == "socket options":
            # setsockopt on each accepted socket overrides an inherited value, but an
            # option taken away stays as the listening socket has it.
            taken_away = _socket_options(old) - _socket_options(new)
            if taken_away:
                return Activation.RESTART, (
                    f"{', '.join(sorted(taken_away))} stays set on the listening socket, and "
                    "every new connection inherits it, until smbd restarts"
                )
        if name in RESTART_PARAMETERS:
            return Activation.RESTART, RESTART_PARAMETERS[name]
    if name in NEW_CONNECTION_PARAMETERS:
        return Activation.NEW_CONNECTIONS, NEW_CONNECTION_PARAMETERS[name]
    return Activation.RELOAD, "every smbd process re-reads it on reload"


def classify_changes(old_dump: str, new_dump: str) -> list[ParameterChange]:
    """Every parameter that differs between two ``testparm -s`` dumps, classified.

    A share added or removed counts as RELOAD (smbd offers or stops offering it once
    it re-read the file); its parameters are not listed one by one.
    """
    old_sections = {name.lower(): params for name, params in parse_dump(old_dump)}
    new_sections = {name.lower(): params for name, params in parse_dump(new_dump)}
    old_global = old_sections.get("global", {})
    new_global = new_sections.get("global", {})
    binds = any(g.get("bind interfaces only", "No") == "Yes" for g in (old_global, new_global))
    changes: list[ParameterChange] = []
    for section in dict.fromkeys([*old_sections, *new_sections]):
        if section not in old_sections or section not in new_sections:
            state = "added" if section in new_sections else "removed"
            changes.append(
                ParameterChange(
                    section,
                    f"share {state}",
                    None,
                    None,
                    Activation.RELOAD,
                    "smbd re-reads its list of shares on reload",
                )
            )
            continue
        old, new = old_sections[section], new_sections[section]
        for name in dict.fromkeys([*old, *new]):
            if old.get(name) == new.get(name):
                continue
            activation, why = classify_parameter(section, name, old.get(name), new.get(name), binds)
            changes.append(ParameterChange(section, name, old.get(name), new.get(name), activation, why))
    return changes


def needs_restart(changes: list[ParameterChange]) -> list[ParameterChange]:
    return [c for c in changes if c.activation is Activation.RESTART]
