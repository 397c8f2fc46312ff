"""A fleet of Samba servers on this one machine (issue 20's test bed).

Host i is the address 127.0.0.(i+2), which Linux answers on loopback without any
setup (lo holds 127.0.0.0/8): its own sshd with its own host key listens there, and
its own smbd (own smb.conf, state and port) runs beside it, reached as that host's
``samba_conf``. One sshd per host, not one sshd listening on every address, so that a
host can go down alone (its sshd stops: connections to it are refused) and each host
has a key of its own, as real servers do. sshd starts in a few milliseconds; smbd takes
0.3 to 1 s, so they start in parallel.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from testbed.smbd import SmbServer
from testbed.sshd import SshServer, current_user


@dataclass
class BedHost:
    """One server of the bed: an address with an sshd and an smbd."""

    name: str
    address: str
    sshd: SshServer
    smbd: SmbServer

    @property
    def up(self) -> bool:
        return self.sshd.process is not None


@dataclass
class FleetBed:
    root: Path
    user_key: Path
    count: int = 5
    hosts: list[BedHost] = field(default_factory=list)
    #: Seconds each part took to start, for the bench and for slow machines' reports.
    start_seconds: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 1 <= self.count <= 250:
            raise ValueError("a bed holds 1 to 250 hosts (127.0.0.2 to 127.0.0.251)")
        self.root.mkdir(parents=True, exist_ok=True)
        for index in range(self.count):
            name = f"nas{index + 1:02d}"
            address = f"127.0.0.{index + 2}"
            sshd = SshServer(self.root, f"sshd-{name}", listen_address=address)
            sshd.authorize(self.user_key.with_suffix(".pub"))
            self.hosts.append(BedHost(name, address, sshd, SmbServer(self.root, f"smbd-{name}")))

    def start(self) -> FleetBed:
        began = time.monotonic()
        workers = min(8, self.count)
        try:
            with ThreadPoolExecutor(workers) as pool:
                list(pool.map(lambda host: host.smbd.start(), self.hosts))
            self.start_seconds["smbd"] = time.monotonic() - began
            began = time.monotonic()
            for host in self.hosts:
                host.sshd.start()
            self.start_seconds["sshd"] = time.monotonic() - began
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        with ThreadPoolExecutor(min(8, self.count)) as pool:
            list(pool.map(lambda host: host.sshd.stop(), self.hosts))
            list(pool.map(lambda host: host.smbd.stop(), self.hosts))

    def host(self, name: str) -> BedHost:
        return next(host for host in self.hosts if host.name == name)

    def take_down(self, name: str) -> BedHost:
        """The host stops answering SSH: its sshd stops, its port is closed."""
        host = self.host(name)
        host.sshd.stop()
        return host

    def bring_up(self, name: str) -> BedHost:
        host = self.host(name)
        if not host.up:
            host.sshd.start()  # same port and key: it comes back as it was
        return host

    def write_known_hosts(self, path: Path, names: Sequence[str] | None = None) -> Path:
        """A known_hosts file trusting the hosts named (default: all)."""
        chosen = [h for h in self.hosts if names is None or h.name in names]
        path.write_text("".join(host.sshd.known_hosts_line for host in chosen))
        return path

    def write_inventory(self, path: Path, *, group: str = "fileservers", python: str | None = None) -> Path:
        """An Ansible INI inventory of the bed, as an admin would write it: connection
        variables per host, the key and user (and ``python`` as the interpreter) once
        for the group."""
        lines = [f"[{group}]"]
        for host in self.hosts:
            lines.append(
                f"{host.name} ansible_host={host.address} ansible_port={host.sshd.port} "
                f"samba_conf={host.smbd.config}"
            )
        lines += [
            "",
            f"[{group}:vars]",
            f"ansible_user={current_user()}",
            f"ansible_ssh_private_key_file={self.user_key}",
            *([f"ansible_python_interpreter={python}"] if python else []),
            "",
        ]
        path.write_text("\n".join(lines))
        return path


def own_processes(host: BedHost, config: Path | None = None) -> BedHost:
    """Give ``host`` processes of its own, as a real server has (root only): its sshd
    runs in new pid and mount namespaces with their own /proc, and its smbd inside them,
    so what a command there sees of smbd is this host's alone, whatever else runs here.
    ``config`` starts that smbd from another smb.conf path (same text)."""
    host.smbd.stop()
    host.sshd.stop()
    host.sshd.launcher = ("unshare", "--pid", "--fork", "--mount", "--mount-proc", "--propagation", "private")
    host.sshd.start()
    assert host.sshd.process is not None
    # unshare forks the namespace's first process (sshd, pid 1 there) and waits for it.
    children = Path(f"/proc/{host.sshd.process.pid}/task/{host.sshd.process.pid}/children")
    first = int(children.read_text().split()[0])
    host.smbd.launcher = ("nsenter", f"--target={first}", "--pid", "--mount")
    if config is not None:
        text = host.smbd.config.read_text() if host.smbd.config.exists() else host.smbd.default_config()
        config.parent.mkdir(parents=True, exist_ok=True)
        host.smbd.config = config
        host.smbd.start(text)
    else:
        host.smbd.start()
    return host
