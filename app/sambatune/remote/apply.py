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

import difflib
import getpass
import hashlib
import posixpath
import secrets
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sambatune.cancellation import CancelToken
from sambatune.errors import (
    AgentFailed,
    Cancelled,
    CommandFailed,
    ConnectionFailed,
    SambaTuneError,
)
from sambatune.remote.config_backups import DEFAULT_RETENTION, Backup, BackupStore
from sambatune.remote.samba_ops import (
    TestparmReport,
    find_instance,
    health_check,
    parse_dump,
    reload_smbd,
    restart_reasons,
    restart_smbd,
    run_testparm,
)
from sambatune.remote.transport import Transport

STEP_TITLES = {
    "upload": "Upload the new version beside the live file",
    "testparm": "Validate it with testparm",
    "backup": "Back up the live file",
    "install": "Check nobody changed the live file, then swap atomically",
    "reload": "Reload smbd",
    "restart": "Restart smbd",
    "health": "Check smbd answers and lists the shares",
    "rollback": "Put the previous file back",
}
STEPS = ("upload", "testparm", "backup", "install", "reload", "health")

RUNNING, DONE, FAILED, SKIPPED, WARNING = "running", "done", "failed", "skipped", "warning"

# Outcomes
APPLIED = "applied"
REFUSED = "refused"
ROLLED_BACK = "rolled-back"
FAILED_OUTCOME = "failed"
CANCELLED = "cancelled"

CHANGED_EXIT = 10


@dataclass
class StepEvent:
    step: str
    state: str
    message: str = ""
    details: str = ""

    @property
    def title(self) -> str:
        return STEP_TITLES.get(self.step, self.step)

    def to_json(self) -> dict[str, str]:
        return {"step": self.step, "state": self.state, "message": self.message,
                "details": self.details}


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

    @property
    def original_sha256(self) -> str:
        return hashlib.sha256(self.original).hexdigest()

    @property
    def candidate_sha256(self) -> str:
        return hashlib.sha256(self.candidate).hexdigest()


@dataclass
class ApplyOutcome:
    status: str
    live: str  # "new", "old" or "unknown"
    message: str
    steps: list[StepEvent] = field(default_factory=list)
    backup: Backup | None = None
    testparm: TestparmReport | None = None
    restart_reasons: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    live_diff: str = ""  # when someone else changed the file: what they changed
    candidate_vs_live: str = ""

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
            "warnings": self.warnings,
            "live_diff": self.live_diff,
            "candidate_vs_live": self.candidate_vs_live,
        }


def read_live(transport: Transport, path: str, *, sudo: bool = False) -> LiveConfig:
    return LiveConfig(path, transport.read_file(path, sudo=sudo))


def unified_diff(old: bytes, new: bytes, path: str, old_label: str = "live",
                 new_label: str = "new") -> str:
    old_lines = old.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    new_lines = new.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    lines = difflib.unified_diff(old_lines, new_lines, f"{path} ({old_label})",
                                 f"{path} ({new_label})")
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def who_applies(transport: Transport) -> str:
    local = f"{getpass.getuser()}@{socket.gethostname()}"
    return local if transport.is_local else f"{local} as {transport.label}"


class _ConnectionLost(Exception):
    def __init__(self, step: str, cause: Exception) -> None:
        super().__init__(str(cause))
        self.step = step
        self.cause = cause
        # A command that never reached the server cannot have changed anything.
        self.command_sent = getattr(cause, "command_sent", True)


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
    ) -> None:
        self.transport = transport
        self.request = request
        self.on_event = on_event
        self.cancel = cancel or CancelToken()
        self.reconnect = reconnect
        self.fault = fault
        self.steps: list[StepEvent] = []
        self.directory = posixpath.dirname(request.path) or "."
        base = posixpath.basename(request.path)
        self.candidate_path = posixpath.join(
            self.directory, f".{base}.sambatune-{secrets.token_hex(4)}.new"
        )
        self.backup: Backup | None = None
        self.testparm: TestparmReport | None = None
        self.old_dump = ""
        self.reasons: list[str] = []
        self.warnings: list[str] = []
        self.installed = False
        self.smbd_was_running = True
        self.current_step = "upload"

    # -- reporting ------------------------------------------------------------------
    def _event(self, step: str, state: str, message: str = "", details: str = "") -> None:
        event = StepEvent(step, state, message, details)
        self.steps.append(event)
        if self.on_event is not None:
            self.on_event(event)

    def _outcome(self, status: str, live: str, message: str, **extra: Any) -> ApplyOutcome:
        return ApplyOutcome(
            status=status, live=live, message=message, steps=self.steps, backup=self.backup,
            testparm=self.testparm, restart_reasons=self.reasons, warnings=self.warnings,
            **extra,
        )

    def _step(self, name: str, work: Callable[[], Any]) -> Any:
        self.current_step = name
        self._event(name, RUNNING)
        try:
            value = work()
        except (ConnectionFailed, EOFError, OSError) as exc:
            self._event(name, FAILED, "The connection to the server was lost.", str(exc))
            raise _ConnectionLost(name, exc) from exc
        if self.fault is not None:
            self.fault(name, self.transport)
        return value

    # -- the pipeline ---------------------------------------------------------------
    def run(self) -> ApplyOutcome:
        request = self.request
        if request.candidate == request.original:
            return self._outcome(REFUSED, "old", "Nothing to apply: the new version is identical.")
        try:
            return self._run()
        except _ConnectionLost as lost:
            return self._recover(lost)
        except ConnectionFailed as error:
            return self._recover(_ConnectionLost(self.current_step, error))
        except SambaTuneError as error:
            if self.installed:
                return self._rollback(f"{error.message}.")
            self._cleanup_candidate()
            return self._outcome(FAILED_OUTCOME, "old", f"{error.message} Nothing was changed.")

    def _run(self) -> ApplyOutcome:
        request, t = self.request, self.transport
        sudo = request.sudo
        try:
            self.cancel.raise_if_cancelled()
            try:
                instance = find_instance(t, request.path, sudo=sudo, cancel=self.cancel)
                self.smbd_was_running = instance is not None
            except AgentFailed as error:
                self.warnings.append(f"Could not tell whether smbd runs: {error.message}")
            try:
                self._step("upload", lambda: t.write_file_atomic(
                    self.candidate_path, request.candidate, sudo=sudo, mode=0o600))
            except CommandFailed as error:
                self._event("upload", FAILED, error.message, error.details)
                return self._outcome(REFUSED, "old", f"Could not upload the new version: "
                                     f"{error.message}. The live file was not touched.")
            self._event("upload", DONE, f"{len(request.candidate)} bytes", self.candidate_path)
            self.cancel.raise_if_cancelled()

            report = self._step("testparm", lambda: run_testparm(t, self.candidate_path, sudo=sudo))
            self.testparm = report
            if not report.ok:
                self._event("testparm", FAILED, "testparm rejects the new version.",
                            "\n".join(report.errors + report.warnings))
                self._cleanup_candidate()
                return self._outcome(REFUSED, "old", "testparm rejects the new version, so it "
                                     "was not installed: " + "; ".join(report.errors[:3]))
            self.warnings += report.warnings
            self._event("testparm", WARNING if report.warnings else DONE,
                        f"{len(report.warnings)} warning(s)" if report.warnings else "accepted",
                        "\n".join(report.warnings))
            old_report = run_testparm(t, request.path, sudo=sudo)
            self.old_dump = old_report.dump
            self.reasons = restart_reasons(self.old_dump, report.dump)
            self.cancel.raise_if_cancelled()

            store = BackupStore(t, request.path, backup_dir=request.backup_dir,
                                retention=request.retention, sudo=sudo)
            try:
                self.backup = self._step("backup", lambda: store.create(
                    request.original, applied_by=who_applies(t), summary=request.summary))
            except (CommandFailed, SambaTuneError) as error:
                if isinstance(error, Cancelled):
                    raise
                self._event("backup", FAILED, error.message, error.details)
                self._cleanup_candidate()
                return self._outcome(REFUSED, "old", "Could not back up the live file, so "
                                     f"nothing was changed: {error.message}")
            assert self.backup is not None
            self._event("backup", DONE, posixpath.basename(self.backup.path), self.backup.path)
            self.cancel.raise_if_cancelled()
        except Cancelled:
            self._cleanup_candidate()
            return self._outcome(CANCELLED, "old", "Cancelled before anything was changed.")

        # From here on the pipeline runs to the end: cancelling now could leave smbd
        # between configurations.
        swapped = self._step("install", self._install)
        if swapped is not None:
            return swapped
        self.installed = True
        self._event("install", DONE, "the new version is live", request.path)
        return self._activate_and_check()

    def _install(self) -> ApplyOutcome | None:
        request = self.request
        result = self.transport.run(
            ["sh", "-c", SWAP_SCRIPT, "sambatune-swap", request.path, self.candidate_path,
             request.original_sha256],
            sudo=request.sudo,
        )
        if result.exit_code == CHANGED_EXIT:
            live_now = read_live(self.transport, request.path, sudo=request.sudo).data
            self._event("install", FAILED, "Someone else changed the live file meanwhile.")
            self._cleanup_candidate()
            return self._outcome(
                REFUSED, "old",
                "The live file changed since you opened it, so SambaTune did not overwrite "
                "it. Review the other change, then apply again.",
                live_diff=unified_diff(request.original, live_now, request.path,
                                       "when you opened it", "live now"),
                candidate_vs_live=unified_diff(live_now, request.candidate, request.path,
                                               "live now", "yours"),
            )
        if not result.ok:
            self._event("install", FAILED, result.error_text.strip())
            self._cleanup_candidate()
            return self._outcome(FAILED_OUTCOME, "old", "The swap failed; the live file is "
                                 "unchanged: " + result.error_text.strip())
        return None

    def _activate_and_check(self) -> ApplyOutcome:
        request, t = self.request, self.transport
        if not self.smbd_was_running:
            self._event("reload", SKIPPED, "smbd is not running for this file; it will read "
                        "the new version when it starts.")
            self._event("health", SKIPPED)
            return self._outcome(APPLIED, "new", "Applied. smbd is not running, so nothing "
                                 "was reloaded.")
        step = "restart" if self.reasons else "reload"
        try:
            how = self._step(step, lambda: (
                restart_smbd(t, request.path, sudo=request.sudo) if self.reasons
                else reload_smbd(t, request.path, sudo=request.sudo)))
            self._event(step, DONE, "needed for " + "; ".join(self.reasons) if self.reasons
                        else "smbd re-read the file", how)
        except (CommandFailed, SambaTuneError) as error:
            self._event(step, FAILED, error.message, error.details)
            return self._rollback(f"{STEP_TITLES[step]} failed: {error.message}")
        expected = _listed_shares(self.testparm.dump if self.testparm else "")
        health = self._step("health", lambda: health_check(
            t, request.path, expected_shares=expected, sudo=request.sudo))
        if not health.ok:
            self._event("health", FAILED, health.message)
            return self._rollback(f"The health check failed: {health.message}")
        self._event("health", DONE, health.message)
        self._prune()
        restart_note = (" smbd was restarted because " + "; ".join(self.reasons) + "."
                        if self.reasons else "")
        return self._outcome(APPLIED, "new", "Applied and verified." + restart_note)

    def _rollback(self, why: str) -> ApplyOutcome:
        request, t = self.request, self.transport
        self._event("rollback", RUNNING, why)
        result = t.run(
            ["sh", "-c", ROLLBACK_SCRIPT, "sambatune-rollback", request.path,
             request.candidate_sha256],
            stdin=request.original, sudo=request.sudo,
        )
        if result.exit_code == CHANGED_EXIT:
            self._event("rollback", FAILED, "The live file changed again; not touched.")
            return self._outcome(FAILED_OUTCOME, "unknown", f"{why} The live file was changed "
                                 "by someone else meanwhile, so it was left alone. The backup "
                                 f"is {self.backup.path if self.backup else '(none)'}.")
        if not result.ok:
            self._event("rollback", FAILED, result.error_text.strip())
            return self._outcome(FAILED_OUTCOME, "new", f"{why} Putting the old file back "
                                 f"failed too: {result.error_text.strip()}. The backup is "
                                 f"{self.backup.path if self.backup else '(none)'}.")
        try:
            if self.reasons:
                restart_smbd(t, request.path, sudo=request.sudo)
            else:
                reload_smbd(t, request.path, sudo=request.sudo)
            health = health_check(t, request.path, attempts=4, sudo=request.sudo)
            state_note = "smbd answers again." if health.ok else f"But: {health.message}."
        except SambaTuneError as error:
            state_note = f"Reloading smbd with the old file failed too: {error.message}."
        self._event("rollback", DONE, "The previous file is back. " + state_note)
        return self._outcome(ROLLED_BACK, "old", f"{why} The previous file was put back. "
                             + state_note)

    def _recover(self, lost: _ConnectionLost) -> ApplyOutcome:
        """The connection dropped during ``lost.step``: find out what the server has."""
        before_install = lost.step in ("upload", "testparm", "backup") or (
            lost.step == "install" and not lost.command_sent
        )
        assumed = "old" if before_install else ("new" if self.installed else "unknown")
        if self.reconnect is None:
            return self._outcome(
                FAILED_OUTCOME, assumed,
                f"The connection was lost during '{STEP_TITLES[lost.step]}'. "
                + _live_sentence(assumed),
            )
        try:
            self.transport = self.reconnect()
            live = read_live(self.transport, self.request.path, sudo=self.request.sudo)
        except SambaTuneError as error:
            return self._outcome(
                FAILED_OUTCOME, assumed,
                f"The connection was lost during '{STEP_TITLES[lost.step]}' and could not be "
                f"re-established ({error.message}). " + _live_sentence(assumed),
            )
        if live.sha256 == self.request.original_sha256:
            self._cleanup_candidate()
            return self._outcome(
                FAILED_OUTCOME, "old",
                f"The connection was lost during '{STEP_TITLES[lost.step]}'. Reconnected and "
                "checked: the live file is the old version, unchanged. Apply again when ready.",
            )
        if live.sha256 == self.request.candidate_sha256:
            self.installed = True
            self._event("install", DONE, "Reconnected: the live file holds the new version.")
            try:
                outcome = self._activate_and_check()
            except (_ConnectionLost, ConnectionFailed):
                return self._outcome(
                    FAILED_OUTCOME, "new",
                    "The connection was lost twice. The live file holds the new version; "
                    "smbd re-reads a changed file within a few minutes on its own.",
                )
            outcome.message = (f"The connection dropped during '{STEP_TITLES[lost.step]}'; "
                               "SambaTune reconnected and finished. " + outcome.message)
            return outcome
        return self._outcome(
            FAILED_OUTCOME, "unknown",
            "The connection was lost and the live file is now neither the old nor the new "
            "version: someone else changed it. Nothing more was done.",
        )

    def _cleanup_candidate(self) -> None:
        try:
            self.transport.run(["rm", "-f", "--", self.candidate_path], sudo=self.request.sudo)
        except SambaTuneError:
            pass

    def _prune(self) -> None:
        try:
            BackupStore(self.transport, self.request.path, backup_dir=self.request.backup_dir,
                        retention=self.request.retention, sudo=self.request.sudo).prune()
        except SambaTuneError as error:
            self.warnings.append(f"Old backups were not pruned: {error.message}")


def _live_sentence(live: str) -> str:
    return {
        "old": "The live file is the old version, unchanged.",
        "new": "The live file holds the new version, but smbd may not have reloaded it yet "
               "(it re-reads changed files within a few minutes).",
        "unknown": "The swap may or may not have happened: reconnect and check; the live file "
                   "is either exactly the old or exactly the new version.",
    }[live]


def _listed_shares(dump: str) -> list[str]:
    """Shares an anonymous listing should show: browseable file shares."""
    names = []
    for section, params in parse_dump(dump).items():
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
) -> ApplyOutcome:
    """Run the whole pipeline. ``fault`` is called after each step (tests inject failures)."""
    return ApplyRun(transport, request, on_event=on_event, cancel=cancel,
                    reconnect=reconnect, fault=fault).run()


# Arguments: target, candidate, sha256 the target must still have. The check and the
# rename happen in one remote command, so no other writer can slip in between our
# look and our swap except in the microseconds of the mv itself.
SWAP_SCRIPT = r"""
set -eu
target=$1; candidate=$2; expected=$3
have=$(sha256sum "$target" | cut -d' ' -f1)
if [ "$have" != "$expected" ]; then rm -f "$candidate"; exit 10; fi
chmod --reference="$target" "$candidate"
chown --reference="$target" "$candidate" 2>/dev/null || true
if command -v chcon >/dev/null 2>&1; then chcon --reference="$target" "$candidate" 2>/dev/null || true; fi
sync "$candidate" 2>/dev/null || sync
mv -f "$candidate" "$target"
"""

# Arguments: target, sha256 of the version we installed. The old bytes come on stdin
# and replace the target only if it still holds what we installed.
ROLLBACK_SCRIPT = r"""
set -eu
target=$1; ours=$2
have=$(sha256sum "$target" | cut -d' ' -f1)
if [ "$have" != "$ours" ]; then exit 10; fi
dir=$(dirname "$target"); base=$(basename "$target")
tmp=$(mktemp "$dir/.$base.sambatune-restore.XXXXXX")
trap 'rm -f "$tmp"' EXIT INT TERM HUP
cat > "$tmp"
chmod --reference="$target" "$tmp"
chown --reference="$target" "$tmp" 2>/dev/null || true
if command -v chcon >/dev/null 2>&1; then chcon --reference="$target" "$tmp" 2>/dev/null || true; fi
sync "$tmp" 2>/dev/null || sync
mv -f "$tmp" "$target"
trap - EXIT INT TERM HUP
"""
