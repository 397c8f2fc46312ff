"""The connection flags every server verb shares, and connecting from them."""

from __future__ import annotations

import argparse
import getpass
import sys
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


def add_connection_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("connection (no --host means this computer)")
    group.add_argument("--host", help="server name, ~/.ssh/config alias or user@host[:port]")
    group.add_argument("--port", type=int, help="SSH port (default: from ~/.ssh/config, or 22)")
    group.add_argument("--user", help="SSH user (default: from ~/.ssh/config, or yours)")
    group.add_argument("--identity", metavar="FILE", help="private key file (like ssh -i)")
    group.add_argument("--jump", metavar="HOST", help="reach the server through this host (like ssh -J)")
    group.add_argument(
        "--known-hosts", metavar="FILE", type=Path,
        help="use this known_hosts file instead of ~/.ssh/known_hosts and SambaTune's own",
    )
    group.add_argument("--ssh-config", metavar="FILE", type=Path, help="like ssh -F")
    group.add_argument(
        "--accept-new-host-key", action="store_true",
        help="trust and remember a host key never seen before (a changed key is always refused)",
    )
    group.add_argument(
        "--password-stdin", action="store_true",
        help="read the SSH password (or key passphrase) from the first line of stdin",
    )
    group.add_argument(
        "--sudo-password-stdin", action="store_true",
        help="read the sudo password from stdin (the next line after the SSH password, if any)",
    )
    group.add_argument("--connect-timeout", type=float, metavar="SECONDS")


class TerminalPrompts:
    """Connection questions answered from flags, or at the terminal when there is one."""

    def __init__(self, accept_new_host_key: bool, password: str | None) -> None:
        self.accept_new_host_key = accept_new_host_key
        self.password = password
        self.interactive = sys.stdin.isatty() and sys.stderr.isatty()

    def confirm_host_key(self, question: HostKeyQuestion) -> bool:
        if self.accept_new_host_key:
            print(f"sambatune: accepted new host key {question.keygen_line()}", file=sys.stderr)
            return True
        return False

    def ask_secret(self, request: SecretRequest) -> str | None:
        if self.password is not None and request.attempt == 1:
            return self.password
        if not self.interactive or request.attempt > 3:
            return None
        try:
            return getpass.getpass(f"{request.prompt()}: ")
        except (EOFError, KeyboardInterrupt):
            return None


def options_from_args(args: argparse.Namespace) -> ConnectionOptions:
    from sambatune.remote.connection import ConnectionOptions

    password = sudo_password = None
    if getattr(args, "password_stdin", False):
        password = _read_stdin_line()
    if getattr(args, "sudo_password_stdin", False):
        sudo_password = _read_stdin_line()
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
    )


def _read_stdin_line() -> str:
    line = sys.stdin.readline()
    return line[:-1] if line.endswith("\n") else line


def connect_from_args(args: argparse.Namespace, cancel: CancelToken | None = None) -> Transport:
    from sambatune.remote.connection import open_target

    options = options_from_args(args)
    prompts = TerminalPrompts(args.accept_new_host_key, options.password)
    transport = open_target(options, prompts, cancel=cancel)
    options.password = None
    return transport
