"""Typed errors with a one-line message for people and details for the curious.

Every failure the user can meet is one of these. The GUI shows ``message`` in its
error bar and ``details`` behind "Show details"; the CLI prints ``message`` (and
``details`` with ``--verbose``) and, with ``--json``, an object with ``code`` too.
"""

from __future__ import annotations


class SambaTuneError(Exception):
    """Base of every error SambaTune reports to a person."""

    code = "error"

    def __init__(self, message: str, details: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message, "details": self.details}


class ConnectionFailed(SambaTuneError):
    """The server could not be reached: DNS, refused, timeout, protocol.

    ``command_sent`` tells whether a command may have started before the connection
    died (False: it certainly did not run).
    """

    code = "connection-failed"

    def __init__(self, message: str, details: str = "", *, command_sent: bool = False) -> None:
        super().__init__(message, details)
        self.command_sent = command_sent


class PortUnreachable(ConnectionFailed):
    """A benchmark's own TCP connection could not reach the agent's port.

    The SSH connection works, so something lets port 22 through and not this one:
    a firewall on the server or on the way, or an address translated by NAT.
    ``host`` and ``port`` say what was tried; a network test can instead run through
    an SSH forward, which then measures SSH rather than the network.
    """

    code = "port-unreachable"

    def __init__(self, message: str, details: str = "", *, host: str = "", port: int = 0) -> None:
        super().__init__(message, details)
        self.host = host
        self.port = port


class AuthenticationFailed(SambaTuneError):
    code = "authentication-failed"


class SecretRequired(SambaTuneError):
    """A password or key passphrase is needed and nobody was there to type it."""

    code = "secret-required"


class HostKeyUnknown(SambaTuneError):
    code = "host-key-unknown"


class HostKeyChanged(SambaTuneError):
    code = "host-key-changed"


class HostKeyRevoked(SambaTuneError):
    """The server presented a key that a known_hosts file marks ``@revoked``."""

    code = "host-key-revoked"


class CommandFailed(SambaTuneError):
    """A command on the target exited non-zero where success was required."""

    code = "command-failed"

    def __init__(self, message: str, details: str = "", exit_code: int | None = None) -> None:
        super().__init__(message, details)
        self.exit_code = exit_code


class CommandTimedOut(CommandFailed):
    """A command on the target did not finish in time: it may still have done its work."""

    code = "command-timed-out"


class OutputTooLarge(CommandFailed):
    """A command or agent on the target printed more than SambaTune reads from it."""

    code = "output-too-large"


class SudoFailed(SambaTuneError):
    code = "sudo-failed"


class AgentFailed(SambaTuneError):
    """A server-side agent could not start, or reported an error."""

    code = "agent-failed"


class Cancelled(SambaTuneError):
    code = "cancelled"

    def __init__(self, message: str = "Cancelled.", details: str = "") -> None:
        super().__init__(message, details)


class InvalidInput(SambaTuneError):
    """Something the user gave us (a file, an option) is not usable."""

    code = "invalid-input"
