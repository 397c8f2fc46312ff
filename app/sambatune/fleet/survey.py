"""Survey every server of a fleet at once (``sambatune fleet survey``, the Fleet page).

Each host is surveyed in a thread of its own, at most ``concurrency`` at a time: the
work is waiting on SSH round trips and on the servers, not on this computer's CPU.
Per host: connect (host keys checked as for one server: an unknown key is refused
unless the caller opts in, a changed one always), the survey agent for the host's
``samba_conf``, the live smb.conf's SHA-256 and the advisor's findings, as
``sambatune survey`` and ``sambatune advise`` would give them. A host that cannot be
reached, refuses the login or goes ``timeout`` seconds without answering (connecting
included; each command answered starts the time again, so a busy machine slows hosts
down without failing them) is a result like any other, never the end of the rest.
``on_result`` hears of each host as it finishes (from the worker thread), so a screen
or a terminal shows results as they arrive.

Cancelling stops everything promptly: hosts not started never start, and every open
connection is closed under the command it runs (SSH reads return at once).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sambatune.advisor.findings import SEVERITIES
from sambatune.advisor.inputs import AdvisorInput
from sambatune.cancellation import CancelToken
from sambatune.errors import (
    AuthenticationFailed,
    Cancelled,
    ConnectionFailed,
    HostKeyChanged,
    HostKeyRevoked,
    HostKeyUnknown,
    InvalidInput,
    SambaTuneError,
    SecretRequired,
)
from sambatune.fleet.inventory import Fleet, FleetHost
from sambatune.remote.hostkeys import HostKeyQuestion
from sambatune.remote.prompts import SecretRequest
from sambatune.remote.survey import Survey, add_client_audit
from sambatune.states import TextState

log = logging.getLogger(__name__)

DEFAULT_CONCURRENCY = 8
DEFAULT_TIMEOUT = 20.0
#: Extra time for the host that reads a Samba version's parameter catalog for this
#: computer (testparm over SSH, once per version: 8 s on a busy two-core machine).
CATALOG_BUILD_ALLOWANCE = 60.0


class HostStatus(TextState):
    """How one host's survey ended (``status`` in JSON)."""

    OK = "ok"
    UNREACHABLE = "unreachable"  # refused, no route, DNS, dropped during the connect
    AUTH_FAILED = "auth-failed"  # no key or password the server took
    HOST_KEY_UNKNOWN = "host-key-unknown"  # never accepted silently
    HOST_KEY_CHANGED = "host-key-changed"  # changed or revoked: always refused
    TIMED_OUT = "timed-out"
    FAILED = "failed"  # reached, but the survey itself failed (no python3, ...)
    CANCELLED = "cancelled"


#: Statuses that mean the host was never reached over SSH.
NOT_REACHED = frozenset(
    {
        HostStatus.UNREACHABLE,
        HostStatus.AUTH_FAILED,
        HostStatus.HOST_KEY_UNKNOWN,
        HostStatus.HOST_KEY_CHANGED,
    }
)


class FleetPrompts:
    """Answers for unattended hosts: no one can be asked twenty questions at once.

    An unknown host key is accepted only when the caller opted in
    (``accept_new_host_key``, like ``--accept-new-host-key``); a changed or revoked key
    never reaches this question. No password or passphrase is known beyond the ones the
    inventory holds in ConnectionOptions. Thread-safe: every host asks the same object.
    """

    def __init__(self, *, accept_new_host_key: bool = False) -> None:
        self.accept_new_host_key = accept_new_host_key
        self._lock = threading.Lock()
        self.questions: list[HostKeyQuestion] = []

    def confirm_host_key(self, question: HostKeyQuestion) -> bool:
        with self._lock:
            self.questions.append(question)
        return self.accept_new_host_key

    def ask_secret(self, request: SecretRequest) -> str | None:
        return None


@dataclass
class HostSurvey:
    """What one host told us, or why it told us nothing."""

    host: FleetHost
    status: HostStatus
    seconds: float = 0.0
    error: SambaTuneError | None = None
    reachable: bool = False
    samba_version: str | None = None
    smbd_running: bool | None = None
    instances: list[dict[str, Any]] = field(default_factory=list)  # every smbd: pid, config, managed
    #: Processes named smbd that are not trusted (another user's, a writable binary): pid, uid, reason.
    untrusted: list[dict[str, Any]] = field(default_factory=list)
    config_path: str | None = None
    config_source: str | None = None
    config_sha256: str | None = None
    nics: list[dict[str, Any]] = field(default_factory=list)  # name, state, speed_mbit, mtu
    findings: dict[str, int] | None = None  # counts by severity; None when not judged
    finding_ids: list[str] = field(default_factory=list)
    #: Each finding as (severity, title, subject), most severe first: what a host shows.
    finding_titles: list[tuple[str, str, str]] = field(default_factory=list)
    advice_error: SambaTuneError | None = None  # reached and surveyed, not judged: why
    survey: Any = None  # the full sambatune.remote.survey.Survey, for drift and the GUI

    @property
    def managed_instance(self) -> dict[str, Any] | None:
        return next((i for i in self.instances if i.get("managed")), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.host.name,
            "destination": self.host.destination,
            "groups": list(self.host.groups),
            "samba_conf": self.host.samba_conf,
            "status": str(self.status),
            "reachable": self.reachable,
            "seconds": round(self.seconds, 3),
            "error": self.error.to_json() if self.error else None,
            "samba_version": self.samba_version,
            "smbd_running": self.smbd_running,
            "instances": {
                "count": len(self.instances),
                "managed": self.managed_instance,
                "all": self.instances,
                "untrusted": self.untrusted,
            },
            "config_path": self.config_path,
            "config_source": self.config_source,
            "config_sha256": self.config_sha256,
            "nics": self.nics,
            "findings": self.findings,
            "finding_ids": self.finding_ids,
            "finding_titles": [
                {"severity": severity, "title": title, "subject": subject}
                for severity, title, subject in self.finding_titles
            ],
            "advice_error": self.advice_error.to_json() if self.advice_error else None,
        }


@dataclass
class FleetSurvey:
    """Every host's result, in the fleet's order."""

    source: str
    results: list[HostSurvey]
    started_at: str
    seconds: float
    concurrency: int
    timeout: float
    cancelled: bool = False

    @property
    def all_reachable(self) -> bool:
        return all(r.reachable for r in self.results)

    @property
    def unreachable(self) -> list[HostSurvey]:
        return [r for r in self.results if not r.reachable]

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for result in self.results:
            counts[str(result.status)] = counts.get(str(result.status), 0) + 1
        return counts

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "started_at": self.started_at,
            "seconds": round(self.seconds, 3),
            "concurrency": self.concurrency,
            "timeout": self.timeout,
            "cancelled": self.cancelled,
            "hosts": len(self.results),
            "reachable": sum(1 for r in self.results if r.reachable),
            "all_reachable": self.all_reachable,
            "statuses": self.counts(),
            "results": [r.to_json() for r in self.results],
        }


_FINDING_WORDS = {"problem": "problem", "warning": "warning", "suggestion": "suggestion", "info": "note"}


def findings_words(counts: dict[str, int] | None) -> str:
    """'2 warnings, 3 suggestions' (zero counts left out); '-' when not judged."""
    if counts is None:
        return "-"
    parts = [
        f"{count} {_FINDING_WORDS[severity]}{'' if count == 1 else 's'}"
        for severity in SEVERITIES
        if (count := counts.get(severity, 0))
    ]
    return ", ".join(parts) or "none"


def findings_counts(counts: dict[str, int] | None) -> str:
    """Problems/warnings/suggestions/notes as '1/0/2/0' (the P/W/S/I column); '-' when not judged."""
    return "-" if counts is None else "/".join(str(counts.get(s, 0)) for s in SEVERITIES)


def survey_fleet(
    fleet: Fleet,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    timeout: float = DEFAULT_TIMEOUT,
    cancel: CancelToken | None = None,
    on_result: Callable[[HostSurvey], None] | None = None,
    prompts: FleetPrompts | None = None,
    known_hosts: Path | None = None,
    ssh_config: Path | None = None,
) -> FleetSurvey:
    """Survey every host of ``fleet`` (see the module's text). ``known_hosts`` and
    ``ssh_config`` apply to every host (default: ~/.ssh/known_hosts with SambaTune's
    own, and the fleet's ssh config or ~/.ssh/config)."""
    if concurrency < 1:
        raise InvalidInput("Survey at least one host at a time (--concurrency 1 or more).")
    if timeout <= 0:
        raise InvalidInput("The time per host must be more than 0 seconds.")
    cancel = cancel or CancelToken()
    prompts = prompts or FleetPrompts()
    ssh_config = ssh_config or fleet.ssh_config
    started_at = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    began = time.monotonic()
    results: dict[str, HostSurvey] = {}
    lock = threading.Lock()

    def one(host: FleetHost) -> None:
        if cancel.cancelled:
            result = HostSurvey(host, HostStatus.CANCELLED, error=Cancelled())
        else:
            result = survey_host(
                host,
                timeout=timeout,
                cancel=cancel,
                prompts=prompts,
                known_hosts=known_hosts,
                ssh_config=ssh_config,
            )
        with lock:
            results[host.name] = result
        if on_result is not None:
            try:
                on_result(result)
            except Exception:  # a display callback must not lose the other hosts
                log.exception("on_result failed for %s", host.name)

    pool = ThreadPoolExecutor(
        max_workers=min(concurrency, max(1, len(fleet))), thread_name_prefix="fleet-survey"
    )
    stop_waiting = cancel.on_cancel(lambda: pool.shutdown(wait=False, cancel_futures=True))
    try:
        for host in fleet.hosts:
            try:
                pool.submit(one, host)
            except RuntimeError:  # cancelled while submitting: the pool is shut down
                break
    finally:
        pool.shutdown(wait=True)
        stop_waiting()
    ordered = [
        results.get(host.name) or HostSurvey(host, HostStatus.CANCELLED, error=Cancelled())
        for host in fleet.hosts
    ]
    return FleetSurvey(
        source=fleet.source,
        results=ordered,
        started_at=started_at,
        seconds=time.monotonic() - began,
        concurrency=concurrency,
        timeout=timeout,
        cancelled=cancel.cancelled,
    )


def survey_host(
    host: FleetHost,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    cancel: CancelToken | None = None,
    prompts: FleetPrompts | None = None,
    known_hosts: Path | None = None,
    ssh_config: Path | None = None,
) -> HostSurvey:
    """One host's survey, ended by ``timeout`` or ``cancel`` (its connection closed)."""
    from sambatune.remote.connection import open_target

    began = time.monotonic()
    own = CancelToken()  # this host's: the fleet's cancel or this host's clock set it
    unlink = cancel.on_cancel(own.cancel) if cancel is not None else (lambda: None)
    clock = _HostClock(timeout, own)
    result = HostSurvey(host, HostStatus.FAILED)
    transport = None
    try:
        options = host.connection_options(known_hosts=known_hosts, ssh_config=ssh_config)
        options.connect_timeout = timeout
        transport = open_target(options, prompts or FleetPrompts(), cancel=own)
        own.on_cancel(transport.close)  # a blocked read returns when its connection goes
        clock.touch()
        transport.on_answer = clock.touch
        result.reachable = True
        _survey_reached(transport, host, result, own, clock)
        result.status = HostStatus.OK
    except BaseException as error:  # every outcome is a result
        # The connect's own time-out is the host's: it may end the wait a moment before
        # the clock's timer thread runs (on a busy machine), and is a time-out all the same.
        timed_out = clock.expired or time.monotonic() - began >= timeout
        result.status, result.error = _outcome(error, timed_out, own.cancelled, result.reachable)
        if not isinstance(error, SambaTuneError):
            log.error("surveying %s failed", host.name, exc_info=error)
        if not isinstance(error, Exception):
            raise  # KeyboardInterrupt, SystemExit: after the result is filled in
    finally:
        clock.stop()
        unlink()
        if transport is not None:
            transport.close()
        result.seconds = time.monotonic() - began
    return result


def _survey_reached(
    transport: Any, host: FleetHost, result: HostSurvey, cancel: CancelToken, clock: _HostClock
) -> None:
    from sambatune.advisor.advice import advise
    from sambatune.advisor.gather import gather_inputs
    from sambatune.conf.catalog import cache_dir
    from sambatune.remote.survey import run_survey

    # The client audit comes after the advisor's own testparm run, whose [global] it
    # reuses: one testparm -sv per host instead of two (the costliest command here).
    ahead = _commands_ahead(host.samba_conf) if host.samba_conf else None
    survey = run_survey(
        transport, config_path=host.samba_conf, cancel=cancel, audit_clients=False, also_run=ahead
    )
    if ahead:
        transport.answer_ahead(_answers(ahead, survey.data.get("also_run") or []))
    result.survey = survey
    samba = survey.samba
    result.samba_version = samba.get("version_text")
    result.smbd_running = samba.get("running")
    result.config_path = survey.config_path
    result.config_source = samba.get("config_source")
    result.instances = [
        {
            "pid": instance.get("pid"),
            "config": instance.get("config"),
            "managed": bool(instance.get("managed")),
            "ports": [p.get("port") for p in instance.get("listening") or []],
        }
        for instance in survey.instances
    ]
    result.untrusted = [
        {key: impostor.get(key) for key in ("pid", "uid", "reason")}
        for impostor in survey.untrusted_processes
    ]
    result.nics = [
        {key: nic.get(key) for key in ("name", "state", "speed_mbit", "mtu", "loopback", "virtual")}
        for nic in survey.nics
    ]
    cancel.raise_if_cancelled()
    try:
        path = host.samba_conf or survey.config_path
        sudo: bool | None = None
        if path:
            # Read as this account first (one round trip; each costs 0.1 s or more), with
            # sudo only when that is refused; the advisor is then told which it was.
            data, sudo = _read_live_file(transport, path)
            if sudo is not None:
                result.config_sha256 = hashlib.sha256(data).hexdigest()
        # The catalog cache is per data directory (SAMBATUNE_HOME): warm is per both.
        with _FIRST_OF_EACH_VERSION.turn(f"{cache_dir()}|{result.samba_version}", clock):
            inputs = gather_inputs(
                transport,
                config_path=host.samba_conf,
                survey=survey,
                sudo=sudo,
                cancel=cancel,
                data=data if sudo is not None else None,
            )
        result.config_path = inputs.config.path
        inputs = _with_client_audit(transport, inputs, survey, cancel)
        result.survey = survey
        advice = advise(inputs)
    except Cancelled:
        raise
    except SambaTuneError as error:
        if cancel.cancelled:
            raise Cancelled() from error
        # Reached and surveyed: the findings are what is missing, and why is said.
        result.advice_error = error
        return
    result.findings = advice.counts()
    result.finding_ids = [finding.id for finding in advice.findings]
    result.finding_titles = [(f.severity, f.title, f.subject) for f in advice.findings]


class _HostClock:
    """How long one host may go without progress: each command it answers starts the
    time again, and when it runs out the host's cancel token is set (its connection
    closes). A host that answers slowly on a busy machine goes on; one that stops
    answering is failed. It can be suspended while the host waits for something that is
    not its doing (another host building the parameter catalog)."""

    def __init__(self, seconds: float, cancel: CancelToken) -> None:
        self._seconds = seconds
        self._cancel = cancel
        self._lock = threading.Lock()
        self._deadline = time.monotonic() + seconds
        self._suspended_left: float | None = None
        self._generation = 0  # a timer of an earlier generation only returns
        self._running = True
        self.expired = False
        self._schedule(seconds)

    def _schedule(self, delay: float) -> None:
        self._generation += 1
        timer = threading.Timer(max(0.0, delay), self._check, args=(self._generation,))
        timer.daemon = True
        timer.start()

    def _check(self, generation: int) -> None:
        with self._lock:
            if generation != self._generation or not self._running or self._suspended_left is not None:
                return
            left = self._deadline - time.monotonic()
            if left > 0:
                self._schedule(left)  # progress since this timer was set
                return
            self.expired = True
        self._cancel.cancel()

    def touch(self) -> None:
        """Progress: the host answered a command."""
        with self._lock:
            if self._suspended_left is None:
                self._deadline = time.monotonic() + self._seconds

    def suspend(self) -> None:
        with self._lock:
            if self._running and not self.expired and self._suspended_left is None:
                self._suspended_left = self._deadline - time.monotonic()
                self._generation += 1

    def resume(self, extra: float = 0.0) -> None:
        with self._lock:
            if self._running and not self.expired and self._suspended_left is not None:
                left = self._suspended_left + extra
                self._suspended_left = None
                self._deadline = time.monotonic() + left
                self._schedule(left)

    def stop(self) -> None:
        with self._lock:
            self._running = False
            self._generation += 1


class _CatalogWarmUp:
    """One host per Samba version judges first; the others of that version wait for it.

    The advisor reads each version's parameter catalog from the server's testparm once
    and caches it on this computer (``conf.catalog_build.live_catalog``). Twenty hosts of
    one version starting together would each build it (seconds of testparm runs apiece,
    all at once); waiting for the first lets the rest read it from the cache. Once a
    version has been judged, nobody waits for it again.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._versions: dict[str, threading.Lock] = {}
        self._warm: set[str] = set()

    @contextlib.contextmanager
    def turn(self, version: str, clock: _HostClock) -> Iterator[None]:
        with self._lock:
            first = None if version in self._warm else self._versions.setdefault(version, threading.Lock())
        if first is None:
            yield
            return
        # Waiting for another host's build is not this host's slowness, and the build is
        # this computer's one-time cost: neither counts against the time per host.
        clock.suspend()
        building = False
        try:
            with first:
                with self._lock:
                    building = version not in self._warm
                if building:
                    clock.resume(extra=CATALOG_BUILD_ALLOWANCE)
                    yield
                    with self._lock:
                        self._warm.add(version)
        finally:
            clock.resume()
        if not building:
            yield  # the catalog is cached now: judge alongside the others, not in turn


_FIRST_OF_EACH_VERSION = _CatalogWarmUp()


def _with_client_audit(
    transport: Any, inputs: AdvisorInput, survey: Survey, cancel: CancelToken
) -> AdvisorInput:
    """The advisor's inputs with who is connected and how, from the [global] values the
    advisor's testparm already read."""
    audit = add_client_audit(
        transport,
        survey,
        cancel,
        path=inputs.config.path,
        globals_=dict(inputs.config.effective.get("global", {})),
    )
    if audit is None:
        return inputs
    return replace(inputs, server=replace(inputs.server, client_audit=audit))


def _commands_ahead(path: str) -> list[list[str]]:
    """What a host's survey asks after the agent, when the smb.conf's path is known: the
    agent runs them too, and each saves a round trip (a shell start on the server)."""
    from sambatune.remote import regular_file

    return [
        ["sh", "-c", regular_file.SCRIPT, "sambatune-read", path, str(regular_file.READ_LIMIT + 1)],
        ["testparm", "-V"],
        ["testparm", "-s", "-v", "--suppress-prompt", path],
        ["id", "-u"],
        ["smbstatus", f"--configfile={path}", "--json"],
    ]


def _answers(commands: list[list[str]], answers: list[Any]) -> dict[tuple[str, ...], Any]:
    """The agent's answers to ``commands`` as command results (its output is base64). A
    command it left unanswered (too much output for its one line) or answered in a form
    this does not read is sent to the host as usual."""
    import base64
    import binascii

    from sambatune.remote.transport import CommandResult

    results = {}
    for argv, answer in zip(commands, answers, strict=False):
        try:
            results[tuple(argv)] = CommandResult(
                tuple(argv),
                int(answer["exit"]),
                base64.b64decode(answer["stdout"], validate=True),
                base64.b64decode(answer["stderr"], validate=True),
            )
        except (TypeError, KeyError, ValueError, binascii.Error):
            continue
    return results


def _read_live_file(transport: Any, path: str) -> tuple[bytes, bool | None]:
    """The live smb.conf's bytes, and whether sudo read them (None when it is not a
    file that can be read: the advisor then says why in its own words)."""
    from sambatune.remote.regular_file import READ_LIMIT

    for sudo in (False, True):
        try:
            found = transport.read_regular_file(path, READ_LIMIT, sudo=sudo)
        except SambaTuneError:
            continue  # there but unreadable as this account: try sudo
        if found.kind == "missing" and not sudo:
            continue  # or in a folder this account cannot enter (a 0750 /etc/samba)
        return (found.data, sudo) if found.kind == "file" else (b"", None)
    return b"", None


def _outcome(
    error: BaseException, timed_out: bool, cancelled: bool, reachable: bool
) -> tuple[HostStatus, SambaTuneError]:
    """The status and the error to show for how a host's survey ended."""
    if timed_out:
        return HostStatus.TIMED_OUT, ConnectionFailed(
            "No answer in time."
            if not reachable
            else "The survey took longer than the time allowed per host.",
            details=str(error),
        )
    if cancelled or isinstance(error, Cancelled):
        return HostStatus.CANCELLED, Cancelled()
    if isinstance(error, HostKeyUnknown):
        return HostStatus.HOST_KEY_UNKNOWN, error
    if isinstance(error, (HostKeyChanged, HostKeyRevoked)):
        return HostStatus.HOST_KEY_CHANGED, error
    if isinstance(error, (AuthenticationFailed, SecretRequired)):
        return HostStatus.AUTH_FAILED, error
    if isinstance(error, ConnectionFailed) and not reachable:
        return HostStatus.UNREACHABLE, error
    if isinstance(error, SambaTuneError):
        return HostStatus.FAILED, error
    return HostStatus.FAILED, SambaTuneError(f"Unexpected error: {error}", details=repr(error))


def summarize(results: Sequence[HostSurvey]) -> str:
    """'18 of 20 hosts reachable; 2 unreachable: nas07 (unreachable), nas12 (timed-out)'."""
    reached = [r for r in results if r.reachable]
    text = f"{len(reached)} of {len(results)} host{'' if len(results) == 1 else 's'} reachable"
    missing = [r for r in results if not r.reachable]
    if missing:
        text += f"; {len(missing)} not: " + ", ".join(f"{r.host.name} ({r.status})" for r in missing)
    return text
