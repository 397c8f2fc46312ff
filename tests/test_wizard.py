"""The tuning wizard's core against the real test bed: real sshd, real smbd with known problems.

One change is applied through the safe-apply pipeline, measured, judged, reverted; the
live smb.conf ends byte for byte as it started, and a wizard interrupted mid-way
resumes from the results database.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from cli_process import sambatune_cli
from sambatune.applied_versions import AppliedVersions
from sambatune.bench.results_db import ResultsDatabase
from sambatune.errors import InvalidInput
from sambatune.remote.connection import ConnectionOptions, open_target
from sambatune.remote.prompts import NoPrompts
from sambatune.remote.transport import Transport
from sambatune.wizard.change import needs_restart
from sambatune.wizard.machine import (
    APPLY,
    BASELINE,
    CHOOSE,
    DECIDE,
    DONE,
    FINDINGS,
    MEASURE,
    SURVEY,
    VERDICT,
    TuningWizard,
)
from sambatune.wizard.measure import MeasureSpec
from sambatune.wizard.store import WizardStore
from sambatune.wizard.verdict import decision_order
from testbed.smbd import SmbServer

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
#: Small and quick: the suite checks correctness, the benchmarks measure.
QUICK = dict(size=4 << 20, runs=3, warmup=1)


def finding_index(wizard: TuningWizard, rule_id: str) -> int:
    return next(i for i, f in enumerate(wizard.findings) if f["id"] == rule_id)


def test_one_change_measured_judged_reverted_byte_for_byte(troubled_smbd: SmbServer, ssh: Transport) -> None:
    config = troubled_smbd.config
    original = config.read_bytes()
    store = WizardStore()
    spec = MeasureSpec(share=troubled_smbd.share, **QUICK)  # type: ignore[arg-type]
    wizard = TuningWizard.start(store, ssh, spec, config_path=str(config))
    assert wizard.stage == SURVEY

    wizard.run_survey(ssh)
    findings = wizard.find_problems(ssh)
    ids = {f["id"] for f in findings}
    assert {"socket-options-fixed-buffers", "log-level-high", "sync-always"} <= ids
    assert wizard.stage == BASELINE
    applicable = {f["id"] for _, f in wizard.applicable()}
    assert {"socket-options-fixed-buffers", "log-level-high", "sync-always"} <= applicable

    baseline = wizard.measure_baseline(ssh)
    assert set(baseline.series) == {"put", "get"}
    assert all(len(s.counted) == 3 and len(s.warmups) == 1 for s in baseline.series.values())
    assert ResultsDatabase().load(baseline.session_id or 0).smb_conf == original
    assert wizard.stage == CHOOSE

    with pytest.raises(InvalidInput, match="proposes no smb"):
        wizard.choose(ssh, finding_index(wizard, "measure-throughput"))
    chosen = wizard.choose(ssh, finding_index(wizard, "log-level-high"))
    assert "-  log level = 3" in chosen.data["diff"] and "+  log level = 1" in chosen.data["diff"]
    assert config.read_bytes() == original  # choosing changes nothing yet
    assert wizard.pending_activation == chosen.data["finding"]["activation"]
    assert not needs_restart(wizard.pending_activation) and wizard.left_live is None

    applied = wizard.apply(ssh)
    assert applied.data["ok"] is True, applied.data["message"]
    assert config.read_bytes() == chosen.smb_conf
    assert wizard.stage == MEASURE
    # Applied, not yet kept or reverted: what a discard now would leave live.
    assert wizard.left_live == chosen.data["summary"] and wizard.kept_changes() == []
    after = wizard.measure_again(ssh)
    assert ResultsDatabase().load(after.session_id or 0).smb_conf == chosen.smb_conf

    verdict = wizard.compare()
    assert wizard.stage == DECIDE
    assert verdict.overall in ("better", "worse", "mixed", "no real difference")
    assert {c.series for c in verdict.comparisons} == {"put", "get"}
    for comparison in verdict.comparisons:
        assert comparison.comparison.p_value is not None
        assert comparison.changed_lines == ["-  log level = 3", "+  log level = 1"]
    assert wizard.verdict is not None and wizard.verdict["recommendation"] in ("keep", "revert", "either")
    runs = wizard.verdict_runs()
    assert set(runs) == {"put", "get"} and all(len(b) == len(a) == 3 for b, a in runs.values())

    decided = wizard.decide(ssh, keep=False)
    assert decided.data["decision"] == "revert" and decided.data["identical"] is True
    assert config.read_bytes() == original
    assert troubled_smbd.list_shares() == [troubled_smbd.share]  # smbd serves the old config
    assert wizard.stage == FINDINGS and wizard.left_live is None
    history = [v.summary for v in AppliedVersions().for_server(ssh.label, str(config))]
    assert any("revert" in s for s in history) and len(history) == 2

    # The next round judges the file again; the old baseline still describes it.
    wizard.find_problems(ssh)
    assert wizard.stage == CHOOSE and wizard.baseline_session == baseline.session_id
    finished = wizard.finish(ssh)
    assert finished.data["identical_to_original"] is True
    assert wizard.stage == DONE
    assert wizard.round_outcomes() == [(chosen.data["summary"], verdict.overall, "reverted")]
    assert hashlib.sha256(config.read_bytes()).digest() == hashlib.sha256(original).digest()

    report = wizard.report_html()
    for expected in (
        "Every step",
        "Change 1: Log level 3 slows every request",
        "Verdict",
        "Reverted",
        "byte for byte",
        "<svg",
        f"Session {baseline.session_id}",
        "log level = 1",
    ):
        assert expected in report, expected
    assert "<script" not in report and "http://" not in report
    (ARTIFACTS / "wizard-report.html").write_text(report, encoding="utf-8")

    # The CLI reads the same record.
    status = sambatune_cli("wizard", "status", str(wizard.id), "--json")
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert data["stage"] == "done" and data["changes_tried"] == 1
    assert [s["step"] for s in data["steps"]][:4] == ["connect", "survey", "findings", "baseline"]
    listed = json.loads(sambatune_cli("wizard", "status", "--json").stdout)
    assert [w["wizard_id"] for w in listed["wizards"]] == [wizard.id]
    written = sambatune_cli(
        "wizard", "report", str(wizard.id), "-o", str(ARTIFACTS / "wizard-report-cli.html"), "--json"
    )
    assert written.returncode == 0 and json.loads(written.stdout)["ok"] is True
    missing = sambatune_cli("wizard", "status", "999")
    assert missing.returncode == 1 and "There is no wizard 999" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_resume_after_interruption_carries_on_at_the_next_step(
    troubled_smbd: SmbServer, ssh_options: ConnectionOptions, tmp_path: Path
) -> None:
    config = troubled_smbd.config
    original = config.read_bytes()
    first = open_target(ssh_options, NoPrompts())
    wizard = TuningWizard.start(
        WizardStore(),
        first,
        MeasureSpec(share=troubled_smbd.share, **QUICK),  # type: ignore[arg-type]
        config_path=str(config),
    )
    wizard.run_survey(first)
    wizard.find_problems(first)
    wizard.measure_baseline(first)
    chosen = wizard.choose(first, finding_index(wizard, "sync-always"))
    first.close()  # the connection is lost before the change is applied

    # The change reached the server, but the step was never written (the app died mid-apply).
    assert chosen.smb_conf is not None
    config.write_bytes(chosen.smb_conf)

    second = open_target(ssh_options, NoPrompts())
    try:
        resumed = TuningWizard.resume(WizardStore(), wizard.id)
        assert resumed.stage == APPLY
        assert [s.step for s in resumed.record.steps][-1] == "choose"
        applied = resumed.apply(second)
        assert applied.data["ok"] and "already live" in applied.data["message"]
        resumed.measure_again(second)

        again = TuningWizard.resume(WizardStore(), wizard.id)
        assert again.stage == VERDICT
        again.compare()
        # Someone edits the file meanwhile: the wizard refuses to revert over their edit.
        edited = chosen.smb_conf + b"# an admin's note\n"
        config.write_bytes(edited)
        with pytest.raises(InvalidInput, match="changed outside the wizard"):
            again.decide(second, keep=False)
        config.write_bytes(chosen.smb_conf)
        again.decide(second, keep=False)
        assert config.read_bytes() == original
        summaries = WizardStore().summaries(server=second.label, unfinished=True)
        assert [s.id for s in summaries] == [wizard.id] and summaries[0].last_step == "decide"
    finally:
        second.close()


def test_a_wizard_for_another_server_or_out_of_order_is_refused(
    fresh_smbd: SmbServer, ssh: Transport
) -> None:
    from sambatune.remote.local import LocalTransport

    wizard = TuningWizard.start(
        WizardStore(),
        ssh,
        MeasureSpec(share="bench", **QUICK),  # type: ignore[arg-type]
        config_path=str(fresh_smbd.config),
    )
    with pytest.raises(InvalidInput, match="not at 'Measure the baseline'"):
        wizard.measure_baseline(ssh)
    with pytest.raises(InvalidInput, match=r"tunes .* not this computer"):
        wizard.run_survey(LocalTransport())
    with pytest.raises(InvalidInput, match="at least 2 counted runs"):
        MeasureSpec(share="bench", runs=1)


def test_keep_is_offered_first_unless_the_measurement_says_revert() -> None:
    """The page's button order and the CLI's next command come from one rule."""
    assert decision_order("keep") == ("keep", "revert")
    assert decision_order("either") == ("keep", "revert")
    assert decision_order("revert") == ("revert", "keep")
    assert needs_restart({"activation": "restart"}) and not needs_restart({"activation": "reload"})
    assert not needs_restart(None) and not needs_restart({})
