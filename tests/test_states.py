"""The state enums write exactly the words the bare strings wrote before them.

Their values go to JSON, SQLite, log lines and the screen, and records written by
older versions are read back as plain strings: a member must print, format, serialize
and compare as its value, on every Python the project supports (3.11 changed what
``str()`` and ``format()`` give for a ``(str, Enum)``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
from enum import Enum
from pathlib import Path

import pytest

from sambatune.applied_versions import IN_PROGRESS, INTERRUPTED, AppliedVersions, JournalStatus
from sambatune.bench.results_db import ResultsDatabase
from sambatune.cli.conf_apply import _live_words, step_line
from sambatune.conf import apply
from sambatune.conf.activation import Activation
from sambatune.conf.apply import ApplyOutcome, ApplyStep, SmbdAction, StepEvent, StepState
from sambatune.errors import InvalidInput
from sambatune.states import ApplyStatus, LiveState, TextState
from sambatune.wizard import machine
from sambatune.wizard.measure import MeasureSpec
from sambatune.wizard.store import WizardStep, WizardStore

#: Every member and the literal the code wrote before it was an enum.
OLD_LITERALS: dict[type[Enum], dict[str, str]] = {
    ApplyStatus: {
        "APPLIED": "applied",
        "REFUSED": "refused",
        "ROLLED_BACK": "rolled-back",
        "FAILED": "failed",
        "CANCELLED": "cancelled",
        "PLANNED": "planned",
    },
    JournalStatus: {"IN_PROGRESS": "in-progress", "INTERRUPTED": "interrupted"},
    LiveState: {"NEW": "new", "OLD": "old", "UNKNOWN": "unknown"},
    StepState: {
        "PENDING": "pending",
        "RUNNING": "running",
        "DONE": "done",
        "FAILED": "failed",
        "SKIPPED": "skipped",
        "WARNING": "warning",
    },
    ApplyStep: {
        "UPLOAD": "upload",
        "TESTPARM": "testparm",
        "BACKUP": "backup",
        "INSTALL": "install",
        "RELOAD": "reload",
        "RESTART": "restart",
        "HEALTH": "health",
        "ROLLBACK": "rollback",
    },
    SmbdAction: {"NONE": "none", "RELOAD": "reload", "RESTART": "restart"},
    Activation: {"RELOAD": "reload", "NEW_CONNECTIONS": "new connections", "RESTART": "restart"},
    WizardStep: {
        "CONNECT": "connect",
        "SURVEY": "survey",
        "FINDINGS": "findings",
        "BASELINE": "baseline",
        "CHOOSE": "choose",
        "APPLY": "apply",
        "MEASURE": "measure",
        "VERDICT": "verdict",
        "DECIDE": "decide",
        "FINISH": "finish",
        "DISCARD": "discard",
        "DONE": "done",
    },
}


@pytest.mark.parametrize("enum", OLD_LITERALS, ids=lambda e: e.__name__)
def test_every_member_keeps_the_old_literal(enum: type[Enum]) -> None:
    assert issubclass(enum, TextState)
    assert {m.name: m.value for m in enum} == OLD_LITERALS[enum]
    for member in enum:
        assert member == member.value and str(member) == member.value


def test_the_session_states_keep_theirs() -> None:
    from sambatune.ui.session import SessionState

    assert [m.value for m in SessionState] == ["disconnected", "connecting", "connected"]


def test_the_old_constant_names_are_the_members() -> None:
    assert tuple(ApplyStatus) == (
        apply.APPLIED,
        apply.REFUSED,
        apply.ROLLED_BACK,
        apply.FAILED_OUTCOME,
        apply.CANCELLED,
        apply.PLANNED,
    )
    assert tuple(StepState)[1:] == (apply.RUNNING, apply.DONE, apply.FAILED, apply.SKIPPED, apply.WARNING)
    assert tuple(JournalStatus) == (IN_PROGRESS, INTERRUPTED)
    assert [getattr(machine, m.name) for m in WizardStep] == list(WizardStep)
    assert set(machine.STEP_TITLES) == set(WizardStep)
    assert set(apply.STEP_TITLES) == set(ApplyStep)


def test_a_member_prints_and_formats_as_its_value() -> None:
    status = ApplyStatus.ROLLED_BACK
    assert str(status) == f"{status}" == format(status) == "rolled-back"
    assert f"{status:<13}|" == "rolled-back  |" and f"[{StepState.DONE:>6}]" == "[  done]"
    assert type(str(status)) is str
    # Log lines format their arguments with %s.
    record = logging.LogRecord(
        "t", logging.INFO, __file__, 1, "apply ended %s, live %s", (status, LiveState.OLD), None
    )
    assert record.getMessage() == "apply ended rolled-back, live old"
    assert repr(status) == "<ApplyStatus.ROLLED_BACK: 'rolled-back'>"


def test_members_and_plain_strings_are_the_same_keys() -> None:
    assert hash(WizardStep.CHOOSE) == hash("choose")
    # The point: a plain string finds a member's entry, though the key type says member.
    assert {"choose": 1}[WizardStep.CHOOSE] == 1 and {WizardStep.CHOOSE: 1}["choose"] == 1  # type: ignore[index]
    assert "applied" in (ApplyStatus.APPLIED, ApplyStatus.PLANNED)
    assert WizardStep("discard") is WizardStep.DISCARD


def test_json_writes_the_values_and_reads_back_to_the_members() -> None:
    data = {"status": ApplyStatus.ROLLED_BACK, "live": LiveState.OLD, WizardStep.CHOOSE: [StepState.DONE]}
    text = json.dumps(data, sort_keys=True)
    assert text == '{"choose": ["done"], "live": "old", "status": "rolled-back"}'
    assert json.dumps(data, default=str) == json.dumps(
        {"status": "rolled-back", "live": "old", "choose": ["done"]}
    )
    back = json.loads(text)
    assert back["status"] == ApplyStatus.ROLLED_BACK and ApplyStatus(back["status"]) is (
        ApplyStatus.ROLLED_BACK
    )


def test_an_outcome_serializes_byte_for_byte_as_with_strings() -> None:
    outcome = ApplyOutcome(
        status=ApplyStatus.PLANNED,
        live=LiveState.OLD,
        message="Dry run.",
        steps=[StepEvent(ApplyStep.UPLOAD, StepState.DONE, "3 bytes")],
        smbd_running=False,
        plan=["Upload the new version beside the live file"],
    )
    plain = {
        **outcome.to_json(),
        "status": "planned",
        "live": "old",
        "activation": "none",
        "steps": [{"step": "upload", "state": "done", "message": "3 bytes", "details": ""}],
    }
    assert json.dumps(outcome.to_json(), indent=2) == json.dumps(plain, indent=2)
    assert outcome.activation is SmbdAction.NONE
    assert step_line(outcome.steps[0]) == "  [  ok] Upload the new version beside the live file: 3 bytes"


def _raw(path: Path, query: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as db:
        return db.execute(query).fetchall()


def test_the_applied_record_stores_the_words_and_reads_back_plain_strings(tmp_path: Path) -> None:
    versions = AppliedVersions(tmp_path / "applied.sqlite3")
    journal = versions.journal("files1", "/etc/samba/smb.conf")
    journal.begin(candidate=b"new", previous=b"old", summary="a change", backup_id="b1")
    assert _raw(versions.path, "SELECT outcome, typeof(outcome), live FROM applied_configs") == [
        ("in-progress", "text", "unknown")
    ]
    [pending] = journal.unfinished()
    settled = journal.settle_interrupted(pending, hashlib.sha256(b"old").hexdigest())
    assert settled is LiveState.OLD
    journal.begin(candidate=b"newer", previous=b"old", summary="again", backup_id="b2")
    journal.finish(status=ApplyStatus.ROLLED_BACK, live=LiveState.OLD, content=b"old")
    versions.record(
        server="files1",
        path="/etc/samba/smb.conf",
        content=b"x",
        previous=b"",
        outcome=ApplyStatus.APPLIED,
        summary="before live was kept",
        backup_id=None,
    )
    assert _raw(versions.path, "SELECT outcome, live FROM applied_configs ORDER BY id") == [
        ("interrupted", "old"),
        ("rolled-back", "old"),
        ("applied", ""),
    ]
    read = versions.for_server("files1")
    assert [(type(v.outcome), v.outcome, v.live) for v in read] == [
        (str, "applied", ""),
        (str, "rolled-back", "old"),
        (str, "interrupted", "old"),
    ]
    assert read[1].outcome == ApplyStatus.ROLLED_BACK and read[2].outcome == INTERRUPTED
    assert [_live_words(v.live) for v in read] == ["live not recorded", "old file kept", "old file kept"]


def test_history_falls_back_for_words_it_does_not_know(tmp_path: Path) -> None:
    from sambatune.ui.history_page import what_happened

    versions = AppliedVersions(tmp_path / "applied.sqlite3")
    for outcome in ("applied", "failed", "someday-new"):
        versions.record(
            server="s",
            path="/p",
            content=b"x",
            previous=b"",
            outcome=outcome,  # type: ignore[arg-type]
            summary="",
            backup_id=None,
        )
    shown = {v.outcome: what_happened(v) for v in versions.for_server("s")}
    assert shown["applied"].short == "Applied" and shown["applied"].applied
    assert shown["failed"].short == "Failed"  # no live recorded: neither new nor old
    assert shown["someday-new"] == ("someday-new", "someday-new", False)


def test_the_wizard_store_saves_the_words_and_loads_members(tmp_path: Path) -> None:
    database = ResultsDatabase(tmp_path / "results.sqlite3")
    store = WizardStore(database)
    record = store.create("files1", "/etc/samba/smb.conf", MeasureSpec("data"))
    store.add_step(record, WizardStep.CONNECT, 0, {"target": "files1"})
    store.add_step(record, WizardStep.DISCARD, 0, {"reason": "discarded", "stage": WizardStep.SURVEY})
    assert _raw(database.path, "SELECT step, typeof(step), data FROM wizard_steps") == [
        ("connect", "text", '{"target": "files1"}'),
        ("discard", "text", '{"reason": "discarded", "stage": "survey"}'),
    ]
    loaded = store.load(record.id)
    assert [s.step for s in loaded.steps] == [WizardStep.CONNECT, WizardStep.DISCARD]
    assert all(type(s.step) is WizardStep for s in loaded.steps)
    assert loaded.finished_at is not None
    assert store.summaries()[0].last_step == "discard"


def test_a_step_a_newer_version_wrote_is_named_not_guessed(tmp_path: Path) -> None:
    database = ResultsDatabase(tmp_path / "results.sqlite3")
    store = WizardStore(database)
    record = store.create("files1", "/etc/samba/smb.conf", MeasureSpec("data"))
    with database.connection() as db:
        db.execute(
            "INSERT INTO wizard_steps (wizard_id, position, step, round, finished_at, "
            "data) VALUES (?, 1, 'retune', 0, '2030-01-01', '{}')",
            (record.id,),
        )
    with pytest.raises(InvalidInput, match="'retune'"):
        store.load(record.id)
    assert store.summaries()[0].last_step == "retune"  # the list still shows every wizard
