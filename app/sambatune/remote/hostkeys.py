"""Host key checking as OpenSSH does it: known keys pass, unknown keys ask, changed keys stop."""

from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import paramiko

# What ssh-keygen -l prints in brackets for each key algorithm.
_KEYGEN_TYPE = {
    "ssh-ed25519": "ED25519",
    "ssh-rsa": "RSA",
    "ecdsa-sha2-nistp256": "ECDSA",
    "ecdsa-sha2-nistp384": "ECDSA",
    "ecdsa-sha2-nistp521": "ECDSA",
    "ssh-dss": "DSA",
}


def sha256_fingerprint(key: paramiko.PKey) -> str:
    """``SHA256:...`` exactly as ``ssh-keygen -lf`` and ``ssh`` print it."""
    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode("ascii").rstrip("=")


def key_type_label(key: paramiko.PKey) -> str:
    return _KEYGEN_TYPE.get(key.get_name(), key.get_name())


@dataclass(frozen=True)
class HostKeyQuestion:
    """What the user must decide about a server key we have never seen."""

    host: str  # as stored in known_hosts, e.g. "[127.0.0.1]:2222"
    key_type: str  # "ED25519"
    bits: int
    fingerprint: str  # "SHA256:..."
    other_types_known: tuple[str, ...] = ()

    def describe(self) -> str:
        text = (
            f"The authenticity of host '{self.host}' can't be established.\n"
            f"{self.key_type} key fingerprint is {self.fingerprint}."
        )
        if self.other_types_known:
            text += (
                "\nKeys of another type are already known for this host: "
                + ", ".join(self.other_types_known)
                + "."
            )
        return text

    def keygen_line(self) -> str:
        """The same line ``ssh-keygen -lf`` prints for this key."""
        return f"{self.bits} {self.fingerprint} {self.host} ({self.key_type})"


@dataclass(frozen=True)
class KnownKey:
    path: Path
    line_number: int
    key: paramiko.PKey


class HostKeyStore:
    """Known hosts read from OpenSSH's file(s) and SambaTune's own; new keys go to ours."""

    def __init__(self, read_files: list[Path], write_file: Path) -> None:
        self.read_files = [Path(p) for p in read_files]
        self.write_file = Path(write_file)
        if self.write_file not in self.read_files:
            self.read_files.append(self.write_file)

    @classmethod
    def default(cls) -> HostKeyStore:
        from sambatune.appdirs import known_hosts_file

        user_file = Path(os.path.expanduser("~/.ssh/known_hosts"))
        return cls([user_file], known_hosts_file())

    @classmethod
    def single_file(cls, path: Path) -> HostKeyStore:
        return cls([path], path)

    def known_keys(self, host: str) -> list[KnownKey]:
        """Every key on record for ``host`` (already in ``[host]:port`` form when needed)."""
        found: list[KnownKey] = []
        for path in self.read_files:
            if not path.is_file():
                continue
            with open(path, encoding="utf-8", errors="replace") as handle:
                for number, line in enumerate(handle, 1):
                    entry = _parse_line(line, number)
                    if entry is None:
                        continue
                    hostnames, key = entry
                    if _matches(hostnames, host):
                        found.append(KnownKey(path, number, key))
        return found

    def remember(self, host: str, key: paramiko.PKey) -> None:
        self.write_file.parent.mkdir(parents=True, exist_ok=True)
        line = f"{host} {key.get_name()} {key.get_base64()}\n"
        needs_newline = False
        if self.write_file.exists() and self.write_file.stat().st_size:
            with open(self.write_file, "rb") as handle:
                handle.seek(-1, os.SEEK_END)
                needs_newline = handle.read(1) != b"\n"
        with open(self.write_file, "a", encoding="ascii") as handle:
            if needs_newline:
                handle.write("\n")
            handle.write(line)


def _parse_line(line: str, number: int) -> tuple[list[str], paramiko.PKey] | None:
    text = line.strip()
    if not text or text.startswith("#") or text.startswith("@"):
        # @cert-authority and @revoked entries are not plain host keys.
        return None
    try:
        entry = paramiko.hostkeys.HostKeyEntry.from_line(text, number)
    except (paramiko.SSHException, ValueError, IndexError):
        return None
    if entry is None or entry.key is None:
        return None
    return entry.hostnames, entry.key


def _matches(hostnames: list[str], host: str) -> bool:
    for pattern in hostnames:
        if pattern.startswith("|1|"):
            salt_b64, _, _hash = pattern[3:].partition("|")
            try:
                hashed = paramiko.HostKeys.hash_host(host, salt_b64)
            except Exception:
                continue
            if hashed == pattern:
                return True
        elif pattern == host:
            return True
    return False
