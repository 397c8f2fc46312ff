"""Apply a new smb.conf so the server is never left with a broken or lost file.

read (hash) -> diff -> upload beside the target -> testparm the upload -> back up the
live file -> check the live hash is unchanged and swap atomically (one remote step)
-> reload smbd (or restart it when a changed parameter needs one) -> health check ->
on any failure put the backup back, reload again, and say exactly what happened.

Every step reports a :class:`StepEvent`; the result is an :class:`ApplyOutcome`
whose ``live`` field says which bytes the server has afterwards: the new version,
the old one, or (only when the connection died mid-swap and could not be
re-established) unknown.
"""

from __future__ import annotations

import dataclasses
import difflib
import getpass
import hashlib
import logging
import posixpath
import secrets
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from sambatune.cancellation import CancelToken
from sambatune.conf.activation import ParameterChange, classify_changes, needs_restart
from sambatune.conf.apply_effect import (
    intended_sets,
    kept_shares,
    missing_includes,
    not_from_elsewhere,
    start_blockers,
    unshown_changes,
    vanishing_shares,
)
from sambatune.conf.catalog_build import server_catalog
from sambatune.conf.testparm_output import dump_by_section
from sambatune.errors import (
    AgentFailed,
    Cancelled,
    CommandFailed,
    CommandTimedOut,
    ConnectionFailed,
    SambaTuneError,
)
from sambatune.json_fields import FieldsAsJson
from sambatune.remote.apply_guard import ApplyBusy, ApplyGuard
from sambatune.remote.config_backups import (
    DEFAULT_RETENTION,
    Backup,
    BackupStore,
    default_backup_dir,
)
from sambatune.remote.samba_ops import (
    SmbdInstance,
    TestparmReport,
    find_instance,
    health_check,
    reload_smbd,
    restart_smbd,
    run_testparm,
    served_shares,
    smbd_processes,
)
from sambatune.remote.smb_sessions import ConnectedClients, connected_clients, shares_in_use
from sambatune.remote.transport import Transport
from sambatune.remote.verified_replace import replace_verified
from sambatune.states import ApplyStatus, LiveState, TextState

log = logging.getLogger(__name__)


class ApplyStep(TextState):
    """A step of the pipeline, as :class:`StepEvent` reports it (and JSON records it)."""

    UPLOAD = "upload"
    TESTPARM = "testparm"
    BACKUP = "backup"
    INSTALL = "install"
    RELOAD = "reload"
    RESTART = "restart"  # instead of RELOAD, when a changed parameter needs it
    HEALTH = "health"
    ROLLBACK = "rollback"  # only after a failure


class StepState(TextState):
    """Where a step is."""

    # The pipeline never reports PENDING: the views show it for steps not reached yet.
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    SKIPPED = "skipped"
    WARNING = "warning"


class SmbdAction(TextState):
    """What applying does to smbd: reload it, restart it, or nothing (it is not running
    for this file). Not :class:`Activation`, which says when each parameter takes effect."""

    NONE = "none"
    RELOAD = "reload"
    RESTART = "restart"


STEP_TITLES: dict[ApplyStep, str] = {
    ApplyStep.UPLOAD: "Upload the new version beside the live file",
    ApplyStep.TESTPARM: "Validate it with testparm",
    ApplyStep.BACKUP: "Back up the live file",
    ApplyStep.INSTALL: "Check nobody changed the live file, then swap atomically",
    ApplyStep.RELOAD: "Reload smbd",
    ApplyStep.RESTART: "Restart smbd",
    ApplyStep.HEALTH: "Check smbd answers and lists the shares",
    ApplyStep.ROLLBACK: "Put the previous file back",
}
STEPS = (
    ApplyStep.UPLOAD,
    ApplyStep.TESTPARM,
    ApplyStep.BACKUP,
    ApplyStep.INSTALL,
    ApplyStep.RELOAD,
    ApplyStep.HEALTH,
)

# The names other modules and the tests import.
RUNNING, DONE, FAILED, SKIPPED, WARNING = (
    StepState.RUNNING,
    StepState.DONE,
    StepState.FAILED,
    StepState.SKIPPED,
    StepState.WARNING,
)
APPLIED = ApplyStatus.APPLIED
REFUSED = ApplyStatus.REFUSED
ROLLED_BACK = ApplyStatus.ROLLED_BACK
FAILED_OUTCOME = ApplyStatus.FAILED
CANCELLED = ApplyStatus.CANCELLED
PLANNED = ApplyStatus.PLANNED


@dataclass
class StepEvent(FieldsAsJson):
    step: ApplyStep
    state: StepState
    message: str = ""
    details: str = ""

    @property
    def title(self) -> str:
        return STEP_TITLES.get(self.step, self.step)


@dataclass
class LiveConfig:
    path: str
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass
class ApplyRequest:
    path: str
    original: bytes  # what the user started editing from
    candidate: bytes
    summary: str = ""
    sudo: bool = False
    backup_dir: str | None = None
    retention: int = DEFAULT_RETENTION
    # A restart ends every client's connection: only with the admin's explicit yes.
    allow_restart: bool = False
    dry_run: bool = False
    # ``original`` is what the change was made from: when the live file is no longer
    # that, the change is refused (someone else's would be undone) unless forced.
    force: bool = False

    @property
    def original_sha256(self) -> str:
        return hashlib.sha256(self.original).hexdigest()

    @property
    def candidate_sha256(self) -> str:
        return hashlib.sha256(self.candidate).hexdigest()


@dataclass
class ApplyOutcome:
    status: ApplyStatus
    live: LiveState
    message: str
    steps: list[StepEvent] = field(default_factory=list)
    backup: Backup | None = None
    testparm: TestparmReport | None = None
    restart_reasons: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    live_diff: str = ""  # when someone else changed the file: what they changed
    candidate_vs_live: str = ""
    changes: list[ParameterChange] = field(default_factory=list)
    clients: ConnectedClients | None = None  # who a restart would cut off (when one is needed)
    smbd_running: bool = True
    plan: list[str] = field(default_factory=list)  # a dry run: the steps an apply would take

    @property
    def activation(self) -> SmbdAction:
        """How smbd takes the change (NONE: smbd is not running for this file)."""
        if not self.smbd_running:
            return SmbdAction.NONE
        return SmbdAction.RESTART if self.restart_reasons else SmbdAction.RELOAD

    @property
    def ok(self) -> bool:
        return self.status == APPLIED

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "status": self.status,
            "live": self.live,
            "message": self.message,
            "steps": [s.to_json() for s in self.steps],
            "backup": self.backup.to_json() if self.backup else None,
            "testparm": self.testparm.to_json() if self.testparm else None,
            "restart_reasons": self.restart_reasons,
            "activation": self.activation,
            "changes": [c.to_json() for c in self.changes],
            "clients": self.clients.to_json() if self.clients else None,
            **({"plan": self.plan} if self.status == PLANNED else {}),
            "warnings": self.warnings,
            "live_diff": self.live_diff,
            "candidate_vs_live": self.candidate_vs_live,
        }


def read_live(transport: Transport, path: str, *, sudo: bool = False) -> LiveConfig:
    return LiveConfig(path, transport.read_file(path, sudo=sudo))


def unified_diff(old: bytes, new: bytes, path: str, old_label: str = "live", new_label: str = "new") -> str:
    old_lines = old.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    new_lines = new.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    lines = difflib.unified_diff(old_lines, new_lines, f"{path} ({old_label})", f"{path} ({new_label})")
    text = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def who_applies(transport: Transport) -> str:
    local = f"{getpass.getuser()}@{socket.gethostname()}"
    return local if transport.is_local else f"{local} as {transport.label}"


class _Uncertain(Exception):
    """A step whose effect on the server we cannot know from here: the connection
    dropped, the command did not answer in time, we were interrupted waiting, or the
    swap script failed (it may have failed after its rename)."""

    def __init__(self, step: ApplyStep, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.step = step
        self.cause = cause
        # A command that never reached the server cannot have changed anything.
        self.command_sent = getattr(cause, "command_sent", True)

    @property
    def dropped(self) -> bool:
        """The connection went away (else the server is there, but hung or failing)."""
        if isinstance(self.cause, SambaTuneError):
            return isinstance(self.cause, ConnectionFailed)
        return not isinstance(self.cause, KeyboardInterrupt)

    def describe(self) -> str:
        where = STEP_TITLES.get(self.step, self.step)
        if isinstance(self.cause, KeyboardInterrupt):
            return f"Interrupted during '{where}'"
        if isinstance(self.cause, CommandTimedOut):
            return f"The server stopped answering during '{where}'"
        if isinstance(self.cause, SambaTuneError) and not self.dropped:
            return f"'{where}' failed ({self.cause.message.rstrip('.')})"
        return f"The connection was lost during '{where}'"


PREPARE_STEPS = (ApplyStep.UPLOAD, ApplyStep.TESTPARM, ApplyStep.BACKUP)


class ApplyJournal(Protocol):
    """Where the pipeline records what it did (applied_versions.AppliedJournal)."""

    def begin(self, *, candidate: bytes, previous: bytes, summary: str, backup_id: str | None) -> None: ...

    def finish(self, *, status: ApplyStatus, live: LiveState, content: bytes) -> None: ...

    def unfinished(self) -> list[Any]: ...

    def settle_interrupted(self, version: Any, live_sha256: str) -> LiveState: ...


class ApplyRun:
    """One run of the pipeline. Use :func:`apply_config`."""

    def __init__(
        self,
        transport: Transport,
        request: ApplyRequest,
        *,
        on_event: Callable[[StepEvent], None] | None,
        cancel: CancelToken | None,
        reconnect: Callable[[], Transport] | None,
        fault: Callable[[str, Transport], None] | None,
        journal: ApplyJournal | None = None,
    ) -> None:
        self.transport = transport
        self.request = request
        self.on_event = on_event
        self.cancel = cancel or CancelToken()
        self.reconnect = reconnect
        self.fault = fault
        self.journal = journal
        self.steps: list[StepEvent] = []
        # The file that is really replaced: smb.conf may be a symbolic link.
        self.real_path = request.path
        # The path the running smbd was started with: the link or the file it points to.
        self.served_path = request.path
        self.candidate_path = self._candidate_beside(request.path)
        self.backup_dir = request.backup_dir or default_backup_dir(request.path)
        self.guard: ApplyGuard | None = None
        self.backup: Backup | None = None
        self.testparm: TestparmReport | None = None
        self.old_dump = ""
        self.reasons: list[str] = []
        self.changes: list[ParameterChange] = []
        self.clients: ConnectedClients | None = None
        self.warnings: list[str] = []
        self.installed = False
        self.smbd_was_running = True
        # Root's smbd for this file from a binary SambaTune does not trust (the agent's entry).
        self.untrusted_smbd: dict[str, Any] | None = None
        self.instance: SmbdInstance | None = None
        # The shares smbd listed before the swap that the candidate keeps defining.
        self.still_served: list[str] = []
        self.current_step = ApplyStep.UPLOAD
        self.live_after: bytes | None = None  # someone else's version, when we saw one

    @staticmethod
    def _candidate_beside(path: str) -> str:
        directory = posixpath.dirname(path) or "."
        base = posixpath.basename(path)
        return posixpath.join(directory, f".{base}.sambatune-{secrets.token_hex(4)}.new")

    # -- reporting ------------------------------------------------------------------
    def _event(self, step: ApplyStep, state: StepState, message: str = "", details: str = "") -> None:
        event = StepEvent(step, state, message, details)
        self.steps.append(event)
        log.info(
            "%s: apply %s: %s: %s%s",
            self.transport.label,
            self.request.path,
            event.title,
            state,
            f": {message}" if message else "",
        )
        if self.on_event is not None:
            self.on_event(event)

    def _outcome(self, status: ApplyStatus, live: LiveState, message: str, **extra: Any) -> ApplyOutcome:
        return ApplyOutcome(
            status=status,
            live=live,
            message=message,
            steps=self.steps,
            backup=self.backup,
            testparm=self.testparm,
            restart_reasons=self.reasons,
            warnings=self.warnings,
            changes=self.changes,
            clients=self.clients,
            smbd_running=self.smbd_was_running,
            **extra,
        )

    def _step(self, name: ApplyStep, work: Callable[[], Any]) -> Any:
        self.current_step = name
        self._event(name, RUNNING)
        value = self._guarded(name, work)
        if self.fault is not None:
            self.fault(name, self.transport)
        return value

    def _guarded(self, name: ApplyStep, work: Callable[[], Any]) -> Any:
        """Run a step's work; what leaves its effect open becomes :class:`_Uncertain`."""
        try:
            return work()
        except (ConnectionFailed, CommandTimedOut, EOFError, OSError) as exc:
            lost = not isinstance(exc, CommandTimedOut)
            self._event(
                name,
                FAILED,
                "The connection to the server was lost."
                if lost
                else f"The server did not answer in time: {exc}",
                str(exc),
            )
            raise _Uncertain(name, exc) from exc
        except (SambaTuneError, KeyboardInterrupt):
            raise
        except Exception as exc:
            # Garbage from the server (an agent's malformed answer, say) is a failed step,
            # never a traceback with the new file live and unchecked.
            raise AgentFailed(
                f"The server gave an answer SambaTune cannot read during '{STEP_TITLES.get(name, name)}'",
                details=repr(exc),
            ) from exc

    # -- the pipeline ---------------------------------------------------------------
    def run(self) -> ApplyOutcome:
        request = self.request
        if request.candidate == request.original:
            return self._outcome(REFUSED, LiveState.OLD, "Nothing to apply: the new version is identical.")
        try:
            outcome = self._run()
        finally:
            if self.guard is not None:
                self.guard.release()
        self._record(outcome)
        log.info(
            "%s: apply %s ended %s, live %s: %s",
            self.transport.label,
            self.request.path,
            outcome.status,
            outcome.live,
            outcome.message,
        )
        return outcome

    def _record(self, outcome: ApplyOutcome) -> None:
        if self.journal is None:
            return
        if self.live_after is not None:  # someone else's version is live
            content = self.live_after
        else:
            content = {LiveState.NEW: self.request.candidate, LiveState.OLD: self.request.original}.get(
                outcome.live, self.request.candidate
            )
        try:
            self.journal.finish(status=outcome.status, live=outcome.live, content=content)
        except Exception as error:  # the server's state is settled; a local disk problem
            outcome.warnings.append(f"The local history was not updated: {error}")

    def _run(self) -> ApplyOutcome:
        try:
            refused = self._prepare()
        except _Uncertain as lost:
            return self._recover(lost)
        except Cancelled:
            self._cleanup_candidate()
            return self._outcome(CANCELLED, LiveState.OLD, "Cancelled before anything was changed.")
        except SambaTuneError as error:
            self._cleanup_candidate()
            return self._outcome(FAILED_OUTCOME, LiveState.OLD, f"{error.message} Nothing was changed.")
        if refused is not None:
            return refused

        # From here on the pipeline runs to the end: cancelling now could leave smbd
        # between configurations, so a cancel only means "stop once it is checked".
        if self.journal is not None:
            self.journal.begin(
                candidate=self.request.candidate,
                previous=self.request.original,
                summary=self.request.summary,
                backup_id=self.backup.id if self.backup else None,
            )
        try:
            swapped = self._step(ApplyStep.INSTALL, self._install)
        except _Uncertain as lost:
            return self._recover(lost)
        except KeyboardInterrupt as interrupt:
            # The swap may have happened before the interrupt came: ask the server.
            return self._recover(_Uncertain(ApplyStep.INSTALL, interrupt))
        except SambaTuneError as error:
            # A failed swap may have failed after its rename (a directory fsync that
            # failed or outlasted the script's alarm): the server says what is live.
            self._event(ApplyStep.INSTALL, FAILED, error.message, error.details)
            return self._recover(_Uncertain(ApplyStep.INSTALL, error))
        if swapped is not None:
            return swapped
        self.installed = True
        self._event(ApplyStep.INSTALL, DONE, "the new version is live", self.real_path)
        return self._activate_and_check()

    def _prepare(self) -> ApplyOutcome | None:
        """Everything before the swap; the live file is not touched. An outcome = refused."""
        request, t = self.request, self.transport
        sudo = request.sudo
        self.cancel.raise_if_cancelled()
        self.guard = ApplyGuard(t, request.path, self.backup_dir, sudo=sudo)
        try:
            guarded = self.guard.acquire()
        except ApplyBusy as busy:
            self.guard = None
            return self._outcome(REFUSED, LiveState.OLD, busy.message)
        if guarded.real_path != request.path:
            # Work on the file a symbolic link points to, and say so.
            self.real_path = guarded.real_path
            self.candidate_path = self._candidate_beside(self.real_path)
            self.warnings.append(
                f"{request.path} is a symbolic link to {self.real_path}: SambaTune changes "
                f"{self.real_path} and leaves the link as it is."
            )
        if guarded.removed:
            self.warnings.append(
                "Removed what an earlier, interrupted run left: "
                + ", ".join(posixpath.basename(p) for p in guarded.removed)
            )
        live = read_live(t, request.path, sudo=sudo)
        self._settle_interrupted_runs(live.sha256)
        if live.sha256 != request.original_sha256:
            who = self._who_changed(request.original_sha256)
            if not request.force:
                if self.journal is not None and not request.dry_run:
                    # Recorded as a refused attempt, as a refusal at the swap is.
                    self.journal.begin(
                        candidate=request.candidate,
                        previous=request.original,
                        summary=request.summary,
                        backup_id=None,
                    )
                return self._moved_on(live.data, who)
            self.warnings.append(
                "The live file changed since the version this change was made from "
                f"({who}); applied over it as asked (--force): that change is replaced."
            )
            self.request = request = dataclasses.replace(request, original=live.data)
        try:
            seen = smbd_processes(t, sudo=sudo, cancel=self.cancel)
            instance = None
            for path in dict.fromkeys((request.path, self.real_path)):
                instance = instance or find_instance(t, path, sudo=sudo, seen=seen)
            self.smbd_was_running = instance is not None
            self.instance = instance
            if instance is not None:
                self.served_path = instance.config
            else:
                self._note_untrusted_smbd(seen.untrusted)
        except AgentFailed as error:
            self.warnings.append(f"Could not tell whether smbd runs: {error.message}")
        try:
            self._step(
                ApplyStep.UPLOAD,
                lambda: t.write_file_atomic(self.candidate_path, request.candidate, sudo=sudo, mode=0o600),
            )
        except CommandFailed as error:
            self._event(ApplyStep.UPLOAD, FAILED, error.message, error.details)
            return self._outcome(
                REFUSED,
                LiveState.OLD,
                f"Could not upload the new version: {error.message}. The live file was not touched.",
            )
        self._event(ApplyStep.UPLOAD, DONE, f"{len(request.candidate)} bytes", self.candidate_path)
        self.cancel.raise_if_cancelled()

        report = self._step(ApplyStep.TESTPARM, lambda: run_testparm(t, self.candidate_path, sudo=sudo))
        self.testparm = report
        if not report.ok:
            self._event(
                ApplyStep.TESTPARM,
                FAILED,
                "testparm rejects the new version.",
                "\n".join(report.errors + report.warnings),
            )
            self._cleanup_candidate()
            return self._outcome(
                REFUSED,
                LiveState.OLD,
                "testparm rejects the new version, so it was not installed: " + "; ".join(report.errors[:3]),
            )
        self.warnings += report.warnings
        self._event(
            ApplyStep.TESTPARM,
            WARNING if report.warnings else DONE,
            f"{len(report.warnings)} warning(s)" if report.warnings else "accepted",
            "\n".join(report.warnings),
        )
        old_report = self._guarded(ApplyStep.TESTPARM, lambda: run_testparm(t, request.path, sudo=sudo))
        self.old_dump = old_report.dump
        self.changes = classify_changes(self.old_dump, report.dump)
        self.reasons = [c.describe() for c in needs_restart(self.changes)]
        if self.reasons and self.smbd_was_running:
            refused = self._weigh_restart()
            if refused is not None:
                return refused
        # A cut or a hang here is the testparm step's: nothing changed yet, the run recovers.
        refused = self._guarded(ApplyStep.TESTPARM, lambda: self._prove_effect(report.dump))
        if refused is not None:
            return refused
        if request.dry_run:
            self._cleanup_candidate()
            steps = [ApplyStep.UPLOAD, ApplyStep.TESTPARM, ApplyStep.BACKUP, ApplyStep.INSTALL]
            if self.smbd_was_running:
                steps += [ApplyStep.RESTART if self.reasons else ApplyStep.RELOAD, ApplyStep.HEALTH]
            return self._outcome(
                PLANNED, LiveState.OLD, self._plan_sentence(), plan=[STEP_TITLES[s] for s in steps]
            )
        self.cancel.raise_if_cancelled()

        store = BackupStore(
            t, request.path, backup_dir=request.backup_dir, retention=request.retention, sudo=sudo
        )
        try:
            self.backup = self._step(
                ApplyStep.BACKUP,
                lambda: store.create(request.original, applied_by=who_applies(t), summary=request.summary),
            )
        except (CommandFailed, SambaTuneError) as error:
            if isinstance(error, Cancelled):
                raise
            self._event(ApplyStep.BACKUP, FAILED, error.message, error.details)
            self._cleanup_candidate()
            return self._outcome(
                REFUSED,
                LiveState.OLD,
                f"Could not back up the live file, so nothing was changed: {error.message}",
            )
        assert self.backup is not None
        self._event(ApplyStep.BACKUP, DONE, posixpath.basename(self.backup.path), self.backup.path)
        self.cancel.raise_if_cancelled()
        return None

    def _prove_effect(self, new_dump: str) -> ApplyOutcome | None:
        """Refuse a candidate whose change would not take effect, or that loses a share."""
        request, t = self.request, self.transport
        blockers = start_blockers(new_dump)
        if blockers:
            self._event(ApplyStep.TESTPARM, FAILED, "smbd could not start with it", "\n".join(blockers))
            self._cleanup_candidate()
            return self._outcome(
                REFUSED,
                LiveState.OLD,
                "smbd could not start again with the new version, so it was not installed: "
                + "; ".join(blockers)
                + ".",
            )
        intended = intended_sets(
            request.original, request.candidate, request.path, server_catalog(self.transport, self.cancel)
        )
        unshown = unshown_changes(t, self.candidate_path, intended, sudo=request.sudo)
        if unshown:
            self._event(ApplyStep.TESTPARM, FAILED, "the change would not take effect", "\n".join(unshown))
            self._cleanup_candidate()
            return self._outcome(
                REFUSED,
                LiveState.OLD,
                "The new version would not do what it says, so it was not installed: "
                + "; ".join(unshown[:3])
                + ". A later line or included file overrides it, or Samba reads the line in "
                "another section (after an include that opens a share).",
            )
        if self.instance is None:
            return None
        # What new clients see, and what connected clients use: smbd re-reads a changed
        # configuration for each new connection, so a share whose include went missing
        # is no longer listed, yet its clients stay connected until the reload.
        listed = served_shares(t, self.instance, timeout=60) or []
        in_use = shares_in_use(t, self.served_path, sudo=request.sudo, cancel=self.cancel)
        served = list(dict.fromkeys([*listed, *in_use]))
        vanishing = vanishing_shares(served, self.old_dump, new_dump)
        if vanishing:  # a user's home or user share is served without a section of its own
            vanishing = not_from_elsewhere(t, vanishing, new_dump, sudo=request.sudo)
        # After the reload, the listing must still show these (shares in use may be hidden).
        self.still_served = kept_shares(listed, new_dump)
        if not vanishing:
            return None
        missing = missing_includes(t, request.candidate, sudo=request.sudo)
        cause = (
            "it is defined in an included file that is missing now: " + ", ".join(missing)
            if missing
            else "the new version does not define it, and the change does not remove it"
        )
        shares = ", ".join(f"[{share}]" for share in vanishing)
        self._event(ApplyStep.TESTPARM, FAILED, f"{shares} would vanish", cause)
        self._cleanup_candidate()
        return self._outcome(
            REFUSED,
            LiveState.OLD,
            f"smbd serves {shares} now (listed or in use), and would stop at the reload: {cause}. "
            "Nothing was changed. If the share should go, reload smbd first (smbcontrol smbd "
            "reload-config); else restore the file that defines it.",
        )

    def _weigh_restart(self) -> ApplyOutcome | None:
        """Who a restart would cut off; a refusal unless the admin allowed the restart."""
        try:
            self.clients = self._guarded(
                ApplyStep.TESTPARM,
                lambda: connected_clients(
                    self.transport, self.served_path, sudo=self.request.sudo, cancel=self.cancel
                ),
            )
        except SambaTuneError as error:
            if isinstance(error, Cancelled):
                raise
            self.warnings.append(f"Could not tell who is connected: {error.message}")
        if self.request.allow_restart or self.request.dry_run:
            return None
        self._cleanup_candidate()
        who = self.clients.sentence() if self.clients else "Who is connected is not known."
        return self._outcome(
            REFUSED,
            LiveState.OLD,
            "Not applied: this change needs smbd to restart, which ends every client's "
            f"connection. {who} Needs the restart: "
            + "; ".join(self.reasons)
            + ". Nothing was changed; apply again allowing the restart.",
        )

    def _note_untrusted_smbd(self, untrusted: list[dict[str, Any]]) -> None:
        """Root's smbd serving this file from a binary SambaTune does not trust: it is
        never reloaded or restarted, and the admin is told so rather than "not running"."""
        paths = {self.request.path, self.real_path}
        for process in untrusted:
            if process.get("kind") == "unsafe-binary" and process.get("config") in paths:
                self.untrusted_smbd = process
                self.warnings.append(
                    f"smbd (pid {process.get('pid')}) serves this file as root from "
                    f"{process.get('exe') or 'a binary'} that SambaTune does not trust "
                    f"({process.get('reason')}): it is not reloaded, restarted or checked."
                )
                return

    def _not_running_words(self) -> str:
        if self.untrusted_smbd is not None:
            return (
                f"the smbd serving it (pid {self.untrusted_smbd.get('pid')}) is not trusted, so "
                "nothing is reloaded: it serves the old version until it restarts"
            )
        return "smbd is not running for this file, so nothing is reloaded"

    def _plan_sentence(self) -> str:
        if not self.smbd_was_running:
            return f"Dry run: testparm accepts it; {self._not_running_words()}. Nothing was changed."
        if self.reasons:
            who = self.clients.sentence() if self.clients else "Who is connected is not known."
            return (
                "Dry run: testparm accepts it; applying needs a restart of smbd, which "
                f"ends every client's connection ({who.rstrip('.')}). Needs the restart: "
                + "; ".join(self.reasons)
                + ". Nothing was changed."
            )
        return (
            "Dry run: testparm accepts it; a reload applies it without dropping anyone. Nothing was changed."
        )

    def _settle_interrupted_runs(self, live_sha256: str) -> None:
        """Rows an earlier, killed run left 'in progress' get the truth from the server."""
        if self.journal is None:
            return
        for version in self.journal.unfinished():
            state = self.journal.settle_interrupted(version, live_sha256)
            self.warnings.append(
                f"An earlier apply ({version.applied_at}) was interrupted before it finished; "
                + {
                    LiveState.NEW: "its version is live.",
                    LiveState.OLD: "the file it would have replaced is live.",
                    LiveState.UNKNOWN: "the live file has changed since.",
                }[state]
            )

    def _install(self) -> ApplyOutcome | None:
        request = self.request
        swap = replace_verified(
            self.transport,
            self.real_path,
            expected_sha256=request.original_sha256,
            source=self.candidate_path,
            source_sha256=request.candidate_sha256,
            size=len(request.candidate),
            how="move",
            sudo=request.sudo,
        )
        if swap.changed_meanwhile:
            live_now = read_live(self.transport, request.path, sudo=request.sudo).data
            self._event(ApplyStep.INSTALL, FAILED, "Someone else changed the live file meanwhile.")
            self._cleanup_candidate()
            return self._moved_on(live_now, "changed while this apply ran")
        if not swap.ok:
            raise CommandFailed(f"The swap script failed: {swap.error}")
        return None

    def _activate_and_check(self) -> ApplyOutcome:
        """Reload or restart, then check; any failure here puts the old file back."""
        try:
            return self._activate_and_check_steps()
        except _Uncertain as lost:
            if lost.dropped:
                return self._recover(lost)
            return self._rollback(f"{STEP_TITLES[lost.step]} did not finish in time.")
        except SambaTuneError as error:
            self._event(self.current_step, FAILED, error.message, error.details)
            return self._rollback(f"{STEP_TITLES[self.current_step]} failed: {error.message}")
        except KeyboardInterrupt:
            return self._rollback("Interrupted after the new file went live.")

    def _activate_and_check_steps(self) -> ApplyOutcome:
        request, t = self.request, self.transport
        if not self.smbd_was_running:
            self._event(
                ApplyStep.RELOAD,
                SKIPPED,
                "smbd is not running for this file; it will read the new version when it starts."
                if self.untrusted_smbd is None
                else self._not_running_words() + ".",
            )
            self._event(ApplyStep.HEALTH, SKIPPED)
            self._prune()
            if self.untrusted_smbd is not None:
                return self._outcome(APPLIED, LiveState.NEW, f"Applied; {self._not_running_words()}.")
            return self._outcome(
                APPLIED, LiveState.NEW, "Applied. smbd is not running, so nothing was reloaded."
            )
        step = ApplyStep.RESTART if self.reasons else ApplyStep.RELOAD
        try:
            how = self._step(
                step,
                lambda: (
                    restart_smbd(t, self.served_path, sudo=request.sudo)
                    if self.reasons
                    else reload_smbd(t, self.served_path, sudo=request.sudo)
                ),
            )
            self._event(
                step,
                DONE,
                "needed for " + "; ".join(self.reasons) if self.reasons else "smbd re-read the file",
                how,
            )
        except SambaTuneError as error:
            self._event(step, FAILED, error.message, error.details)
            return self._rollback(f"{STEP_TITLES[step]} failed: {error.message}")
        expected = _listed_shares(self.testparm.dump if self.testparm else "")
        # Every share smbd listed before the swap and the new version keeps must stay listed.
        known = {share.lower() for share in expected}
        expected += [share for share in self.still_served if share.lower() not in known]
        health = self._step(
            ApplyStep.HEALTH,
            lambda: health_check(t, self.served_path, expected_shares=expected, sudo=request.sudo),
        )
        if not health.ok:
            self._event(ApplyStep.HEALTH, FAILED, health.message)
            return self._rollback(f"The health check failed: {health.message}")
        self._event(ApplyStep.HEALTH, DONE, health.message)
        self._prune()
        restart_note = " smbd was restarted because " + "; ".join(self.reasons) + "." if self.reasons else ""
        return self._outcome(APPLIED, LiveState.NEW, "Applied and verified." + restart_note)

    def _rollback(self, why: str) -> ApplyOutcome:
        request = self.request
        self._event(ApplyStep.ROLLBACK, RUNNING, why)
        if self.backup is None:  # cannot happen: nothing is installed without a backup
            return self._outcome(FAILED_OUTCOME, LiveState.NEW, f"{why} There is no backup to put back.")
        try:
            if not self.transport.is_connected():
                if self.reconnect is None:
                    raise ConnectionFailed("The connection is gone.")
                self.transport = self.reconnect()
            t = self.transport
            back = replace_verified(
                t,
                self.real_path,
                expected_sha256=request.candidate_sha256,
                source=self.backup.path,
                source_sha256=self.backup.sha256,
                size=self.backup.size,
                how="copy",
                sudo=request.sudo,
            )
        except SambaTuneError as error:
            self._event(ApplyStep.ROLLBACK, FAILED, error.message)
            return self._rollback_failed(why, f"failed: {error.message}")
        if back.changed_meanwhile:
            self._event(ApplyStep.ROLLBACK, FAILED, "The live file changed again; not touched.")
            return self._outcome(
                FAILED_OUTCOME,
                LiveState.UNKNOWN,
                f"{why} The live file was changed "
                "by someone else meanwhile, so it was left alone. The backup "
                f"is {self.backup.path}.",
            )
        if not back.ok:
            self._event(ApplyStep.ROLLBACK, FAILED, back.error)
            # The copy may have failed after its rename, as the swap may: ask the server.
            if self._live_digest() != self.backup.sha256:
                return self._rollback_failed(why, f"failed too: {back.error}")
            self._event(ApplyStep.ROLLBACK, RUNNING, "Checked again: the previous file is back.")
        try:
            if self.reasons:
                restart_smbd(t, self.served_path, sudo=request.sudo)
            elif self.smbd_was_running:
                reload_smbd(t, self.served_path, sudo=request.sudo)
            health = health_check(t, self.served_path, attempts=4, sudo=request.sudo)
            state_note = "smbd answers again." if health.ok else f"But: {health.message}."
        except SambaTuneError as error:
            state_note = f"Reloading smbd with the old file failed too: {error.message}."
        self._event(ApplyStep.ROLLBACK, DONE, "The previous file is back. " + state_note)
        return self._outcome(
            ROLLED_BACK, LiveState.OLD, f"{why} The previous file was put back. " + state_note
        )

    def _moved_on(self, live_now: bytes, who: str) -> ApplyOutcome:
        """Refused: the live file is no longer the version the change was made from."""
        request = self.request
        self.live_after = live_now
        return self._outcome(
            REFUSED,
            LiveState.OLD,
            f"The live file changed since the version this change was made from ({who}), so "
            "SambaTune did not overwrite it. Review the other change, then apply again.",
            live_diff=unified_diff(request.original, live_now, request.path, "made from", "live now"),
            candidate_vs_live=unified_diff(live_now, request.candidate, request.path, "live now", "yours"),
        )

    def _who_changed(self, base_sha256: str) -> str:
        """Who replaced the version with ``base_sha256``: the SambaTune apply that backed
        it up, as its backup records, or someone outside SambaTune."""
        try:
            backups = BackupStore(
                self.transport, self.request.path, backup_dir=self.request.backup_dir, sudo=self.request.sudo
            ).entries()
        except SambaTuneError:
            backups = []
        for backup in backups:
            if backup.sha256 == base_sha256:
                what = f": {backup.summary}" if backup.summary else ""
                return f"{backup.applied_by} applied a change at {backup.created}{what}"
        return "changed outside SambaTune, or by a run whose backup is gone"

    def _live_digest(self) -> str | None:
        """The live file's SHA-256 as the server has it now; None when it cannot say."""
        try:
            if not self.transport.is_connected():
                if self.reconnect is None:
                    return None
                self.transport = self.reconnect()
            return read_live(self.transport, self.request.path, sudo=self.request.sudo).sha256
        except SambaTuneError:
            return None

    def _rollback_failed(self, why: str, failure: str) -> ApplyOutcome:
        """Putting the old file back did not work: say what the server holds now."""
        assert self.backup is not None
        digest = self._live_digest()
        state = (
            LiveState.OLD
            if digest == self.backup.sha256
            else LiveState.NEW
            if digest in (self.request.candidate_sha256, None)
            else LiveState.UNKNOWN
        )
        held = {
            LiveState.OLD: "The live file holds the previous version, but smbd was not told.",
            LiveState.NEW: "The live file holds the new version.",
            LiveState.UNKNOWN: "The live file is now neither version.",
        }[state]
        return self._outcome(
            FAILED_OUTCOME,
            state,
            f"{why} Putting the old file back {failure}. {held} The backup is {self.backup.path}.",
        )

    def _recover(self, lost: _Uncertain) -> ApplyOutcome:
        """``lost.step`` ended without an answer: find out what the server has."""
        what = lost.describe()
        before_install = lost.step in PREPARE_STEPS or (
            lost.step is ApplyStep.INSTALL and not lost.command_sent
        )
        assumed = LiveState.OLD if before_install else LiveState.NEW if self.installed else LiveState.UNKNOWN
        try:
            if self.transport.is_connected():
                transport = self.transport
            elif self.reconnect is not None:
                transport = self.transport = self.reconnect()
            else:
                return self._outcome(FAILED_OUTCOME, assumed, f"{what}. " + _live_sentence(assumed))
            live = read_live(transport, self.request.path, sudo=self.request.sudo)
        except SambaTuneError as error:
            return self._outcome(
                FAILED_OUTCOME,
                assumed,
                f"{what} and the server could not be reached again ({error.message}). "
                + _live_sentence(assumed),
            )
        if live.sha256 == self.request.original_sha256:
            self._cleanup_candidate()
            return self._outcome(
                FAILED_OUTCOME,
                LiveState.OLD,
                f"{what}. Checked: the live file is the old version, unchanged. Apply again when ready.",
            )
        if live.sha256 == self.request.candidate_sha256:
            if not self.installed:
                self.installed = True
                self._event(ApplyStep.INSTALL, DONE, "Checked again: the live file holds the new version.")
                # A swap stopped after its exchange leaves the old bytes under this
                # run's temporary name; the backup holds them already.
                self._cleanup_candidate()
                if not lost.dropped:
                    # The server hung with the swap done: trust it with the old file only.
                    return self._rollback(f"{what}; the new version had gone live.")
            if self._recovering:
                return self._outcome(
                    FAILED_OUTCOME,
                    LiveState.NEW,
                    "The connection was lost twice. The live file holds the new version; "
                    "smbd re-reads a changed file within a few minutes on its own.",
                )
            self._recovering = True
            outcome = self._activate_and_check()
            outcome.message = f"{what}; SambaTune reconnected and finished. " + outcome.message
            return outcome
        self.live_after = live.data
        return self._outcome(
            FAILED_OUTCOME,
            LiveState.UNKNOWN,
            f"{what} and the live file is now neither the old nor the new version: "
            "someone else changed it. Nothing more was done.",
        )

    _recovering = False

    def _cleanup_candidate(self) -> None:
        """Remove this run's candidate, and the upload's temporary file should the upload
        have been cut off (the names carry this run's random token: no one else's)."""
        directory = posixpath.dirname(self.candidate_path) or "."
        base = posixpath.basename(self.candidate_path)
        try:
            if self.transport.is_connected():
                self.transport.run(
                    [
                        "sh",
                        "-c",
                        'rm -f -- "$1" "$2/.$3".sambatune.??????',
                        "sambatune-clean",
                        self.candidate_path,
                        directory,
                        base,
                    ],
                    sudo=self.request.sudo,
                )
        except SambaTuneError:
            pass

    def _prune(self) -> None:
        try:
            BackupStore(
                self.transport,
                self.request.path,
                backup_dir=self.request.backup_dir,
                retention=self.request.retention,
                sudo=self.request.sudo,
            ).prune()
        except SambaTuneError as error:
            self.warnings.append(f"Old backups were not pruned: {error.message}")


def _live_sentence(live: LiveState) -> str:
    return {
        LiveState.OLD: "The live file is the old version, unchanged.",
        LiveState.NEW: "The live file holds the new version, but smbd may not have reloaded it yet "
        "(it re-reads changed files within a few minutes).",
        LiveState.UNKNOWN: "The swap may or may not have happened: reconnect and check; the live file "
        "is either exactly the old or exactly the new version.",
    }[live]


def _listed_shares(dump: str) -> list[str]:
    """Shares an anonymous listing should show: browseable file shares."""
    names = []
    for section, params in dump_by_section(dump).items():
        if section in ("global", "homes", "printers", "print$"):
            continue
        if params.get("browseable", params.get("browsable", "Yes")) == "No":
            continue
        if params.get("printable", "No") == "Yes":
            continue
        names.append(section)
    return names


def apply_config(
    transport: Transport,
    request: ApplyRequest,
    *,
    on_event: Callable[[StepEvent], None] | None = None,
    cancel: CancelToken | None = None,
    reconnect: Callable[[], Transport] | None = None,
    fault: Callable[[str, Transport], None] | None = None,
    journal: ApplyJournal | None = None,
) -> ApplyOutcome:
    """Run the whole pipeline.

    ``reconnect`` opens the connection again after a drop, so the outcome is decided by
    what the server has; ``journal`` records the run (before the swap and after);
    ``fault`` is called after each step (tests inject failures there).
    """
    return ApplyRun(
        transport,
        request,
        on_event=on_event,
        cancel=cancel,
        reconnect=reconnect,
        fault=fault,
        journal=journal,
    ).run()
