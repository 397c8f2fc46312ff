"""The wizard's report: every step, every number, the plots and the final diff, in one file.

Built from the results database alone (the wizard's steps and the benchmark sessions
they refer to), with the benchmark report's own pieces (:mod:`sambatune.bench.html_report`):
the book's per-run tables, the charts, the style. Self-contained, like that report.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from sambatune import __version__
from sambatune.advisor.findings import describe_change
from sambatune.bench.html_report import html_page, html_table, runs_chart, session_section
from sambatune.bench.results_db import StoredSession
from sambatune.conf.apply import StepState
from sambatune.errors import SambaTuneError
from sambatune.wizard.change import activation_sentence
from sambatune.wizard.measure import format_mean
from sambatune.wizard.store import WizardStep

if TYPE_CHECKING:
    from sambatune.wizard.machine import TuningWizard

METHOD = (
    "The wizard follows the classic tuning method: measure the server as it is (warm-up runs, "
    "then several counted runs), change ONE setting, measure again with exactly the same test, "
    "and let a significance test say whether the difference is larger than the normal "
    "run-to-run spread. Only one change at a time, so every difference has one known cause."
)

#: The steps that belong to one change (the others are about the whole wizard).
ROUND_STEPS = (WizardStep.CHOOSE, WizardStep.APPLY, WizardStep.MEASURE, WizardStep.VERDICT, WizardStep.DECIDE)


def _pre(text: str) -> str:
    return f"<pre>{escape(text)}</pre>" if text else '<p class="muted">(no difference)</p>'


def step_summary(step: Any) -> str:
    """One line saying what a wizard step did (the report's table, the CLI's list)."""
    data = step.data
    if step.step == WizardStep.CONNECT:
        return f"{data.get('target')}" + (" with sudo" if data.get("sudo") else "")
    if step.step == WizardStep.SURVEY:
        samba = (data.get("survey") or {}).get("samba") or {}
        return f"Samba {samba.get('version_text', '?')}, smb.conf {data.get('config_path')}"
    if step.step == WizardStep.FINDINGS:
        counts = data.get("counts") or {}
        return ", ".join(f"{n} {k}" for k, n in counts.items() if n) or "no findings"
    if step.step in (WizardStep.BASELINE, WizardStep.MEASURE):
        means = ", ".join(f"{k} {format_mean(k, v)}" for k, v in (data.get("means") or {}).items())
        return f"session {data.get('session_id')}: {means}"
    if step.step == WizardStep.CHOOSE:
        return str(data.get("summary"))
    if step.step == WizardStep.APPLY:
        return str(data.get("message"))
    if step.step == WizardStep.VERDICT:
        return f"{data.get('overall')}; recommended: {data.get('recommendation')}"
    if step.step == WizardStep.DECIDE:
        if data.get("decision") == "keep":
            return "kept; the measurement after it is the new baseline"
        return "reverted" + ("; smb.conf is byte for byte as before" if data.get("identical") else "")
    if step.step == WizardStep.FINISH:
        return (
            "smb.conf unchanged"
            if data.get("identical_to_original")
            else (f"{len(data.get('kept') or [])} change(s) kept")
        )
    if step.step == WizardStep.DISCARD:
        left = f"; left live: {data['left_live']}" if data.get("left_live") else ""
        return f"{data.get('reason')} (at '{data.get('stage')}'){left}"
    return ""


def _findings_table(findings: Sequence[dict[str, Any]]) -> str:
    rows: list[tuple[Sequence[str], str]] = []
    for number, finding in enumerate(findings, 1):
        change = finding.get("change") or {}
        what = (
            ("smb.conf: " + describe_change(change))
            if change.get("kind") == "smb.conf"
            else (change.get("description") or "measure first")
        )
        rows.append(([str(number), finding["severity"], finding["title"], finding["subject"], what], ""))
    return html_table(["#", "Severity", "Finding", "Where", "Proposed change"], rows, numeric_from=99)


def _round_section(
    number: int, steps: dict[WizardStep, Any], sessions: dict[int, StoredSession], baseline: int | None
) -> tuple[str, int | None]:
    chosen = steps[WizardStep.CHOOSE]
    finding = chosen.data["finding"]
    html = [
        f"<h2>Change {number}: {escape(finding['title'])}</h2>",
        f"<p><b>Proposed:</b> {escape(chosen.data['summary'])}</p>",
        "<ul>" + "".join(f"<li>{escape(e['text'])}</li>" for e in finding["evidence"]) + "</ul>",
        f"<p><b>Expected:</b> {escape(finding['expected_effect'])} "
        f'<span class="muted">({escape(finding["effect_source"])})</span></p>',
        f"<p><b>Risk:</b> {escape(finding['risk'])} "
        f"{escape(activation_sentence(finding.get('activation')))}</p>",
        "<h3>The edit</h3>",
        _pre(chosen.data.get("diff", "")),
    ]
    applied = steps.get(WizardStep.APPLY)
    if applied is not None:
        rows = [
            ([s["step"], s["state"], s.get("message", "")], "")
            for s in applied.data.get("steps", [])
            if s["state"] != StepState.RUNNING
        ]
        html.append(f"<h3>Applied</h3><p>{escape(applied.data.get('message', ''))}</p>")
        if rows:
            html.append(html_table(["Step", "State", "Message"], rows, numeric_from=99))
    verdict = steps.get(WizardStep.VERDICT)
    if verdict is not None:
        data = verdict.data
        pair = [sessions[s] for s in (data.get("before_session"), data.get("after_session")) if s in sessions]
        html.append(
            f'<h3>Verdict</h3><p class="verdict">{escape(str(data["overall"]).capitalize())}'
            f"</p><p>{escape(data['explanation'])}</p>"
        )
        rows = [
            (
                [
                    s["label"],
                    format_mean(s["series"], s["mean_before"]),
                    format_mean(s["series"], s["mean_after"]),
                    f"{s['relative_change']:+.1%}" if s.get("relative_change") is not None else "–",
                    f"{s['p_value']:.3g}" if s.get("p_value") is not None else "–",
                    s["verdict"],
                ],
                "",
            )
            for s in data["series"]
        ]
        html.append(
            html_table(["Series", "Before", "After", "Change", "p (Welch)", "Verdict"], rows, numeric_to=4)
        )
        for item in data["series"]:
            html.append(f"<p>{escape(item['label'])}: {escape(item['sentence'])}</p>")
            html.extend(f'<p class="warn">{escape(w)}</p>' for w in item.get("warnings") or [])
            if len(pair) == 2:
                html.append(runs_chart(pair, item["series"]))
    decided = steps.get(WizardStep.DECIDE)
    if decided is not None:
        data = decided.data
        if data.get("decision") == "keep":
            html.append(
                '<p class="note"><b>Kept.</b> The measurement after this change is the '
                "baseline for the next one.</p>"
            )
            verdict_data = verdict.data if verdict is not None else {}
            baseline = verdict_data.get("after_session", baseline)
        else:
            same = (
                " smb.conf is byte for byte what it was before the change." if data.get("identical") else ""
            )
            html.append(f'<p class="note"><b>Reverted</b> through the same safe steps.{same}</p>')
    elif applied is not None and not applied.data.get("ok"):
        html.append('<p class="warn">The change was not applied, so nothing was measured.</p>')
    else:
        html.append(
            '<p class="warn">No decision yet: this change is still live and waiting for keep or revert.</p>'
        )
    return "".join(html), baseline


def render_wizard_report(wizard: TuningWizard, *, generated_at: str | None = None) -> str:
    record = wizard.record
    database = wizard.store.database
    session_ids = sorted(
        {
            int(s.data["session_id"])
            for s in record.steps
            if s.step in (WizardStep.BASELINE, WizardStep.MEASURE)
        }
    )
    sessions: dict[int, StoredSession] = {}
    for session_id in session_ids:
        try:
            sessions[session_id] = database.load(session_id)
        except SambaTuneError:
            continue  # deleted from the results since: the steps still carry the means
    when = generated_at or _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    title = f"SambaTune tuning wizard {record.id}: {record.server}"
    body = [
        f"<h1>{escape(title)}</h1>",
        f'<p class="muted">Written by SambaTune {escape(__version__)} on {escape(when)}. '
        f"Started {escape(record.created_at)}"
        + (f", finished {escape(record.finished_at)}" if record.finished_at else ", not finished")
        + f". smb.conf: {escape(record.config_path or '?')}.</p>",
        f'<p class="note">{escape(METHOD)}</p>',
        f"<p><b>The test:</b> {escape(wizard.measure_spec.describe())}.</p>",
        "<h2>Every step</h2>",
        html_table(
            ["#", "Step", "Change", "Finished", "Result"],
            [
                (
                    [
                        str(s.position),
                        s.step,
                        str(s.round) if s.step in ROUND_STEPS else "",
                        s.finished_at,
                        step_summary(s),
                    ],
                    "",
                )
                for s in record.steps
            ],
            numeric_from=99,
        ),
    ]
    first = next((s for s in record.steps if s.step == WizardStep.FINDINGS), None)
    if first is not None:
        body.append(
            f'<h2>What the wizard found first</h2><p class="muted">Judged as '
            f"{escape(str(first.data.get('judged_as')))}.</p>"
        )
        body.append(_findings_table(first.data["findings"]))
    baseline_step = record.last(WizardStep.BASELINE)
    baseline = int(baseline_step.data["session_id"]) if baseline_step else None
    if baseline_step is not None:
        means = ", ".join(f"{k}: {format_mean(k, v)}" for k, v in baseline_step.data["means"].items())
        body.append(f"<h2>Baseline</h2><p>Session {baseline}: {escape(means)}.</p>")
    for number, steps in enumerate(wizard.rounds(), 1):
        section, baseline = _round_section(number, steps, sessions, baseline)
        body.append(section)
    finished = record.last(WizardStep.FINISH)
    body.append("<h2>smb.conf: before the wizard against now</h2>")
    if finished is not None:
        data = finished.data
        if data.get("identical_to_original"):
            body.append("<p>smb.conf is byte for byte what it was before the wizard.</p>")
        else:
            kept = "".join(f"<li>{escape(k)}</li>" for k in data.get("kept") or [])
            body.append(f"<p>Kept changes:</p><ul>{kept}</ul>" if kept else "")
            body.append(_pre(data.get("diff", "")))
    elif (discarded := record.last(WizardStep.DISCARD)) is not None:
        data = discarded.data
        left = (
            f" The change “{escape(str(data['left_live']))}” was applied and is still live."
            if data.get("left_live")
            else ""
        )
        body.append(
            f"<p>The wizard was discarded at the {escape(str(data.get('stage')))} "
            f"step ({escape(str(data.get('reason')))}); smb.conf was left as it was "
            f"then.{left}</p>"
        )
    else:
        body.append('<p class="muted">The wizard has not finished yet.</p>')
    if sessions:
        body.append("<h2>The measurements, run by run</h2>")
        body.extend(session_section(sessions[i]) for i in sorted(sessions))
    return html_page(title, body)
