"""A real Samba server on 127.0.0.1: its own port, config and state, nothing system-wide."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from testbed.ports import free_port, wait_for_port
from testbed.processes import kill_mentioning, start_group, stop_group

SMBD = shutil.which("smbd") or "/usr/sbin/smbd"

GLOBAL_TEMPLATE = """\
[global]
  workgroup = TESTGRP
  netbios name = SAMBATUNETEST
  smb ports = {port}
  interfaces = {interfaces}
  bind interfaces only = yes
  disable netbios = yes
  server role = standalone server
  map to guest = Bad User
  state directory = {dir}/state
  private dir = {dir}/private
  lock directory = {dir}/lock
  cache directory = {dir}/cache
  pid directory = {dir}/state
  ncalrpc dir = {dir}/ncalrpc
  passdb backend = tdbsam:{dir}/private/passdb.tdb
  log file = {dir}/log/log.%m
  max log size = 0
  load printers = no
  printing = bsd
  printcap name = /dev/null
  disable spoolss = yes
"""

SHARE_TEMPLATE = """
[bench]
  comment = SambaTune test share
  path = {dir}/share
  read only = no
  guest ok = yes
  force user = root
"""


@dataclass
class SmbServer:
    root: Path
    name: str = "smbd"
    port: int = 0
    process: subprocess.Popen | None = None
    #: Where it listens; another address needs ``launcher`` to run it where that exists.
    listen_address: str = "127.0.0.1"
    #: Prefix for the smbd command line, e.g. ``ip netns exec NS``.
    launcher: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.dir = self.root / self.name
        for sub in ("state", "private", "lock", "cache", "log", "share", "ncalrpc"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        self.config = self.dir / "smb.conf"
        self.share_path = self.dir / "share"
        self.share = "bench"
        self.console_log = self.dir / "log" / "smbd.console"

    def default_config(self) -> str:
        interfaces = "lo" if self.listen_address == "127.0.0.1" else self.listen_address
        return GLOBAL_TEMPLATE.format(
            port=self.port, dir=self.dir, interfaces=interfaces
        ) + SHARE_TEMPLATE.format(dir=self.dir)

    def start(self, config_text: str | None = None) -> SmbServer:
        if not self.port:
            self.port = free_port()
        if config_text is not None or not self.config.exists():
            self.config.write_text(config_text or self.default_config())
        self.process = start_group(
            [
                *self.launcher,
                SMBD,
                "--foreground",
                "--no-process-group",
                "--debug-stdout",
                "--configfile",
                str(self.config),
            ],
            self.console_log,
        )
        try:
            wait_for_port(self.port, host=self.listen_address)
        except TimeoutError as exc:
            raise RuntimeError(f"smbd did not start:\n{self.console_log.read_text()}") from exc
        return self

    def stop(self) -> None:
        if self.process is not None:
            stop_group(self.process)
            self.process = None
        # smbd starts samba-dcerpcd on demand (share listing) and it leaves our process
        # group; find it, and its rpcd workers, by our config path.
        kill_mentioning(str(self.config))

    def add_user(self, name: str, password: str) -> SmbServer:
        """``name`` (a Unix user that exists) as a Samba user of this smbd's own passdb:
        signing and encryption need a session key, which a guest session lacks."""
        subprocess.run(
            ["pdbedit", "-s", str(self.config), "-a", "-u", name, "-t"],
            input=f"{password}\n{password}\n",
            text=True,
            check=True,
            capture_output=True,
        )
        return self

    def smbclient(self, command: str, share: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                "smbclient",
                "-p",
                str(self.port),
                "-N",
                f"//{self.listen_address}/{share or self.share}",
                "-c",
                command,
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )

    def list_shares(self) -> list[str]:
        result = subprocess.run(
            ["smbclient", "-p", str(self.port), "-N", "-g", "-L", "//127.0.0.1"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        return [line.split("|")[1] for line in result.stdout.splitlines() if line.startswith("Disk|")]
