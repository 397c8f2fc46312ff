"""Wizards and their finished steps, in the results database (``results.sqlite3``).

A step is written only when it has finished, in one transaction, so the last row of a
wizard is always a step that completed; resuming starts after it. Benchmark sessions
the steps refer to live in the same file (``sessions``), so a report can be written
from the database alone, years later.
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field
from typing import Any

from sambatune.bench.results_db import ResultsDatabase
from sambatune.errors import InvalidInput
from sambatune.states import TextState
from sambatune.wizard.measure import MeasureSpec


class WizardStep(TextState):
    """A step of the tuning wizard, as the ``wizard_steps`` table names it (see
    :mod:`sambatune.wizard.machine` for their order)."""

    CONNECT = "connect"
    SURVEY = "survey"
    FINDINGS = "findings"
    BASELINE = "baseline"
    CHOOSE = "choose"
    APPLY = "apply"
    MEASURE = "measure"
    VERDICT = "verdict"
    DECIDE = "decide"
    FINISH = "finish"
    #: The wizard was ended without finishing: a step of its own, so the record says so.
    DISCARD = "discard"
    #: Never saved: the stage of a wizard that has ended, when no step is left to do.
    DONE = "done"


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class StepRecord:
    position: int
    step: WizardStep
    #: Which change the step belongs to (0: before the first change was chosen).
    round: int
    finished_at: str
    data: dict[str, Any]
    #: The smb.conf bytes that matter for this step (what was judged, applied or left).
    smb_conf: bytes | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "step": self.step,
            "round": self.round,
            "finished_at": self.finished_at,
            "data": self.data,
            "smb_conf_size": len(self.smb_conf) if self.smb_conf is not None else None,
        }


@dataclass
class WizardRecord:
    id: int
    server: str
    config_path: str | None
    created_at: str
    updated_at: str
    finished_at: str | None
    measure: MeasureSpec
    steps: list[StepRecord] = field(default_factory=list)

    def last(self, step: WizardStep) -> StepRecord | None:
        return next((s for s in reversed(self.steps) if s.step == step), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "wizard_id": self.id,
            "server": self.server,
            "config_path": self.config_path,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "finished_at": self.finished_at,
            "measure": self.measure.to_json(),
            "steps": [s.to_json() for s in self.steps],
        }


@dataclass(frozen=True)
class WizardSummary:
    id: int
    server: str
    created_at: str
    updated_at: str
    finished_at: str | None
    # As the table has it, unchecked: listing every wizard must not fail on one that a
    # newer SambaTune wrote.
    last_step: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "wizard_id": self.id,
            "server": self.server,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "finished_at": self.finished_at,
            "last_step": self.last_step,
        }


class WizardStore:
    def __init__(self, database: ResultsDatabase | None = None) -> None:
        self.database = database or ResultsDatabase()

    def create(self, server: str, config_path: str | None, measure: MeasureSpec) -> WizardRecord:
        when = now_iso()
        with self.database.connection() as db:
            wizard_id = int(
                db.execute(
                    "INSERT INTO wizards (server, config_path, created_at, updated_at, measure) "
                    "VALUES (?,?,?,?,?)",
                    (server, config_path, when, when, json.dumps(measure.to_json(), sort_keys=True)),
                ).lastrowid
                or 0
            )
        return WizardRecord(wizard_id, server, config_path, when, when, None, measure)

    def add_step(
        self,
        record: WizardRecord,
        step: WizardStep,
        round_: int,
        data: dict[str, Any],
        smb_conf: bytes | None = None,
    ) -> StepRecord:
        """Write a finished step and append it to ``record``."""
        when = now_iso()
        position = len(record.steps) + 1
        # Finished or discarded: either way the wizard has ended and cannot resume.
        finished = when if step in (WizardStep.FINISH, WizardStep.DISCARD) else None
        with self.database.connection() as db:
            db.execute(
                "INSERT INTO wizard_steps (wizard_id, position, step, round, finished_at, data, "
                "smb_conf) VALUES (?,?,?,?,?,?,?)",
                (
                    record.id,
                    position,
                    step,
                    round_,
                    when,
                    json.dumps(data, sort_keys=True, default=str),
                    smb_conf,
                ),
            )
            db.execute(
                "UPDATE wizards SET updated_at = ?, finished_at = COALESCE(?, finished_at),"
                " config_path = COALESCE(config_path, ?) WHERE id = ?",
                (when, finished, data.get("config_path"), record.id),
            )
        saved = StepRecord(position, step, round_, when, data, smb_conf)
        record.steps.append(saved)
        record.updated_at = when
        record.finished_at = finished or record.finished_at
        record.config_path = record.config_path or data.get("config_path")
        return saved

    def load(self, wizard_id: int) -> WizardRecord:
        with self.database.connection() as db:
            row = db.execute(
                "SELECT server, config_path, created_at, updated_at, finished_at, measure "
                "FROM wizards WHERE id = ?",
                (wizard_id,),
            ).fetchone()
            if row is None:
                raise InvalidInput(
                    f"There is no wizard {wizard_id} in the results.",
                    details="List them with: sambatune wizard status",
                )
            steps = [
                StepRecord(
                    position,
                    _known_step(wizard_id, step),
                    round_,
                    when,
                    json.loads(data),
                    bytes(conf) if conf is not None else None,
                )
                for position, step, round_, when, data, conf in db.execute(
                    "SELECT position, step, round, finished_at, data, smb_conf FROM wizard_steps "
                    "WHERE wizard_id = ? ORDER BY position",
                    (wizard_id,),
                )
            ]
        server, config_path, created, updated, finished, measure = row
        return WizardRecord(
            wizard_id,
            server,
            config_path,
            created,
            updated,
            finished,
            MeasureSpec.from_json(json.loads(measure)),
            steps,
        )

    def summaries(self, *, server: str | None = None, unfinished: bool = False) -> list[WizardSummary]:
        """Wizards, newest first; ``unfinished``: only those that can be resumed."""
        query = (
            "SELECT id, server, created_at, updated_at, finished_at, (SELECT step FROM "
            "wizard_steps WHERE wizard_id = wizards.id ORDER BY position DESC LIMIT 1) "
            "FROM wizards WHERE 1=1"
        )
        args: list[Any] = []
        if server:
            query += " AND server = ?"
            args.append(server)
        if unfinished:
            query += " AND finished_at IS NULL"
        with self.database.connection() as db:
            rows = db.execute(query + " ORDER BY id DESC", args).fetchall()
        return [WizardSummary(*row) for row in rows]


def _known_step(wizard_id: int, name: str) -> WizardStep:
    try:
        return WizardStep(name)
    except ValueError:
        # Resuming would have to guess what the step did and what comes after it.
        raise InvalidInput(
            f"Wizard {wizard_id} has a step '{name}' this version of SambaTune does not know.",
            details="It was probably recorded by a newer SambaTune; open it with that one.",
        ) from None
