"""Saved servers: how to reach them, never their secrets.

Stored as JSON in the user's config directory. Passwords and passphrases are not
part of a profile; they live in memory, or in the OS keyring if the user opts in.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sambatune.appdirs import config_dir, private_file
from sambatune.errors import InvalidInput
from sambatune.json_fields import StoredFields

if TYPE_CHECKING:
    from sambatune.remote.connection import ConnectionOptions

AUTH_METHODS = ("key", "agent", "password")
LOCAL_ID = "local"


@dataclass
class ServerProfile(StoredFields):
    name: str
    host: str
    port: int | None = None
    user: str = ""
    auth: str = "key"  # key | agent | password
    identity_file: str = ""
    jump_host: str = ""
    use_sudo: bool = False
    config_path: str = ""  # smb.conf to manage; empty = detect
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])

    JSON_NAME = "a server"

    @property
    def is_local(self) -> bool:
        return self.id == LOCAL_ID

    def validate(self) -> None:
        if not self.name.strip():
            raise InvalidInput("A server needs a name.")
        if not self.is_local and not self.host.strip():
            raise InvalidInput("A server needs a host name or address.")
        if self.port is not None and not 0 < self.port < 65536:
            raise InvalidInput(f"Port {self.port} is not between 1 and 65535.")
        if self.auth not in AUTH_METHODS:
            raise InvalidInput(f"Unknown sign-in method {self.auth!r}.")
        if any(c.isspace() for c in self.host.strip()):
            raise InvalidInput("The host name cannot contain spaces.")

    def connection_options(self) -> ConnectionOptions:
        # Imported here: it brings paramiko, which the window does not need to open.
        from sambatune.remote.connection import ConnectionOptions

        if self.is_local:
            return ConnectionOptions()
        return ConnectionOptions(
            host=self.host.strip(),
            port=self.port,
            user=self.user.strip() or None,
            identity_file=self.identity_file or None,
            jump_host=self.jump_host.strip() or None,
            auth=self.auth,
        )

    @property
    def target_label(self) -> str:
        """How to name the target in a sentence: "this computer" or "admin@files1"."""
        return "this computer" if self.is_local else self.describe()

    def describe(self) -> str:
        if self.is_local:
            return "local Samba and client settings"
        user = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port else ""
        via = f" via {self.jump_host}" if self.jump_host else ""
        return f"{user}{self.host}{port}{via}"

    @classmethod
    def from_json(cls, data: Any) -> ServerProfile:
        """A saved server, every value checked: a hand-edited or damaged file gives one
        clear refusal, never a profile whose wrong types fail later (or, with the id
        "local", one that quietly means this computer)."""
        profile = super().from_json(data)
        if not profile.id.strip():
            raise InvalidInput("a server needs an id")
        if profile.is_local:
            raise InvalidInput(f"the id \"{LOCAL_ID}\" is this computer's own, never a saved server's")
        profile.validate()
        return profile


def local_profile() -> ServerProfile:
    return ServerProfile(name="This computer", host="", id=LOCAL_ID)


class ProfileStore:
    """The list of saved servers, written atomically on every change."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or config_dir() / "servers.json"
        # A file that failed to load is never overwritten: the next save keeps it aside.
        self.damaged = False

    def load(self) -> list[ServerProfile]:
        if not self.path.exists():
            return []
        private_file(self.path)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise self._damaged(str(exc)) from exc
        servers = data.get("servers", []) if isinstance(data, dict) else None
        if not isinstance(servers, list):
            raise self._damaged('it holds no list of "servers"')
        profiles: list[ServerProfile] = []
        problems: list[str] = []
        for index, item in enumerate(servers):
            try:
                profiles.append(ServerProfile.from_json(item))
            except InvalidInput as exc:
                name = (
                    item.get("name") if isinstance(item, dict) and isinstance(item.get("name"), str) else ""
                )
                problems.append(f"server {index + 1}{f' ({name!r})' if name else ''}: {exc.message}")
        ids = [p.id for p in profiles]
        problems += [f"the id {i!r} is used twice" for i in sorted({i for i in ids if ids.count(i) > 1})]
        if problems:
            raise self._damaged("; ".join(problems))
        return profiles

    def _damaged(self, why: str) -> InvalidInput:
        self.damaged = True
        return InvalidInput(
            f"The server list {self.path} is damaged and was not loaded: {why}.",
            details="Fix the file by hand. Saving a server here keeps it as "
            f"{self.path.name}.damaged-DATE and starts a new list.",
        )

    def save(self, profiles: list[ServerProfile]) -> None:
        from sambatune.remote.local import write_local_file_atomic

        if self.damaged and self.path.exists():
            stamp = time.strftime("%Y%m%d-%H%M%S")
            self.path.replace(self.path.with_name(f"{self.path.name}.damaged-{stamp}"))
        self.damaged = False
        payload = {"version": 1, "servers": [p.to_json() for p in profiles if not p.is_local]}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # The atomic write keeps an existing file's mode: tighten it first.
        private_file(self.path)
        write_local_file_atomic(
            str(self.path), (json.dumps(payload, indent=2) + "\n").encode("utf-8"), mode=0o600
        )
