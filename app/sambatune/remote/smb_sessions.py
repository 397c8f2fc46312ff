"""Who is connected to an smbd right now, and how: what a restart would cut off, and
what the client audit (:mod:`sambatune.remote.client_audit`) judges.

Read from ``smbstatus --json`` (Samba 4.16 and later); older Samba prints only text,
which is parsed instead (``smbstatus -b`` for sessions, ``-L`` for open files). Run with
the instance's own smb.conf, since the session tables live in its lock directory, and
as root where the apply runs as root: other users see only their own sessions.

What smbstatus prints per session (4.17, checked against a real smbd): user, group,
``remote_machine`` (name or address), ``hostname`` (``ipv4:ADDR:PORT``), the dialect,
and ``encryption``/``signing`` as ``{"cipher", "degree"}``, degree ``none``,
``partial`` (some packets: for signing, a client that does not sign still has its
session setup signed), ``full`` (all) or, in later releases, ``anonymous``. An
encryption the client asked for and the server did not require shows as ``partial``
(seen with smbclient --client-protection=encrypt). The
text table of ``-b`` carries the same, a partial degree written ``partial(CIPHER)``.
Neither says whether signing was *required*: that is the server's ``server signing``
and the client's own policy. Neither counts channels either (TrueNAS' fork adds
``num_channels``, read when present), so the channels are the TCP connections the
session's smbd process holds on the SMB ports (``ss``): Samba hands every channel of a
session to the one process that owns it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from sambatune.cancellation import CancelToken
from sambatune.errors import CommandFailed
from sambatune.json_fields import StoredFields
from sambatune.remote.transport import CommandResult, Transport

#: Dialect names smbstatus prints for SMB1 (the NT1 family and older).
SMB1_DIALECTS = ("NT1", "LANMAN", "CORE", "COREPLUS", "SMB1")
#: What smbstatus prints for "no cipher".
NO_CIPHER = "-"


@dataclass(frozen=True)
class SmbSession(StoredFields):
    pid: int
    user: str
    machine: str
    dialect: str = ""
    #: The client's address and port, ``ipv4:192.0.2.7:50986`` as smbstatus prints it.
    address: str = ""
    #: The signing algorithm ("AES-128-GMAC") or "" when nothing is signed.
    signing: str = ""
    #: none | partial | full | anonymous (smbstatus' degree); "" when not printed.
    signing_degree: str = ""
    #: The encryption cipher ("AES-128-GCM") or "" when nothing is encrypted.
    encryption: str = ""
    encryption_degree: str = ""
    #: TCP connections (SMB3 channels) of this session; None when they could not be counted.
    channels: int | None = None

    @property
    def smb1(self) -> bool:
        return self.dialect.upper().startswith(SMB1_DIALECTS)

    @property
    def smb2(self) -> bool:
        """SMB 2.0.2 or 2.1: no multichannel, no AES signing, no encryption."""
        return self.dialect.upper().startswith("SMB2")

    @property
    def unsigned(self) -> bool:
        """Nothing protects this session's requests: neither signed nor encrypted
        (encryption also authenticates every packet). A *partial* signing degree counts
        as unsigned: Samba 4.17 prints it for a client that turned signing off, whose
        session setup alone was signed (seen with smbclient --client-protection=off)."""
        return not self.encryption and (not self.signing or self.signing_degree == "partial")

    @property
    def flags(self) -> list[str]:
        """What the audit marks, in words."""
        marks = []
        if self.smb1:
            marks.append("SMB1")
        elif self.smb2:
            marks.append("SMB 2.x")
        if self.unsigned:
            marks.append("unsigned")
        return marks

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "flags": self.flags}


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
            "sessions": [s.to_json() for s in self.sessions],
            "machines": self.machines,
            "open_files": [vars(f) for f in self.open_files],
            "source": self.source,
        }


#: The most smbstatus may print: some 20,000 sessions with their open files. A server
#: printing more is stopped and the audit says so; its output is held in memory here.
SMBSTATUS_OUTPUT_LIMIT = 32 * 1024 * 1024


def connected_clients(
    transport: Transport,
    config_path: str,
    *,
    sudo: bool = False,
    cancel: CancelToken | None = None,
) -> ConnectedClients:
    base = ["smbstatus", f"--configfile={config_path}"]

    def smbstatus(*flags: str) -> CommandResult:
        return transport.run(
            [*base, *flags], sudo=sudo, timeout=60, cancel=cancel, max_output=SMBSTATUS_OUTPUT_LIMIT
        )

    result = smbstatus("--json")
    if result.ok and result.stdout.lstrip().startswith(b"{"):
        try:
            return parse_json(result.stdout)
        except UnreadableAnswer as error:
            raise CommandFailed(f"smbstatus --json on {transport.label} printed {error}.") from error
    if result.exit_code == 127:
        raise CommandFailed(f"smbstatus is not installed on {transport.label}.", exit_code=127)
    sessions = smbstatus("-b")
    sessions.check("smbstatus -b")
    files = smbstatus("-L")
    return ConnectedClients(
        parse_sessions_text(sessions.text),
        parse_locks_text(files.text) if files.ok else [],
        source="smbstatus -b / -L",
    )


def shares_in_use(
    transport: Transport, config_path: str, *, sudo: bool = False, cancel: CancelToken | None = None
) -> list[str]:
    """The shares clients are connected to now (``smbstatus --shares``): a reload that drops
    one of them cuts those clients off. The text form: every Samba from 4.13 prints it the
    same way, and those before 4.16 have no JSON."""
    result = transport.run(
        ["smbstatus", f"--configfile={config_path}", "--shares"],
        sudo=sudo,
        timeout=60,
        cancel=cancel,
        max_output=SMBSTATUS_OUTPUT_LIMIT,
    )
    return parse_shares_text(result.text) if result.ok else []


#: A row of the share table: the service (which may hold blanks), then the pid
#: (``1234``, ``1234.5`` with a task id, ``0:1234`` in a cluster) and the machine.
_SHARE_ROW = re.compile(r"^(?P<service>\S.*?)\s+(?:\d+:)?\d+(?:\.\d+)?\s+\S")


def parse_shares_text(text: str) -> list[str]:
    """Service names of ``smbstatus --shares``' table (IPC$ left out), in order, once each."""
    names: list[str] = []
    in_table = False
    for line in text.splitlines():
        if line.startswith("----"):
            in_table = True
            continue
        match = _SHARE_ROW.match(line) if in_table else None
        if match and match["service"].upper() != "IPC$":
            names.append(match["service"])
    return list(dict.fromkeys(names))


class UnreadableAnswer(ValueError):
    """smbstatus' JSON is not the shape Samba prints (its text says what it is)."""


def parse_json(raw: str | bytes) -> ConnectedClients:
    """``smbstatus --json``. A server's answer is data of any shape: entries that are
    not what Samba prints are skipped; a whole answer that is not is refused."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as error:  # RecursionError: "[[[[..." past Python's limit
        raise UnreadableAnswer("text that is not JSON") from error
    if not isinstance(data, dict):
        raise UnreadableAnswer(f"a JSON {type(data).__name__}, not an object")
    sessions = []
    for entry in _entries(data, "sessions"):
        signing, signing_degree = _crypto(entry.get("signing"))
        encryption, encryption_degree = _crypto(entry.get("encryption"))
        channels = entry.get("num_channels")
        sessions.append(
            SmbSession(
                pid=_int(_mapping(entry.get("server_id")).get("pid")),
                user=_text(entry.get("username")),
                machine=_text(entry.get("remote_machine")) or _text(entry.get("hostname")),
                dialect=_text(entry.get("session_dialect")),
                address=_text(entry.get("hostname")),
                signing=signing,
                signing_degree=signing_degree,
                encryption=encryption,
                encryption_degree=encryption_degree,
                channels=_int(channels) if channels is not None else None,
            )
        )
    files = []
    for entry in _entries(data, "open_files"):
        for one in _entries(entry, "opens"):
            files.append(
                OpenFile(
                    pid=_int(_mapping(one.get("server_id")).get("pid")),
                    share_path=_text(entry.get("service_path")),
                    name=_text(entry.get("filename")),
                )
            )
    return ConnectedClients(sessions, files)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _entries(data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The objects under ``key`` (smbstatus keys them by id); anything else is skipped."""
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, dict):
        raise UnreadableAnswer(f'"{key}" as a JSON {type(value).__name__}, not an object')
    return [entry for entry in value.values() if isinstance(entry, dict)]


def _text(value: Any) -> str:
    """A name from the answer: text, or nothing (a number, a list or an object is not a name)."""
    return value if isinstance(value, str) else ""


def _crypto(value: Any) -> tuple[str, str]:
    """``{"cipher": "AES-128-GMAC", "degree": "full"}`` -> ("AES-128-GMAC", "full");
    the cipher "-" (nothing) becomes ""."""
    if not isinstance(value, dict):
        return "", ""
    cipher = _text(value.get("cipher"))
    return ("" if cipher == NO_CIPHER else cipher), _text(value.get("degree"))


def _text_crypto(value: str) -> tuple[str, str]:
    """The text table's ``-``, ``AES-128-GMAC`` or ``partial(AES-128-GCM)`` (also
    ``anonymous(...)`` in later releases) as (cipher, degree)."""
    if not value or value == NO_CIPHER:
        return "", "none" if value else ""
    match = re.fullmatch(r"(\w+)\((.*)\)", value)
    if match:
        return match.group(2), match.group(1)
    return value, "full"


def _int(value: Any) -> int:
    """A pid or a count: a whole number that fits, else 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, str) and not re.fullmatch(r"[0-9]{1,10}", value):
        return 0
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: 1e999, Infinity
        return 0
    return number if 0 <= number < 1 << 32 else 0


# "730  nobody  nogroup  127.0.0.1 (ipv4:127.0.0.1:50986)  SMB3_11  partial(AES-128-GCM)  AES-128-GMAC"
# Samba before 4.12 has no Encryption and Signing columns; the groups are then empty.
_SESSION_LINE = re.compile(
    r"^([0-9]{1,10})\s+(\S+)\s+(\S+)\s+(\S+)(?:\s+\(([^)]*)\))?\s*(\S*)\s*(\S*)\s*(\S*)"
)


def parse_sessions_text(text: str) -> list[SmbSession]:
    """Rows of plain ``smbstatus -b``: PID, user, group, machine (address), the dialect,
    then encryption and signing where the release prints them. A user or group name
    with a space cannot be told apart from the next column there."""
    found = []
    for line in text.splitlines():
        match = _SESSION_LINE.match(line.strip())
        if match:
            pid, user, _group, machine, address, dialect, encrypted, signed = match.groups()
            encryption, encryption_degree = _text_crypto(encrypted)
            signing, signing_degree = _text_crypto(signed)
            found.append(
                SmbSession(
                    int(pid),
                    user,
                    machine,
                    dialect,
                    address=address or "",
                    signing=signing,
                    signing_degree=signing_degree,
                    encryption=encryption,
                    encryption_degree=encryption_degree,
                )
            )
    return found


# "0  0  127.0.0.1:445  127.0.0.1:37598 users:(("smbd",pid=26041,fd=28))"
_SOCKET_OWNER = re.compile(r"pid=([0-9]{1,10})\b")


def count_channels(
    transport: Transport,
    ports: list[int],
    *,
    sudo: bool = False,
    cancel: CancelToken | None = None,
) -> dict[int, int] | None:
    """Established TCP connections on the SMB ``ports`` per smbd process id, from
    ``ss``: one per channel, since Samba passes a session's every channel to the
    process that owns it. None when ``ss`` is missing or does not name the owners
    (other users' sockets need root)."""
    if not ports:
        return None
    ports_filter = " or ".join(f"sport = :{port}" for port in ports)
    result = transport.run(
        ["ss", "-Htnp", "state", "established", f"( {ports_filter} )"],
        sudo=sudo,
        timeout=30,
        cancel=cancel,
    )
    if not result.ok:
        return None
    counts: dict[int, int] = {}
    for line in result.text.splitlines():
        match = _SOCKET_OWNER.search(line)
        if match:
            pid = int(match.group(1))
            counts[pid] = counts.get(pid, 0) + 1
    return counts


def parse_locks_text(text: str) -> list[OpenFile]:
    """Rows of plain ``smbstatus -L``: PID, user, deny mode, access, R/W, oplock, share
    path, name, time. Paths with spaces cannot be told apart from the name there, so
    the share path is the one column that is kept whole when it has no space."""
    found = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 9 and re.fullmatch(r"[0-9]{1,10}", fields[0]) and fields[3].startswith("0x"):
            found.append(OpenFile(int(fields[0]), fields[6], " ".join(fields[7:-5]) or fields[7]))
    return found
