"""Every benchmark session, kept on this computer in SQLite (``results.sqlite3``).

A file of its own next to the record of applied configurations (``sambatune.sqlite3``):
results grow by thousands of sample rows per session and may be deleted, copied or
shared freely, while the applied-config record is safety history that must not go
with them; and each file can migrate its own schema (``PRAGMA user_version``) without
coordinating with the other.

Stored per session: the server, the test and its parameters, every run (warm-ups
included, flagged), every sample, the notes, and the exact smb.conf bytes and survey
the session was measured with.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sambatune.appdirs import data_dir, private_database
from sambatune.bench.context import BenchContext
from sambatune.bench.events import Sample
from sambatune.bench.records import BenchResult, RunRecord, SeriesResult
from sambatune.errors import InvalidInput, SambaTuneError

FILE_NAME = "results.sqlite3"

# Each entry takes the schema from the previous version to this one; never edit a
# released entry, add the next.
MIGRATIONS: dict[int, str] = {
    1: """
CREATE TABLE servers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    label TEXT NOT NULL UNIQUE,
    hostname TEXT,
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL
);
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    server_id INTEGER NOT NULL REFERENCES servers(id),
    test TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    parameters TEXT NOT NULL,
    primary_series TEXT NOT NULL,
    link_speed_bits INTEGER,
    notes TEXT NOT NULL,
    extra TEXT NOT NULL,
    agents TEXT NOT NULL,
    smb_conf_path TEXT,
    smb_conf BLOB,
    smb_conf_sha256 TEXT,
    samba_version TEXT,
    survey TEXT
);
CREATE INDEX sessions_server ON sessions(server_id, test, id);
CREATE TABLE series (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    label TEXT NOT NULL,
    unit TEXT NOT NULL,
    UNIQUE (session_id, name)
);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    series_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL,
    warmup INTEGER NOT NULL,
    seconds REAL NOT NULL,
    bytes INTEGER,
    operations INTEGER,
    link_speed_bits INTEGER,
    details TEXT NOT NULL,
    UNIQUE (series_id, attempt)
);
CREATE TABLE samples (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    t REAL NOT NULL,
    bytes INTEGER NOT NULL,
    bytes_per_s REAL NOT NULL,
    source TEXT NOT NULL
);
CREATE INDEX samples_run ON samples(run_id, id);
""",
    # The tuning wizard (sambatune.wizard): one row per wizard, one per finished step.
    2: """
CREATE TABLE wizards (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    server TEXT NOT NULL,
    config_path TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    finished_at TEXT,
    measure TEXT NOT NULL
);
CREATE TABLE wizard_steps (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    wizard_id INTEGER NOT NULL REFERENCES wizards(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    step TEXT NOT NULL,
    round INTEGER NOT NULL,
    finished_at TEXT NOT NULL,
    data TEXT NOT NULL,
    smb_conf BLOB,
    UNIQUE (wizard_id, position)
);
""",
}
SCHEMA_VERSION = max(MIGRATIONS)


@dataclass(frozen=True)
class SessionSummary:
    """One line of ``results list``."""

    id: int
    server: str
    test: str
    started_at: str
    note: str
    primary_series: str
    mean: float | None
    unit: str
    runs: int

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.id,
            "server": self.server,
            "test": self.test,
            "started_at": self.started_at,
            "note": self.note,
            "series": self.primary_series,
            "unit": self.unit,
            "runs": self.runs,
            "mean_bytes_per_s": self.mean if self.unit == "bytes" else None,
            "mean_operations_per_s": self.mean if self.unit != "bytes" else None,
        }


@dataclass
class StoredSession:
    id: int
    server: str
    hostname: str | None
    note: str
    result: BenchResult
    smb_conf_path: str | None
    smb_conf: bytes | None
    samba_version: str | None
    survey: dict[str, Any] | None

    def to_json(self, *, with_config: bool = False) -> dict[str, Any]:
        data = self.result.to_json()
        data.update(
            session_id=self.id,
            server=self.server,
            hostname=self.hostname,
            note=self.note,
            smb_conf_path=self.smb_conf_path,
            samba_version=self.samba_version,
            smb_conf_sha256=hashlib.sha256(self.smb_conf).hexdigest() if self.smb_conf else None,
        )
        if with_config:
            data["smb_conf"] = self.smb_conf.decode("utf-8", "replace") if self.smb_conf is not None else None
        return data


def _statements(script: str) -> Iterator[str]:
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending
            pending = ""
    if pending.strip():
        yield pending


class ResultsDatabase:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or data_dir() / FILE_NAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        private_database(self.path)  # server names, each session's smb.conf and survey
        self._migrate()

    def connection(self) -> AbstractContextManager[sqlite3.Connection]:
        """One transaction on the database (for the tables other modules own, e.g. the wizard's)."""
        return self._connect()

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=10)
        try:
            db.execute("PRAGMA foreign_keys = ON")
            with db:
                yield db
        finally:
            db.close()

    def _migrate(self) -> None:
        # Two threads (or two windows) opening a new database at once both saw version 0
        # and the second failed with "table already exists": the version is read and
        # raised inside one write transaction, so the second waits and sees the first's.
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                version = int(db.execute("PRAGMA user_version").fetchone()[0])
                if version > SCHEMA_VERSION:
                    raise SambaTuneError(
                        f"{self.path} was written by a newer SambaTune (results schema "
                        f"{version}; this one knows up to {SCHEMA_VERSION}).",
                        details="Update SambaTune, or point SAMBATUNE_HOME elsewhere.",
                    )
                for target in range(version + 1, SCHEMA_VERSION + 1):
                    # executescript would commit first and end the lock: one statement
                    # at a time instead.
                    for statement in _statements(MIGRATIONS[target]):
                        db.execute(statement)
                    db.execute(f"PRAGMA user_version = {target}")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        finally:
            db.close()

    @property
    def schema_version(self) -> int:
        with self._connect() as db:
            return int(db.execute("PRAGMA user_version").fetchone()[0])

    # -- writing -------------------------------------------------------------
    def save(self, result: BenchResult, context: BenchContext | None = None, note: str = "") -> int:
        """Store a finished session; sets and returns ``result.session_id``."""
        survey = context.survey if context else None
        hostname = str(survey.data.get("hostname")) if survey and survey.data.get("hostname") else None
        smb_conf = context.smb_conf if context else None
        with self._connect() as db:
            server_id = self._server(db, result.target, hostname, result.finished_at)
            cursor = db.execute(
                "INSERT INTO sessions (server_id, test, started_at, finished_at, note, parameters, "
                "primary_series, link_speed_bits, notes, extra, agents, smb_conf_path, smb_conf, "
                "smb_conf_sha256, samba_version, survey) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    server_id,
                    result.test,
                    result.started_at,
                    result.finished_at,
                    note,
                    _dump(result.parameters),
                    result.primary,
                    result.link_speed_bits,
                    _dump(result.notes),
                    _dump(result.extra),
                    _dump(result.agents),
                    context.smb_conf_path if context else None,
                    smb_conf,
                    hashlib.sha256(smb_conf).hexdigest() if smb_conf is not None else None,
                    (survey.samba.get("version_text") if survey else None),
                    _dump(survey.to_json()) if survey else None,
                ),
            )
            session_id = int(cursor.lastrowid or 0)
            run_ids: dict[tuple[str, int], int] = {}
            for position, series in enumerate(result.series.values()):
                series_id = int(
                    db.execute(
                        "INSERT INTO series (session_id, position, name, label, unit) VALUES (?,?,?,?,?)",
                        (session_id, position, series.name, series.label, series.unit),
                    ).lastrowid
                    or 0
                )
                for run in series.runs:
                    run_ids[(series.name, run.attempt)] = int(
                        db.execute(
                            "INSERT INTO runs (series_id, attempt, warmup, seconds, bytes, operations, "
                            "link_speed_bits, details) VALUES (?,?,?,?,?,?,?,?)",
                            (
                                series_id,
                                run.attempt,
                                int(run.warmup),
                                run.seconds,
                                run.bytes,
                                run.operations,
                                run.link_speed_bits,
                                _dump(run.details),
                            ),
                        ).lastrowid
                        or 0
                    )
            db.executemany(
                "INSERT INTO samples (run_id, t, bytes, bytes_per_s, source) VALUES (?,?,?,?,?)",
                [
                    (run_ids[(s.series, s.attempt)], s.t, s.bytes, s.bytes_per_s, s.source)
                    for s in result.samples
                    if (s.series, s.attempt) in run_ids
                ],
            )
        result.session_id = session_id
        return session_id

    def _server(self, db: sqlite3.Connection, label: str, hostname: str | None, when: str) -> int:
        row = db.execute("SELECT id FROM servers WHERE label = ?", (label,)).fetchone()
        if row:
            db.execute(
                "UPDATE servers SET last_seen = ?, hostname = COALESCE(?, hostname) WHERE id = ?",
                (when, hostname, row[0]),
            )
            return int(row[0])
        return int(
            db.execute(
                "INSERT INTO servers (label, hostname, first_seen, last_seen) VALUES (?,?,?,?)",
                (label, hostname, when, when),
            ).lastrowid
            or 0
        )

    def set_note(self, session_id: int, note: str) -> None:
        with self._connect() as db:
            if not db.execute("UPDATE sessions SET note = ? WHERE id = ?", (note, session_id)).rowcount:
                raise _no_session(session_id)

    def delete(self, session_id: int) -> None:
        with self._connect() as db:
            if not db.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount:
                raise _no_session(session_id)

    # -- reading -------------------------------------------------------------
    def servers(self) -> list[dict[str, Any]]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT label, hostname, first_seen, last_seen, "
                "(SELECT COUNT(*) FROM sessions WHERE server_id = servers.id) "
                "FROM servers ORDER BY label"
            ).fetchall()
        return [
            {"server": r[0], "hostname": r[1], "first_seen": r[2], "last_seen": r[3], "sessions": r[4]}
            for r in rows
        ]

    def sessions(
        self, *, server: str | None = None, test: str | None = None, limit: int | None = None
    ) -> list[SessionSummary]:
        query = (
            "SELECT sessions.id, servers.label, test, started_at, note, primary_series "
            "FROM sessions JOIN servers ON servers.id = sessions.server_id WHERE 1=1"
        )
        args: list[Any] = []
        if server:
            query += " AND (servers.label = ? OR servers.hostname = ?)"
            args += [server, server]
        if test:
            query += " AND test = ?"
            args.append(test)
        query += " ORDER BY sessions.id DESC"
        if limit:
            query += " LIMIT ?"
            args.append(limit)
        with self._connect() as db:
            rows = db.execute(query, args).fetchall()
            summaries = []
            for session_id, label, kind, started, note, primary in rows:
                series = self._load_series(db, session_id, only=primary)
                found = series.get(primary)
                stats = found.stats() if found else None
                summaries.append(
                    SessionSummary(
                        session_id,
                        label,
                        kind,
                        started,
                        note,
                        primary,
                        stats.mean if stats else None,
                        found.unit if found else "bytes",
                        len(found.counted) if found else 0,
                    )
                )
        return summaries

    def load(self, session_id: int) -> StoredSession:
        with self._connect() as db:
            row = db.execute(
                "SELECT servers.label, servers.hostname, test, started_at, finished_at, note, "
                "parameters, primary_series, link_speed_bits, notes, extra, agents, "
                "smb_conf_path, smb_conf, samba_version, survey "
                "FROM sessions JOIN servers ON servers.id = sessions.server_id WHERE sessions.id = ?",
                (session_id,),
            ).fetchone()
            if row is None:
                raise _no_session(session_id)
            series = self._load_series(db, session_id)
            samples = [
                Sample(name, attempt, t, moved, rate, source)
                for name, attempt, t, moved, rate, source in db.execute(
                    "SELECT series.name, runs.attempt, samples.t, samples.bytes, "
                    "samples.bytes_per_s, samples.source FROM samples "
                    "JOIN runs ON runs.id = samples.run_id JOIN series ON series.id = runs.series_id "
                    "WHERE series.session_id = ? ORDER BY samples.id",
                    (session_id,),
                )
            ]
        (
            label,
            hostname,
            test,
            started,
            finished,
            note,
            parameters,
            primary,
            link,
            notes,
            extra,
            agents,
            conf_path,
            conf,
            samba_version,
            survey,
        ) = row
        result = BenchResult(
            test=test,
            target=label,
            parameters=json.loads(parameters),
            series=series,
            primary=primary,
            started_at=started,
            finished_at=finished,
            link_speed_bits=link,
            notes=json.loads(notes),
            extra=json.loads(extra),
            agents=json.loads(agents),
            samples=samples,
            session_id=session_id,
        )
        return StoredSession(
            id=session_id,
            server=label,
            hostname=hostname,
            note=note,
            result=result,
            smb_conf_path=conf_path,
            smb_conf=bytes(conf) if conf is not None else None,
            samba_version=samba_version,
            survey=json.loads(survey) if survey else None,
        )

    def _load_series(
        self, db: sqlite3.Connection, session_id: int, only: str | None = None
    ) -> dict[str, SeriesResult]:
        query = "SELECT id, name, label, unit FROM series WHERE session_id = ?"
        args: list[Any] = [session_id]
        if only is not None:
            query += " AND name = ?"
            args.append(only)
        series: dict[str, SeriesResult] = {}
        for series_id, name, label, unit in db.execute(query + " ORDER BY position", args).fetchall():
            runs = [
                RunRecord(
                    series=name,
                    attempt=attempt,
                    warmup=bool(warmup),
                    seconds=seconds,
                    bytes=moved,
                    operations=operations,
                    link_speed_bits=link,
                    details=json.loads(details),
                )
                for attempt, warmup, seconds, moved, operations, link, details in db.execute(
                    "SELECT attempt, warmup, seconds, bytes, operations, link_speed_bits, details "
                    "FROM runs WHERE series_id = ? ORDER BY attempt",
                    (series_id,),
                )
            ]
            series[name] = SeriesResult(name, label, unit, runs)
        return series


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _no_session(session_id: int) -> InvalidInput:
    return InvalidInput(
        f"There is no benchmark session {session_id} in the results.",
        details="List them with: sambatune results list",
    )
