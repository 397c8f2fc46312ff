"""Fleet rollouts on record: one JSON file per rollout in SambaTune's data folder.

A rollout is written again after every host step, so a rollout whose app or CLI was
closed half-way can be resumed from the file alone: which hosts were changed, from
which exact bytes to which, and which were put back. The bytes are kept (base64) so a
halt can restore a host byte for byte even after a restart of SambaTune. Each write
goes to a temporary file first and replaces the old one in one rename, so a crash never
leaves half a record; the folder and the files are private, like every file of SambaTune
that holds smb.conf contents.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as _dt
import hashlib
import json
import os
import socket
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sambatune.appdirs import create_private_file, data_dir, private_dir
from sambatune.errors import InvalidInput
from sambatune.json_fields import FieldsAsJson
from sambatune.states import TextState

#: Bumped when a record's layout changes in a way older SambaTune cannot read.
FORMAT = 1


class RolloutStatus(TextState):
    """Where a rollout is, as its record, the CLI and the report say it."""

    RUNNING = "running"
    #: Stopped between two steps (cancelled, or the program ended): resume it.
    INTERRUPTED = "interrupted"
    #: A failure or a slowdown stopped it; the hosts it changed are being put back.
    HALTING = "halting"
    #: Stopped by a failure or a slowdown; every host it changed was put back (or the
    #: record says which one could not be).
    HALTED = "halted"
    #: Every host that needed the change has it.
    DONE = "done"
    #: Never started: the plan found a host the change cannot be applied to.
    REFUSED = "refused"


class HostState(TextState):
    """One host's place in a rollout."""

    PENDING = "pending"
    #: Its smb.conf already reads as the change would make it: nothing to do.
    IN_LINE = "already in line"
    #: Not reached when the rollout was planned, and left out as asked (Ansible's way).
    LEFT_OUT = "left out (unreachable)"
    #: The pipeline was running on it; settled on resume by the live file's SHA-256.
    APPLYING = "applying"
    APPLIED = "applied"
    #: The pipeline did not apply it (refused, rolled back, failed); ``live`` says what
    #: the server has.
    FAILED = "failed"
    RESTORING = "restoring"
    RESTORED = "restored"
    #: The rollout changed it but could not put the previous file back.
    NOT_RESTORED = "not restored"


class Live(TextState):
    """Which bytes a host's smb.conf holds, as last checked."""

    BEFORE = "before"
    AFTER = "after"
    UNKNOWN = "unknown"


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class HostRecord:
    """What the rollout planned, did and found on one host."""

    name: str
    #: 0 for the canary, then 1, 2, ... for the waves; None when nothing is to be done.
    wave: int | None
    state: HostState = HostState.PENDING
    path: str | None = None
    sudo: bool = False
    before: bytes | None = None
    after: bytes | None = None
    live: Live = Live.BEFORE
    activation: str | None = None  # reload / restart / none (smbd not running)
    restart_reasons: list[str] = field(default_factory=list)
    changes: list[dict[str, Any]] = field(default_factory=list)
    #: Who a restart would end, as smbstatus said at planning time.
    clients: str | None = None
    diff: str = ""
    planned_at: str | None = None
    applied_at: str | None = None
    restored_at: str | None = None
    message: str = ""
    backup_id: str | None = None
    #: The canary's before/after benchmark sessions and the significance test's verdict.
    measure_before: int | None = None
    measure_after: int | None = None
    verdict: dict[str, Any] | None = None

    @property
    def before_sha256(self) -> str | None:
        return sha256(self.before) if self.before is not None else None

    @property
    def after_sha256(self) -> str | None:
        return sha256(self.after) if self.after is not None else None

    @property
    def touched(self) -> bool:
        """The rollout may have changed this host's file (so a halt must look at it)."""
        return self.state in (HostState.APPLYING, HostState.APPLIED, HostState.RESTORING) or (
            self.state in (HostState.FAILED, HostState.NOT_RESTORED) and self.live is not Live.BEFORE
        )

    def to_json(self, *, with_bytes: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name,
            "wave": self.wave,
            "role": "canary" if self.wave == 0 else None if self.wave is None else f"wave {self.wave}",
            "state": self.state.value,
            "path": self.path,
            "sudo": self.sudo,
            "live": self.live.value,
            "before_sha256": self.before_sha256,
            "after_sha256": self.after_sha256,
            "activation": self.activation,
            "restart_reasons": self.restart_reasons,
            "changes": self.changes,
            "clients": self.clients,
            "diff": self.diff,
            "planned_at": self.planned_at,
            "applied_at": self.applied_at,
            "restored_at": self.restored_at,
            "message": self.message,
            "backup_id": self.backup_id,
            "measure_before": self.measure_before,
            "measure_after": self.measure_after,
            "verdict": self.verdict,
        }
        if with_bytes:
            data["before"] = _b64(self.before)
            data["after"] = _b64(self.after)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HostRecord:
        return cls(
            name=str(data["name"]),
            wave=data.get("wave"),
            state=HostState(data.get("state", HostState.PENDING)),
            path=data.get("path"),
            sudo=bool(data.get("sudo")),
            before=_unb64(data.get("before")),
            after=_unb64(data.get("after")),
            live=Live(data.get("live", Live.BEFORE)),
            activation=data.get("activation"),
            restart_reasons=list(data.get("restart_reasons") or []),
            changes=list(data.get("changes") or []),
            clients=data.get("clients"),
            diff=str(data.get("diff") or ""),
            planned_at=data.get("planned_at"),
            applied_at=data.get("applied_at"),
            restored_at=data.get("restored_at"),
            message=str(data.get("message") or ""),
            backup_id=data.get("backup_id"),
            measure_before=data.get("measure_before"),
            measure_after=data.get("measure_after"),
            verdict=data.get("verdict"),
        )


@dataclass
class TimelineEntry(FieldsAsJson):
    at: str
    host: str | None
    what: str
    message: str = ""


@dataclass
class RolloutRecord:
    """A rollout: the change, how it was to go, every host's part and what happened."""

    id: int
    edits: list[str]
    #: Where the hosts came from, so a resume finds them again (inventory, limit, ...).
    source: dict[str, Any]
    #: canary, wave, allow_restart, measure, share.
    options: dict[str, Any]
    hosts: list[HostRecord] = field(default_factory=list)
    status: RolloutStatus = RolloutStatus.RUNNING
    reason: str = ""
    created_at: str = field(default_factory=now_iso)
    updated_at: str = field(default_factory=now_iso)
    finished_at: str | None = None
    timeline: list[TimelineEntry] = field(default_factory=list)

    def host(self, name: str) -> HostRecord:
        for host in self.hosts:
            if host.name == name:
                return host
        raise InvalidInput(f"Rollout {self.id} has no host {name}.")

    def note(self, host: str | None, what: str, message: str = "") -> None:
        self.timeline.append(TimelineEntry(now_iso(), host, what, message))

    @property
    def canary(self) -> HostRecord | None:
        return next((h for h in self.hosts if h.wave == 0), None)

    @property
    def waves(self) -> list[list[HostRecord]]:
        """The hosts to change, wave by wave (the canary's wave first)."""
        numbers = sorted({h.wave for h in self.hosts if h.wave is not None})
        return [[h for h in self.hosts if h.wave == n] for n in numbers]

    def to_json(self, *, with_bytes: bool = True) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "rollout_id": self.id,
            "status": self.status.value,
            "reason": self.reason,
            "edits": self.edits,
            "source": self.source,
            "options": self.options,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "finished_at": self.finished_at,
            "hosts": [h.to_json(with_bytes=with_bytes) for h in self.hosts],
            "timeline": [t.to_json() for t in self.timeline],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RolloutRecord:
        if int(data.get("format", 0)) > FORMAT:
            raise InvalidInput(
                f"Rollout {data.get('rollout_id')} was written by a newer SambaTune; update to read it."
            )
        return cls(
            id=int(data["rollout_id"]),
            edits=list(data["edits"]),
            source=dict(data.get("source") or {}),
            options=dict(data.get("options") or {}),
            hosts=[HostRecord.from_json(h) for h in data.get("hosts", [])],
            status=RolloutStatus(data["status"]),
            reason=str(data.get("reason") or ""),
            created_at=str(data["created_at"]),
            updated_at=str(data["updated_at"]),
            finished_at=data.get("finished_at"),
            timeline=[TimelineEntry(**t) for t in data.get("timeline", [])],
        )


@dataclass(frozen=True)
class RolloutSummary:
    id: int
    status: str
    edits: list[str]
    created_at: str
    updated_at: str
    finished_at: str | None
    hosts: int
    applied: int
    reason: str
    #: A SambaTune (this one or another process) is running it right now.
    running_now: bool = False
    #: The status its record holds, when the one shown is derived (a dead owner).
    recorded_status: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "rollout_id": self.id,
            "status": self.status,
            "running_now": self.running_now,
            "recorded_status": self.recorded_status or self.status,
            "edits": self.edits,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "finished_at": self.finished_at,
            "hosts": self.hosts,
            "applied": self.applied,
            "reason": self.reason,
        }


class RolloutStore:
    """The rollouts folder: ``<data dir>/rollouts/<id>.json``."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or data_dir() / "rollouts"
        # Hosts of one wave finish in parallel threads; their saves must not interleave.
        self._lock = threading.Lock()

    def _path(self, rollout_id: int) -> Path:
        return self.folder / f"{rollout_id}.json"

    def _lock_path(self, rollout_id: int) -> Path:
        return self.folder / f"{rollout_id}.lock"

    @contextlib.contextmanager
    def hold(self, rollout_id: int) -> Iterator[None]:
        """Run rollout ``rollout_id`` here alone: an exclusive lock on its lock file, held
        while this process runs it and gone when the process ends, however it ends (a
        SIGKILL too). Another process holding it refuses this one."""
        private_dir(self.folder)
        path = self._lock_path(rollout_id)
        create_private_file(path)
        descriptor = os.open(path, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))
        try:
            if not _try_lock(descriptor, exclusive=True):
                try:
                    owner = os.read(descriptor, 200).decode("utf-8", "replace").strip()
                except OSError:  # Windows: the locked byte cannot be read either
                    owner = ""
                raise InvalidInput(
                    f"Rollout {rollout_id} is running in another SambaTune ({owner or 'another process'}): "
                    "wait for it, "
                    "or stop it there, then resume it."
                )
            os.ftruncate(descriptor, 0)
            os.write(descriptor, f"pid {os.getpid()} on {socket.gethostname()}".encode())
            yield
        finally:
            os.close(descriptor)  # closing lets go of the lock

    def running_now(self, rollout_id: int) -> bool:
        """Whether a SambaTune holds rollout ``rollout_id`` now (see :meth:`hold`)."""
        try:
            descriptor = os.open(self._lock_path(rollout_id), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return False
        try:
            return not _try_lock(descriptor, exclusive=False)
        finally:
            os.close(descriptor)

    def _shown(self, status: str, rollout_id: int) -> tuple[str, bool]:
        """The status to show and whether it runs now: a record left "running" by a
        process that died (SIGKILL, a crash, a power cut) reads "interrupted"."""
        if status not in (RolloutStatus.RUNNING, RolloutStatus.HALTING):
            return status, False
        if self.running_now(rollout_id):
            return status, True
        return (RolloutStatus.INTERRUPTED if status == RolloutStatus.RUNNING else status), False

    def create(self, record: RolloutRecord) -> RolloutRecord:
        """Give ``record`` the next free id and write it."""
        private_dir(self.folder)
        with self._lock:
            number = max((_number(p) for p in self.folder.glob("*.json")), default=0) + 1
            while True:
                try:
                    # O_EXCL: two SambaTunes starting rollouts at once never share an id.
                    os.close(os.open(self._path(number), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
                    break
                except FileExistsError:
                    number += 1
            record.id = number
            self._write(record)
        return record

    def save(self, record: RolloutRecord) -> None:
        with self._lock:
            record.updated_at = now_iso()
            self._write(record)

    def _write(self, record: RolloutRecord) -> None:
        path = self._path(record.id)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as stream:
                json.dump(record.to_json(), stream, indent=1)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise

    def load(self, rollout_id: int) -> RolloutRecord:
        path = self._path(rollout_id)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InvalidInput(f"There is no rollout {rollout_id} (see sambatune fleet rollouts).") from None
        try:
            return RolloutRecord.from_json(json.loads(text))
        except (ValueError, KeyError, TypeError) as error:
            raise InvalidInput(
                f"The record of rollout {rollout_id} ({path}) cannot be read: {error}"
            ) from error

    def load_shown(self, rollout_id: int) -> RolloutRecord:
        """The record as a report shows it: "interrupted" when it says "running" and
        no process runs it any more."""
        record = self.load(rollout_id)
        shown, _running = self._shown(record.status, rollout_id)
        if shown != record.status:
            record.status = RolloutStatus(shown)
            record.reason = DEAD_OWNER
        return record

    def recorded_status(self, rollout_id: int) -> str | None:
        """The status the record on disk holds, as written (None: no readable record)."""
        try:
            data = json.loads(self._path(rollout_id).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        status = data.get("status") if isinstance(data, dict) else None
        return status if isinstance(status, str) else None

    def summaries(self) -> list[RolloutSummary]:
        """Every rollout, newest first; a record that cannot be read is skipped, not fatal."""
        summaries = []
        if not self.folder.is_dir():
            return []
        for path in sorted(self.folder.glob("*.json"), key=_number, reverse=True):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                hosts = data.get("hosts", [])
                recorded = str(data["status"])
                shown, running = self._shown(recorded, int(data["rollout_id"]))
                summaries.append(
                    RolloutSummary(
                        id=int(data["rollout_id"]),
                        status=shown,
                        edits=list(data["edits"]),
                        created_at=str(data["created_at"]),
                        updated_at=str(data["updated_at"]),
                        finished_at=data.get("finished_at"),
                        hosts=len(hosts),
                        applied=sum(1 for h in hosts if h.get("state") == HostState.APPLIED),
                        reason=DEAD_OWNER if shown != recorded else str(data.get("reason") or ""),
                        running_now=running,
                        recorded_status=recorded,
                    )
                )
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return summaries


DEAD_OWNER = "the program that ran it ended without a word (killed or crashed); resume it"


def _try_lock(descriptor: int, *, exclusive: bool) -> bool:
    """Lock the file without waiting; False when another open file holds it. flock, not
    lockf: two open files of one process exclude each other too (the app may look at a
    rollout it runs itself)."""
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(descriptor, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        if not exclusive:
            msvcrt.locking(descriptor, msvcrt.LK_UNLCK, 1)
        return True
    import fcntl

    try:
        fcntl.flock(descriptor, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    if not exclusive:
        fcntl.flock(descriptor, fcntl.LOCK_UN)
    return True


def _number(path: Path) -> int:
    try:
        return int(path.stem)
    except ValueError:
        return 0
