"""Who is connected to an smbd right now: what a restart would cut off.

Read from ``smbstatus --json`` (Samba 4.16 and later); older Samba prints only text,
which is parsed instead (``smbstatus -b`` for sessions, ``-L`` for open files). Run with
the instance's own smb.conf, since the session tables live in its lock directory, and
as root where the apply runs as root: other users see only their own sessions.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from sambatune.cancellation import CancelToken
from sambatune.errors import CommandFailed
from sambatune.remote.transport import Transport


@dataclass(frozen=True)
class SmbSession:
    pid: int
    user: str
    machine: str
    dialect: str = ""


@dataclass(frozen=True)
class OpenFile:
    pid: int
    share_path: str
    name: str


@dataclass
class ConnectedClients:
    sessions: list[SmbSession] = field(default_factory=list)
    open_files: list[OpenFile] = field(default_factory=list)
    source: str = "smbstatus --json"

    @property
    def machines(self) -> list[str]:
        return sorted({s.machine for s in self.sessions})

    def sentence(self) -> str:
        """How many clients a restart would cut off, in one line."""
        if not self.sessions:
            return "No client is connected."
        files = len(self.open_files)
        return (
            f"{len(self.sessions)} session(s) from {len(self.machines)} machine(s) "
            f"({', '.join(self.machines[:5])}{', ...' if len(self.machines) > 5 else ''})"
            f", {files} open file(s)"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "sessions": [vars(s) for s in self.sessions],
            "machines": self.machines,
            "open_files": [vars(f) for f in self.open_files],
            "source": self.source,
        }


def connected_clients(
    transport: Transport,
    config_path: str,
    *,
    sudo: bool = False,
    cancel: CancelToken | None = None,
) -> ConnectedClients:
    base = ["smbstatus", f"--configfile={config_path}"]
    result = transport.run([*base, "--json"], sudo=sudo, timeout=60, cancel=cancel)
    if result.ok and result.text.lstrip().startswith("{"):
        return parse_json(result.text)
    if result.exit_code == 127:
        raise CommandFailed(f"smbstatus is not installed on {transport.label}.", exit_code=127)
    sessions = transport.run([*base, "-b"], sudo=sudo, timeout=60, cancel=cancel)
    sessions.check("smbstatus -b")
    files = transport.run([*base, "-L"], sudo=sudo, timeout=60, cancel=cancel)
    return ConnectedClients(
        parse_sessions_text(sessions.text),
        parse_locks_text(files.text) if files.ok else [],
        source="smbstatus -b / -L",
    )


def parse_json(text: str) -> ConnectedClients:
    data = json.loads(text)
    sessions = [
        SmbSession(
            pid=_int(s.get("server_id", {}).get("pid")),
            user=str(s.get("username") or ""),
            machine=str(s.get("remote_machine") or s.get("hostname") or ""),
            dialect=str(s.get("session_dialect") or ""),
        )
        for s in (data.get("sessions") or {}).values()
    ]
    files = []
    for entry in (data.get("open_files") or {}).values():
        for one in (entry.get("opens") or {}).values():
            files.append(
                OpenFile(
                    pid=_int(one.get("server_id", {}).get("pid")),
                    share_path=str(entry.get("service_path") or ""),
                    name=str(entry.get("filename") or ""),
                )
            )
    return ConnectedClients(sessions, files)


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


# "730     nobody       nogroup      127.0.0.1 (ipv4:127.0.0.1:50986)   SMB3_11  -  -"
_SESSION_LINE = re.compile(r"^(\d+)\s+(\S+)\s+(\S+)\s+(\S+)(?:\s+\([^)]*\))?\s*(\S*)")


def parse_sessions_text(text: str) -> list[SmbSession]:
    """Rows of plain ``smbstatus -b``: PID, user, group, machine, then the dialect."""
    found = []
    for line in text.splitlines():
        match = _SESSION_LINE.match(line.strip())
        if match:
            pid, user, _group, machine, dialect = match.groups()
            found.append(SmbSession(int(pid), user, machine, dialect))
    return found


def parse_locks_text(text: str) -> list[OpenFile]:
    """Rows of plain ``smbstatus -L``: PID, user, deny mode, access, R/W, oplock, share
    path, name, time. Paths with spaces cannot be told apart from the name there, so
    the share path is the one column that is kept whole when it has no space."""
    found = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 9 and fields[0].isdigit() and fields[3].startswith("0x"):
            found.append(OpenFile(int(fields[0]), fields[6], " ".join(fields[7:-5]) or fields[7]))
    return found
