"""Open a target from what the user chose: this computer, or an SSH server."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace
from pathlib import Path

from sambatune.cancellation import CancelToken
from sambatune.remote.hostkeys import HostKeyStore
from sambatune.remote.local import LocalTransport
from sambatune.remote.prompts import ConnectionPrompts
from sambatune.remote.sshconfig import load_ssh_config, resolve_endpoint
from sambatune.remote.transport import Transport


@dataclass
class ConnectionOptions:
    """The connection flags shared by every verb (CLI) and every server profile (GUI).

    ``host=None`` means this computer. Secrets are never stored here for long: the
    password is used for one connect and dropped.
    """

    host: str | None = None
    port: int | None = None
    user: str | None = None
    identity_file: str | None = None
    jump_host: str | None = None  # like ssh -J; ~/.ssh/config ProxyJump applies otherwise
    known_hosts: Path | None = None
    ssh_config: Path | None = None
    connect_timeout: float | None = None
    password: str | None = None
    sudo_password: str | None = None
    # "password" skips keys, "agent" uses only ssh-agent; None tries all, like OpenSSH.
    auth: str | None = None
    # The password also answers a key's passphrase question (one --password-stdin line
    # for both): while an encrypted key could be tried, it never reaches a server.
    password_opens_keys: bool = False
    # The server's Python for SambaTune's unprivileged agents (Ansible's
    # ansible_python_interpreter); None: python3 as the account's PATH finds it.
    python: str | None = None

    @property
    def is_local(self) -> bool:
        return not self.host


def open_target(
    options: ConnectionOptions,
    prompts: ConnectionPrompts,
    *,
    cancel: CancelToken | None = None,
) -> Transport:
    transport: Transport
    if options.is_local:
        transport = LocalTransport()
    else:
        from sambatune.remote.ssh import connect_ssh

        assert options.host is not None
        endpoint = resolve_endpoint(
            options.host,
            port=options.port,
            user=options.user,
            # Signing in with a password or the agent alone uses no key file, so one
            # named anyway must not stop the connection.
            identity_file=options.identity_file if options.auth not in ("password", "agent") else None,
            ssh_config=load_ssh_config(options.ssh_config),
            connect_timeout=options.connect_timeout,
            jump_host=options.jump_host,
        )
        if options.auth == "password":
            endpoint = replace(endpoint, identity_files=(), use_agent=False)
        elif options.auth == "agent":
            endpoint = replace(endpoint, identity_files=(), use_agent=True, identities_only=False)
        store = (
            HostKeyStore.single_file(options.known_hosts) if options.known_hosts else HostKeyStore.default()
        )
        transport = connect_ssh(
            endpoint,
            prompts,
            store,
            password=options.password,
            password_opens_keys=options.password_opens_keys,
            cancel=cancel,
        )
    if options.sudo_password is not None:
        transport.set_sudo_password(options.sudo_password)
    # Ansible takes it as a "#!" line's words ("/usr/bin/env python3" is one).
    transport.python = tuple(shlex.split(options.python)) if options.python else ()
    return transport
