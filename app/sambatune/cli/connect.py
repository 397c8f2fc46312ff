"""The connection flags every server verb shares, and connecting from them."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Only for annotations: importing the SSH stack (paramiko) at parser-building time
    # would slow down every verb, including the ones that never connect.
    from sambatune.cancellation import CancelToken
    from sambatune.remote.connection import ConnectionOptions
    from sambatune.remote.hostkeys import HostKeyQuestion
    from sambatune.remote.prompts import SecretRequest
    from sambatune.remote.transport import Transport


#: The flags by which verbs name the smb.conf (of the smbd) they work on; a --profile
#: fills whichever the verb has with the smbd chosen in the app.
CONFIG_PATH_FLAGS = ("config_path", "remote_path")


def add_connection_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("connection (no --host means this computer)")
    group.add_argument(
        "--profile",
        metavar="NAME",
        help="a server saved in the app, by name: its host, port, user, key, jump host, sudo "
        "and the smbd chosen on its Overview (flags given here win)",
    )
    group.add_argument("--host", help="server name, ~/.ssh/config alias or user@host[:port]")
    group.add_argument("--port", type=int, help="SSH port (default: from ~/.ssh/config, or 22)")
    group.add_argument("--user", help="SSH user (default: from ~/.ssh/config, or yours)")
    group.add_argument("--identity", metavar="FILE", help="private key file (like ssh -i)")
    group.add_argument(
        "--auth",
        choices=("password", "agent"),
        help="sign in only with a password (no key is tried) or only with ssh-agent's keys "
        "(default: agent, key files, then a password, like ssh)",
    )
    group.add_argument("--jump", metavar="HOST", help="reach the server through this host (like ssh -J)")
    group.add_argument(
        "--known-hosts",
        metavar="FILE",
        type=Path,
        help="use this known_hosts file instead of your own and SambaTune's "
        "(the system-wide ones still count, as for ssh)",
    )
    group.add_argument("--ssh-config", metavar="FILE", type=Path, help="like ssh -F")
    group.add_argument(
        "--accept-new-host-key",
        action="store_true",
        help="trust and remember a host key never seen before (a changed key is always refused)",
    )
    group.add_argument(
        "--password-stdin",
        action="store_true",
        help="read the SSH password from the first line of stdin. Without --passphrase-stdin "
        "it also unlocks an encrypted key; a line used that way is never sent to the server "
        "as a password (add --auth password to sign in with a password)",
    )
    group.add_argument(
        "--passphrase-stdin",
        action="store_true",
        help="read the passphrase of an encrypted key from stdin (the line after the SSH "
        "password, if any); it is never sent to the server",
    )
    group.add_argument(
        "--sudo-password-stdin",
        action="store_true",
        help="read the sudo password from stdin (the line after the SSH password and passphrase, if any)",
    )
    group.add_argument("--connect-timeout", type=float, metavar="SECONDS")


class TerminalPrompts:
    """Connection questions answered from flags, or at the terminal when there is one."""

    def __init__(
        self, accept_new_host_key: bool, password: str | None, passphrase: str | None = None
    ) -> None:
        self.accept_new_host_key = accept_new_host_key
        self.password = password
        self.passphrase = passphrase
        self.interactive = sys.stdin.isatty() and sys.stderr.isatty()

    def confirm_host_key(self, question: HostKeyQuestion) -> bool:
        if self.accept_new_host_key:
            print(f"sambatune: accepted new host key {question.keygen_line()}", file=sys.stderr)
            return True
        return False

    def ask_secret(self, request: SecretRequest) -> str | None:
        # Without --passphrase-stdin the password line answers the passphrase question
        # too, as it always did; the SSH layer then never sends it as a password.
        given = self.password
        if request.kind == "passphrase" and self.passphrase is not None:
            given = self.passphrase
        if given is not None and request.attempt == 1:
            return given
        if not self.interactive or request.attempt > 3:
            return None
        import getpass

        from sambatune.cli.output import visible

        try:
            # getpass writes to the terminal itself, past the streams' filter.
            return getpass.getpass(visible(f"{request.prompt()}: "))
        except (EOFError, KeyboardInterrupt):
            return None


def apply_profile(args: argparse.Namespace) -> None:
    """Fill what the command line left out from the saved server ``--profile`` names.

    The profile is the app's own record of a server, so a terminal and the window work on
    the same smbd: the one chosen on its Overview (its smb.conf) is used unless the verb
    was given a file.
    """
    name = getattr(args, "profile", None)
    if not name:
        return
    from sambatune.errors import InvalidInput
    from sambatune.profiles import ProfileStore

    profiles = ProfileStore().load()
    matches = [p for p in profiles if p.name == name] or [p for p in profiles if p.id == name]
    if not matches:
        known = ", ".join(sorted(p.name for p in profiles)) or "none saved yet"
        raise InvalidInput(f"No saved server is called {name!r}.", details=f"Saved servers: {known}")
    if len(matches) > 1:
        raise InvalidInput(f"Several saved servers are called {name!r}; name one by its id.")
    profile = matches[0]
    # The window's own reading of the profile (trimmed, empty fields as None).
    options = profile.connection_options()
    filled = {
        "host": options.host,
        "port": options.port,
        "user": options.user,
        "identity": options.identity_file,
        "jump": options.jump_host,
        "auth": options.auth,
    }
    for attribute, value in filled.items():
        if getattr(args, attribute, None) in (None, "") and value not in (None, ""):
            setattr(args, attribute, value)
    if profile.use_sudo and hasattr(args, "sudo") and not args.sudo:
        args.sudo = True
    if profile.config_path:
        for attribute in CONFIG_PATH_FLAGS:
            if hasattr(args, attribute) and not getattr(args, attribute):
                setattr(args, attribute, profile.config_path)


def _read_stdin_secrets(args: argparse.Namespace) -> tuple[str | None, str | None, str | None]:
    """SSH password, key passphrase and sudo password: one stdin line for each flag given."""
    wanted = ("password_stdin", "passphrase_stdin", "sudo_password_stdin")
    password, passphrase, sudo_password = (
        _read_stdin_line() if getattr(args, name, False) else None for name in wanted
    )
    return password, passphrase, sudo_password


def options_from_args(
    args: argparse.Namespace,
    password: str | None = None,
    sudo_password: str | None = None,
    passphrase: str | None = None,
) -> ConnectionOptions:
    from sambatune.remote.connection import ConnectionOptions

    auth = getattr(args, "auth", None)
    return ConnectionOptions(
        host=args.host,
        port=args.port,
        user=args.user,
        identity_file=args.identity,
        jump_host=args.jump,
        known_hosts=args.known_hosts,
        ssh_config=args.ssh_config,
        connect_timeout=args.connect_timeout,
        password=password,
        sudo_password=sudo_password,
        auth=auth,
        # Without --passphrase-stdin the password line answers a passphrase question too
        # (TerminalPrompts); with --auth password no key is tried.
        password_opens_keys=password is not None and passphrase is None and auth != "password",
    )


def _read_stdin_line() -> str:
    line = sys.stdin.readline()
    return line[:-1] if line.endswith("\n") else line


def connect_from_args(args: argparse.Namespace, cancel: CancelToken | None = None) -> Transport:
    transport, _reconnect = reconnectable_from_args(args, cancel)
    return transport


def reconnectable_from_args(
    args: argparse.Namespace, cancel: CancelToken | None = None
) -> tuple[Transport, Callable[[], Transport]]:
    """Connect, and keep what it took to connect again, in memory for this command only:
    safe apply reconnects after a drop to learn which version the server has."""
    from sambatune.remote.connection import open_target

    password, passphrase, sudo_password = _read_stdin_secrets(args)
    # The passphrase stays out of the options: they hand their password to the server.
    options = options_from_args(args, password, sudo_password, passphrase)
    prompts = TerminalPrompts(args.accept_new_host_key, password, passphrase)
    transport = open_target(options, prompts, cancel=cancel)
    return transport, lambda: open_target(options, prompts)
