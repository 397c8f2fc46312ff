"""A real OpenSSH server on 127.0.0.1 with its own keys, config and logs in a temp dir."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from sambatune.remote.connection import ConnectionOptions
from testbed.ports import free_port, wait_for_port
from testbed.processes import start_group, stop_group

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"


def keygen(path: Path, kind: str = "ed25519", passphrase: str = "", comment: str = "") -> Path:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", kind, "-N", passphrase, "-C", comment, "-f", str(path)],
        check=True,
    )
    return path


def keygen_fingerprint(pub: Path) -> str:
    """What ``ssh-keygen -lf`` says: the SHA256:... token."""
    out = subprocess.run(["ssh-keygen", "-lf", str(pub)], check=True, capture_output=True, text=True).stdout
    return out.split()[1]


@dataclass
class SshServer:
    """One sshd. ``password_auth`` turns on passwords (and PAM) for the given users."""

    root: Path
    name: str = "sshd"
    password_auth: bool = False
    port: int = 0
    process: subprocess.Popen | None = None
    authorized_keys: Path = field(init=False)
    #: Where it listens; another address needs ``launcher`` to run it where that exists.
    listen_address: str = "127.0.0.1"
    #: A command prefix to start sshd with, e.g. ["ip", "netns", "exec", "ns1"].
    launcher: tuple[str, ...] = ()
    #: Folders put first on the sessions' PATH: a test shadows a program there instead
    #: of changing the host's (nothing under /usr is ever written).
    path_first: tuple[Path, ...] = ()

    def __post_init__(self) -> None:
        self.dir = self.root / self.name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.host_key = self.dir / "hostkey"
        self.authorized_keys = self.dir / "authorized_keys"
        self.authorized_keys.touch()
        self.config = self.dir / "sshd_config"
        self.log = self.dir / "sshd.log"
        self.pid_file = self.dir / "sshd.pid"
        if not self.host_key.exists():
            keygen(self.host_key, comment="sambatune-testbed")

    @property
    def host_key_fingerprint(self) -> str:
        return keygen_fingerprint(self.host_key.with_suffix(".pub"))

    @property
    def known_hosts_line(self) -> str:
        kind, blob = self.host_key.with_suffix(".pub").read_text().split()[:2]
        return f"[{self.listen_address}]:{self.port} {kind} {blob}\n"

    def authorize(self, public_key: Path) -> None:
        with open(self.authorized_keys, "a") as handle:
            handle.write(public_key.read_text())

    def key_options(self, key: Path, known_hosts: Path) -> ConnectionOptions:
        """How this computer's user connects with ``key`` (authorized with :meth:`authorize`)."""
        return ConnectionOptions(
            host="127.0.0.1",
            port=self.port,
            user=current_user(),
            identity_file=str(key),
            known_hosts=known_hosts,
        )

    def password_options(
        self, user: str, password: str, known_hosts: Path, *, sudo: bool = False
    ) -> ConnectionOptions:
        """How ``user`` connects with a password (``password_auth``), the same one for sudo
        when ``sudo``."""
        return ConnectionOptions(
            host="127.0.0.1",
            port=self.port,
            user=user,
            known_hosts=known_hosts,
            password=password,
            sudo_password=password if sudo else None,
        )

    def write_config(self) -> None:
        running_as_root = os.geteuid() == 0
        lines = [
            f"Port {self.port}",
            f"ListenAddress {self.listen_address}",
            f"HostKey {self.host_key}",
            f"PidFile {self.pid_file}",
            "PermitRootLogin prohibit-password",
            f"PasswordAuthentication {'yes' if self.password_auth else 'no'}",
            "KbdInteractiveAuthentication no",
            "PubkeyAuthentication yes",
            f"UsePAM {'yes' if self.password_auth and running_as_root else 'no'}",
            f"AuthorizedKeysFile {self.authorized_keys}",
            "StrictModes no",
            "AllowTcpForwarding yes",
            "MaxStartups 100:30:200",
            "MaxSessions 50",
            "LogLevel VERBOSE",
            "Subsystem sftp internal-sftp",
        ]
        if self.path_first:
            system = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
            lines.append(f"SetEnv PATH={':'.join(map(str, self.path_first))}:{system}")
        self.config.write_text("\n".join(lines) + "\n")

    def start(self) -> SshServer:
        if os.geteuid() == 0:
            # OpenSSH refuses to start without its privilege-separation directory.
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        if not self.port:
            self.port = free_port()
        self.write_config()
        self.process = start_group([*self.launcher, SSHD, "-D", "-e", "-f", str(self.config)], self.log)
        try:
            wait_for_port(self.port, host=self.listen_address)
        except TimeoutError as exc:
            raise RuntimeError(f"sshd did not start:\n{self.log.read_text()}") from exc
        return self

    def stop(self) -> None:
        if self.process is not None:
            stop_group(self.process)
            self.process = None

    def restart_with_new_host_key(self) -> None:
        """Same port, a fresh host key: what a reinstalled (or impersonated) server looks like."""
        self.stop()
        for path in (self.host_key, self.host_key.with_suffix(".pub")):
            path.unlink(missing_ok=True)
        keygen(self.host_key, comment="sambatune-testbed-new")
        self.start()


def current_user() -> str:
    return pwd.getpwuid(os.geteuid()).pw_name
