"""A throwaway system user with a password and password-protected sudo rights.

Named per test session so parallel sessions never collide; deleted at the end.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

SUDOERS_DIR = Path("/etc/sudoers.d")


@dataclass
class SudoUser:
    name: str
    password: str
    sudoers_file: Path
    home: Path

    @classmethod
    def create(cls, *, with_sudo: bool = True) -> SudoUser:
        if os.geteuid() != 0:
            raise PermissionError("creating a sudo test user needs root")
        name = "stt" + secrets.token_hex(4)
        password = "pw-" + secrets.token_urlsafe(12)
        # Its own temp dir: pytest's are private to root and sshd must chdir into it.
        home = Path(tempfile.mkdtemp(prefix=f"sambatune-{name}-"))
        subprocess.run(
            [
                "useradd",
                "--no-create-home",
                "--home-dir",
                str(home),
                "--shell",
                "/bin/sh",
                "--comment",
                "SambaTune test user",
                name,
            ],
            check=True,
            capture_output=True,
        )
        os.chown(home, _uid(name), _gid(name))
        # chpasswd reads "name:password" on stdin: the password never appears in ps.
        subprocess.run(["chpasswd"], input=f"{name}:{password}\n".encode(), check=True, capture_output=True)
        sudoers = SUDOERS_DIR / f"{name}"
        if with_sudo:
            SUDOERS_DIR.mkdir(mode=0o755, exist_ok=True)
            sudoers.write_text(f"{name} ALL=(ALL:ALL) ALL\n")
            sudoers.chmod(0o440)
        return cls(name, password, sudoers, home)

    def delete(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.sudoers_file.unlink()
        subprocess.run(["pkill", "-KILL", "-u", self.name], capture_output=True)
        subprocess.run(["userdel", "--force", self.name], capture_output=True)
        shutil.rmtree(self.home, ignore_errors=True)


def _uid(name: str) -> int:
    import pwd

    return pwd.getpwnam(name).pw_uid


def _gid(name: str) -> int:
    import pwd

    return pwd.getpwnam(name).pw_gid
