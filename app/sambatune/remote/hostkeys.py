"""Host key checking as OpenSSH does it: known keys pass, unknown keys ask, changed keys stop.

The rules follow OpenSSH's hostfile.c and match.c: a line applies to a host when its
host field is a hashed ``|1|`` entry of that name, or a comma list of ``*``/``?``
patterns with at least one match and no negated (``!``) match. Every line that applies
counts, whatever its key type: the server's key must be one of them, and a key marked
``@revoked`` is refused even when it is also listed as good. ``@cert-authority`` lines
vouch only for host certificates, which paramiko does not negotiate, so they never make
a plain key known; they are reported so that a person can be told.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hashlib
import hmac
import logging
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import paramiko
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization

from sambatune.remote.sshconfig import SshEndpoint

log = logging.getLogger(__name__)

# What ssh-keygen -l prints in brackets for each key algorithm.
_KEYGEN_TYPE = {
    "ssh-ed25519": "ED25519",
    "ssh-rsa": "RSA",
    "ecdsa-sha2-nistp256": "ECDSA",
    "ecdsa-sha2-nistp384": "ECDSA",
    "ecdsa-sha2-nistp521": "ECDSA",
    "ssh-dss": "DSA",
    "sk-ssh-ed25519@openssh.com": "ED25519-SK",
    "sk-ecdsa-sha2-nistp256@openssh.com": "ECDSA-SK",
}

REVOKED = "@revoked"
CERT_AUTHORITY = "@cert-authority"

# match.c gives up on a sub-pattern this long (its buffer is 1024 bytes).
_MAX_SUBPATTERN = 1023


def _fingerprint(blob: bytes) -> str:
    """The fingerprint of a known_hosts line's key blob. paramiko computes it only for a
    key it can load, and a line may hold a type it cannot (sk-ecdsa, say), which ssh
    still names by fingerprint when it refuses or warns."""
    digest = hashlib.sha256(blob).digest()
    return "SHA256:" + base64.b64encode(digest).decode("ascii").rstrip("=")


def sha256_fingerprint(key: paramiko.PKey) -> str:
    """``SHA256:...`` exactly as ``ssh-keygen -lf`` and ``ssh`` print it (paramiko's own)."""
    return key.fingerprint


def key_type_label(key: paramiko.PKey) -> str:
    return _KEYGEN_TYPE.get(key.get_name(), key.get_name())


@dataclass(frozen=True)
class HostKeyQuestion:
    """What the user must decide about a server key we have never seen."""

    host: str  # as stored in known_hosts, e.g. "[127.0.0.1]:2222"
    key_type: str  # "ED25519"
    bits: int
    fingerprint: str  # "SHA256:..."
    note: str = ""  # something the known_hosts files say that bears on the decision

    def describe(self) -> str:
        text = (
            f"The authenticity of host '{self.host}' can't be established.\n"
            f"{self.key_type} key fingerprint is {self.fingerprint}."
        )
        if self.note:
            text += "\n" + self.note
        return text

    def keygen_line(self) -> str:
        """The same line ``ssh-keygen -lf`` prints for this key."""
        return f"{self.bits} {self.fingerprint} {self.host} ({self.key_type})"


@dataclass(frozen=True)
class KnownKey:
    """One known_hosts line that applies to the host being checked."""

    path: Path
    line_number: int
    hosts: str  # the line's host field as written: "files1,10.0.0.5", "*.example.org", "|1|..."
    key_type: str  # "ssh-ed25519"
    blob: bytes  # the public key in SSH wire format
    marker: str = ""  # "", REVOKED or CERT_AUTHORITY

    def is_key(self, key: paramiko.PKey) -> bool:
        return self.blob == key.asbytes()

    @property
    def fingerprint(self) -> str:
        return _fingerprint(self.blob)

    @property
    def type_label(self) -> str:
        return _KEYGEN_TYPE.get(self.key_type, self.key_type)

    @property
    def covers_other_hosts(self) -> bool:
        """True for a pattern or a list of names: removing the line affects more than one host."""
        return not self.hosts.startswith("|") and any(c in self.hosts for c in "*?!,")

    @property
    def where(self) -> str:
        return f"{self.path}, line {self.line_number}"


class HostKeyStatus(enum.Enum):
    KNOWN = "known"  # the server's key is on record for this host
    NEW = "new"  # no key at all is on record for this host
    CHANGED = "changed"  # keys are on record for this host, and the server's is not one of them
    REVOKED = "revoked"  # the server's key is marked @revoked


@dataclass(frozen=True)
class HostKeyCheck:
    status: HostKeyStatus
    #: The line that decided: the matching key, the revocation, or (CHANGED) the key on
    #: record, preferring one of the server key's type.
    line: KnownKey | None = None
    #: Every plain key on record for the host.
    known: tuple[KnownKey, ...] = ()
    #: @cert-authority lines for the host (they cannot vouch for a plain key).
    authorities: tuple[KnownKey, ...] = ()


def check_host_key(entries: list[KnownKey], key: paramiko.PKey) -> HostKeyCheck:
    """Decide about ``key`` from the known_hosts lines that apply to its host, as OpenSSH does."""
    known = tuple(e for e in entries if not e.marker)
    authorities = tuple(e for e in entries if e.marker == CERT_AUTHORITY)
    revoked = next((e for e in entries if e.marker == REVOKED and e.is_key(key)), None)
    if revoked is not None:
        return HostKeyCheck(HostKeyStatus.REVOKED, revoked, known, authorities)
    match = next((e for e in known if e.is_key(key)), None)
    if match is not None:
        return HostKeyCheck(HostKeyStatus.KNOWN, match, known, authorities)
    if known:
        same_type = [e for e in known if e.key_type == key.get_name()]
        return HostKeyCheck(HostKeyStatus.CHANGED, (same_type or list(known))[0], known, authorities)
    return HostKeyCheck(HostKeyStatus.NEW, None, known, authorities)


class HostKeyStore:
    """Known hosts read from OpenSSH's files and SambaTune's own; new keys go to ours.

    OpenSSH reads, for each host, the files its config names for that host
    (UserKnownHostsFile, GlobalKnownHostsFile, or their defaults: ~/.ssh/known_hosts
    and known_hosts2, /etc/ssh/ssh_known_hosts and ssh_known_hosts2) as one set: a key
    on record in any of them makes another key "changed", a revocation in any of them
    refuses it. :meth:`for_endpoint` is that set for one host.
    """

    def __init__(
        self, read_files: list[Path], write_file: Path, *, replaces_user_files: bool = False
    ) -> None:
        self.read_files = [Path(p) for p in read_files]
        self.write_file = Path(write_file)
        if self.write_file not in self.read_files:
            self.read_files.append(self.write_file)
        # --known-hosts FILE stands for the user's files (as ssh -o UserKnownHostsFile=FILE).
        self.replaces_user_files = replaces_user_files

    @classmethod
    def default(cls) -> HostKeyStore:
        """SambaTune's own file; each host adds the files OpenSSH reads for it."""
        from sambatune.appdirs import known_hosts_file

        return cls([], known_hosts_file())

    @classmethod
    def single_file(cls, path: Path) -> HostKeyStore:
        """``path`` instead of the user's known_hosts files (and SambaTune's own); the
        global ones still count, as for ssh -o UserKnownHostsFile=PATH."""
        return cls([path], path, replaces_user_files=True)

    def for_endpoint(self, endpoint: SshEndpoint) -> HostKeyStore:
        """The files OpenSSH reads for ``endpoint``, with this store's own."""
        user = [] if self.replaces_user_files else [Path(p) for p in endpoint.user_known_hosts]
        files = [*self.read_files, *user, *(Path(p) for p in endpoint.global_known_hosts)]
        return HostKeyStore(list(dict.fromkeys(files)), self.write_file)

    def entries(self, host: str) -> list[KnownKey]:
        """Every line that applies to ``host`` (``[host]:port`` when not on port 22), markers included."""
        # ssh lowercases the name before it looks it up, which matters for hashed entries.
        host = host.lower()
        found: list[KnownKey] = []
        for path in self.read_files:
            try:
                handle = open(path, encoding="utf-8", errors="replace")  # noqa: SIM115
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                continue
            except OSError as error:
                # ssh says so and reads the others; a key it cannot see decides nothing.
                log.warning("Cannot read the known hosts file %s: %s", path, error.strerror or error)
                continue
            with handle:
                for number, line in enumerate(handle, 1):
                    entry = parse_line(line, path, number)
                    if entry is not None and host_matches(entry.hosts, host):
                        found.append(entry)
        return found

    def check(self, host: str, key: paramiko.PKey) -> HostKeyCheck:
        return check_host_key(self.entries(host), key)

    def remember(self, host: str, key: paramiko.PKey) -> None:
        self.write_file.parent.mkdir(parents=True, exist_ok=True)
        line = f"{host.lower()} {key.get_name()} {key.get_base64()}\n"
        needs_newline = False
        if self.write_file.exists() and self.write_file.stat().st_size:
            with open(self.write_file, "rb") as handle:
                handle.seek(-1, os.SEEK_END)
                needs_newline = handle.read(1) != b"\n"
        with open(self.write_file, "a", encoding="ascii") as handle:
            if needs_newline:
                handle.write("\n")
            handle.write(line)


def parse_line(line: str, path: Path, number: int) -> KnownKey | None:
    """One known_hosts line, or None for comments and lines OpenSSH would skip as invalid."""
    # Only spaces and tabs separate fields, as in hostfile.c.
    fields = [f for f in re.split(r"[ \t]+", line.rstrip("\r\n")) if f]
    if not fields or fields[0].startswith("#"):
        return None
    marker = ""
    if fields[0].startswith("@"):
        # One marker at most, and only these two: OpenSSH ignores the line otherwise.
        if fields[0] not in (REVOKED, CERT_AUTHORITY) or (len(fields) > 1 and fields[1].startswith("@")):
            return None
        marker = fields.pop(0)
    if len(fields) < 3:
        return None
    hosts, key_type, encoded = fields[:3]
    try:
        blob = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return None
    if _blob_type(blob) != key_type:
        return None
    try:
        # Stricter than paramiko, which takes a truncated key: OpenSSH skips such lines.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # DSA keys are deprecated, still on record
            serialization.load_ssh_public_key(f"{key_type} {encoded}".encode("ascii"))
    except UnsupportedAlgorithm:
        # Still a key on record for the host, one the server's key will never equal.
        pass
    except (ValueError, UnicodeEncodeError):
        return None
    return KnownKey(path, number, hosts, key_type, blob, marker)


def _blob_type(blob: bytes) -> str:
    """The key type a wire-format public key names in its first field."""
    if len(blob) < 4:
        return ""
    length = int.from_bytes(blob[:4], "big")
    return blob[4 : 4 + length].decode("ascii", "replace") if len(blob) >= 4 + length else ""


def host_matches(hosts: str, host: str) -> bool:
    """Whether a known_hosts host field applies to ``host`` (already lowercase).

    A field starting with ``|`` is one hashed name (``|1|salt|hash``); anything else is
    a comma list of patterns, where a negated match rules the line out.
    """
    if hosts.startswith("|"):
        return _hashed_name_matches(hosts, host)
    return match_pattern_list(host, hosts) == 1


def _hashed_name_matches(hashed: str, host: str) -> bool:
    magic, _, rest = hashed.partition("|1|")
    salt_b64, _, _digest = rest.partition("|")
    if magic or not salt_b64:
        return False
    try:
        salt = base64.b64decode(salt_b64, validate=True)
    except (binascii.Error, ValueError):
        return False
    if len(salt) != hashlib.sha1().digest_size:
        return False
    digest = hmac.new(salt, host.encode(), hashlib.sha1).digest()
    expected = "|1|" + base64.b64encode(salt).decode() + "|" + base64.b64encode(digest).decode()
    return expected == hashed


def match_pattern_list(host: str, patterns: str) -> int:
    """OpenSSH's match_hostname: 1 for a match, -1 if a negated pattern matches, 0 otherwise."""
    host = host.lower()
    positive = False
    for sub in patterns.lower().split(","):
        negated = sub.startswith("!")
        if negated:
            sub = sub[1:]
        if len(sub) >= _MAX_SUBPATTERN:
            return 0
        if match_pattern(host, sub):
            if negated:
                return -1
            positive = True
    return 1 if positive else 0


def match_pattern(text: str, pattern: str) -> bool:
    """``*`` is any run of characters, ``?`` any one; everything else is literal (even ``[``)."""
    # Runs of stars mean the same as one, and would make the regex backtrack needlessly.
    pattern = re.sub(r"\*+", "*", pattern)
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, text, re.DOTALL) is not None
