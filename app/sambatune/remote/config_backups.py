"""Backups of smb.conf on the server itself, next to the file they protect.

Every apply first copies the live file to ``<config dir>/sambatune-backups/`` as
``smb.conf.<id>`` with a small JSON sidecar (when, who, why, checksum). The newest
``retention`` backups are kept.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import posixpath
import shlex
from dataclasses import dataclass

from sambatune.errors import InvalidInput
from sambatune.json_fields import FieldsAsJson
from sambatune.remote.transport import Transport

BACKUP_DIR_NAME = "sambatune-backups"
DEFAULT_RETENTION = 30


@dataclass(frozen=True)
class Backup(FieldsAsJson):
    id: str
    path: str
    created: str  # ISO 8601, UTC
    size: int
    sha256: str
    applied_by: str
    summary: str
    # The smb.conf this is a backup of: one backup directory may serve several.
    # Empty in backups written before SambaTune recorded it.
    config_path: str = ""


def default_backup_dir(config_path: str) -> str:
    return posixpath.join(posixpath.dirname(config_path) or "/", BACKUP_DIR_NAME)


class BackupStore:
    def __init__(
        self,
        transport: Transport,
        config_path: str,
        *,
        backup_dir: str | None = None,
        retention: int = DEFAULT_RETENTION,
        sudo: bool = False,
    ) -> None:
        if retention < 1:
            raise InvalidInput("Keep at least one backup.")
        self.transport = transport
        self.config_path = config_path
        self.base = posixpath.basename(config_path)
        self.directory = backup_dir or default_backup_dir(config_path)
        self.retention = retention
        self.sudo = sudo

    def _file(self, backup_id: str) -> str:
        if "/" in backup_id or backup_id.startswith("."):
            raise InvalidInput(f"{backup_id!r} is not a backup id.")
        return posixpath.join(self.directory, f"{self.base}.{backup_id}")

    def create(self, data: bytes, *, applied_by: str, summary: str) -> Backup:
        now = _dt.datetime.now(_dt.timezone.utc)
        digest = hashlib.sha256(data).hexdigest()
        backup_id = now.strftime("%Y%m%dT%H%M%S.%fZ") + "-" + digest[:8]
        path = self._file(backup_id)
        self.transport.run(["mkdir", "-p", "-m", "700", self.directory], sudo=self.sudo).check(
            f"Creating {self.directory}"
        )
        # Mode 600: smb.conf may name users, paths and passwords of other services.
        self.transport.write_file_atomic(path, data, sudo=self.sudo, mode=0o600)
        backup = Backup(
            id=backup_id,
            path=path,
            created=now.isoformat(timespec="seconds"),
            size=len(data),
            sha256=digest,
            applied_by=applied_by,
            summary=summary,
            config_path=self.config_path,
        )
        meta = json.dumps(backup.to_json(), sort_keys=True).encode("utf-8") + b"\n"
        self.transport.write_file_atomic(path + ".json", meta, sudo=self.sudo, mode=0o600)
        stored = self.transport.read_file(path, sudo=self.sudo)
        if hashlib.sha256(stored).hexdigest() != digest:
            raise InvalidInput(f"The backup {path} does not read back identical.")
        return backup

    def entries(self) -> list[Backup]:
        """Newest first."""
        pattern = posixpath.join(self.directory, f"{self.base}.*.json")
        script = f'for f in {_glob_quote(pattern)}; do [ -f "$f" ] || continue; cat "$f"; echo; done'
        result = self.transport.run(["sh", "-c", script], sudo=self.sudo)
        backups = []
        for line in result.text.splitlines():
            line = line.strip()
            if not line:
                continue
            try:
                backup = Backup(**json.loads(line))
            except (TypeError, ValueError):
                continue
            if self._ours(backup):
                backups.append(backup)
        return sorted(backups, key=lambda b: b.id, reverse=True)

    def _ours(self, backup: Backup) -> bool:
        """A backup of this config file, not of another one sharing the directory."""
        if backup.config_path:
            return backup.config_path == self.config_path
        # Older backups say nothing; beside the file they can only be this file's.
        return self.directory == default_backup_dir(self.config_path)

    def read(self, backup_id: str) -> bytes:
        """The backup's bytes, proven to be the ones it was made with."""
        backup = self.get(backup_id)
        data = self.transport.read_file(self._file(backup.id), sudo=self.sudo)
        if hashlib.sha256(data).hexdigest() != backup.sha256:
            raise InvalidInput(
                f"The backup {backup.path} no longer has the bytes it was made with "
                "(its checksum differs), so SambaTune will not use it."
            )
        return data

    def get(self, backup_id: str) -> Backup:
        for backup in self.entries():
            if backup.id == backup_id:
                return backup
        raise InvalidInput(f"No backup {backup_id!r} in {self.directory}.")

    def prune(self) -> list[str]:
        """Delete the oldest backups beyond the retention limit; return their ids."""
        doomed = self.entries()[self.retention :]
        paths: list[str] = []
        for backup in doomed:
            paths += [self._file(backup.id), self._file(backup.id) + ".json"]
        if paths:
            self.transport.run(["rm", "-f", "--", *paths], sudo=self.sudo).check("Pruning backups")
        return [b.id for b in doomed]


def _glob_quote(pattern: str) -> str:
    """Quote everything except the glob star, so the shell expands only that."""
    return "*".join(shlex.quote(part) for part in pattern.split("*"))
