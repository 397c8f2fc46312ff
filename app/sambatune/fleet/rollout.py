"""``fleet apply``: one change rolled out host by host, measured, halted and put back.

The change is a list of edits rendered into each host's own smb.conf
(:mod:`sambatune.fleet.change`). The rollout:

1. **plans** every host in parallel: its live file, the edits made in it, and a dry run
   of the safe-apply pipeline (testparm, how each changed parameter takes effect, who a
   restart would end), the same code path as ``conf apply --dry-run``. A host whose
   file would not change is already in line. A host the change cannot go to (testparm
   rejects it, a restart nobody allowed, unreachable) stops the rollout before anything
   is touched: a plan that fails on one host is no plan.
2. changes the **canary** first, measured before and after with the wizard's test and
   judged with its significance test; a significant slowdown halts.
3. changes the others in **waves**, the hosts of a wave in parallel.

Every change goes through :func:`sambatune.conf.apply.apply_config` (testparm, backup,
verified atomic swap, reload or an allowed restart, health check, rollback). Any failure
halts: no further wave starts, and every host this rollout changed gets its previous
bytes back through the same pipeline, checked by SHA-256. The record
(:mod:`sambatune.fleet.rollout_store`) is written after every host step, so a rollout
resumes after the program was closed; a host caught mid-apply is settled by comparing
its live file's SHA-256 with the bytes before and after, as the wizard does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sambatune.applied_versions import AppliedVersions
from sambatune.bench.results_db import ResultsDatabase
from sambatune.bench.smb import GET, PUT
from sambatune.cancellation import CancelToken
from sambatune.conf.apply import PLANNED, ApplyOutcome, ApplyRequest, apply_config, unified_diff
from sambatune.conf.catalog_build import server_catalog
from sambatune.conf.includes import TransportIncludes
from sambatune.errors import InvalidInput, SambaTuneError
from sambatune.fleet.canary import CANNOT_JUDGE, check_measurable, judge_canary
from sambatune.fleet.change import Edit, apply_edits
from sambatune.fleet.inventory import FleetHost
from sambatune.fleet.live import Connector, connect, each_host, read_live
from sambatune.fleet.rollout_store import (
    HostRecord,
    HostState,
    Live,
    RolloutRecord,
    RolloutStatus,
    RolloutStore,
    now_iso,
    sha256,
)
from sambatune.json_fields import StoredFields
from sambatune.remote.transport import Transport
from sambatune.states import LiveState, TextState
from sambatune.wizard.measure import MeasureSpec, measure
from sambatune.wizard.verdict import judge


class MeasureLevel(TextState):
    NONE = "none"
    #: 4 MiB, one warm-up and five counted runs.
    QUICK = "quick"
    #: The wizard's defaults (64 MiB, 1 + 5 runs).
    FULL = "full"


#: The inventory variable naming the share the canary is measured through.
SHARE_VARIABLE = "samba_measure_share"
#: The canary's figures by the test's series: what moved is named in these words.
FIGURES = {PUT: "writes", GET: "reads"}
QUICK_SIZE = 4 << 20


@dataclass(frozen=True)
class RolloutOptions(StoredFields):
    canary: str | None = None
    wave: int = 2
    allow_restart: bool = False
    measure: MeasureLevel = MeasureLevel.QUICK
    share: str | None = None
    #: A host not reached when planning is left out, as Ansible carries on without an
    #: unreachable host; otherwise it refuses the whole rollout.
    skip_unreachable: bool = False
    #: Hosts planned (read, rendered, dry-run) at once.
    concurrency: int = 8

    def __post_init__(self) -> None:
        if self.wave < 1:
            raise InvalidInput(f"A wave holds at least one host, not {self.wave}.")


def measure_spec(level: MeasureLevel, share: str) -> MeasureSpec | None:
    if level is MeasureLevel.NONE:
        return None
    if level is MeasureLevel.QUICK:
        # Five runs a side: the wizard's standard, and what the rank test needs to decide.
        return MeasureSpec(share=share, size=QUICK_SIZE, runs=5, warmup=1)
    return MeasureSpec(share=share)


def measure_share(host: FleetHost, options: RolloutOptions) -> str | None:
    share = options.share or host.variables.get(SHARE_VARIABLE)
    return str(share) if share else None


@dataclass
class RolloutPlan:
    """Every host's part, with the canary and waves assigned, and what stops it."""

    hosts: list[HostRecord]
    #: host name -> why the change cannot go there; any entry means the rollout refuses.
    refusals: dict[str, str] = field(default_factory=dict)

    @property
    def to_change(self) -> list[HostRecord]:
        return [h for h in self.hosts if h.wave is not None]

    def to_json(self) -> dict[str, Any]:
        return {
            "hosts": [h.to_json(with_bytes=False) for h in self.hosts],
            "refusals": self.refusals,
            "to_change": len(self.to_change),
            "in_line": sum(1 for h in self.hosts if h.state is HostState.IN_LINE),
            "left_out": [h.name for h in self.hosts if h.state is HostState.LEFT_OUT],
        }


def plan_host(
    host: FleetHost, transport: Transport, edits: Sequence[Edit], options: RolloutOptions
) -> tuple[HostRecord, str | None]:
    """Read, render and dry-run one host: its record and, if it cannot take the change, why."""
    live = read_live(transport, host)
    candidate = apply_edits(
        live.data, live.path, edits, server_catalog(transport), TransportIncludes(transport, sudo=live.sudo)
    )
    record = HostRecord(
        name=host.name,
        wave=None,
        path=live.path,
        sudo=live.sudo,
        before=live.data,
        after=candidate,
    )
    if candidate == live.data:
        record.planned_at = now_iso()
        record.state = HostState.IN_LINE
        record.message = "Its smb.conf already reads as the change would make it."
        return record, None
    record.diff = unified_diff(live.data, candidate, live.path)
    outcome = apply_config(
        transport,
        ApplyRequest(
            live.path,
            live.data,
            candidate,
            sudo=live.sudo,
            allow_restart=options.allow_restart,
            dry_run=True,
        ),
    )
    record.activation = outcome.activation.value
    record.restart_reasons = list(outcome.restart_reasons)
    record.changes = [c.to_json() for c in outcome.changes]
    record.clients = outcome.clients.sentence() if outcome.clients else None
    record.message = outcome.message
    record.planned_at = now_iso()
    if outcome.status != PLANNED:
        return record, outcome.message
    if outcome.restart_reasons and outcome.smbd_running and not options.allow_restart:
        who = f" {record.clients}" if record.clients else ""
        return record, (
            "needs smbd to restart, which ends every client's connection"
            f" ({'; '.join(outcome.restart_reasons)}).{who} Allow it with --allow-restart."
        )
    return record, None


def plan_rollout(
    hosts: Sequence[FleetHost],
    edits: Sequence[Edit],
    options: RolloutOptions,
    *,
    connector: Connector | None = None,
    cancel: CancelToken | None = None,
) -> RolloutPlan:
    """Plan every host in parallel, then pick the canary and the waves."""
    if not edits:
        raise InvalidInput("Nothing to roll out: give at least one --set or --unset.")
    if options.canary is not None and options.canary not in {h.name for h in hosts}:
        raise InvalidInput(f"The canary {options.canary} is not one of the selected hosts.")
    records: dict[str, HostRecord] = {}
    refusals: dict[str, str] = {}

    def work(host: FleetHost, transport: Transport) -> tuple[HostRecord, str | None]:
        return plan_host(host, transport, edits, options)

    for outcome in each_host(
        hosts, work, connector=connector, concurrency=options.concurrency, cancel=cancel
    ):
        if outcome.value is None:
            error = outcome.error or "failed"
            record = HostRecord(outcome.host.name, wave=None, message=error, planned_at=now_iso())
            records[outcome.host.name] = record
            if not outcome.reached and options.skip_unreachable:
                record.state = HostState.LEFT_OUT
            else:
                refusals[outcome.host.name] = error
            continue
        record, refusal = outcome.value
        records[outcome.host.name] = record
        if refusal is not None:
            refusals[outcome.host.name] = refusal
    ordered = [records[h.name] for h in hosts]
    by_name = {h.name: h for h in hosts}
    _assign_waves(ordered, by_name, options, refusals)
    canary = next((r for r in ordered if r.wave == 0), None)
    if canary is not None and canary.name not in refusals and options.measure is not MeasureLevel.NONE:
        refusal = _check_canary(by_name[canary.name], canary, options, connector, cancel)
        if refusal is not None:
            refusals[canary.name] = refusal
    return RolloutPlan(ordered, refusals)


def _check_canary(
    host: FleetHost,
    record: HostRecord,
    options: RolloutOptions,
    connector: Connector | None,
    cancel: CancelToken | None,
) -> str | None:
    """Whether the canary can be measured, tried before anything changes."""
    share = measure_share(host, options)
    assert share is not None and record.path is not None  # a share is checked in _assign_waves
    try:
        transport = (connector or (lambda h: connect(h, cancel=cancel)))(host)
    except (SambaTuneError, OSError) as error:
        return f"unreachable: {getattr(error, 'message', error)}"
    try:
        return check_measurable(transport, record.path, share, cancel)
    finally:
        transport.close()


def _assign_waves(
    records: list[HostRecord],
    hosts: Mapping[str, FleetHost],
    options: RolloutOptions,
    refusals: dict[str, str],
) -> None:
    # Hosts the plan refuses get their place too, so the preview shows the whole order.
    changing = [r for r in records if r.state not in (HostState.IN_LINE, HostState.LEFT_OUT)]
    if not changing:
        return
    if options.canary is not None:
        canary = next((r for r in records if r.name == options.canary), None)
        if canary is None or canary.state is HostState.IN_LINE:
            refusals[options.canary] = (
                "the canary is already in line, so measuring it would show nothing: choose a host "
                "the change alters"
            )
            return
        if canary.state is HostState.LEFT_OUT:
            refusals[options.canary] = "the canary cannot be reached: choose another host"
            return
    else:
        canary = changing[0]
    canary.wave = 0
    rest = [r for r in changing if r is not canary]
    for index, record in enumerate(rest):
        record.wave = 1 + index // options.wave
    if options.measure is not MeasureLevel.NONE and measure_share(hosts[canary.name], options) is None:
        refusals[canary.name] = (
            f"measuring the canary needs a share: give --share or the host variable "
            f"{SHARE_VARIABLE} (or --measure none)"
        )


@dataclass(frozen=True)
class RolloutEvent:
    """One line of a rollout's progress: the timeline entry just recorded."""

    host: str | None
    what: str
    message: str


ENDED = (RolloutStatus.DONE, RolloutStatus.HALTED, RolloutStatus.REFUSED)


class Rollout:
    """Runs (or resumes) a recorded rollout to its end: done, halted or interrupted."""

    def __init__(
        self,
        record: RolloutRecord,
        hosts: Mapping[str, FleetHost],
        connector: Connector,
        store: RolloutStore,
        *,
        on_event: Callable[[RolloutEvent], None] | None = None,
        cancel: CancelToken | None = None,
        database: ResultsDatabase | None = None,
    ) -> None:
        missing = [h.name for h in record.hosts if h.wave is not None and h.name not in hosts]
        if missing:
            raise InvalidInput(
                f"Rollout {record.id} changes {', '.join(missing)}, which the fleet no longer names."
            )
        self.record = record
        self.hosts = hosts
        self.connector = connector
        self.store = store
        self.on_event = on_event
        # Seen between host steps only: a pipeline once started runs to its checked end.
        self.cancel = cancel or CancelToken()
        self.database = database
        self.options = RolloutOptions.from_json(record.options)
        # Hosts of a wave update the one record from parallel threads.
        self._lock = threading.RLock()

    # -- the record -----------------------------------------------------------------
    def _note(self, host: str | None, what: str, message: str = "") -> None:
        with self._lock:
            self.record.note(host, what, message)
            self.store.save(self.record)
        if self.on_event is not None:
            self.on_event(RolloutEvent(host, what, message))

    def _update(self, host: HostRecord, **values: Any) -> None:
        with self._lock:
            for name, value in values.items():
                setattr(host, name, value)
            self.store.save(self.record)

    def _set_status(self, status: RolloutStatus, reason: str | None = None) -> None:
        with self._lock:
            self.record.status = status
            if reason is not None:
                self.record.reason = reason
            if status in (RolloutStatus.DONE, RolloutStatus.HALTED):
                self.record.finished_at = now_iso()
            self.store.save(self.record)

    # -- the run --------------------------------------------------------------------
    def run(self) -> RolloutRecord:
        """Run (or resume) the rollout in this process alone: another SambaTune running
        it already refuses this run, and one that dies shows it as interrupted."""
        with self.store.hold(self.record.id):
            return self._run()

    def _run(self) -> RolloutRecord:
        record = self.record
        if record.status in ENDED:
            raise InvalidInput(f"Rollout {record.id} has ended ({record.status}); nothing to resume.")
        # What another process may have written since this record was read.
        on_record = self.store.recorded_status(record.id)
        if on_record in ENDED:
            raise InvalidInput(f"Rollout {record.id} has ended ({on_record}); nothing to resume.")
        halting = record.status is RolloutStatus.HALTING or on_record == RolloutStatus.HALTING
        self._set_status(RolloutStatus.HALTING if halting else RolloutStatus.RUNNING)
        fresh = all(entry.what == "planned" for entry in record.timeline)
        self._note(None, "started" if fresh else "resumed")
        try:
            problem = self._settle_interrupted()
            if halting or problem:
                return self._halt(problem or record.reason)
            for wave in record.waves:
                if all(h.state is not HostState.PENDING for h in wave) and not self._canary_unjudged(wave):
                    continue
                if self.cancel.cancelled:
                    self._set_status(RolloutStatus.INTERRUPTED, "stopped before the next wave")
                    self._note(None, "interrupted", f"stopped before wave {wave[0].wave}; resume it")
                    return record
                problem = self._canary(wave[0]) if wave[0].wave == 0 else self._wave(wave)
                if problem:
                    return self._halt(problem)
        except BaseException:
            # Killed or interrupted from outside: the record says so, the hosts were
            # each left checked by their pipeline; a resume settles any caught mid-apply.
            with self._lock:
                if record.status is RolloutStatus.RUNNING:
                    record.status = RolloutStatus.INTERRUPTED
                    record.reason = "the program was interrupted"
                self.store.save(record)
            raise
        self._set_status(RolloutStatus.DONE, "")
        self._note(
            None, "done", f"{sum(1 for h in record.hosts if h.state is HostState.APPLIED)} host(s) changed"
        )
        return record

    def _canary_unjudged(self, wave: list[HostRecord]) -> bool:
        canary = wave[0]
        return (
            canary.wave == 0
            and canary.state is HostState.APPLIED
            and canary.measure_before is not None
            and canary.verdict is None
        )

    def _settle_interrupted(self) -> str | None:
        """Hosts the last run left mid-apply: what their live file is decides."""
        caught = [h for h in self.record.hosts if h.state in (HostState.APPLYING, HostState.RESTORING)]
        problem: str | None = None
        for outcome in each_host(
            [self.hosts[h.name] for h in caught], self._settle_one, connector=self.connector
        ):
            if outcome.error is not None:
                host = self.record.host(outcome.host.name)
                self._update(host, live=Live.UNKNOWN, message=f"could not be checked: {outcome.error}")
                problem = (
                    problem or f"{host.name} could not be checked after the interruption: {outcome.error}"
                )
            elif outcome.value:
                problem = problem or outcome.value
        return problem

    def _settle_one(self, fleet_host: FleetHost, transport: Transport) -> str | None:
        host = self.record.host(fleet_host.name)
        assert host.path is not None
        live = sha256(transport.read_file(host.path, sudo=host.sudo))
        restoring = host.state is HostState.RESTORING
        if live == host.after_sha256:
            state = HostState.RESTORING if restoring else HostState.APPLIED
            self._update(host, state=state, live=Live.AFTER, applied_at=host.applied_at or now_iso())
            self._note(host.name, "settled", "the new file is live (recognised by its SHA-256)")
            return None
        if live == host.before_sha256:
            state = HostState.RESTORED if restoring else HostState.PENDING
            self._update(host, state=state, live=Live.BEFORE, restored_at=now_iso() if restoring else None)
            self._note(host.name, "settled", "the previous file is live (recognised by its SHA-256)")
            return None
        self._update(host, state=HostState.FAILED, live=Live.UNKNOWN)
        self._note(host.name, "settled", "the live file is neither the previous nor the new version")
        return f"{host.name}'s smb.conf was changed by someone else during the rollout"

    def _canary(self, host: HostRecord) -> str | None:
        fleet_host = self.hosts[host.name]
        spec = None
        if self.options.measure is not MeasureLevel.NONE:
            share = measure_share(fleet_host, self.options)
            assert share is not None  # the plan refuses a measured canary without a share
            spec = measure_spec(self.options.measure, share)
        try:
            transport = self.connector(fleet_host)
        except (SambaTuneError, OSError) as error:
            return self._unreachable(host, error)
        try:
            if spec is not None and host.state is HostState.PENDING:
                self._note(host.name, "measuring", f"before the change: {spec.describe()}")
                result = self._measure(transport, host, spec, "before")
                self._update(host, measure_before=result)
            if host.state is HostState.PENDING and not self._apply(host, transport, fleet_host):
                return f"the canary {host.name} was not changed: {host.message}"
            if spec is not None and host.measure_before is not None and host.verdict is None:
                self._note(host.name, "measuring", "after the change")
                after = self._measure(transport, host, spec, "after")
                database = self.database or ResultsDatabase()
                verdict = judge(database.load(host.measure_before), database.load(after))
                canary = judge_canary(
                    [(FIGURES.get(c.series, c.series), c.comparison) for c in verdict.comparisons]
                )
                judged = {**verdict.to_json(), "overall": canary.outcome, "sentence": canary.sentence()}
                self._update(host, measure_after=after, verdict=judged)
                self._note(host.name, "verdict", f"{canary.outcome}: {canary.sentence()}")
                if canary.outcome == CANNOT_JUDGE:
                    return f"the canary {host.name}'s measurement cannot tell: {canary.sentence()}"
                if canary.halts:
                    slower = f"the canary {host.name} got significantly slower ({canary.outcome})"
                    return f"{slower}: {canary.sentence()}"
        except SambaTuneError as error:
            self._note(host.name, "failed", error.message)
            return f"the canary {host.name}: {error.message}"
        finally:
            transport.close()
        return None

    def _measure(self, transport: Transport, host: HostRecord, spec: MeasureSpec, when: str) -> int:
        assert host.path is not None
        result = measure(
            transport,
            spec,
            config_path=host.path,
            survey=None,
            note=f"fleet rollout {self.record.id}: {host.name} {when} the change",
            database=self.database or ResultsDatabase(),
        )
        assert result.session_id is not None
        return result.session_id

    def _wave(self, wave: list[HostRecord]) -> str | None:
        pending = [h for h in wave if h.state is HostState.PENDING]
        number = wave[0].wave
        self._note(None, f"wave {number}", ", ".join(h.name for h in pending))
        failures: list[str] = []
        for outcome in each_host(
            [self.hosts[h.name] for h in pending],
            lambda fleet_host, transport: self._apply(
                self.record.host(fleet_host.name), transport, fleet_host
            ),
            connector=self.connector,
            concurrency=len(pending),
        ):
            host = self.record.host(outcome.host.name)
            if outcome.error is not None:
                failures.append(self._unreachable(host, outcome.error))
            elif not outcome.value:
                failures.append(f"{host.name}: {host.message}")
        return "; ".join(failures) or None

    def _unreachable(self, host: HostRecord, error: object) -> str:
        text = getattr(error, "message", None) or str(error)
        # Caught mid-apply the host may hold either file; a halt looks at it.
        live = Live.UNKNOWN if host.state is HostState.APPLYING else host.live
        self._update(host, state=HostState.FAILED, live=live, message=text)
        self._note(host.name, "failed", text)
        return f"{host.name}: {text}"

    def _apply(self, host: HostRecord, transport: Transport, fleet_host: FleetHost) -> bool:
        """Change one host through the safe-apply pipeline; False when it did not take."""
        assert host.path is not None and host.before is not None and host.after is not None
        live = sha256(transport.read_file(host.path, sudo=host.sudo))
        if live == host.after_sha256:
            self._update(host, state=HostState.APPLIED, live=Live.AFTER, applied_at=now_iso())
            self._note(host.name, "applied", "the new file was already live (recognised by its SHA-256)")
            return True
        if live != host.before_sha256:
            self._update(
                host,
                state=HostState.FAILED,
                live=Live.BEFORE,  # not this rollout's doing: nothing to put back
                message="its smb.conf changed since the plan, so it was not touched",
            )
            self._note(host.name, "failed", host.message)
            return False
        self._update(host, state=HostState.APPLYING)
        self._note(host.name, "applying", "; ".join(self.record.edits))
        outcome, _ = self._swap(
            fleet_host,
            transport,
            host,
            (host.before, host.after),
            f"SambaTune fleet rollout {self.record.id}: " + "; ".join(self.record.edits),
        )
        return self._settle_outcome(host, outcome)

    def _swap(
        self,
        fleet_host: FleetHost,
        transport: Transport,
        host: HostRecord,
        old_new: tuple[bytes, bytes],
        summary: str,
        *,
        read_back: bool = False,
    ) -> tuple[ApplyOutcome, bytes | None]:
        """One smb.conf swap through the safe-apply pipeline, for a rollout and for its
        restore alike. A restart cuts this SSH connection, so the pipeline may reconnect;
        ``read_back`` reads the file that is live afterwards over whichever connection
        still stands."""
        assert host.path is not None
        old, new = old_new
        opened: list[Transport] = []

        def reconnect() -> Transport:
            opened.append(self.connector(fleet_host))
            return opened[-1]

        try:
            outcome = apply_config(
                transport,
                ApplyRequest(
                    host.path,
                    old,
                    new,
                    summary=summary,
                    sudo=host.sudo,
                    allow_restart=self.options.allow_restart,
                ),
                reconnect=reconnect,
                journal=AppliedVersions().journal(transport.label, host.path),
            )
            live = (
                (opened[-1] if opened else transport).read_file(host.path, sudo=host.sudo)
                if read_back
                else None
            )
        finally:
            for extra in opened:
                extra.close()
        return outcome, live

    def _settle_outcome(self, host: HostRecord, outcome: ApplyOutcome) -> bool:
        live = {LiveState.NEW: Live.AFTER, LiveState.OLD: Live.BEFORE}.get(outcome.live, Live.UNKNOWN)
        backup = outcome.backup.id if outcome.backup else None
        if outcome.ok:
            self._update(
                host,
                state=HostState.APPLIED,
                live=live,
                applied_at=now_iso(),
                message=outcome.message,
                backup_id=backup,
            )
            self._note(host.name, "applied", outcome.message)
            return True
        self._update(
            host,
            state=HostState.FAILED,
            live=live,
            message=f"{outcome.status}: {outcome.message}",
            backup_id=backup,
        )
        self._note(host.name, "failed", host.message)
        return False

    # -- halting ----------------------------------------------------------------------
    def _halt(self, reason: str) -> RolloutRecord:
        self._set_status(RolloutStatus.HALTING, reason)
        self._note(None, "halting", reason)
        touched = [h for h in self.record.hosts if h.touched]
        for outcome in each_host(
            [self.hosts[h.name] for h in touched], self._restore, connector=self.connector
        ):
            if outcome.error is not None:
                host = self.record.host(outcome.host.name)
                self._update(host, state=HostState.NOT_RESTORED, message=f"not put back: {outcome.error}")
                self._note(host.name, "not restored", outcome.error)
        self._set_status(RolloutStatus.HALTED)
        left = [h.name for h in self.record.hosts if h.state is HostState.NOT_RESTORED]
        self._note(
            None,
            "halted",
            f"not put back: {', '.join(left)}" if left else f"{len(touched)} host(s) put back byte for byte",
        )
        return self.record

    def _restore(self, fleet_host: FleetHost, transport: Transport) -> None:
        """Put the previous bytes back through the pipeline and check them by SHA-256."""
        host = self.record.host(fleet_host.name)
        assert host.path is not None and host.before is not None and host.after is not None
        self._update(host, state=HostState.RESTORING)
        live = sha256(transport.read_file(host.path, sudo=host.sudo))
        if live == host.before_sha256:
            # The pipeline rolled it back itself, or the swap never happened.
            self._update(host, state=HostState.RESTORED, live=Live.BEFORE, restored_at=now_iso())
            self._note(host.name, "restored", "the previous file is live (checked by SHA-256)")
            return
        if live != host.after_sha256:
            self._update(
                host,
                state=HostState.NOT_RESTORED,
                live=Live.UNKNOWN,
                message="its smb.conf was changed by someone else meanwhile, so it was left alone",
            )
            self._note(host.name, "not restored", host.message)
            return
        self._note(host.name, "restoring", "putting the previous file back")
        outcome, live_bytes = self._swap(
            fleet_host,
            transport,
            host,
            (host.after, host.before),
            f"SambaTune fleet rollout {self.record.id} halted: the previous file back",
            read_back=True,
        )
        checked = sha256(live_bytes or b"")
        if checked == host.before_sha256:
            self._update(host, state=HostState.RESTORED, live=Live.BEFORE, restored_at=now_iso())
            self._note(host.name, "restored", "the previous file is back, byte for byte (SHA-256 checked)")
            return
        live_now = Live.AFTER if checked == host.after_sha256 else Live.UNKNOWN
        self._update(
            host,
            state=HostState.NOT_RESTORED,
            live=live_now,
            message=f"putting the previous file back did not take: {outcome.status}: {outcome.message}",
        )
        self._note(host.name, "not restored", host.message)


def start_rollout(
    plan: RolloutPlan,
    edits: Sequence[Edit],
    options: RolloutOptions,
    source: Mapping[str, Any],
    hosts: Mapping[str, FleetHost],
    connector: Connector,
    store: RolloutStore,
    *,
    on_event: Callable[[RolloutEvent], None] | None = None,
    cancel: CancelToken | None = None,
    database: ResultsDatabase | None = None,
) -> RolloutRecord:
    """Record the plan as a new rollout and run it (refused at once if the plan says so)."""
    record = store.create(
        RolloutRecord(
            id=0,
            edits=[e.describe() for e in edits],
            source=dict(source),
            options=options.to_json(),
            hosts=plan.hosts,
        )
    )
    record.note(None, "planned", f"{len(plan.to_change)} host(s) to change")
    if plan.refusals:
        record.status = RolloutStatus.REFUSED
        record.reason = "; ".join(f"{name}: {why}" for name, why in plan.refusals.items())
        record.finished_at = now_iso()
        record.note(None, "refused", record.reason)
        store.save(record)
        return record
    store.save(record)
    return Rollout(record, hosts, connector, store, on_event=on_event, cancel=cancel, database=database).run()
