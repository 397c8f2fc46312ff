"""Questions a connection may need to ask a person, answered by the CLI or the GUI."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from sambatune.remote.hostkeys import HostKeyQuestion


@dataclass(frozen=True)
class SecretRequest:
    kind: str  # "password", "passphrase" or "sudo"
    target: str  # "admin@files1:22", or the key file for a passphrase
    attempt: int = 1

    def prompt(self) -> str:
        if self.kind == "passphrase":
            return f"Passphrase for key {self.target}"
        if self.kind == "sudo":
            return f"sudo password on {self.target}"
        return f"Password for {self.target}"


class ConnectionPrompts(Protocol):
    def confirm_host_key(self, question: HostKeyQuestion) -> bool:
        """True to trust and remember the key; False to refuse the connection."""
        ...

    def ask_secret(self, request: SecretRequest) -> str | None:
        """The secret, or None if the person declined (or nobody is there)."""
        ...


class NoPrompts:
    """For unattended use: unknown keys are refused, no secrets are known."""

    def confirm_host_key(self, question: HostKeyQuestion) -> bool:
        return False

    def ask_secret(self, request: SecretRequest) -> str | None:
        return None
