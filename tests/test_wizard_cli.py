"""The tuning wizard from the command line, and discarding a wizard.

``sambatune wizard start|next|keep|revert|discard`` drive the same state machine and
store as the GUI (:class:`TuningWizard`, :class:`WizardStore`), against the real sshd
and smbd test bed, with the quick measurement of ``test_wizard``.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from cli_process import sambatune_cli, ssh_args
from sambatune.errors import InvalidInput
from sambatune.remote.connection import ConnectionOptions
from sambatune.remote.local import LocalTransport
from sambatune.remote.transport import Transport
from sambatune.wizard.change import activation_sentence
from sambatune.wizard.machine import APPLY, DISCARD, DONE, MEASURE, SURVEY, TuningWizard
from sambatune.wizard.measure import MeasureSpec
from sambatune.wizard.store import WizardStore
from test_instances import HeldSession
from testbed.smbd import SmbServer

QUICK = dict(size=4 << 20, runs=3, warmup=1)
#: The same quick test, as ``wizard start`` takes it.
QUICK_ARGS = ["--test", "copy", "--size", "4MiB", "--runs", "3", "--warmup", "1"]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return sambatune_cli("wizard", *args)


def cli_json(*args: str) -> dict[str, Any]:
    done = cli(*args, "--json")
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    assert data["ok"] is True
    return data


def refused(*args: str) -> str:
    """The message of a verb that must fail cleanly: exit 1, one line, no traceback."""
    done = cli(*args)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stderr.startswith("sambatune: "), done.stderr
    return done.stderr


def number_of(state: dict[str, Any], rule_id: str) -> int:
    return next(f["number"] for f in state["findings"] if f["id"] == rule_id)


def test_a_wizard_can_be_discarded_without_a_connection() -> None:
    store = WizardStore()
    wizard = TuningWizard.start(
        store,
        LocalTransport(),
        MeasureSpec(share="bench", **QUICK),  # type: ignore[arg-type]
        config_path="/nowhere/smb.conf",
    )
    other = TuningWizard.start(
        store,
        LocalTransport(),
        MeasureSpec(share="bench", **QUICK),  # type: ignore[arg-type]
        config_path="/nowhere/smb.conf",
    )
    assert wizard.stage == SURVEY
    assert {s.id for s in store.summaries(unfinished=True)} == {wizard.id, other.id}

    step = wizard.discard()  # the GUI's button calls it with no arguments
    assert step.step == DISCARD and step.data["reason"] == "discarded"
    assert step.data["stage"] == SURVEY and "left_live" not in step.data
    assert wizard.stage == DONE and wizard.discarded and wizard.finished
    other.discard("the wrong share")

    again = TuningWizard.resume(WizardStore(), wizard.id)
    assert again.stage == DONE and again.record.finished_at is not None
    assert [s.step for s in again.record.steps] == ["connect", DISCARD]
    assert TuningWizard.resume(store, other.id).record.steps[-1].data["reason"] == "the wrong share"
    assert store.summaries(unfinished=True) == []
    assert [s.last_step for s in store.summaries()] == [DISCARD, DISCARD]
    with pytest.raises(InvalidInput, match="ended already"):
        again.discard()
    with pytest.raises(InvalidInput, match="not at"):
        again.run_survey(LocalTransport())


def test_a_wizard_run_from_the_command_line_and_resumed_in_between(
    troubled_smbd: SmbServer, ssh_options: ConnectionOptions, ssh: Transport
) -> None:
    config = troubled_smbd.config
    original = config.read_bytes()
    connect = ssh_args(ssh_options)

    started = cli_json(
        "start", *connect, "--config-path", str(config), "--share", troubled_smbd.share, *QUICK_ARGS
    )
    wizard_id = started["wizard_id"]
    assert started["stage"] == "baseline" and started["server"] == ssh.label
    assert [s["step"] for s in started["done"]] == ["connect", "survey", "findings"]
    findings = {f["id"]: f for f in started["findings"]}
    assert {"socket-options-fixed-buffers", "log-level-high", "sync-always"} <= set(findings)
    assert findings["log-level-high"]["applicable"] is True
    assert findings["log-level-high"]["activation"]["activation"] == "reload"
    assert findings["measure-throughput"]["applicable"] is False
    assert [f["number"] for f in started["findings"]] == list(range(1, len(findings) + 1))
    assert started["next_command"] == f"sambatune wizard next {wizard_id}"
    stored = TuningWizard.resume(WizardStore(), wizard_id)
    assert stored.record.measure == MeasureSpec(share=troubled_smbd.share, **QUICK)  # type: ignore[arg-type]

    # Choosing before the baseline is refused; without a number the only unfinished
    # wizard of this server is meant.
    assert "is for the step 'Choose one change'" in refused("next", *connect, "--finding", "log-level-high")
    baseline = cli_json("next", *connect)
    assert baseline["stage"] == "choose" and baseline["done"][0]["step"] == "baseline"
    assert baseline["baseline_session"] == baseline["done"][0]["data"]["session_id"]
    assert "Give --finding" in refused("next", str(wizard_id), *connect)
    assert "proposes no smb.conf change" in refused(
        "next", str(wizard_id), *connect, "--finding", "measure-throughput"
    )
    assert "There is no finding 99" in refused("next", str(wizard_id), *connect, "--finding", "99")

    chosen = cli_json(
        "next", str(wizard_id), *connect, "--finding", str(number_of(started, "log-level-high"))
    )
    assert chosen["stage"] == APPLY
    pending = chosen["pending_change"]
    assert pending["finding_id"] == "log-level-high" and "+  log level = 1" in pending["diff"]
    assert config.read_bytes() == original  # choosing changes nothing yet

    # The GUI carries on from the same record: it applies the change...
    in_gui = TuningWizard.resume(WizardStore(), wizard_id)
    assert in_gui.stage == APPLY
    assert in_gui.apply(ssh).data["ok"] is True and in_gui.stage == MEASURE
    assert b"log level = 1" in config.read_bytes()

    # ...and the command line measures again and compares.
    measured = cli("next", str(wizard_id), *connect)
    assert measured.returncode == 0, measured.stderr
    assert "Done: Measure again: session" in measured.stdout
    assert f"Next: Compare before and after: sambatune wizard next {wizard_id}" in measured.stdout
    verdict = cli_json("next", str(wizard_id), *connect)
    assert verdict["stage"] == "decide"
    assert verdict["verdict"]["overall"] in ("better", "worse", "mixed", "no real difference")
    assert {s["series"] for s in verdict["verdict"]["series"]} == {"put", "get"}
    assert "waits for your decision" in refused("next", str(wizard_id), *connect)

    reverted = cli("revert", str(wizard_id), *connect)
    assert reverted.returncode == 0, reverted.stderr
    assert "Done: Keep or revert: reverted; smb.conf is byte for byte as before" in reverted.stdout
    assert "Done: Look for problems" in reverted.stdout  # judged again, as the GUI does
    assert config.read_bytes() == original
    assert TuningWizard.resume(WizardStore(), wizard_id).stage == "choose"

    finished = cli_json("finish", str(wizard_id), *connect)
    assert finished["stage"] == DONE and finished["finished"] and not finished["discarded"]
    assert finished["done"][0]["data"]["identical_to_original"] is True
    assert finished["next_command"] is None
    assert WizardStore().summaries(unfinished=True) == []
    status = cli_json("status", str(wizard_id))
    assert [s["step"] for s in status["steps"]] == [
        "connect",
        "survey",
        "findings",
        "baseline",
        "choose",
        "apply",
        "measure",
        "verdict",
        "decide",
        "findings",
        "finish",
    ]
    assert "has ended (finished)" in refused("next", str(wizard_id), *connect)
    assert "No unfinished wizard on" in refused("next", *connect)
    assert "There is no wizard 999" in refused("next", "999", *connect)


def test_a_restart_needs_consent_and_a_wizard_is_discarded_from_the_command_line(
    troubled_smbd: SmbServer, ssh_options: ConnectionOptions, ssh: Transport
) -> None:
    config = troubled_smbd.config
    original = config.read_bytes()
    connect = ssh_args(ssh_options)
    start = ["start", *connect, "--config-path", str(config), "--share", troubled_smbd.share, *QUICK_ARGS]

    # Discarded at the baseline: nothing measured, nothing changed, no longer resumable.
    first = cli_json(*start)["wizard_id"]
    text = cli("discard", str(first), "--reason", "wrong share")
    assert text.returncode == 0, text.stderr
    assert "Done: Discarded: wrong share (at 'baseline')" in text.stdout
    assert "smb.conf was left as it is live." in text.stdout
    assert config.read_bytes() == original
    assert WizardStore().summaries(unfinished=True) == []
    listed = cli("status")
    assert f"{first:>4}" in listed.stdout and "discarded" in listed.stdout
    assert "has ended (discarded)" in refused("next", str(first), *connect)
    assert "ended already" in refused("discard", str(first))

    # A change that needs smbd restarted is applied only with --allow-restart.
    second = cli_json(*start)
    wizard_id = second["wizard_id"]
    buffers = next(f for f in second["findings"] if f["id"] == "socket-options-fixed-buffers")
    assert buffers["activation"]["activation"] == "restart"
    cli_json("next", str(wizard_id), *connect)  # the baseline
    chosen = cli_json("next", str(wizard_id), *connect, "--finding", str(buffers["number"]))
    assert chosen["next_command"] == f"sambatune wizard next {wizard_id} --allow-restart"
    message = refused("next", str(wizard_id), *connect)
    assert "Not applied: Needs a restart of smbd" in message and "--allow-restart" in message
    assert config.read_bytes() == original
    wizard = TuningWizard.resume(WizardStore(), wizard_id)
    assert wizard.stage == APPLY  # nothing was recorded: the wizard waits for the consent

    # Resumed in the GUI, which discards it there: the button calls discard() bare.
    wizard.discard()
    state = cli_json("status", str(wizard_id))
    assert state["stage"] == DONE and state["discarded"] is True
    assert state["steps"][-1]["data"]["stage"] == APPLY
    assert WizardStore().summaries(server=ssh.label, unfinished=True) == []


def test_the_risk_line_counts_the_sessions_open_now(
    troubled_smbd: SmbServer, ssh_options: ConnectionOptions
) -> None:
    """A change that needs a restart says how many sessions it would cut off: none while
    nobody is connected, one while a real SMB client holds a session and a file open."""
    connect = ssh_args(ssh_options)
    start = [
        "start",
        *connect,
        "--config-path",
        str(troubled_smbd.config),
        "--share",
        troubled_smbd.share,
        *QUICK_ARGS,
    ]
    restart_id = "socket-options-fixed-buffers"

    def restart_change(findings: list[dict[str, Any]]) -> dict[str, Any]:
        finding = next(f for f in findings if f["id"] == restart_id)
        assert finding["activation"]["activation"] == "restart"
        activation: dict[str, Any] = finding["activation"]
        return activation

    nobody = cli_json(*start)
    alone = restart_change(nobody["findings"])
    assert alone["sessions"] == 0
    assert "(no session is open now)" in activation_sentence(alone)

    held = HeldSession(troubled_smbd.port)
    try:
        shown = cli(*start)
        assert shown.returncode == 0, shown.stderr
        lines = shown.stdout.splitlines()
        at = next(i for i, line in enumerate(lines) if f"({restart_id})" in line)
        # The finding's line, its change, then the risk line the admin reads.
        assert lines[at + 2].strip().startswith("Needs a restart of smbd, which disconnects every client")
        assert "(1 session(s) are open now)" in lines[at + 2], lines[at : at + 3]
        assert held.still_works()
    finally:
        held.close()
    wizard_id = int(lines[0].split()[1])
    counted = restart_change(TuningWizard.resume(WizardStore(), wizard_id).findings)
    assert counted["sessions"] == 1
    for wizard in (nobody["wizard_id"], wizard_id):
        assert cli("discard", str(wizard)).returncode == 0
    assert WizardStore().summaries(unfinished=True) == []


def test_the_wizard_judges_with_the_stored_benchmarks_of_this_smb_conf(
    troubled_smbd: SmbServer, ssh: Transport
) -> None:
    from bench_sessions import context, disk, throughput
    from sambatune.bench.records import BenchResult
    from sambatune.bench.results_db import ResultsDatabase

    live = troubled_smbd.config.read_bytes()
    database = ResultsDatabase()

    def save(result: BenchResult, conf: bytes) -> int:
        result.target = ssh.label
        return database.save(result, context(conf))

    def judged() -> tuple[dict[str, Any], list[int]]:
        wizard = TuningWizard.start(
            WizardStore(),
            ssh,
            MeasureSpec(share=troubled_smbd.share, **QUICK),  # type: ignore[arg-type]
            config_path=str(troubled_smbd.config),
        )
        wizard.run_survey(ssh)
        findings = {f["id"]: f for f in wizard.find_problems(ssh)}
        step = wizard.record.steps[-1]
        wizard.discard("only judged")
        return findings, step.data["measured_in"]

    # Measured with another smb.conf: not this server's figures as it is now.
    save(throughput("smb-client", "read", "SMB read", [40.0, 41.0, 40.5]), live + b"# v2\n")
    findings, measured_in = judged()
    assert "measure-throughput" in findings and measured_in == []

    smb = save(throughput("smb-client", "read", "SMB read", [40.0, 41.0, 40.5]), live)
    disk_test = save(disk(read_mb=180.0, write_mb=150.0, ops=2500.0), live)
    findings, measured_in = judged()
    assert measured_in == [smb, disk_test]
    assert "measure-throughput" not in findings  # the SMB figure is on record now
    slow = findings["smb-throughput-vs-ceiling"]
    assert slow["title"].startswith("SMB reads reach only")
    assert f"SMB from this computer session {smb}, run with this smb.conf" in slow["evidence"][0]["text"]


def test_the_report_of_a_discarded_wizard_says_so() -> None:
    store = WizardStore()
    wizard = TuningWizard.start(
        store,
        LocalTransport(),
        MeasureSpec(share="bench", **QUICK),  # type: ignore[arg-type]
        config_path="/nowhere/smb.conf",
    )
    wizard.discard("the baseline failed")
    report = wizard.report_html()
    assert "the baseline failed (at &#x27;survey&#x27;)" in report
    assert "was discarded at the survey step" in report and "not finished yet" not in report
