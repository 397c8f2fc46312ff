"""A program named smbd that another user starts on the server: the hostile case of
issue 14. It claims a real smbd's smb.conf on its command line and, if anything ever
runs it (as root or not), it leaves a file behind that the test looks for."""

from __future__ import annotations

import os
import pwd
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass
class FakeSmbd:
    directory: Path
    process: subprocess.Popen

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def ran(self) -> bool:
        """Whether anything executed the planted program."""
        return (self.directory / "ran").exists()

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()

    def remove(self) -> None:
        for name in ("ran", "smbd", "sleep.py"):
            (self.directory / name).unlink(missing_ok=True)
        self.directory.rmdir()


def plant_fake_smbd(user: str, config: Path, tag: str) -> FakeSmbd:
    """Start, as ``user``, a process called smbd (argv[0] is a script in a directory
    anyone can write) that names ``config`` with --configfile. It really runs Python
    sleeping, so it has no sockets; the script itself only ever runs if someone
    executes its path."""
    uid = pwd.getpwnam(user).pw_uid
    directory = Path(f"/tmp/sambatune-{tag}-{os.getpid()}")
    directory.mkdir(mode=0o777, exist_ok=True)
    directory.chmod(0o777)
    fake = directory / "smbd"
    fake.write_text(f"#!/bin/sh\ntouch {directory / 'ran'}\nexec sleep 600\n")
    fake.chmod(0o755)
    os.chown(fake, uid, -1)
    sleeper = directory / "sleep.py"
    sleeper.write_text("import time\ntime.sleep(600)\n")
    process = subprocess.Popen(
        [str(fake), str(sleeper), f"--configfile={config}"],
        executable="/usr/bin/python3",
        user=uid,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return FakeSmbd(directory, process)
