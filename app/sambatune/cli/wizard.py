"""``sambatune wizard``: run the tuning wizard from a terminal or a script, and read it back.

    sambatune wizard start --host files1 --share data [--test auto --runs 5 --warmup 1]
                                                  survey, then the findings, each numbered
    sambatune wizard next [WIZARD] --host files1    the next step: baseline, measure, verdict
    sambatune wizard next 3 --host files1 --finding log-level-high     choose ONE change
    sambatune wizard next 3 --host files1 [--allow-restart]            apply it safely
    sambatune wizard keep|revert 3 --host files1    decide, then the findings again
    sambatune wizard finish 3 --host files1         end it: the final smb.conf diff
    sambatune wizard discard 3 [--reason TEXT]      end it at any step; smb.conf stays as is
    sambatune wizard status [WIZARD] [--server LABEL] [--unfinished] [--json]
    sambatune wizard report 3 [-o wizard-3.html] [--json]

These drive the same state machine and keep the same record as the GUI (Server >
Tuning wizard), so a wizard started here can be carried on there and the other way
round. Each verb does one step and says what comes next; ``--json`` prints the stage,
the findings (numbered, with their ids), the pending change and the verdict.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sambatune.cli.connect import add_connection_options
from sambatune.cli.output import add_json_flag, data_stdout

if TYPE_CHECKING:
    from sambatune.remote.transport import Transport
    from sambatune.wizard.machine import TuningWizard
    from sambatune.wizard.measure import MeasureSpec
    from sambatune.wizard.store import StepRecord, WizardStore


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "wizard", help="the tuning wizard: run it step by step, see where each is, its report"
    )
    verbs = parser.add_subparsers(dest="wizard_verb", metavar="ACTION", required=True)

    start = verbs.add_parser(
        "start", help="start a wizard on a server: survey it and list what the advisor finds"
    )
    add_connection_options(start)
    start.add_argument(
        "--config-path", metavar="PATH", help="the smb.conf to tune (default: the one the running smbd uses)"
    )
    start.add_argument(
        "--sudo", action="store_true", help="use sudo for smb.conf and smbd (default: when needed)"
    )
    test = start.add_argument_group("the test every measurement of this wizard repeats")
    test.add_argument("--share", required=True, help="the share to measure through")
    test.add_argument(
        "--test",
        choices=("auto", "copy", "files"),
        default="auto",
        help="copy: smbclient on the server copies a file into the share and back; files: this "
        "computer creates, reads, lists and deletes many small files there over SMB; auto "
        "(default): files when most changes the wizard can make are about metadata, else copy",
    )
    test.add_argument("--size", default="64MiB", metavar="BYTES", help="copy: test file size (default 64MiB)")
    test.add_argument("--files", type=int, default=2000, help="files: how many (default 2000)")
    test.add_argument(
        "--file-size", default="4KiB", metavar="BYTES", help="files: each one's size (default 4KiB)"
    )
    test.add_argument("--runs", type=int, default=5, help="counted runs (default 5, at least 2)")
    test.add_argument("--warmup", type=int, default=1, help="warm-up runs first, not counted (default 1)")
    test.add_argument("--smb-user", help="connect to the share as this user (default: guest)")
    _add_smb_password(test)
    add_json_flag(start)
    start.set_defaults(handler=handle_start)

    step = verbs.add_parser(
        "next", help="do the wizard's next step: findings, baseline, choose, apply, measure, verdict"
    )
    _add_wizard_argument(step)
    add_connection_options(step)
    step.add_argument(
        "--finding",
        metavar="NUMBER|ID",
        help="at 'Choose one change': the finding whose change to try, by its number or its id",
    )
    step.add_argument(
        "--allow-restart",
        action="store_true",
        help="at 'Apply it safely': allow restarting smbd when the change needs "
        "it (a restart ends every client's connection; without this such a "
        "change is refused)",
    )
    _add_smb_password(step)
    add_json_flag(step)
    step.set_defaults(handler=handle_next)

    for name, keep in (("keep", True), ("revert", False)):
        decide = verbs.add_parser(
            name,
            help="keep the measured change, then look for the next one"
            if keep
            else "put the previous smb.conf back byte for byte, then look for the next change",
        )
        _add_wizard_argument(decide)
        add_connection_options(decide)
        add_json_flag(decide)
        decide.set_defaults(handler=handle_decide, keep=keep)

    finish = verbs.add_parser(
        "finish", help="end the wizard (when no change awaits its verdict): the final diff"
    )
    _add_wizard_argument(finish)
    add_connection_options(finish)
    add_json_flag(finish)
    finish.set_defaults(handler=handle_finish)

    discard = verbs.add_parser(
        "discard", help="end a wizard at any step without connecting; smb.conf stays as it is"
    )
    discard.add_argument("wizard", type=int, metavar="WIZARD")
    discard.add_argument("--reason", default="", help="why, kept with the wizard's record")
    add_json_flag(discard)
    discard.set_defaults(handler=handle_discard)

    status = verbs.add_parser("status", help="every wizard, or one wizard's steps")
    status.add_argument("wizard", type=int, nargs="?", metavar="WIZARD")
    status.add_argument("--server", help="only this server (its label)")
    status.add_argument("--unfinished", action="store_true", help="only wizards that can resume")
    add_json_flag(status)
    status.set_defaults(handler=handle_status)

    report = verbs.add_parser("report", help="one wizard as a self-contained HTML report")
    report.add_argument("wizard", type=int, metavar="WIZARD")
    report.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here instead of stdout")
    add_json_flag(report)
    report.set_defaults(handler=handle_report)


def _add_wizard_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "wizard",
        type=int,
        nargs="?",
        metavar="WIZARD",
        help="which wizard (default: the server's only unfinished one)",
    )


def _add_smb_password(group: Any) -> None:
    group.add_argument(
        "--smb-password-stdin",
        action="store_true",
        help="read the share user's password from stdin (the line after any "
        "SSH/sudo password); it is never stored",
    )


# -- starting and running ------------------------------------------------------------------
def handle_start(args: argparse.Namespace) -> int:
    from sambatune.cli.connect import connect_from_args
    from sambatune.errors import SambaTuneError
    from sambatune.remote.config_location import detect_config_path, needs_sudo
    from sambatune.wizard.machine import TuningWizard
    from sambatune.wizard.store import WizardStore

    spec = _spec(args)
    progress = _Progress(args.json)
    progress.message("connecting...")
    transport = connect_from_args(args)
    try:
        spec = spec.with_password(_smb_password(args) if spec.user else None)
        path = args.config_path
        if not path:
            path = detect_config_path(transport, flag="--config-path")
        sudo = bool(args.sudo) or needs_sudo(transport, path)
        if sudo:
            transport.check_sudo()
        wizard = TuningWizard.start(WizardStore(), transport, spec, config_path=path, sudo=sudo)
        done = list(wizard.record.steps)
        try:
            done += wizard.look(transport, on_event=progress)
        except SambaTuneError as error:
            error.details = ((error.details + "\n") if error.details else "") + (
                f"Wizard {wizard.id} was started: carry on with 'sambatune wizard next "
                f"{wizard.id}', or end it with 'sambatune wizard discard {wizard.id}'."
            )
            raise
    finally:
        progress.done()
        transport.close()
    _show(args, wizard, done)
    return 0


def handle_next(args: argparse.Namespace) -> int:
    from sambatune.errors import InvalidInput, SambaTuneError
    from sambatune.wizard.machine import (
        APPLY,
        BASELINE,
        CHOOSE,
        DECIDE,
        DONE,
        FINDINGS,
        MEASURE,
        STEP_TITLES,
        SURVEY,
        VERDICT,
    )

    done: list[StepRecord] = []
    with _opened(args) as (progress, transport, wizard):
        stage = wizard.stage
        if args.finding is not None and stage != CHOOSE:
            raise InvalidInput(
                f"--finding is for the step '{STEP_TITLES[CHOOSE]}'; wizard {wizard.id} is at "
                f"'{STEP_TITLES[stage]}'.",
                details=f"Run 'sambatune wizard next {wizard.id}' "
                "without it until the wizard asks which change to try.",
            )
        if stage == DONE:
            raise InvalidInput(
                f"Wizard {wizard.id} has ended "
                f"({'discarded' if wizard.discarded else 'finished'}): "
                "nothing is left to do.",
                details="Start another with 'sambatune wizard start'.",
            )
        if stage == DECIDE:
            raise InvalidInput(
                f"Wizard {wizard.id} waits for your decision on the measured change.",
                details=f"Keep it: sambatune wizard keep {wizard.id}\n"
                f"Revert it: sambatune wizard revert {wizard.id}",
            )
        if stage in (SURVEY, FINDINGS):
            done += wizard.look(transport, on_event=progress)
        elif stage in (BASELINE, MEASURE):
            _need_password(wizard)
            progress.message("measuring...")
            if stage == BASELINE:
                wizard.measure_baseline(transport, on_event=progress)
            else:
                wizard.measure_again(transport, on_event=progress)
            done.append(wizard.record.steps[-1])
        elif stage == CHOOSE:
            if args.finding is None:
                raise InvalidInput(
                    f"Which change should wizard {wizard.id} try? Give --finding with its number or id.",
                    details=_applicable_text(wizard) + "\nSee them all with: "
                    f"sambatune wizard status {wizard.id}",
                )
            done.append(wizard.choose(transport, _finding_index(wizard, args.finding)))
        elif stage == APPLY:
            _check_restart_consent(wizard, bool(args.allow_restart))
            applied = _safely(
                lambda cancel: wizard.apply(
                    transport, cancel=cancel, on_event=progress, allow_restart=args.allow_restart
                )
            )
            done.append(applied)
            if not applied.data.get("ok"):
                raise SambaTuneError(
                    f"The change was not applied: {applied.data.get('message')}",
                    details="smb.conf is unchanged. Choose another change: sambatune wizard "
                    f"next {wizard.id} --finding NUMBER",
                )
        elif stage == VERDICT:
            wizard.compare()
            done.append(wizard.record.steps[-1])
    _show(args, wizard, done)
    return 0


def handle_decide(args: argparse.Namespace) -> int:

    done: list[StepRecord] = []
    with _opened(args) as (progress, transport, wizard):
        done.append(
            _safely(lambda cancel: wizard.decide(transport, args.keep, cancel=cancel, on_event=progress))
        )
        done += wizard.look(transport, on_event=progress)
    _show(args, wizard, done)
    return 0


def handle_finish(args: argparse.Namespace) -> int:
    with _opened(args) as (_progress, transport, wizard):
        done = [wizard.finish(transport)]
    _show(args, wizard, done)
    return 0


def handle_discard(args: argparse.Namespace) -> int:
    from sambatune.wizard.machine import TuningWizard
    from sambatune.wizard.store import WizardStore

    wizard = TuningWizard.resume(WizardStore(), args.wizard)
    done = [wizard.discard(args.reason)]
    _show(args, wizard, done)
    return 0


# -- helpers ---------------------------------------------------------------------------------
def _spec(args: argparse.Namespace) -> MeasureSpec:
    from sambatune.quantities import parse_size
    from sambatune.wizard.measure import COPY, MeasureSpec

    return MeasureSpec(
        share=args.share.strip(),
        size=parse_size(args.size),
        runs=args.runs,
        warmup=args.warmup,
        user=(args.smb_user or "").strip() or None,
        test=COPY if args.test == "copy" else args.test,
        files=args.files,
        file_size=parse_size(args.file_size),
    )


def _smb_password(args: argparse.Namespace) -> str | None:
    if not getattr(args, "smb_password_stdin", False):
        return None
    line = sys.stdin.readline()
    return line[:-1] if line.endswith("\n") else line


@contextlib.contextmanager
def _opened(args: argparse.Namespace) -> Iterator[tuple[_Progress, Transport, TuningWizard]]:
    """The progress line, the connection and the wizard of one verb; both end with it."""
    progress = _Progress(args.json)
    progress.message("connecting...")
    transport, wizard, _store = _open(args)
    try:
        yield progress, transport, wizard
    finally:
        progress.done()
        transport.close()


def _open(args: argparse.Namespace) -> tuple[Transport, TuningWizard, WizardStore]:
    """Connect, then the wizard asked for (or the server's only unfinished one)."""
    from sambatune.cli.connect import connect_from_args
    from sambatune.errors import InvalidInput
    from sambatune.wizard.machine import TuningWizard
    from sambatune.wizard.store import WizardStore

    store = WizardStore()
    if args.wizard is not None:
        store.load(args.wizard)  # a wrong number is refused before connecting
    transport = connect_from_args(args)
    try:
        wizard_id = args.wizard
        if wizard_id is None:
            found = store.summaries(server=transport.label, unfinished=True)
            if not found:
                raise InvalidInput(
                    f"No unfinished wizard on {transport.label}.",
                    details="Start one with: sambatune wizard start --share NAME",
                )
            if len(found) > 1:
                raise InvalidInput(
                    f"{len(found)} unfinished wizards on {transport.label}: say which one.",
                    details="\n".join(
                        f"wizard {w.id}, started {w.created_at}, after '{w.last_step}'" for w in found
                    ),
                )
            wizard_id = found[0].id
        wizard = TuningWizard.resume(store, wizard_id, password=_smb_password(args))
        if wizard.record.server != transport.label:
            raise InvalidInput(
                f"Wizard {wizard.id} tunes {wizard.record.server}, not {transport.label}.",
                details="Connect to the server it was started on.",
            )
    except BaseException:
        transport.close()
        raise
    return transport, wizard, store


def _need_password(wizard: TuningWizard) -> None:
    from sambatune.errors import InvalidInput

    spec = wizard.record.measure
    if spec.needs_password:
        raise InvalidInput(
            f"The password of {spec.user} for [{spec.share}] is needed to measure.",
            details="Give it on stdin with --smb-password-stdin; it is never stored.",
        )


def _finding_index(wizard: TuningWizard, given: str) -> int:
    """The position (0-based) of the finding named by its number (1-based) or its id."""
    from sambatune.errors import InvalidInput

    findings = wizard.findings
    text = given.strip()
    if text.isdigit():
        number = int(text)
        if not 1 <= number <= len(findings):
            raise InvalidInput(
                f"There is no finding {number}; there are {len(findings)}.", details=_applicable_text(wizard)
            )
        return number - 1
    matches = [i for i, f in enumerate(findings) if f["id"] == text]
    if not matches:
        raise InvalidInput(f"No finding has the id '{text}'.", details=_applicable_text(wizard))
    if len(matches) > 1:
        raise InvalidInput(
            f"{len(matches)} findings have the id '{text}': give the number instead.",
            details="\n".join(f"{i + 1}. {findings[i]['title']} [{findings[i]['subject']}]" for i in matches),
        )
    return matches[0]


def _applicable_text(wizard: TuningWizard) -> str:
    choices = wizard.applicable()
    if not choices:
        return "No finding proposes an smb.conf change the wizard can apply."
    return "The changes the wizard can apply:\n" + "\n".join(
        f"{i + 1}. {f['title']} ({f['id']})" for i, f in choices
    )


def _check_restart_consent(wizard: TuningWizard, allow_restart: bool) -> None:
    """A change that needs smbd restarted is applied only with --allow-restart, asked
    before anything runs (the safe apply would refuse it too, but after recording)."""
    from sambatune.errors import InvalidInput
    from sambatune.wizard.change import activation_sentence, needs_restart

    activation = wizard.pending_activation
    if allow_restart or not needs_restart(activation):
        return
    raise InvalidInput(
        f"Not applied: {activation_sentence(activation)}",
        details=f"Apply it and restart smbd: sambatune wizard next {wizard.id} --allow-restart\n"
        f"Or end the wizard here: sambatune wizard finish {wizard.id} (or discard)",
    )


def _safely(step: Any) -> Any:
    """Run an apply or revert with Ctrl-C asking the safe-apply pipeline to stop cleanly."""
    from sambatune.cancellation import CancelToken
    from sambatune.cli.conf_apply import STOPPING_APPLY
    from sambatune.cli.output import ctrl_c_cancels

    cancel = CancelToken()
    with ctrl_c_cancels(cancel, STOPPING_APPLY):
        return step(cancel)


class _Progress:
    """The wizard's events on stderr: a progress line, and each safe-apply step."""

    def __init__(self, quiet: bool) -> None:
        from sambatune.cli.bench_tables import BenchProgress

        self.bench = BenchProgress()
        self.quiet = quiet

    def message(self, text: str) -> None:
        self.bench.message(text)

    def __call__(self, event: Any) -> None:
        from sambatune.cli.conf_apply import step_line
        from sambatune.conf.apply import STEP_TITLES, StepEvent, StepState

        if isinstance(event, StepEvent):
            if event.state is StepState.RUNNING:
                self.bench.message(STEP_TITLES.get(event.step, event.step) + "...")
                return
            self.bench.done()
            if not self.quiet:
                print(step_line(event), file=sys.stderr)
        elif isinstance(event, str):
            self.bench.message(event)
        else:
            self.bench.on_event(event)

    def done(self) -> None:
        self.bench.done()


# -- output --------------------------------------------------------------------------------
def _next_command(wizard: TuningWizard) -> str | None:
    """What to run next, for the text and the JSON alike."""
    from sambatune.wizard.change import needs_restart
    from sambatune.wizard.machine import APPLY, CHOOSE, DECIDE, DONE

    stage = wizard.stage
    if stage == DONE:
        return None
    if stage == DECIDE:
        from sambatune.wizard.verdict import decision_order

        first, second = decision_order(str((wizard.verdict or {}).get("recommendation")))
        return f"sambatune wizard {first} {wizard.id}  (or: {second})"
    if stage == CHOOSE:
        if not wizard.applicable():
            return f"sambatune wizard finish {wizard.id}"
        return f"sambatune wizard next {wizard.id} --finding NUMBER  (or: finish)"
    if stage == APPLY and needs_restart(wizard.pending_activation):
        return f"sambatune wizard next {wizard.id} --allow-restart"
    return f"sambatune wizard next {wizard.id}"


def state_json(wizard: TuningWizard, done: list[StepRecord]) -> dict[str, Any]:
    """Where the wizard is, what it found, what awaits: the verbs' ``--json``."""
    from sambatune.wizard.machine import STEP_TITLES

    applicable = {i for i, _f in wizard.applicable()}
    pending = wizard.pending_change
    return {
        "ok": True,
        "wizard_id": wizard.id,
        "server": wizard.record.server,
        "config_path": wizard.record.config_path,
        "stage": wizard.stage,
        "stage_title": STEP_TITLES[wizard.stage],
        "finished": wizard.finished,
        "discarded": wizard.discarded,
        "changes_tried": wizard.round,
        "baseline_session": wizard.baseline_session,
        "baseline": wizard.baseline_text(),
        "done": [step.to_json() for step in done],
        "findings": [
            {"number": i + 1, "applicable": i in applicable, **finding}
            for i, finding in enumerate(wizard.findings)
        ],
        "pending_change": None
        if pending is None
        else {
            "round": pending.round,
            "finding_id": pending.data["finding"]["id"],
            "summary": pending.data["summary"],
            "diff": pending.data["diff"],
            "activation": pending.data["finding"].get("activation"),
        },
        "verdict": wizard.verdict,
        "next_command": _next_command(wizard),
    }


def _show(args: argparse.Namespace, wizard: TuningWizard, done: list[StepRecord]) -> None:
    from sambatune.cli.output import print_json

    if args.json:
        print_json(state_json(wizard, done))
    else:
        print(format_state(wizard, done))


def format_state(wizard: TuningWizard, done: list[StepRecord]) -> str:
    from sambatune.wizard.change import activation_sentence
    from sambatune.wizard.machine import (
        APPLY,
        BASELINE,
        CHOOSE,
        DECIDE,
        DISCARD,
        DONE,
        FINISH,
        MEASURE,
        STEP_TITLES,
    )

    record = wizard.record
    lines = [f"Wizard {wizard.id} on {record.server} ({record.config_path or 'smb.conf unknown'})"]
    for step in done:
        text = _step_text(step)
        lines.append(f"Done: {STEP_TITLES[step.step]}" + (f": {text}" if text else ""))
    stage = wizard.stage
    if stage == CHOOSE:
        lines += ["", wizard.baseline_text() + "."]
    if stage in (BASELINE, CHOOSE):
        lines += ["", *_findings_lines(wizard)]
    pending = wizard.pending_change
    if pending is not None and stage == APPLY:
        lines += ["", f"Change {pending.round}: {pending.data['summary']}", pending.data["diff"].rstrip("\n")]
        sentence = activation_sentence(pending.data["finding"].get("activation"))
        if sentence:
            lines.append(sentence)
    elif pending is not None and stage == MEASURE:
        lines += ["", f"Change {pending.round} is live: {pending.data['summary']}"]
    if stage == DECIDE and wizard.verdict is not None:
        lines += ["", *_verdict_lines(wizard.verdict)]
    if stage == DONE:
        last = record.steps[-1]
        if last.step == FINISH:
            kept = last.data.get("kept") or []
            lines.append(
                "smb.conf is byte for byte what it was before the wizard."
                if last.data.get("identical_to_original")
                else f"Kept: {'; '.join(kept) if kept else 'no change'}."
            )
            if last.data.get("diff"):
                lines.append(str(last.data["diff"]).rstrip("\n"))
            lines.append(f"The report: sambatune wizard report {wizard.id} -o wizard-{wizard.id}.html")
        elif last.step == DISCARD:
            lines.append("smb.conf was left as it is live.")
            if last.data.get("left_live"):
                lines.append(
                    f"The change this wizard applied stays live: "
                    f"{last.data['left_live']}. To undo it: sambatune conf history, "
                    "then sambatune conf restore BACKUP_ID."
                )
    else:
        lines += ["", f"Next: {STEP_TITLES[stage]}: {_next_command(wizard)}"]
    return "\n".join(lines)


def _step_text(step: StepRecord) -> str:
    from sambatune.wizard.report import step_summary

    return step_summary(step)


def _findings_lines(wizard: TuningWizard) -> list[str]:
    from sambatune.cli.advise import _change_text
    from sambatune.wizard.change import activation_sentence
    from sambatune.wizard.store import WizardStep

    judged = wizard.record.last(WizardStep.FINDINGS)
    lines = [
        f"Findings (judged as {judged.data.get('judged_as') if judged else '?'}); "
        "● marks a change to smb.conf the wizard can apply:"
    ]
    applicable = {i for i, _f in wizard.applicable()}
    for i, finding in enumerate(wizard.findings):
        mark = "●" if i in applicable else "○"
        subject = finding.get("subject")
        where = f" [{subject}]" if subject and subject != "global" else ""
        lines.append(
            f"  {i + 1:>2} {mark} {finding['severity']:<10} {finding['title']}{where}  ({finding['id']})"
        )
        if i in applicable:
            lines.append(f"         change: {_change_text(finding['change'])}")
            sentence = activation_sentence(finding.get("activation"))
            if sentence:
                lines.append(f"         {sentence}")
    if not wizard.findings:
        lines.append("  (none)")
    measured = judged.data.get("measured_in") if judged else None
    if measured:
        lines.append(
            "Judged with the benchmark sessions run with this smb.conf: "
            + ", ".join(map(str, measured))
            + "."
        )
    return lines


def _verdict_lines(verdict: dict[str, Any]) -> list[str]:
    lines = [f"Verdict: {verdict.get('overall')}"]
    for series in verdict.get("series") or []:
        lines.append(f"  {series.get('label')}: {series.get('sentence')}")
    lines.append(f"Recommended: {verdict.get('recommendation')}. {verdict.get('explanation')}")
    return lines


# -- reading what was recorded ----------------------------------------------------------------
def handle_status(args: argparse.Namespace) -> int:
    from sambatune.cli.output import print_json
    from sambatune.wizard.machine import STEP_TITLES, TuningWizard
    from sambatune.wizard.store import WizardStep, WizardStore

    store = WizardStore()
    if args.wizard is None:
        found = store.summaries(server=args.server, unfinished=args.unfinished)
        if args.json:
            print_json({"ok": True, "wizards": [w.to_json() for w in found]})
            return 0
        for item in found:
            state = (
                "discarded"
                if item.last_step == WizardStep.DISCARD
                else "finished"
                if item.finished_at
                else f"after '{item.last_step}'"
            )
            print(f"{item.id:>4}  {item.created_at}  {item.server}  {state}")
        if not found:
            print(
                "No wizards yet: start one with 'sambatune wizard start', or in the GUI "
                "(Server > Tuning wizard)."
            )
        return 0
    wizard = TuningWizard.resume(store, args.wizard)
    if args.json:
        print_json(
            {
                "ok": True,
                **wizard.record.to_json(),
                "stage": wizard.stage,
                "changes_tried": wizard.round,
                "discarded": wizard.discarded,
                "next_command": _next_command(wizard),
            }
        )
        return 0
    print(format_state(wizard, []))
    print("\nSteps:")
    for step in wizard.record.steps:
        text = _step_text(step)
        print(
            f"  {step.position:>3}. {step.finished_at}  {STEP_TITLES[step.step]}"
            + (f": {text}" if text else "")
        )
    return 0


def handle_report(args: argparse.Namespace) -> int:
    from sambatune.cli.output import print_json
    from sambatune.wizard.machine import TuningWizard
    from sambatune.wizard.store import WizardStore

    text = TuningWizard.resume(WizardStore(), args.wizard).report_html()
    if args.output is None:
        data_stdout().write(text)
        return 0
    args.output.write_text(text, encoding="utf-8")
    if args.json:
        print_json({"ok": True, "file": str(args.output), "bytes": len(text.encode("utf-8"))})
    else:
        print(f"Wrote the report of wizard {args.wizard} to {args.output}", file=sys.stderr)
    return 0
