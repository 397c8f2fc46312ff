"""One fleet host's live smb.conf: which file, read how, and the Samba tools to trust.

Drift and export both start from the same reading of each host: the smb.conf its
smbd uses (the inventory's ``samba_conf``, else the one the running smbd was started
with), its exact bytes and SHA-256, whether reading and replacing it needs sudo, and
the host's own parameter catalog (so synonyms and defaults are that Samba's). Hosts
are read in parallel, a bounded number at a time; one that cannot be reached or read
is an error of its own and never stops the others.
"""

from __future__ import annotations

import hashlib
import shlex
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from sambatune.cancellation import CancelToken
from sambatune.errors import CommandFailed, InvalidInput, SambaTuneError
from sambatune.fleet.inventory import FleetHost
from sambatune.remote.config_location import detect_config_path, needs_sudo
from sambatune.remote.connection import open_target
from sambatune.remote.prompts import ConnectionPrompts, NoPrompts
from sambatune.remote.transport import Transport

#: Where Samba's programs live on the systems SambaTune knows. Only these are looked
#: at: a PATH search could find a testparm a user put in ~/bin.
SYSTEM_DIRS = (
    "/usr/bin",
    "/usr/sbin",
    "/bin",
    "/sbin",
    "/usr/local/bin",
    "/usr/local/sbin",
    "/usr/local/samba/bin",
)

# Resolves each tool in SYSTEM_DIRS and keeps it only when the file and every
# directory above it belong to root and nobody else can write them: the playbook runs
# these as root, so a binary another user could replace must never be named.
_FIND_TOOLS = r"""
import os, sys
dirs = sys.argv[1].split(":")
def root_only(path):
    current = path
    while True:
        info = os.stat(current)
        if info.st_uid != 0 or info.st_mode & 0o022:
            return False
        if current == "/":
            return True
        current = os.path.dirname(current) or "/"
for tool in sys.argv[2:]:
    found = ""
    for d in dirs:
        candidate = os.path.join(d, tool)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            real = os.path.realpath(candidate)
            if root_only(real):
                found = real
                break
    print(tool + "\t" + found)
"""

Connector = Callable[[FleetHost], Transport]


def connect(
    host: FleetHost,
    *,
    known_hosts: Path | None = None,
    ssh_config: Path | None = None,
    prompts: ConnectionPrompts | None = None,
    cancel: CancelToken | None = None,
) -> Transport:
    """An SSH connection to ``host`` with the fleet's host-key rules: a key that is not
    known already (SambaTune's known_hosts or ~/.ssh/known_hosts) is refused, never
    accepted silently, since nobody is there to compare fingerprints (unless ``prompts``
    was told to, as ``--accept-new-host-key`` does)."""
    # A host that swallows the connection attempt is given up after ConnectTimeout from
    # ~/.ssh/config, else 10 s (remote.sshconfig), as a single connect is.
    options = host.connection_options(known_hosts=known_hosts, ssh_config=ssh_config)
    return open_target(options, prompts or NoPrompts(), cancel=cancel)


@dataclass
class LiveConfig:
    """The smb.conf a host's smbd reads, as it was when read."""

    path: str
    data: bytes
    sudo: bool  # reading (and so replacing) it needs root rights

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def read_live(transport: Transport, host: FleetHost, cancel: CancelToken | None = None) -> LiveConfig:
    """The host's smb.conf: ``samba_conf`` from the inventory, else the running smbd's."""
    path = host.samba_conf or detect_config_path(transport)
    if not transport.file_exists(path):
        raise InvalidInput(f"{path} does not exist on {host.name}.")
    sudo = needs_sudo(transport, path) or not transport.run(["test", "-r", path], timeout=30).ok
    if sudo and transport.sudo_mode() != "root":
        if not host.become:
            raise InvalidInput(
                f"{path} on {host.name} can only be read or replaced by root: set "
                "ansible_become: true for this host (sudo without a password prompt)."
            )
        transport.check_sudo()
    return LiveConfig(path, transport.read_file(path, sudo=sudo), sudo)


def find_root_tools(transport: Transport, tools: Sequence[str]) -> dict[str, str]:
    """Absolute paths of Samba's programs on the host that only root can change.

    Raises when one is missing: a playbook that cannot validate or reload must not be
    written for that host.
    """
    python = transport.python or ("python3",)
    result = transport.run([*python, "-c", _FIND_TOOLS, ":".join(SYSTEM_DIRS), *tools], timeout=60)
    if result.exit_code == 127:
        raise CommandFailed(f"{python[0]} is missing on {transport.label}; Ansible needs it there too.")
    result.check("finding Samba's programs")
    found = dict(line.split("\t", 1) for line in result.text.splitlines() if "\t" in line)
    missing = [tool for tool in tools if not found.get(tool)]
    if missing:
        raise CommandFailed(
            f"No {', '.join(missing)} only root can change was found on {transport.label} "
            f"(looked in {', '.join(SYSTEM_DIRS)}).",
            details="The exported playbook runs these as root, so it names only binaries "
            "that root owns in directories only root can write.",
        )
    return {tool: found[tool] for tool in tools}


def quoted(argv: Sequence[str]) -> str:
    """A command line as a shell would need it, for messages and the README."""
    return " ".join(shlex.quote(arg) for arg in argv)


T = TypeVar("T")


@dataclass
class HostOutcome(Generic[T]):
    """What one host gave: a value, or the error that stopped it."""

    host: FleetHost
    value: T | None
    error: str | None
    seconds: float
    reached: bool = True  # False: the connection itself failed


def each_host(
    hosts: Sequence[FleetHost],
    work: Callable[[FleetHost, Transport], T],
    *,
    connector: Connector | None = None,
    concurrency: int = 8,
    cancel: CancelToken | None = None,
) -> Iterator[HostOutcome[T]]:
    """Run ``work`` on every host over its own connection, ``concurrency`` at a time,
    yielding each host's outcome as it arrives (so a caller can show results live).

    A host that cannot be reached, or whose work fails, yields an error; the others go on.
    """
    open_host = connector or (lambda host: connect(host, cancel=cancel))

    def one(host: FleetHost) -> HostOutcome[T]:
        started = time.monotonic()
        if cancel is not None and cancel.cancelled:
            return HostOutcome(host, None, "cancelled", 0.0)
        try:
            transport = open_host(host)
        except SambaTuneError as error:
            return HostOutcome(host, None, f"unreachable: {error.message}", time.monotonic() - started, False)
        except OSError as error:
            return HostOutcome(host, None, f"unreachable: {error}", time.monotonic() - started, False)
        try:
            return HostOutcome(host, work(host, transport), None, time.monotonic() - started)
        except SambaTuneError as error:
            return HostOutcome(host, None, error.message, time.monotonic() - started)
        except OSError as error:
            return HostOutcome(host, None, str(error), time.monotonic() - started)
        finally:
            transport.close()

    with ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(hosts) or 1))) as pool:
        pending: set[Future[HostOutcome[T]]] = {pool.submit(one, host) for host in hosts}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield future.result()
