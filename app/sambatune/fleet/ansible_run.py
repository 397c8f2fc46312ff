"""Running an exported project with Ansible itself, through ansible-runner.

``ansible_runner.run`` starts ``ansible-playbook`` and calls back with each of its
events; they become :class:`RunEvent` (task started; per host ok, changed, failed,
unreachable, skipped, rescued; the recap), handed to a callback as they happen (the
CLI prints them, the GUI can queue them to its thread) or read as an iterator.

Ansible's controller runs on Linux, macOS and WSL only. On Windows, or where the
``sambatune[fleet]`` extra is not installed, :func:`ansible_unavailable` says why and
the export is still there to run elsewhere.
"""

from __future__ import annotations

import os
import queue
import shutil
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sambatune.appdirs import private_dir
from sambatune.cancellation import CancelToken
from sambatune.errors import InvalidInput

#: ansible-runner's event names -> ours.
_HOST_EVENTS = {
    "runner_on_ok": "ok",
    "runner_on_failed": "failed",
    "runner_on_unreachable": "unreachable",
    "runner_on_skipped": "skipped",
    "runner_on_async_failed": "failed",
}


@dataclass
class RunEvent:
    """One thing that happened in the run."""

    kind: str  # play, task, handler, ok, changed, failed, ignored, unreachable, skipped, recap
    host: str | None = None
    task: str | None = None
    message: str = ""
    data: dict[str, Any] = field(default_factory=dict)  # ansible-runner's event_data

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "host": self.host, "task": self.task, "message": self.message}

    def line(self) -> str:
        """One line of text for a terminal."""
        if self.kind in ("play", "task", "handler"):
            return f"{self.kind.upper()} {self.task or ''}".rstrip()
        if self.kind == "recap":
            return "RECAP " + self.message
        text = f"  {self.kind}: {self.host}"
        return f"{text}: {self.message}" if self.message else text


@dataclass
class RunResult:
    status: str  # ansible-runner's: successful, failed, canceled, timeout
    exit_code: int
    stats: dict[str, dict[str, int]]  # host -> ok/changed/failures/unreachable/rescued/...
    artifacts: str

    @property
    def failed_hosts(self) -> list[str]:
        return sorted(
            host for host, counts in self.stats.items() if counts.get("failures") or counts.get("unreachable")
        )

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.failed_hosts

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "exit_code": self.exit_code,
            "ok": self.ok,
            "failed_hosts": self.failed_hosts,
            "stats": self.stats,
            "artifacts": self.artifacts,
        }


def ansible_unavailable() -> str | None:
    """Why this computer cannot run the playbook itself, or None when it can."""
    if os.name == "nt":
        return (
            "Ansible does not run on Windows itself. Run the exported project from WSL "
            "(wsl ansible-playbook site.yml in its folder), or from AWX or Semaphore."
        )
    try:
        import ansible_runner  # noqa: F401
    except ImportError:
        return (
            "ansible-runner is not installed: install SambaTune with its fleet extra "
            "(pip install 'sambatune[fleet]'), or run the exported project with ansible-playbook."
        )
    if _playbook_binary() is None:
        return "ansible-playbook was not found: install ansible-core (pip install 'sambatune[fleet]')."
    return None


def _playbook_binary() -> str | None:
    # Beside this Python first: a venv's ansible-playbook is not on PATH unless activated.
    beside = Path(sys.executable).with_name("ansible-playbook")
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("ansible-playbook")


def _message(result: dict[str, Any]) -> str:
    text = str(result.get("msg") or "").strip()
    stderr = str(result.get("stderr") or "").strip()
    if stderr and stderr not in text:
        text = f"{text} {stderr}".strip()
    return " ".join(text.split())[:500]


def event_of(raw: dict[str, Any]) -> RunEvent | None:
    """Our event for one of ansible-runner's, or None for the ones nobody needs."""
    name = raw.get("event", "")
    data = raw.get("event_data") or {}
    task = data.get("task")
    if name == "playbook_on_play_start":
        return RunEvent("play", task=data.get("play"), data=data)
    if name == "playbook_on_task_start":
        return RunEvent("task", task=task, data=data)
    if name == "playbook_on_handler_task_start":
        return RunEvent("handler", task=task, data=data)
    if name == "playbook_on_stats":
        return RunEvent("recap", message=_recap_text(data), data=data)
    kind = _HOST_EVENTS.get(name)
    if kind is None:
        return None
    result = data.get("res") or {}
    if kind == "ok" and result.get("changed"):
        kind = "changed"
    if kind == "failed" and data.get("ignore_errors"):
        kind = "ignored"
    message = _message(result) if kind in ("failed", "unreachable", "ignored") else ""
    return RunEvent(kind, host=data.get("host"), task=task, message=message, data=data)


def _stats(data: dict[str, Any]) -> dict[str, dict[str, int]]:
    stats: dict[str, dict[str, int]] = {}
    for key in ("ok", "changed", "failures", "dark", "skipped", "rescued", "ignored"):
        for host, count in (data.get(key) or {}).items():
            stats.setdefault(host, {})["unreachable" if key == "dark" else key] = int(count)
    return stats


def _recap_text(data: dict[str, Any]) -> str:
    parts = []
    for host, counts in sorted(_stats(data).items()):
        shown = ", ".join(f"{k}={v}" for k, v in counts.items() if v)
        parts.append(f"{host}: {shown or 'nothing ran'}")
    return "; ".join(parts)


def run_project(
    project: Path,
    *,
    on_event: Callable[[RunEvent], None] | None = None,
    extra_vars: dict[str, Any] | None = None,
    limit: str | None = None,
    check: bool = False,
    cancel: CancelToken | None = None,
) -> RunResult:
    """Run ``site.yml`` of an exported project with ansible-playbook; blocks until done."""
    reason = ansible_unavailable()
    if reason is not None:
        raise InvalidInput(reason)
    import ansible_runner

    binary = _playbook_binary()
    assert binary is not None  # ansible_unavailable() said so
    project = project.resolve()
    if not (project / "site.yml").is_file() or not (project / "inventory.yml").is_file():
        raise InvalidInput(f"{project} is not a project written by sambatune fleet export.")
    stats: dict[str, dict[str, int]] = {}

    def handle(raw: dict[str, Any]) -> bool:
        event = event_of(raw)
        if event is not None:
            if event.kind == "recap":
                stats.update(_stats(event.data))
            if on_event is not None:
                on_event(event)
        return True  # keep ansible-runner's own artifact of the event too

    runner_dir = project / ".ansible-runner"
    # ansible-runner keeps each run's cmdline and extra vars in env/ and reuses them
    # when the next run gives none: a --check run would make every later run a check.
    shutil.rmtree(runner_dir / "env", ignore_errors=True)
    # Its artifacts hold the run's whole output (diffs of smb.conf among it): private.
    private_dir(runner_dir)
    runner = ansible_runner.run(
        private_data_dir=str(runner_dir),
        project_dir=str(project),
        playbook="site.yml",
        inventory=str(project / "inventory.yml"),
        extravars=extra_vars or {},
        limit=limit,
        cmdline="--check --diff" if check else None,
        envvars={
            # ansible-runner's own default turns host key checking off; a fleet's unknown
            # or changed key is refused, as SambaTune refuses it.
            "ANSIBLE_HOST_KEY_CHECKING": "True",
            "ANSIBLE_CONFIG": str(project / "ansible.cfg"),
            "ANSIBLE_NOCOLOR": "1",
            # ansible-runner runs "ansible-playbook" from PATH: the one beside this Python first.
            "PATH": os.pathsep.join([str(Path(binary).parent), os.environ.get("PATH", os.defpath)]),
        },
        event_handler=handle,
        cancel_callback=(lambda: bool(cancel and cancel.cancelled)),
        quiet=True,
        # Each run's events and output stay for a later look (ansible-runner's layout).
        rotate_artifacts=20,
    )
    return RunResult(str(runner.status), int(runner.rc or 0), stats, str(runner.config.artifact_dir))


def run_events(
    project: Path,
    *,
    extra_vars: dict[str, Any] | None = None,
    limit: str | None = None,
    cancel: CancelToken | None = None,
) -> Iterator[RunEvent | RunResult]:
    """The run as an iterator: each :class:`RunEvent` as it happens, the
    :class:`RunResult` last. The run goes on in a thread of its own."""
    events: queue.Queue[RunEvent | RunResult | BaseException] = queue.Queue()

    def run() -> None:
        try:
            events.put(
                run_project(project, on_event=events.put, extra_vars=extra_vars, limit=limit, cancel=cancel)
            )
        except BaseException as error:  # handed to the reader, who raises it
            events.put(error)

    thread = threading.Thread(target=run, name="ansible-runner", daemon=True)
    thread.start()
    while True:
        item = events.get()
        if isinstance(item, BaseException):
            raise item
        yield item
        if isinstance(item, RunResult):
            thread.join()
            return
