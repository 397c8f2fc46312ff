"""Getting administrator rights for one apply or restore, and nothing more.

The unprivileged app writes a request file (the plan, or the backup to restore, and
where backups live) and starts a one-shot helper with rights:

    sambatune client apply-elevated REQUEST.json RESULT.json

On Windows the helper is started through ShellExecute with the verb "runas" (the
UAC prompt); on Linux and macOS through pkexec (graphical) or sudo (terminal). The
helper does exactly one apply or restore with the normal engine and writes the
result file; the app reads it. The helper is thin on purpose: every decision is made
by the same code that runs unprivileged.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sambatune.cancellation import CancelToken
from sambatune.client.apply import (
    ApplyDone,
    ApplyResult,
    StepResult,
    apply_events,
    apply_plan,
    restore_backup,
    restore_events,
)
from sambatune.client.backups import BackupStore
from sambatune.client.plan import ClientPlan
from sambatune.client.settings import Observed
from sambatune.client.system import ClientSystem, NeedsAdmin
from sambatune.errors import InvalidInput, SambaTuneError
from sambatune.progress import Progress

REQUEST_KIND = "sambatune-elevated-request"
RESULT_KIND = "sambatune-elevated-result"


class ElevationFailed(SambaTuneError):
    code = "elevation-failed"


@dataclass
class ElevatedRequest:
    action: str  # "apply" or "restore"
    backup_root: str
    plan: dict[str, Any] | None = None
    backup: str | None = None
    dry_run: bool = False
    force: bool = False
    #: Linux: where the persistence file goes (tests point it at a temp dir).
    sysctl_dir: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": REQUEST_KIND,
            "version": 1,
            "action": self.action,
            "backup_root": self.backup_root,
            "plan": self.plan,
            "backup": self.backup,
            "dry_run": self.dry_run,
            "force": self.force,
            "sysctl_dir": self.sysctl_dir,
        }

    @classmethod
    def from_json(cls, data: Any) -> ElevatedRequest:
        if not isinstance(data, dict) or data.get("kind") != REQUEST_KIND:
            raise InvalidInput("Not a SambaTune elevated request.")
        action = data.get("action")
        if action not in ("apply", "restore"):
            raise InvalidInput(f"Unknown elevated action {action!r}.")
        if action == "apply" and not isinstance(data.get("plan"), dict):
            raise InvalidInput("An apply request carries the plan.")
        if action == "restore" and not data.get("backup"):
            raise InvalidInput("A restore request names the backup.")
        return cls(
            action,
            str(data["backup_root"]),
            data.get("plan"),
            data.get("backup"),
            bool(data.get("dry_run")),
            bool(data.get("force")),
            data.get("sysctl_dir"),
        )


def run_request(request: ElevatedRequest) -> ApplyResult:
    """What the elevated helper does: one apply or restore on this computer."""
    from sambatune.client.system import local_system

    system = local_system(Path(request.sysctl_dir) if request.sysctl_dir else None)
    store = BackupStore(Path(request.backup_root))
    if request.action == "apply":
        assert request.plan is not None
        plan = ClientPlan.from_json(request.plan)
        return apply_plan(system, plan, dry_run=request.dry_run, store=store, force=request.force)
    assert request.backup is not None
    return restore_backup(system, request.backup, dry_run=request.dry_run, store=store)


def run_helper(request_path: Path, result_path: Path) -> int:
    """``sambatune client apply-elevated REQUEST RESULT``: always writes a result file."""
    try:
        request = ElevatedRequest.from_json(json.loads(request_path.read_text(encoding="utf-8")))
        result = run_request(request)
        payload: dict[str, Any] = {"kind": RESULT_KIND, "result": result.to_json()}
        code = 0 if result.ok else 1
    except SambaTuneError as error:
        payload = {"kind": RESULT_KIND, "error": error.to_json()}
        code = 1
    except (OSError, ValueError) as error:
        payload = {"kind": RESULT_KIND, "error": {"code": "error", "message": str(error), "details": ""}}
        code = 1
    _write_result(result_path, payload)
    return code


def _write_result(path: Path, payload: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_result(path: Path) -> ApplyResult:
    """The helper's result file back as an ApplyResult (or its error raised again)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("kind") != RESULT_KIND:
        raise ElevationFailed("The elevated helper wrote something unexpected.")
    if "error" in data:
        error = data["error"]
        raise ElevationFailed(
            error.get("message", "The elevated helper failed."), details=error.get("details", "")
        )
    return result_from_json(data["result"])


def result_from_json(data: dict[str, Any]) -> ApplyResult:
    steps = [
        StepResult(
            id=s["id"],
            setting=s["setting"],
            operations=list(s.get("operations") or []),
            before=Observed.from_json(s["before"]),
            wanted=s.get("wanted"),
            status=s["status"],
            after=Observed.from_json(s["after"]) if s.get("after") else None,
            message=s.get("message", ""),
        )
        for s in data.get("steps") or []
    ]
    backup = data.get("backup") or {}
    return ApplyResult(
        action=data["action"],
        dry_run=bool(data["dry_run"]),
        ok=bool(data["ok"]),
        steps=steps,
        backup_id=backup.get("id"),
        backup_folder=backup.get("folder"),
        restored_backup=data.get("restored_backup"),
        rolled_back=bool(data.get("rolled_back")),
        restart_needed=data.get("restart_needed", "none"),
        message=data.get("message", ""),
        backup_preview=data.get("backup_preview"),
        warnings=list(data.get("warnings") or []),
    )


def helper_command(request_path: Path, result_path: Path) -> list[str]:
    """How to start this same SambaTune as the helper (frozen app or Python module)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "client", "apply-elevated", str(request_path), str(result_path)]
    return [
        sys.executable,
        "-m",
        "sambatune",
        "client",
        "apply-elevated",
        str(request_path),
        str(result_path),
    ]


def run_elevated(
    request: ElevatedRequest, *, cancel: CancelToken | None = None, timeout: float = 900.0
) -> ApplyResult:
    """Run ``request`` in a helper with administrator rights and return its result."""
    with tempfile.TemporaryDirectory(prefix="sambatune-elevate-") as folder:
        request_path = Path(folder) / "request.json"
        result_path = Path(folder) / "result.json"
        request_path.write_text(json.dumps(request.to_json()), encoding="utf-8")
        argv = helper_command(request_path, result_path)
        if sys.platform == "win32":  # pragma: no cover - Windows only
            _shell_execute_runas(argv)
            _wait_for(result_path, cancel, timeout)
        else:
            _run_posix_elevated(argv, cancel, timeout)
        if not result_path.exists():
            raise ElevationFailed(
                "The elevated helper did not report back (was the prompt "
                "cancelled?). Nothing was changed by it."
            )
        return read_result(result_path)


def _shell_execute_runas(argv: list[str]) -> None:  # pragma: no cover - Windows only
    import ctypes

    params = subprocess.list2cmdline(argv[1:])
    code = ctypes.windll.shell32.ShellExecuteW(None, "runas", argv[0], params, None, 0)  # type: ignore[attr-defined]
    if code <= 32:
        raise ElevationFailed(
            "Windows did not start the elevated helper (the prompt was "
            f"refused or failed, code {code}); nothing was changed."
        )


def _wait_for(path: Path, cancel: CancelToken | None, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if cancel is not None and cancel.wait(0.25):
            raise ElevationFailed("Stopped waiting for the elevated helper.")
        if cancel is None:
            time.sleep(0.25)
        if time.monotonic() > deadline:
            raise ElevationFailed("The elevated helper did not finish in time.")


def graphical_elevation() -> str | None:
    """How a window (no terminal to type a sudo password in) gets rights for one apply.

    "uac" on Windows (the elevation prompt), "pkexec" where polkit can show a password
    dialog, None where only a terminal can (sudo): then the user is told what to run.
    """
    if sys.platform == "win32":
        return "uac"
    if (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")) and shutil.which("pkexec"):
        return "pkexec"
    return None


def rights_advice(route: str | None) -> str:
    """One sentence for people: how the change will get administrator rights."""
    if route == "uac":
        return (
            "Apply asks Windows for administrator rights (the elevation prompt) and runs a "
            "one-shot helper with them; SambaTune itself stays unprivileged."
        )
    if route == "pkexec":
        return (
            "Apply asks for the administrator password (pkexec) and runs a one-shot helper "
            "with root rights; SambaTune itself stays unprivileged."
        )
    return (
        "Changing these settings needs root: start SambaTune as root, or save the plan and "
        "run 'sudo sambatune client apply PLAN.json' in a terminal."
    )


def _run_posix_elevated(argv: list[str], cancel: CancelToken | None, timeout: float) -> None:
    if os.geteuid() == 0:
        prefix: list[str] = []
    elif (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")) and shutil.which("pkexec"):
        prefix = ["pkexec"]
    elif shutil.which("sudo"):
        prefix = ["sudo", "--"]
    else:
        raise ElevationFailed("Neither pkexec nor sudo is available to get root rights.")
    process = subprocess.Popen([*prefix, *argv])
    unregister = cancel.on_cancel(process.kill) if cancel else (lambda: None)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        process.kill()
        raise ElevationFailed("The elevated helper did not finish in time.") from exc
    finally:
        unregister()


def apply_from_window(
    system: ClientSystem,
    store: BackupStore,
    *,
    plan: ClientPlan | None = None,
    backup_id: str | None = None,
    dry_run: bool = False,
    cancel: CancelToken | None = None,
    report: Callable[[Progress], None] = lambda progress: None,
) -> ApplyResult:
    """Apply ``plan`` or restore ``backup_id`` for a window: here when this process has
    the rights (or for a dry run), otherwise through the one-shot helper, after the
    prompt the desktop offers (:func:`graphical_elevation`); with neither, NeedsAdmin
    says what to run in a terminal."""
    action = "apply" if plan is not None else "restore"
    if not dry_run and not system.is_admin():
        if graphical_elevation() is None:
            raise NeedsAdmin(
                "Changing these settings needs administrator rights.", details=rights_advice(None)
            )
        sysctl_dir = getattr(system, "sysctl_dir", None)
        request = ElevatedRequest(
            action,
            str(store.root),
            plan=plan.to_json() if plan is not None else None,
            backup=backup_id,
            sysctl_dir=str(sysctl_dir) if sysctl_dir is not None else None,
        )
        return run_elevated(request, cancel=cancel)
    if plan is not None:
        events = apply_events(system, plan, dry_run=dry_run, store=store, cancel=cancel)
    else:
        assert backup_id is not None
        events = restore_events(system, backup_id, dry_run=dry_run, store=store, cancel=cancel)
    for event in events:
        if isinstance(event, ApplyDone):
            return event.result
        report(event)
    raise AssertionError(f"the {action} ended without a result")  # pragma: no cover
