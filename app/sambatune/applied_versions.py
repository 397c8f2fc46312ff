"""Every smb.conf version SambaTune applied, kept on this computer (SQLite).

The server keeps its own backups; this is the app's record of what it did where,
so a version survives even when the server's backups were pruned or lost.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sambatune.appdirs import data_dir, private_database
from sambatune.states import ApplyStatus, LiveState, TextState

SCHEMA = """
CREATE TABLE IF NOT EXISTS applied_configs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    server TEXT NOT NULL,
    path TEXT NOT NULL,
    applied_at TEXT NOT NULL,
    outcome TEXT NOT NULL,
    summary TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    previous_sha256 TEXT NOT NULL,
    backup_id TEXT,
    content BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS applied_configs_server ON applied_configs(server, path, id);
"""


class JournalStatus(TextState):
    """The outcomes only this record has, beside the pipeline's :class:`ApplyStatus`.

    A run writes its row before it touches the live file and settles it afterwards, so
    a run killed in between (SIGKILL, power cut) leaves a row that says so; the next run
    against the same file reads the live file and settles it with what is really there."""

    IN_PROGRESS = "in-progress"
    INTERRUPTED = "interrupted"


IN_PROGRESS = JournalStatus.IN_PROGRESS
INTERRUPTED = JournalStatus.INTERRUPTED


@dataclass(frozen=True)
class AppliedVersion:
    id: int
    server: str
    path: str
    applied_at: str
    outcome: str
    summary: str
    sha256: str
    previous_sha256: str
    backup_id: str | None
    content: bytes
    # Which version the server had afterwards, a LiveState value ("" in rows written
    # before SambaTune recorded it). This and ``outcome`` (an ApplyStatus or JournalStatus
    # value) stay the plain strings read back: a newer SambaTune may write other words,
    # and the readers fall back for the ones they do not know.
    live: str = ""

    def to_json(self, with_content: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "server": self.server,
            "path": self.path,
            "applied_at": self.applied_at,
            "outcome": self.outcome,
            "summary": self.summary,
            "sha256": self.sha256,
            "previous_sha256": self.previous_sha256,
            "backup_id": self.backup_id,
            "size": len(self.content),
            "live": self.live,
        }
        if with_content:
            data["content"] = self.content.decode("utf-8", "replace")
        return data


class AppliedVersions:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or data_dir() / "sambatune.sqlite3"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        private_database(self.path)  # whole smb.conf files
        with self._connect() as db:
            db.executescript(SCHEMA)
            columns = {row[1] for row in db.execute("PRAGMA table_info(applied_configs)")}
            if "live" not in columns:
                db.execute("ALTER TABLE applied_configs ADD COLUMN live TEXT NOT NULL DEFAULT ''")

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=10)

    def record(
        self,
        *,
        server: str,
        path: str,
        content: bytes,
        previous: bytes,
        outcome: ApplyStatus | JournalStatus,
        summary: str,
        backup_id: str | None,
        live: LiveState | None = None,
    ) -> int:
        now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        with self._connect() as db:
            cursor = db.execute(
                "INSERT INTO applied_configs (server, path, applied_at, outcome, summary, "
                "sha256, previous_sha256, backup_id, content, live) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    server,
                    path,
                    now,
                    outcome,
                    summary,
                    hashlib.sha256(content).hexdigest(),
                    hashlib.sha256(previous).hexdigest(),
                    backup_id,
                    content,
                    live or "",
                ),
            )
            return int(cursor.lastrowid or 0)

    def for_server(self, server: str, path: str | None = None) -> list[AppliedVersion]:
        query = "SELECT * FROM applied_configs WHERE server = ?"
        args: list[Any] = [server]
        if path:
            query += " AND path = ?"
            args.append(path)
        with self._connect() as db:
            rows = db.execute(query + " ORDER BY id DESC", args).fetchall()
        return [AppliedVersion(*row) for row in rows]

    def journal(self, server: str, path: str) -> AppliedJournal:
        return AppliedJournal(self, server, path)

    def _update(self, row_id: int, **values: Any) -> None:
        names = ", ".join(f"{name} = ?" for name in values)
        with self._connect() as db:
            db.execute(f"UPDATE applied_configs SET {names} WHERE id = ?", (*values.values(), row_id))


class AppliedJournal:
    """The safe-apply pipeline's record of one file on one server (see conf.apply)."""

    def __init__(self, versions: AppliedVersions, server: str, path: str) -> None:
        self.versions = versions
        self.server = server
        self.path = path
        self.row_id: int | None = None

    def begin(self, *, candidate: bytes, previous: bytes, summary: str, backup_id: str | None) -> None:
        self.row_id = self.versions.record(
            server=self.server,
            path=self.path,
            content=candidate,
            previous=previous,
            outcome=IN_PROGRESS,
            summary=summary,
            backup_id=backup_id,
            live=LiveState.UNKNOWN,
        )

    def finish(self, *, status: ApplyStatus, live: LiveState, content: bytes) -> None:
        """Settle the row begun for this run: its outcome and the bytes that are live."""
        if self.row_id is None:
            return
        self.versions._update(
            self.row_id,
            outcome=status,
            live=live,
            content=content,
            sha256=hashlib.sha256(content).hexdigest(),
        )
        self.row_id = None

    def unfinished(self) -> list[AppliedVersion]:
        return [v for v in self.versions.for_server(self.server, self.path) if v.outcome == IN_PROGRESS]

    def settle_interrupted(self, version: AppliedVersion, live_sha256: str) -> LiveState:
        """Settle a row a killed run left, from the live file's digest; returns its live."""
        if live_sha256 == version.sha256:
            live = LiveState.NEW
        elif live_sha256 == version.previous_sha256:
            live = LiveState.OLD
        else:
            live = LiveState.UNKNOWN
        self.versions._update(version.id, outcome=INTERRUPTED, live=live)
        return live
