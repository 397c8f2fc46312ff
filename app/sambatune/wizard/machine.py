"""The tuning wizard as a state machine: the book's method, one measured change at a time.

    connect -> survey -> findings -> baseline -> choose -> apply -> measure -> verdict
            -> decide (keep or revert) -> findings (next change) ... -> finish

Any wizard can also be discarded, at any step (:meth:`TuningWizard.discard`): it ends
there, and smb.conf stays as it is live.

Each method does one step on the live server and writes it to the results database
only when it has finished, so :attr:`TuningWizard.stage` (the next step to do) can be
rebuilt from the database after the app was closed or the connection was lost
(:meth:`TuningWizard.resume`). The baseline is measured once; after a kept change the
"after" measurement becomes the next baseline, after a reverted one the old baseline
still describes the server, because the server again has exactly the old bytes.

Before changing or measuring anything, a step checks that the live smb.conf holds the
bytes the wizard expects: someone else's edit would make every comparison a lie. A step
that had already happened on the server when the connection dropped (the change is live
but the step was not written) is recognised by its bytes and recorded, not repeated.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from sambatune.advisor.advice import advise
from sambatune.advisor.findings import ConfigChange
from sambatune.advisor.gather import gather_inputs
from sambatune.applied_versions import AppliedVersions
from sambatune.bench.events import Progress
from sambatune.bench.records import BenchResult
from sambatune.cancellation import CancelToken
from sambatune.conf.apply import (
    CANCELLED,
    ApplyOutcome,
    ApplyRequest,
    ApplyStep,
    apply_config,
    read_live,
    unified_diff,
)
from sambatune.conf.catalog_build import live_catalog
from sambatune.conf.includes import TransportIncludes
from sambatune.errors import Cancelled, InvalidInput, SambaTuneError
from sambatune.remote.agents import AgentEvent
from sambatune.remote.smb_sessions import connected_clients
from sambatune.remote.survey import Survey, run_survey
from sambatune.remote.transport import Transport
from sambatune.states import ApplyStatus, LiveState
from sambatune.units import format_operations_rate, format_rate
from sambatune.wizard.change import apply_change, change_activation, change_from_json
from sambatune.wizard.measure import FILES, MeasureSpec, measure
from sambatune.wizard.store import StepRecord, WizardRecord, WizardStep, WizardStore
from sambatune.wizard.verdict import Verdict, judge

# The names the other modules and the tests import.
CONNECT = WizardStep.CONNECT
SURVEY = WizardStep.SURVEY
FINDINGS = WizardStep.FINDINGS
BASELINE = WizardStep.BASELINE
CHOOSE = WizardStep.CHOOSE
APPLY = WizardStep.APPLY
MEASURE = WizardStep.MEASURE
VERDICT = WizardStep.VERDICT
DECIDE = WizardStep.DECIDE
FINISH = WizardStep.FINISH
DISCARD = WizardStep.DISCARD
DONE = WizardStep.DONE

STEP_TITLES: dict[WizardStep, str] = {
    CONNECT: "Connect to the server",
    SURVEY: "Survey the server",
    FINDINGS: "Look for problems",
    BASELINE: "Measure the baseline",
    CHOOSE: "Choose one change",
    APPLY: "Apply it safely",
    MEASURE: "Measure again",
    VERDICT: "Compare before and after",
    DECIDE: "Keep or revert",
    FINISH: "Finish and report",
    DISCARD: "Discarded",
    DONE: "Finished",
}
#: Stages at which no change is on the server waiting for its verdict: finishing is safe.
CAN_FINISH = (SURVEY, FINDINGS, BASELINE, CHOOSE, APPLY)

OnEvent = Callable[[Any], None]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class TuningWizard:
    def __init__(self, store: WizardStore, record: WizardRecord) -> None:
        self.store = store
        self.record = record

    # -- starting and resuming --------------------------------------------------------
    @classmethod
    def start(
        cls,
        store: WizardStore,
        transport: Transport,
        spec: MeasureSpec,
        *,
        config_path: str | None = None,
        sudo: bool = False,
    ) -> TuningWizard:
        """A new wizard for the server behind ``transport``; its first step (connect) is done."""
        record = store.create(transport.label, config_path, spec)
        wizard = cls(store, record)
        wizard._add(
            CONNECT,
            {
                "target": transport.label,
                "local": transport.is_local,
                "sudo": sudo,
                "config_path": config_path,
            },
        )
        return wizard

    @classmethod
    def resume(cls, store: WizardStore, wizard_id: int, *, password: str | None = None) -> TuningWizard:
        """The wizard as the database has it, at the step after its last finished one."""
        record = store.load(wizard_id)
        if password is not None:
            record.measure = record.measure.with_password(password)
        return cls(store, record)

    @property
    def id(self) -> int:
        return self.record.id

    # -- where we are --------------------------------------------------------------------
    @property
    def stage(self) -> WizardStep:
        """The next step to do."""
        steps = self.record.steps
        if not steps:
            return CONNECT
        last = steps[-1]
        if last.step == FINDINGS:
            return CHOOSE if self.baseline_session is not None else BASELINE
        if last.step == APPLY and not last.data.get("ok"):
            return CHOOSE
        return {
            CONNECT: SURVEY,
            SURVEY: FINDINGS,
            BASELINE: CHOOSE,
            CHOOSE: APPLY,
            APPLY: MEASURE,
            MEASURE: VERDICT,
            VERDICT: DECIDE,
            DECIDE: FINDINGS,
            FINISH: DONE,
            DISCARD: DONE,
        }[last.step]

    @property
    def finished(self) -> bool:
        return self.stage == DONE

    @property
    def discarded(self) -> bool:
        steps = self.record.steps
        return bool(steps) and steps[-1].step == DISCARD

    @property
    def round(self) -> int:
        """How many changes were chosen so far."""
        return sum(1 for s in self.record.steps if s.step == CHOOSE)

    @property
    def sudo(self) -> bool:
        connect = self.record.last(CONNECT)
        return bool(connect and connect.data.get("sudo"))

    @property
    def config_path(self) -> str:
        if not self.record.config_path:
            raise InvalidInput("The wizard does not know the smb.conf yet: survey the server first.")
        return self.record.config_path

    @property
    def survey(self) -> Survey | None:
        step = self.record.last(SURVEY)
        return Survey.from_json(step.data["survey"]) if step else None

    @property
    def findings(self) -> list[dict[str, Any]]:
        """The newest findings, as JSON (see :meth:`Finding.to_json`)."""
        step = self.record.last(FINDINGS)
        return list(step.data["findings"]) if step else []

    @property
    def original(self) -> bytes | None:
        """smb.conf as it was when the wizard first judged it."""
        first = next((s for s in self.record.steps if s.step == FINDINGS), None)
        return first.smb_conf if first else None

    @property
    def expected_live(self) -> bytes | None:
        """The bytes the live smb.conf must have now, by the finished steps."""
        live = None
        for step in self.record.steps:
            if step.step in (FINDINGS, DECIDE, FINISH) or (step.step == APPLY and step.data.get("ok")):
                live = step.smb_conf if step.smb_conf is not None else live
        return live

    @property
    def measure_spec(self) -> MeasureSpec:
        """The test every measurement of this wizard runs: ``auto`` is decided once, at
        the baseline (and kept in its step), so before and after are always the same test."""
        baseline = self.record.last(BASELINE)
        spec = self.record.measure
        if baseline is not None and baseline.data.get("test"):
            return replace(spec, test=str(baseline.data["test"]))
        return spec.chosen_for(self.findings)

    @property
    def baseline_session(self) -> int | None:
        """The benchmark session the next change is compared against."""
        session = None
        for step in self.record.steps:
            if step.step == BASELINE:
                session = int(step.data["session_id"])
            elif step.step == DECIDE and step.data.get("decision") == "keep":
                after = self._round_step(MEASURE, step.round)
                session = int(after.data["session_id"]) if after else session
        return session

    def baseline_text(self) -> str:
        """``Baseline (session 12): write 641 MB/s, read 807 MB/s``: what the next change is
        measured against, in figures ('' before the baseline)."""
        session = self.baseline_session
        if session is None:
            return ""
        means: dict[str, Any] = {}
        for step in self.record.steps:
            if step.step in (BASELINE, MEASURE) and step.data.get("session_id") == session:
                means = dict(step.data.get("means") or {})
        operations = self.measure_spec.test == FILES
        figures = [
            f"{name} {format_operations_rate(mean) if operations else format_rate(mean)}"
            for name, mean in means.items()
            if isinstance(mean, (int, float))
        ]
        return f"Baseline (session {session}): " + (", ".join(figures) if figures else "no figures")

    @property
    def pending_change(self) -> StepRecord | None:
        """The chosen change of the current round, until it is kept or reverted."""
        if self.stage in (APPLY, MEASURE, VERDICT, DECIDE):
            return self.record.last(CHOOSE)
        return None

    @property
    def pending_activation(self) -> dict[str, Any]:
        """How smbd takes the chosen change (reload, new connections, restart); {} when
        no change waits to be applied or it is not known."""
        chosen = self.record.last(CHOOSE) if self.stage == APPLY else None
        activation = (chosen.data.get("finding") or {}).get("activation") if chosen else None
        return dict(activation) if isinstance(activation, dict) else {}

    @property
    def left_live(self) -> str | None:
        """The change this round applied that is not kept or reverted yet: live on the
        server, and left there if the wizard is discarded now."""
        applied = self.record.last(APPLY)
        chosen = self.record.last(CHOOSE)
        if self.stage in (MEASURE, VERDICT, DECIDE) and chosen and applied and applied.data.get("ok"):
            return str(chosen.data.get("summary"))
        return None

    def kept_changes(self) -> list[str]:
        """The summaries of the changes kept so far, in order."""
        return [
            r[CHOOSE].data["summary"]
            for r in self.rounds()
            if DECIDE in r and r[DECIDE].data.get("decision") == "keep"
        ]

    def round_outcomes(self) -> list[tuple[str, str, str]]:
        """(change, what the measurement said, what became of it) for every round."""
        outcomes = []
        for steps in self.rounds():
            verdict = steps.get(VERDICT)
            decided = steps.get(DECIDE)
            decision = str(decided.data.get("decision")) if decided else ""
            outcomes.append(
                (
                    steps[CHOOSE].data["summary"],
                    str(verdict.data["overall"]) if verdict else "not measured",
                    {"keep": "kept", "revert": "reverted"}.get(decision, "not applied"),
                )
            )
        return outcomes

    def verdict_runs(self) -> dict[str, tuple[list[float], list[float]]]:
        """Each measured figure's runs before and after the change being decided (reads
        the results database)."""
        verdict = self.verdict
        assert verdict is not None
        before = self.store.database.load(int(verdict["before_session"])).result.series
        after = self.store.database.load(int(verdict["after_session"])).result.series
        return {name: (before[name].values(), after[name].values()) for name in after if name in before}

    @property
    def verdict(self) -> dict[str, Any] | None:
        if self.stage != DECIDE:
            return None
        step = self.record.last(VERDICT)
        return step.data if step else None

    def _round_step(self, name: WizardStep, round_: int) -> StepRecord | None:
        return next((s for s in reversed(self.record.steps) if s.step == name and s.round == round_), None)

    def rounds(self) -> list[dict[WizardStep, StepRecord]]:
        """The steps of each change, in order: {CHOOSE: ..., APPLY: ..., ...}."""
        found: list[dict[WizardStep, StepRecord]] = []
        for step in self.record.steps:
            if step.step == CHOOSE:
                found.append({})
            if found and step.round == len(found) and step.step in (CHOOSE, APPLY, MEASURE, VERDICT, DECIDE):
                found[-1][step.step] = step
        return found

    # -- bookkeeping -----------------------------------------------------------------
    def _add(self, step: WizardStep, data: dict[str, Any], smb_conf: bytes | None = None) -> StepRecord:
        round_ = self.round + (1 if step == CHOOSE else 0)
        return self.store.add_step(self.record, step, round_, data, smb_conf)

    def _expect(self, *stages: WizardStep) -> None:
        if self.stage not in stages:
            wanted = " or ".join(f"'{STEP_TITLES[s]}'" for s in stages)
            raise InvalidInput(f"The wizard is at '{STEP_TITLES[self.stage]}', not at {wanted}.")

    def _check_server(self, transport: Transport) -> None:
        if transport.label != self.record.server:
            raise InvalidInput(f"Wizard {self.id} tunes {self.record.server}, not {transport.label}.")

    def _live(self, transport: Transport) -> bytes:
        return read_live(transport, self.config_path, sudo=self.sudo).data

    def _check_live(self, live: bytes, expected: bytes | None, what: str) -> None:
        if expected is not None and live != expected:
            diff = unified_diff(expected, live, self.config_path, "expected", "live")
            raise InvalidInput(
                f"{self.config_path} was changed outside the wizard, so {what} would not "
                "compare like with like.",
                details="What differs from what the wizard expects:\n" + diff,
            )

    # -- the steps ----------------------------------------------------------------------
    def run_survey(
        self, transport: Transport, *, cancel: CancelToken | None = None, on_event: OnEvent | None = None
    ) -> Survey:
        self._expect(SURVEY)
        self._check_server(transport)

        def on_agent(event: AgentEvent) -> None:
            if on_event is not None and event.type == "progress":
                on_event(Progress(None, f"Surveying: {event.data.get('message', '')}"))

        survey = run_survey(transport, config_path=self.record.config_path, cancel=cancel, on_event=on_agent)
        path = self.record.config_path or survey.config_path
        if not path:
            raise InvalidInput(
                f"No smb.conf was found on {transport.label}.",
                details="Give its path in the server's settings.",
            )
        self._add(SURVEY, {"survey": survey.to_json(), "config_path": path})
        return survey

    def find_problems(
        self, transport: Transport, *, cancel: CancelToken | None = None, on_event: OnEvent | None = None
    ) -> list[dict[str, Any]]:
        """The advisor's findings on the live smb.conf (again after every decided change)."""
        self._expect(FINDINGS)
        self._check_server(transport)
        if on_event is not None:
            on_event(Progress(None, "Reading smb.conf and asking testparm…"))
        live = self._live(transport)
        self._check_live(live, self.expected_live, "the findings")
        inputs = gather_inputs(
            transport,
            config_path=self.config_path,
            sudo=self.sudo or None,
            survey=self.survey,
            recorded=self.store.database,
            cancel=cancel,
        )
        measured_in = list(inputs.recorded_sessions)
        advice = advise(inputs)
        findings = [f.to_json() for f in advice.findings]
        clients = self._connected_clients(transport, cancel)
        for finding in findings:
            if finding.get("change") and finding["change"].get("kind") == ConfigChange.kind:
                finding["activation"] = change_activation(finding["change"], inputs.config, clients)
        self._add(
            FINDINGS,
            {
                "findings": findings,
                "judged_as": advice.judged_as,
                "samba_version": advice.samba_version,
                "counts": advice.counts(),
                "config_sha256": _sha(live),
                "measured_in": measured_in,
            },
            smb_conf=live,
        )
        return findings

    def look(
        self, transport: Transport, *, cancel: CancelToken | None = None, on_event: OnEvent | None = None
    ) -> list[StepRecord]:
        """Survey (when not done yet), then judge smb.conf, as far as the wizard is at
        either step; the steps this added."""
        report = on_event or (lambda event: None)
        done = []
        if self.stage == SURVEY:
            report("Surveying the server…")
            self.run_survey(transport, cancel=cancel, on_event=on_event)
            done.append(self.record.steps[-1])
        if self.stage == FINDINGS:
            report("Reading smb.conf and judging it…")
            self.find_problems(transport, cancel=cancel, on_event=on_event)
            done.append(self.record.steps[-1])
        return done

    def measure_baseline(
        self, transport: Transport, *, cancel: CancelToken | None = None, on_event: OnEvent | None = None
    ) -> BenchResult:
        self._expect(BASELINE)
        spec = self.measure_spec
        result = self._measure(transport, self.expected_live, f"wizard {self.id}: baseline", cancel, on_event)
        self._add(BASELINE, {"session_id": result.session_id, "means": _means(result), "test": spec.test})
        return result

    def applicable(self) -> list[tuple[int, dict[str, Any]]]:
        """The findings the wizard can apply (an smb.conf change), with their index."""
        return [
            (i, f)
            for i, f in enumerate(self.findings)
            if f.get("change") and f["change"].get("kind") == ConfigChange.kind
        ]

    def choose(self, transport: Transport, index: int) -> StepRecord:
        """Pick finding ``index`` (of :attr:`findings`); its change becomes the candidate file."""
        self._expect(CHOOSE)
        self._check_server(transport)
        findings = self.findings
        if not 0 <= index < len(findings):
            raise InvalidInput(f"There is no finding {index + 1}; there are {len(findings)}.")
        finding = findings[index]
        if not finding.get("change") or finding["change"].get("kind") != ConfigChange.kind:
            raise InvalidInput(
                f"'{finding['title']}' proposes no smb.conf change the wizard can apply.",
                details="Applicable are the findings with a change "
                "to smb.conf; the others say what to do by hand or what to measure.",
            )
        change = change_from_json(finding["change"])
        live = self._live(transport)
        self._check_live(live, self.expected_live, "the change")
        candidate = apply_change(
            live,
            change,
            self.config_path,
            live_catalog(transport),
            TransportIncludes(transport, sudo=self.sudo),
        )
        return self._add(
            CHOOSE,
            {
                "finding": finding,
                "change": change.to_json(),
                "summary": change.describe(),
                "diff": unified_diff(live, candidate, self.config_path, "now", "with the change"),
            },
            smb_conf=candidate,
        )

    def _connected_clients(self, transport: Transport, cancel: CancelToken | None) -> int | None:
        """How many sessions the managed smbd has now; None when smbstatus cannot say."""
        try:
            return len(connected_clients(transport, self.config_path, sudo=self.sudo, cancel=cancel).sessions)
        except Cancelled:
            raise
        except SambaTuneError:
            return None

    def apply(
        self,
        transport: Transport,
        *,
        cancel: CancelToken | None = None,
        on_event: OnEvent | None = None,
        allow_restart: bool = False,
    ) -> StepRecord:
        """Apply the chosen change through the safe-apply pipeline (testparm, backup,
        atomic swap, reload, health check, rollback on failure)."""
        self._expect(APPLY)
        self._check_server(transport)
        chosen = self.record.last(CHOOSE)
        before = self.expected_live
        assert chosen is not None and chosen.smb_conf is not None and before is not None
        candidate = chosen.smb_conf
        live = self._live(transport)
        if live == candidate and live != before:
            return self._add(
                APPLY,
                {
                    "ok": True,
                    "status": ApplyStatus.APPLIED,
                    "live": LiveState.NEW,
                    "message": "The change was already live (applied before the wizard was interrupted).",
                    "steps": [],
                },
                smb_conf=candidate,
            )
        self._check_live(live, before, "the change")
        outcome = self._swap(
            transport,
            before,
            candidate,
            chosen.data["summary"],
            on_event,
            cancel,
            allow_restart=allow_restart,
        )
        if outcome.status == CANCELLED:
            raise Cancelled(outcome.message)
        if outcome.live is LiveState.UNKNOWN:
            raise SambaTuneError(
                outcome.message,
                details="Reconnect and resume the wizard: it "
                "looks at the live file and carries on from there.",
            )
        return self._add(APPLY, _outcome_json(outcome), smb_conf=candidate if outcome.ok else None)

    def measure_again(
        self, transport: Transport, *, cancel: CancelToken | None = None, on_event: OnEvent | None = None
    ) -> BenchResult:
        self._expect(MEASURE)
        result = self._measure(
            transport, self.expected_live, f"wizard {self.id}: after change {self.round}", cancel, on_event
        )
        self._add(MEASURE, {"session_id": result.session_id, "means": _means(result)})
        return result

    def compare(self) -> Verdict:
        """Before against after with the significance test; the verdict is recorded."""
        self._expect(VERDICT)
        after = self.record.last(MEASURE)
        before = self.baseline_session
        assert after is not None and before is not None
        database = self.store.database
        verdict = judge(database.load(before), database.load(int(after.data["session_id"])))
        self._add(
            VERDICT,
            {**verdict.to_json(), "before_session": before, "after_session": int(after.data["session_id"])},
        )
        return verdict

    def decide(
        self,
        transport: Transport,
        keep: bool,
        *,
        cancel: CancelToken | None = None,
        on_event: OnEvent | None = None,
    ) -> StepRecord:
        """Keep the change, or put the exact previous bytes back through the same pipeline."""
        self._expect(DECIDE)
        self._check_server(transport)
        chosen = self.record.last(CHOOSE)
        before = self._before_round()
        assert chosen is not None and chosen.smb_conf is not None
        candidate = chosen.smb_conf
        live = self._live(transport)
        if keep:
            self._check_live(live, candidate, "keeping it")
            return self._add(DECIDE, {"decision": "keep"}, smb_conf=candidate)
        if live == before:
            # The pipeline did not run, so no ApplyStatus: "reverted" is this step's own word.
            return self._add(
                DECIDE,
                {
                    "decision": "revert",
                    "identical": True,
                    "status": "reverted",
                    "message": "The previous smb.conf was already back.",
                },
                smb_conf=live,
            )
        self._check_live(live, candidate, "reverting")
        # Reverting a change that took a restart takes one too: the admin allowed it.
        applied = self.record.last(APPLY)
        restarted = applied is not None and any(
            step.get("step") == ApplyStep.RESTART for step in applied.data.get("steps") or []
        )
        outcome = self._swap(
            transport,
            candidate,
            before,
            f"revert {chosen.data['summary']}",
            on_event,
            cancel,
            allow_restart=restarted,
        )
        if not outcome.ok:
            raise SambaTuneError(
                f"The change was not reverted: {outcome.message}",
                details="\n".join(f"{s.step}: {s.state} {s.message}" for s in outcome.steps),
            )
        after = self._live(transport)
        decided = self._add(
            DECIDE,
            {"decision": "revert", "identical": after == before, **_outcome_json(outcome)},
            smb_conf=after,
        )
        if after != before:
            raise SambaTuneError(
                "The revert finished, but smb.conf is not byte for byte the previous version.",
                details="Compare them in smb.conf history (sambatune conf history --diff BACKUP_ID).",
            )
        return decided

    def finish(self, transport: Transport) -> StepRecord:
        """End the wizard: the final smb.conf and its difference from the original."""
        self._expect(*CAN_FINISH)
        self._check_server(transport)
        live = self._live(transport) if self.record.config_path else b""
        if self.stage == APPLY:
            self._check_live(live, self.expected_live, "finishing")
        original = self.original
        return self._add(
            FINISH,
            {
                "kept": self.kept_changes(),
                "identical_to_original": original is not None and live == original,
                "diff": unified_diff(
                    original, live, self.config_path, "before the wizard", "after the wizard"
                )
                if original is not None
                else "",
                "final_sha256": _sha(live),
            },
            smb_conf=live,
        )

    def discard(self, reason: str = "") -> StepRecord:
        """End the wizard where it is, at any step; nothing on the server is touched.

        smb.conf stays as it is live: a change this wizard applied and had not yet kept
        or reverted stays too (the step says which), to be reverted in smb.conf history
        if it is not wanted. The wizard is then done, no longer offered to resume.
        """
        if self.finished:
            raise InvalidInput(
                f"Wizard {self.id} has ended already ({'discarded' if self.discarded else 'finished'})."
            )
        stage = self.stage
        data: dict[str, Any] = {
            "reason": reason.strip() or "discarded",
            "stage": stage,
            "changes_tried": self.round,
        }
        if self.left_live is not None:
            data["left_live"] = self.left_live
        return self._add(DISCARD, data)

    def report_html(self) -> str:
        from sambatune.wizard.report import render_wizard_report

        return render_wizard_report(self)

    # -- helpers ---------------------------------------------------------------------
    def _before_round(self) -> bytes:
        """The bytes the live file had before the current round's change."""
        before = None
        for step in self.record.steps:
            if step.step == CHOOSE and step.round == self.round:
                break
            if step.step in (FINDINGS, DECIDE) or (step.step == APPLY and step.data.get("ok")):
                before = step.smb_conf if step.smb_conf is not None else before
        assert before is not None
        return before

    def _measure(
        self,
        transport: Transport,
        expected: bytes | None,
        note: str,
        cancel: CancelToken | None,
        on_event: OnEvent | None,
    ) -> BenchResult:
        self._check_server(transport)
        self._check_live(self._live(transport), expected, "measuring now")
        return measure(
            transport,
            self.measure_spec,
            config_path=self.config_path,
            survey=self.survey,
            note=note,
            database=self.store.database,
            cancel=cancel,
            on_event=on_event,
        )

    def _swap(
        self,
        transport: Transport,
        previous: bytes,
        candidate: bytes,
        what: str,
        on_event: OnEvent | None,
        cancel: CancelToken | None,
        *,
        allow_restart: bool = False,
    ) -> ApplyOutcome:
        """Replace ``previous`` by ``candidate`` through the safe-apply pipeline and keep
        the version in the applied-config record, as the editor's Apply does."""
        summary = f"SambaTune wizard {self.id}, change {self.round}: {what}"
        return apply_config(
            transport,
            ApplyRequest(
                self.config_path,
                previous,
                candidate,
                summary=summary,
                sudo=self.sudo,
                allow_restart=allow_restart,
            ),
            on_event=on_event,
            cancel=cancel,
            journal=AppliedVersions().journal(transport.label, self.config_path),
        )


def _means(result: BenchResult) -> dict[str, float | None]:
    means: dict[str, float | None] = {}
    for name, series in result.series.items():
        stats = series.stats()
        means[name] = stats.mean if stats else None
    return means


def _outcome_json(outcome: ApplyOutcome) -> dict[str, Any]:
    return {
        "ok": outcome.ok,
        "status": outcome.status,
        "live": outcome.live,
        "message": outcome.message,
        "backup_id": outcome.backup.id if outcome.backup else None,
        "steps": [s.to_json() for s in outcome.steps],
        "warnings": outcome.warnings,
    }
