"""Backups of this computer's settings, taken before anything is written.

Each backup is a folder in the user's data directory:

- ``backup.json``: every setting about to change and what it held (present with its
  value and type, or absent), the OS, the plan it came from. This is what
  ``sambatune client restore`` uses.
- ``restore.reg``: the registry part as a .reg file (REGEDIT4 for Windows 9x, version 5
  otherwise), absent values as ``"Name"=-``, so even without SambaTune a double click
  puts the registry back.
- ``restore.cmd`` / ``restore.sh``: the same for the netsh / sysctl / ip link / file
  parts, as commands a person can read and run.

``index.json`` lists the backups (newest last); if it is lost, the folders are scanned.
Like all of SambaTune's own files they are readable by this user only (POSIX modes).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shlex
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sambatune import appdirs
from sambatune.client.osinfo import OsInfo
from sambatune.client.plan import registry_changes_as_reg
from sambatune.client.regfile import decode_reg_bytes
from sambatune.client.settings import (
    AdapterPropertyRef,
    ConfKeyRef,
    DefaultsRef,
    FileRef,
    InterfaceMtuRef,
    MountOptionRef,
    Observed,
    RegistryValueRef,
    SettingRef,
    SmbClientConfigRef,
    SysctlRef,
    TcpAutotuningRef,
    ValueState,
    ref_from_json,
)
from sambatune.errors import InvalidInput, SambaTuneError

BACKUP_KIND = "sambatune-client-backup"
BACKUP_VERSION = 1


class BackupError(SambaTuneError):
    code = "backup-failed"


@dataclass
class BackupEntry:
    ref: SettingRef
    prior: Observed
    #: Registry values only: did the key exist before?
    key_existed: bool | None = None
    #: Where the restore is not bit-exact, why (e.g. netsh cannot express "never set").
    caveat: str = ""
    #: Registry values only: the keys writing the value created (its key and the parents
    #: that were missing too), deepest first. A restore removes each again while nothing
    #: else is in it, so the registry ends up with the keys it had.
    created_keys: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"setting": self.ref.to_json(), "prior": self.prior.to_json()}
        if self.key_existed is not None:
            data["key_existed"] = self.key_existed
        if self.created_keys:
            data["created_keys"] = list(self.created_keys)
        if self.caveat:
            data["caveat"] = self.caveat
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BackupEntry:
        ref = ref_from_json(data["setting"])
        key_existed = data.get("key_existed")
        created = data.get("created_keys")
        if created is None:
            # Backups from before created_keys knew only whether the value's own key existed.
            created = [ref.key] if key_existed is False and isinstance(ref, RegistryValueRef) else []
        return cls(
            ref,
            Observed.from_json(data["prior"]),
            key_existed,
            data.get("caveat", ""),
            [str(key) for key in created],
        )


@dataclass
class Backup:
    id: str
    created: str
    kind: str  # "before-apply" or "before-restore"
    os: OsInfo
    entries: list[BackupEntry]
    folder: Path
    plan_id: str | None = None
    summary: str = ""
    restored_at: str | None = None
    files: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": BACKUP_KIND,
            "version": BACKUP_VERSION,
            "id": self.id,
            "created": self.created,
            "backup_kind": self.kind,
            "os": self.os.to_json(),
            "plan_id": self.plan_id,
            "summary": self.summary,
            "entries": [e.to_json() for e in self.entries],
            "files": list(self.files),
        }

    def restore_file_texts(self) -> dict[str, str]:
        """Its restore files as text, by name (a .reg file in whatever encoding it has;
        one that cannot be read says why instead)."""
        texts = {}
        for name in self.files:
            try:
                raw = (self.folder / name).read_bytes()
                texts[name] = (
                    decode_reg_bytes(raw) if name.endswith(".reg") else raw.decode("utf-8", errors="replace")
                )
            except (OSError, InvalidInput) as exc:
                texts[name] = f"(cannot read: {exc})"
        return texts

    def index_entry(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "created": self.created,
            "kind": self.kind,
            "os": self.os.name,
            "profile": self.os.profile,
            "plan_id": self.plan_id,
            "summary": self.summary,
            "settings": len(self.entries),
            "folder": str(self.folder),
            "restored_at": self.restored_at,
        }


def default_root() -> Path:
    return appdirs.data_dir() / "client-backups"


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


class BackupStore:
    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_root()

    @property
    def index_path(self) -> Path:
        return self.root / "index.json"

    # -- writing ---------------------------------------------------------------------
    def create(
        self,
        os_info: OsInfo,
        entries: list[BackupEntry],
        *,
        kind: str = "before-apply",
        plan_id: str | None = None,
        summary: str = "",
    ) -> Backup:
        """Write the backup and read it back; only a backup that reads back equal is returned."""
        if not entries:
            raise BackupError("Nothing to back up.")
        for item in entries:
            if not item.prior.known:
                raise BackupError(
                    f"The current value of {item.ref.label()} cannot be read, so it could not "
                    "be put back; nothing was changed.",
                    details=item.prior.detail,
                )
        now = _now()
        backup_id = now.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
        folder = self.root / backup_id
        try:
            appdirs.private_dir(self.root)
            folder.mkdir(mode=0o700, exist_ok=False)
            backup = Backup(
                backup_id, now.isoformat(timespec="seconds"), kind, os_info, entries, folder, plan_id, summary
            )
            backup.files = self._write_restore_files(backup)
            _write_json(folder / "backup.json", backup.to_json())
            reread = self.load(backup_id)
            if [e.to_json() for e in reread.entries] != [e.to_json() for e in entries]:
                raise BackupError("The backup did not read back as written; nothing was changed.")
            self._update_index(backup.index_entry())
        except OSError as exc:
            raise BackupError(
                f"Cannot write the backup in {folder}: {exc.strerror or exc}; nothing was changed."
            ) from exc
        return backup

    def _write_restore_files(self, backup: Backup) -> list[str]:
        files = []
        registry = [e for e in backup.entries if isinstance(e.ref, RegistryValueRef)]
        if registry:
            # The outermost key each write created goes, with all below it, as [-KEY].
            deleted = {e.created_keys[-1] for e in registry if e.created_keys}
            version = 4 if backup.os.generation == "win9x" else 5
            regfile = registry_changes_as_reg(
                [(e.ref, e.prior.value) for e in registry if isinstance(e.ref, RegistryValueRef)],
                version,
                deleted_keys=deleted,
            )
            _write_private(backup.folder / "restore.reg", regfile.encode())
            files.append("restore.reg")
        others = [e for e in backup.entries if not isinstance(e.ref, RegistryValueRef)]
        if backup.os.family == "windows":
            lines = [
                "@echo off",
                f"rem SambaTune backup {backup.id} ({backup.created}): puts back the",
                "rem settings as they were before. Run it as administrator.",
                "rem 'sambatune client restore " + backup.id + "' does the same.",
            ]
            if registry:
                lines.append('reg import "%~dp0restore.reg"')
            lines += [cmd for e in reversed(others) for cmd in _windows_restore_commands(e)]
            _write_private(backup.folder / "restore.cmd", ("\r\n".join(lines) + "\r\n").encode())
            files.append("restore.cmd")
        elif others:
            lines = [
                "#!/bin/sh",
                f"# SambaTune backup {backup.id} ({backup.created}): puts back the settings",
                "# as they were before. Run it as root.",
                f"# 'sambatune client restore {backup.id}' does the same.",
                "set -e",
            ]
            copies = _copy_edited_files(backup, others)
            if copies:
                files.append("files")
                lines += [
                    "# Files SambaTune edits line by line (mount options, nsmb.conf) go back whole,",
                    "# byte for byte, as they were before the apply: edits made since are lost.",
                    "# 'sambatune client restore' undoes only SambaTune's own edits instead.",
                    'here="$(dirname "$0")"',
                ]
                for path, copy in copies:
                    lines.append(
                        f'cp "$here/files/{copy}" {shlex.quote(path)}'
                        if copy
                        else f"rm -f {shlex.quote(path)}"
                    )
                others = [e for e in others if not isinstance(e.ref, (MountOptionRef, ConfKeyRef))]
            lines += [cmd for e in reversed(others) for cmd in _posix_restore_commands(e, backup.os)]
            script = backup.folder / "restore.sh"
            _write_private(script, ("\n".join(lines) + "\n").encode("utf-8"))
            if os.name == "posix":
                script.chmod(0o700)
            files.append("restore.sh")
        return files

    def _update_index(self, entry: dict[str, Any]) -> None:
        entries = [e for e in self._read_index() if e.get("id") != entry["id"]]
        entries.append(entry)
        _write_json(
            self.index_path, {"kind": "sambatune-client-backup-index", "version": 1, "backups": entries}
        )

    def mark_restored(self, backup_id: str, when: str | None = None) -> None:
        entries = self._read_index()
        for entry in entries:
            if entry.get("id") == backup_id:
                entry["restored_at"] = when or _now().isoformat(timespec="seconds")
        _write_json(
            self.index_path, {"kind": "sambatune-client-backup-index", "version": 1, "backups": entries}
        )

    # -- reading ---------------------------------------------------------------------
    def _read_index(self) -> list[dict[str, Any]]:
        try:
            data = json.loads(self.index_path.read_text(encoding="utf-8"))
            backups = data.get("backups")
            if isinstance(backups, list):
                return [b for b in backups if isinstance(b, dict)]
        except (OSError, ValueError, AttributeError):
            pass
        return self._scan()

    def _scan(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        if not self.root.is_dir():
            return found
        for folder in sorted(self.root.iterdir()):
            if (folder / "backup.json").is_file():
                try:
                    found.append(self._load_file(folder / "backup.json").index_entry())
                except (SambaTuneError, OSError, ValueError, KeyError):
                    continue
        return found

    def list(self) -> list[dict[str, Any]]:
        """The backups, oldest first, as index entries (id, created, kind, summary, ...)."""
        return self._read_index()

    def resolve(self, reference: str) -> Path:
        """A backup id, a backup folder, or a backup.json path -> the backup.json path."""
        candidate = Path(reference)
        if candidate.is_file():
            return candidate
        if (candidate / "backup.json").is_file():
            return candidate / "backup.json"
        by_id = self.root / reference / "backup.json"
        if by_id.is_file():
            return by_id
        if reference in ("latest", "last"):
            entries = [e for e in self.list() if e.get("kind") == "before-apply"]
            if entries:
                return self.resolve(entries[-1]["id"])
        raise InvalidInput(
            f"No backup {reference!r}.",
            details=f"Backups are in {self.root}; list them with 'sambatune client backups'.",
        )

    def load(self, reference: str) -> Backup:
        backup = self._load_file(self.resolve(reference))
        try:
            index = json.loads(self.index_path.read_text(encoding="utf-8")).get("backups") or []
        except (OSError, ValueError, AttributeError):
            index = []
        for entry in index:
            if isinstance(entry, dict) and entry.get("id") == backup.id:
                backup.restored_at = entry.get("restored_at")
        return backup

    @staticmethod
    def _load_file(path: Path) -> Backup:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InvalidInput(f"Cannot read the backup {path}: {exc}") from exc
        if data.get("kind") != BACKUP_KIND or data.get("version") != BACKUP_VERSION:
            raise InvalidInput(f"{path} is not a SambaTune client backup.")
        return Backup(
            id=data["id"],
            created=data["created"],
            kind=data.get("backup_kind", "before-apply"),
            os=OsInfo.from_json(data["os"]),
            entries=[BackupEntry.from_json(e) for e in data["entries"]],
            folder=path.parent,
            plan_id=data.get("plan_id"),
            summary=data.get("summary", ""),
            files=list(data.get("files") or []),
        )


def _copy_edited_files(backup: Backup, entries: list[BackupEntry]) -> list[tuple[str, str | None]]:
    """Keep the exact bytes of each file an apply edits in place; None: it did not exist."""
    copies: list[tuple[str, str | None]] = []
    seen: set[str] = set()
    for entry in entries:
        ref = entry.ref
        if not isinstance(ref, (MountOptionRef, ConfKeyRef)) or ref.path in seen:
            continue
        seen.add(ref.path)
        try:
            data = Path(ref.path).read_bytes()
        except FileNotFoundError:
            copies.append((ref.path, None))
            continue
        folder = backup.folder / "files"
        folder.mkdir(mode=0o700, exist_ok=True)
        name = f"{len(copies) + 1:02d}-{Path(ref.path).name}"
        _write_private(folder / name, data)
        copies.append((ref.path, name))
    return copies


def _write_json(path: Path, data: Any) -> None:
    from sambatune.remote.local import write_local_file_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    # The atomic write keeps an existing file's mode (an index.json from before): tighten.
    appdirs.private_file(path)
    write_local_file_atomic(
        str(path),
        (json.dumps(data, indent=2) + "\n").encode("utf-8"),
        mode=0o600 if os.name == "posix" else None,
    )


def _write_private(path: Path, data: bytes) -> None:
    if os.name == "posix":
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
    else:
        path.write_bytes(data)


def _windows_restore_commands(entry: BackupEntry) -> list[str]:
    from sambatune.client.windows_system import WindowsNetCommands

    value = entry.prior.value
    if entry.prior.state != ValueState.PRESENT or value is None:
        return [f"rem {entry.ref.label()} was absent before; nothing to put back"]
    if isinstance(entry.ref, TcpAutotuningRef):
        return [subprocess.list2cmdline(WindowsNetCommands.set_autotuning_argv(str(value)))]
    if isinstance(entry.ref, InterfaceMtuRef) and isinstance(value, int):
        return [subprocess.list2cmdline(WindowsNetCommands.set_mtu_argv(entry.ref.interface, value))]
    if isinstance(entry.ref, AdapterPropertyRef):
        return [
            subprocess.list2cmdline(
                WindowsNetCommands.set_property_argv(entry.ref.interface, entry.ref.keyword, str(value))
            )
        ]
    if isinstance(entry.ref, SmbClientConfigRef):
        return [subprocess.list2cmdline(WindowsNetCommands.set_smb_client_argv(entry.ref.name, value))]
    return [f"rem (no command for {entry.ref.label()})"]


def _posix_restore_commands(entry: BackupEntry, os_info: OsInfo) -> list[str]:
    ref, prior = entry.ref, entry.prior
    if isinstance(ref, FileRef):
        if prior.state == ValueState.ABSENT:
            return [f"rm -f {shlex.quote(ref.path)}"]
        marker = "SAMBATUNE_" + uuid.uuid4().hex[:8].upper()
        text = str(prior.value)
        return [f"cat > {shlex.quote(ref.path)} <<'{marker}'", text.rstrip("\n"), marker]
    if isinstance(ref, DefaultsRef):
        from sambatune.client.macos_system import macos_operations

        return macos_operations(ref, prior.value if prior.state == ValueState.PRESENT else None)
    if prior.state != ValueState.PRESENT or prior.value is None:
        return [f"# {ref.label()} was absent before; nothing to put back"]
    if isinstance(ref, SysctlRef):
        return [shlex.join(["sysctl", "-w", f"{ref.name}={prior.value}"])]
    if isinstance(ref, InterfaceMtuRef):
        if os_info.family == "macos":
            return [shlex.join(["networksetup", "-setMTU", ref.interface, str(prior.value)])]
        return [shlex.join(["ip", "link", "set", "dev", ref.interface, "mtu", str(prior.value)])]
    return [f"# (no command for {ref.label()})"]
