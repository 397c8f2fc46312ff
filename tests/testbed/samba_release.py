"""Real servers of other Samba releases: Debian's own Samba 4.22 and 4.25, each a host of
its own.

A Debian root file system per release (debootstrap from Debian's archive: 4.22 is in
trixie, 4.25 in sid), built once and kept in ``SAMBATUNE_TESTBED_ROOTS`` (default
/var/tmp/sambatune-testbed/roots) while it exists. A server runs that tree's own sshd
and smbd in a pid, mount and uts namespace of its own (so ps there shows its processes
only, and its hostname is its own), on a loopback address of its own: what SambaTune
reaches over SSH is a Debian 13 or unstable machine with that Samba, not this one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from testbed.ports import free_port, wait_for_port
from testbed.processes import start_group, stop_group
from testbed.smbd import GLOBAL_TEMPLATE, SHARE_TEMPLATE
from testbed.sshd import keygen

#: The release series the bed serves, and the Debian suite that ships it.
RELEASES = {"4.22": "trixie", "4.25": "sid"}
PACKAGES = "samba,smbclient,openssh-server,python3,procps,iproute2"
#: A tree holding all of these is whole (one built before a package was added is not).
WHOLE = ("usr/sbin/smbd", "usr/sbin/sshd", "usr/bin/ss")
ROOTS = Path(os.environ.get("SAMBATUNE_TESTBED_ROOTS", "/var/tmp/sambatune-testbed/roots"))
#: Inside each tree: the server's own files.
BED = "/srv/bed"


def root_file_system(series: str) -> Path:
    """The release's root file system, built on first use (about a minute)."""
    suite = RELEASES[series]
    root = ROOTS / suite
    if all((root / path).exists() for path in WHOLE):
        return root
    if shutil.which("debootstrap") is None:
        raise RuntimeError("debootstrap is not installed (make test installs it as root)")
    partial = ROOTS / f"{suite}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    ROOTS.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        ["debootstrap", "--variant=minbase", f"--include={PACKAGES}", suite, str(partial)],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"debootstrap {suite} failed:\n{result.stdout[-3000:]}{result.stderr[-2000:]}")
    # Only a whole tree gets the name: an interrupted build is never used.
    shutil.rmtree(root, ignore_errors=True)
    partial.rename(root)
    return root


#: Run inside the tree as the namespace's first process: its /proc, its hostname, its
#: smbd, then sshd in the foreground (when it ends, the kernel ends the namespace).
START = """\
set -e
mount -t proc proc /proc
mount -t sysfs sysfs /sys
echo {hostname} > /proc/sys/kernel/hostname
mkdir -p /run/sshd
/usr/sbin/smbd -D --configfile {bed}/smbd/smb.conf
exec /usr/sbin/sshd -D -e -f {bed}/sshd_config
"""


@dataclass
class ReleaseServer:
    """One server of a Samba release: its own sshd and smbd on ``address``."""

    series: str
    address: str  # a loopback address of its own, e.g. 127.0.0.122
    scratch: Path  # this computer's folder for the log
    ssh_port: int = 0
    smb_port: int = 0
    process: subprocess.Popen | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.root = root_file_system(self.series)
        self.bed = self.root / BED.lstrip("/")
        self.host_key = self.bed / "hostkey"
        self.config_path = f"{BED}/smbd/smb.conf"  # as the server sees it
        self.hostname = "samba" + self.series.replace(".", "")

    @property
    def known_hosts_line(self) -> str:
        kind, blob = self.host_key.with_suffix(".pub").read_text().split()[:2]
        return f"[{self.address}]:{self.ssh_port} {kind} {blob}\n"

    def start(self, authorized_key: Path) -> ReleaseServer:
        # A fresh bed each start: the tree is shared by every run, its server is not.
        shutil.rmtree(self.bed, ignore_errors=True)
        smbd = self.bed / "smbd"
        for sub in ("state", "private", "lock", "cache", "log", "share", "ncalrpc"):
            (smbd / sub).mkdir(parents=True, exist_ok=True)
        self.ssh_port, self.smb_port = free_port(), free_port()
        (smbd / "smb.conf").write_text(
            GLOBAL_TEMPLATE.format(port=self.smb_port, dir=f"{BED}/smbd", interfaces=f"{self.address}/8")
            + SHARE_TEMPLATE.format(dir=f"{BED}/smbd")
        )
        keygen(self.host_key, comment=f"sambatune-testbed-{self.hostname}")
        (self.bed / "authorized_keys").write_text(authorized_key.read_text())
        (self.bed / "sshd_config").write_text(
            "\n".join(
                [
                    f"Port {self.ssh_port}",
                    f"ListenAddress {self.address}",
                    f"HostKey {BED}/hostkey",
                    "PermitRootLogin prohibit-password",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "UsePAM no",
                    f"AuthorizedKeysFile {BED}/authorized_keys",
                    "StrictModes no",
                    "MaxStartups 100:30:200",
                    "MaxSessions 50",
                    "Subsystem sftp internal-sftp",
                ]
            )
            + "\n"
        )
        (self.bed / "start.sh").write_text(START.format(hostname=self.hostname, bed=BED))
        self.scratch.mkdir(parents=True, exist_ok=True)
        log = self.scratch / f"{self.hostname}.log"
        namespaces = ["unshare", "--pid", "--fork", "--mount", "--uts", "--propagation", "private"]
        self.process = start_group([*namespaces, "chroot", str(self.root), "/bin/sh", f"{BED}/start.sh"], log)
        try:
            wait_for_port(self.ssh_port, timeout=30, host=self.address)
            wait_for_port(self.smb_port, timeout=30, host=self.address)
        except TimeoutError as exc:
            self.stop()
            raise RuntimeError(f"the Samba {self.series} server did not start:\n{log.read_text()}") from exc
        return self

    def stop(self) -> None:
        if self.process is not None:
            stop_group(self.process)
            self.process = None
