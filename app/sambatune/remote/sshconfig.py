"""Resolve a host the way OpenSSH would: ~/.ssh/config, then what the user typed."""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass, field
from pathlib import Path

import paramiko

from sambatune.errors import InvalidInput

DEFAULT_IDENTITIES = ("id_ed25519", "id_ecdsa", "id_rsa")


@dataclass(frozen=True)
class SshEndpoint:
    """Everything needed to reach one SSH server (one hop)."""

    alias: str  # what the user typed, e.g. "files1"
    hostname: str  # what we connect to, after HostName
    port: int = 22
    user: str = ""
    identity_files: tuple[str, ...] = ()
    identities_only: bool = False
    use_agent: bool = True
    proxy_jump: tuple[SshEndpoint, ...] = field(default=())
    connect_timeout: float = 10.0

    @property
    def label(self) -> str:
        port = "" if self.port == 22 else f":{self.port}"
        return f"{self.user}@{self.alias}{port}" if self.user else f"{self.alias}{port}"

    @property
    def known_hosts_name(self) -> str:
        """The name OpenSSH stores in known_hosts: ``host`` or ``[host]:port``."""
        return self.hostname if self.port == 22 else f"[{self.hostname}]:{self.port}"


def default_ssh_config_path() -> Path:
    return Path(os.path.expanduser("~/.ssh/config"))


def load_ssh_config(path: Path | None = None) -> paramiko.SSHConfig:
    path = path if path is not None else default_ssh_config_path()
    if not path.is_file():
        return paramiko.SSHConfig()
    try:
        return paramiko.SSHConfig.from_path(str(path))
    except Exception as exc:  # paramiko raises several kinds for a bad file
        raise InvalidInput(f"Cannot read the SSH config file {path}: {exc}") from exc


def resolve_endpoint(
    host: str,
    *,
    port: int | None = None,
    user: str | None = None,
    identity_file: str | None = None,
    ssh_config: paramiko.SSHConfig | None = None,
    connect_timeout: float | None = None,
    jump_host: str | None = None,
    _depth: int = 0,
) -> SshEndpoint:
    """Apply ~/.ssh/config to ``host``; explicit arguments win, as on the ssh command line.

    ``host`` may be ``user@host:port`` (the ProxyJump form) as well as a plain name.
    """
    if _depth > 8:
        raise InvalidInput("ProxyJump chain is longer than 8 hops (a loop in ~/.ssh/config?)")
    config = ssh_config if ssh_config is not None else load_ssh_config()
    typed_user, typed_host, typed_port = _split_destination(host)
    user = user or typed_user
    port = port or typed_port
    found = config.lookup(typed_host)

    hostname = found.get("hostname", typed_host)
    resolved_port = port or int(found.get("port", 22))
    resolved_user = user or found.get("user") or getpass.getuser()
    identities: list[str] = []
    if identity_file:
        identities.append(os.path.expanduser(identity_file))
    identities.extend(os.path.expanduser(p) for p in found.get("identityfile", []))
    identities_only = found.get("identitiesonly", "no").lower() == "yes"
    if not identities and not identities_only:
        ssh_dir = os.path.expanduser("~/.ssh")
        identities = [os.path.join(ssh_dir, name) for name in DEFAULT_IDENTITIES]
    timeout = connect_timeout or float(found.get("connecttimeout", 10))

    jumps: list[SshEndpoint] = []
    proxy_jump = jump_host or found.get("proxyjump", "")
    if proxy_jump and proxy_jump.lower() != "none":
        for hop in proxy_jump.split(","):
            jumps.append(
                resolve_endpoint(
                    hop.strip(), ssh_config=config, connect_timeout=connect_timeout,
                    _depth=_depth + 1,
                )
            )
    return SshEndpoint(
        alias=typed_host,
        hostname=hostname,
        port=resolved_port,
        user=resolved_user,
        identity_files=tuple(dict.fromkeys(identities)),
        identities_only=identities_only,
        use_agent=found.get("identityagent", "").lower() != "none",
        proxy_jump=tuple(jumps),
        connect_timeout=timeout,
    )


def _split_destination(text: str) -> tuple[str | None, str, int | None]:
    user = None
    port = None
    rest = text.strip()
    if rest.startswith("ssh://"):
        rest = rest[len("ssh://"):]
    if "@" in rest:
        user, rest = rest.rsplit("@", 1)
    if rest.startswith("["):
        host, _, tail = rest[1:].partition("]")
        if tail.startswith(":") and tail[1:].isdigit():
            port = int(tail[1:])
        return user, host, port
    if rest.count(":") == 1:
        host, _, port_text = rest.partition(":")
        if port_text.isdigit():
            return user, host, int(port_text)
    if not rest:
        raise InvalidInput(f"No host name in {text!r}")
    return user, rest, port
