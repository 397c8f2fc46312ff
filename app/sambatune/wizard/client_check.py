"""Before and after for a client plan: the same test from this computer, judged like the wizard's.

A client plan changes how *this* computer talks SMB (mount options, nsmb.conf, the
Windows SMB client, the TCP window). Its items carry a :class:`~sambatune.client.plan.MeasureLink`:
the test that shows the change, through the share as this computer mounted it. This
module runs that loop for one plan:

- **before** (ahead of the apply): the large-file test (``smb-client``) or the small-file
  test (``files``) through the mounted path, the same classes ``sambatune bench
  smb-client --path`` and ``bench files --path`` use, saved as a benchmark session;
- **after** (once the plan is applied and the share mounted again): the same test, path,
  runs and sizes, saved too, then :func:`sambatune.wizard.verdict.judge` compares each
  series with Welch's test and the verdict is kept.

The state of each plan's check is a private JSON file in the user's data directory,
with a copy of the plan itself: the after measurement often comes after a reboot, when
the plan is no longer on anyone's screen. No Qt here: ``sambatune client check`` and the
"Tune this computer" page are the two faces of :func:`measure_phase`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sambatune import appdirs
from sambatune.bench.events import BenchEvent
from sambatune.bench.records import BenchResult
from sambatune.bench.results_db import ResultsDatabase, StoredSession
from sambatune.bench.runner import Method
from sambatune.bench.small_files import DEFAULT_COUNT, SmallFilesBenchmark, SmallFilesOptions
from sambatune.bench.small_files import DEFAULT_SIZE as DEFAULT_FILE_SIZE
from sambatune.bench.smb_client import SmbClientBenchmark, SmbClientOptions
from sambatune.cancellation import CancelToken
from sambatune.client.backups import BackupStore
from sambatune.client.plan import ClientPlan
from sambatune.client.plan_store import valid_plan_id
from sambatune.errors import InvalidInput
from sambatune.json_fields import StoredFields
from sambatune.progress import Progress
from sambatune.units import format_figure
from sambatune.wizard.store import now_iso
from sambatune.wizard.verdict import Verdict, judge

SMB_CLIENT, FILES = "smb-client", "files"
#: The two tests a plan item's MeasureLink names, as people read them.
TESTS = {
    SMB_CLIENT: "large files: write and read",
    FILES: "many small files",
}
BEFORE, AFTER = "before", "after"
PHASES = (BEFORE, AFTER)
CHECK_KIND = "sambatune-client-plan-check"
CHECK_VERSION = 1
#: The wizard's method (MeasureSpec): a warm-up, then enough runs for Welch's test to see
#: a real difference.
DEFAULT_RUNS, DEFAULT_WARMUP = 5, 1
#: The share name the plans write where they cannot know it: nsmb_plan's /Volumes/SHARE,
#: windows_smb_plan's \\SERVER\SHARE or \\files1\SHARE. Such a path is an example to edit.
EXAMPLE_SHARE = "SHARE"

#: What each overall verdict means for a client plan. judge() decides the verdict; its
#: own sentences speak of smb.conf findings, which these measurements are not about.
EXPLANATIONS = {
    "better": "The plan made this test measurably faster from this computer and nothing slower: keep it.",
    "worse": "The plan made this test measurably slower from this computer: put the old values back.",
    "mixed": "The plan made some of this test faster and some slower. Unless your users mostly do "
    "the faster part, put the old values back.",
    "no real difference": "With this test the plan made no difference beyond the normal run-to-run "
    "spread. Keep it if its other reasons matter to you; otherwise put the old values back to "
    "stay where you were.",
    "too few runs": "There were too few runs to tell: measure before and after again with more runs.",
}


def is_example_share(path: str) -> bool:
    """True for a path a plan wrote as an example (``/Volumes/SHARE``, ``\\\\SERVER\\SHARE``)."""
    last = path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    return last == EXAMPLE_SHARE


def same_path(first: str, second: str) -> bool:
    return os.path.normcase(os.path.normpath(first)) == os.path.normcase(os.path.normpath(second))


def linked_items(plan: ClientPlan) -> dict[str, list[str]]:
    """Test -> titles of the plan's changes it measures. Without changes, every linked item
    counts: a plan that only reports (signing, say) still names its test."""
    linked = [c for c in plan.actionable() if c.measure is not None] or [
        c for c in plan.changes if c.measure is not None
    ]
    tests: dict[str, list[str]] = {}
    for change in linked:
        assert change.measure is not None
        tests.setdefault(change.measure.test, []).append(change.title)
    return tests


def has_links(plan: ClientPlan) -> bool:
    return any(c.measure is not None for c in plan.changes)


def default_test(plan: ClientPlan) -> str:
    """The small-file test when the plan's changed items are measured only by it; the
    large-file test otherwise (the TCP window shows in large transfers). When the items
    name both, the admin chooses: one test cannot speak for the other's items."""
    tests = linked_items(plan)
    if FILES in tests and SMB_CLIENT in tests:
        raise InvalidInput(
            f"Plan {plan.id}'s changes are measured by two tests: the large-file test "
            f"(smb-client) for {_titles(tests[SMB_CLIENT])}, and the small-file test (files) "
            f"for {_titles(tests[FILES])}. Choose one with --test smb-client or --test files.",
            details="Each check compares one test before and after; run a second check "
            "for the other test if both matter.",
        )
    return FILES if FILES in tests else SMB_CLIENT


def _titles(titles: list[str]) -> str:
    unique = list(dict.fromkeys(titles))
    return ", ".join(unique[:3]) + (f" and {len(unique) - 3} more" if len(unique) > 3 else "")


def linked_paths(plan: ClientPlan, test: str | None = None) -> list[str]:
    """The distinct paths the plan's links name (for ``test``, or any), changes first."""
    ordered = [c for c in plan.actionable() if c.measure is not None] + [
        c for c in plan.changes if c.measure is not None
    ]
    paths = [c.measure.path for c in ordered if c.measure is not None and test in (None, c.measure.test)]
    return list(dict.fromkeys(paths))


def default_path(plan: ClientPlan, test: str | None = None) -> str | None:
    """The one real path the links name; None when they name none, several, or only an
    example (the share's name was unknown when the plan was made)."""
    real = [p for p in linked_paths(plan, test) if not is_example_share(p)]
    return real[0] if len(real) == 1 else None


@dataclass(frozen=True)
class CheckRequest:
    """One measurement of a check. None = the default (before) or the before's (after)."""

    phase: str
    path: str | None = None
    test: str | None = None
    runs: int | None = None
    warmup: int | None = None
    #: smb-client: the test file's size (None: sized by a probe, as the bench verb does);
    #: files: bytes per file.
    size: int | None = None
    #: files only: how many files.
    count: int | None = None
    #: Measure a folder that is not on an SMB share (to compare with one), knowingly.
    any_directory: bool = False

    def __post_init__(self) -> None:
        if self.phase not in PHASES:
            raise InvalidInput(f"A check measures {' or '.join(PHASES)}, not {self.phase!r}.")
        if self.test is not None and self.test not in TESTS:
            raise InvalidInput(f"The check's test is smb-client or files, not {self.test!r}.")


@dataclass
class PhaseRecord(StoredFields):
    session_id: int
    measured_at: str
    #: series -> {"label", "unit", "mean"}: what the page and the text say at a glance.
    means: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, result: BenchResult) -> PhaseRecord:
        assert result.session_id is not None
        means = {}
        for name, series in result.series.items():
            stats = series.stats()
            means[name] = {
                "label": series.label,
                "unit": series.unit,
                "mean": stats.mean if stats is not None else None,
            }
        return cls(result.session_id, result.started_at, means)

    def summary(self, limit: int = 3) -> str:
        """ "write 412 MB/s, read 1.10 GB/s": the first few series' means."""
        parts = [
            f"{name} {format_figure(m.get('mean'), str(m.get('unit')))}" for name, m in self.means.items()
        ]
        return ", ".join(parts[:limit]) + (", …" if len(parts) > limit else "")


@dataclass
class ClientCheck:
    """A plan's before/after check: what is measured, how, and what came of it."""

    plan_id: str
    plan: dict[str, Any]
    test: str
    path: str
    runs: int
    warmup: int
    #: As measured before (smb-client: the size the probe chose), repeated after.
    size: int | None
    count: int | None
    before: PhaseRecord | None = None
    after: PhaseRecord | None = None
    verdict: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    updated: str = field(default_factory=now_iso)
    #: Where the path lives when the user chose to measure it though it is no SMB share.
    not_a_share: str | None = None

    @property
    def waiting_for_after(self) -> bool:
        return self.before is not None and self.after is None

    def client_plan(self) -> ClientPlan:
        return ClientPlan.from_json(self.plan)

    def describe_method(self) -> str:
        runs = f"{self.warmup} warm-up and {self.runs} counted runs"
        if self.test == FILES:
            size = DEFAULT_FILE_SIZE if self.size is None else self.size
            return f"{self.count or DEFAULT_COUNT:,} files of {size:,} bytes; {runs}"
        file = f"a {self.size:,}-byte test file" if self.size else "a test file sized by a probe"
        return f"{file}; {runs}"

    def to_json(self) -> dict[str, Any]:
        """The record scripts read (``client check --json``); the stored file adds the plan."""
        return {
            "kind": CHECK_KIND,
            "version": CHECK_VERSION,
            "plan_id": self.plan_id,
            "test": self.test,
            "path": self.path,
            "method": {"runs": self.runs, "warmup": self.warmup},
            "size": self.size,
            "count": self.count,
            "before": self.before.to_json() if self.before else None,
            "after": self.after.to_json() if self.after else None,
            "before_session": self.before.session_id if self.before else None,
            "after_session": self.after.session_id if self.after else None,
            "verdict": self.verdict,
            "notes": list(self.notes),
            "updated": self.updated,
            "not_a_share": self.not_a_share,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClientCheck:
        if data.get("kind") != CHECK_KIND or data.get("version") != CHECK_VERSION:
            raise InvalidInput("This file is not a SambaTune client plan check.")
        method = data.get("method") or {}
        return cls(
            plan_id=str(data["plan_id"]),
            plan=dict(data.get("plan") or {}),
            test=str(data["test"]),
            path=str(data["path"]),
            runs=int(method.get("runs", DEFAULT_RUNS)),
            warmup=int(method.get("warmup", DEFAULT_WARMUP)),
            size=None if data.get("size") is None else int(data["size"]),
            count=None if data.get("count") is None else int(data["count"]),
            before=PhaseRecord.from_json(data["before"]) if data.get("before") else None,
            after=PhaseRecord.from_json(data["after"]) if data.get("after") else None,
            verdict=data.get("verdict"),
            notes=[str(n) for n in data.get("notes") or []],
            updated=str(data.get("updated") or ""),
            not_a_share=str(data["not_a_share"]) if data.get("not_a_share") else None,
        )


def default_root() -> Path:
    return appdirs.data_dir() / "client-plan-checks"


class CheckStore:
    """One JSON file per plan id, private to this user, written atomically."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_root()

    def path_of(self, plan_id: str) -> Path:
        return self.root / f"{valid_plan_id(plan_id)}.json"

    def load(self, plan_id: str) -> ClientCheck | None:
        path = self.path_of(plan_id)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise InvalidInput(f"Cannot read the check of plan {plan_id} ({path}): {exc}") from exc
        return ClientCheck.from_json(data)

    def save(self, check: ClientCheck) -> Path:
        from sambatune.remote.local import write_local_file_atomic

        path = self.path_of(check.plan_id)
        appdirs.private_dir(self.root)
        check.updated = now_iso()
        data = {**check.to_json(), "plan": check.plan}
        write_local_file_atomic(
            str(path),
            (json.dumps(data, indent=2) + "\n").encode("utf-8"),
            mode=0o600 if os.name == "posix" else None,
        )
        return path

    def waiting(self) -> list[ClientCheck]:
        """Checks with a before and no after yet, the most recent first."""
        found = []
        for path in self.root.glob("*.json") if self.root.is_dir() else ():
            try:
                check = self.load(path.stem)
            except (InvalidInput, KeyError, TypeError, ValueError):
                continue  # a damaged file is not worth failing the page for
            if check is not None and check.waiting_for_after:
                found.append(check)
        return sorted(found, key=lambda c: c.updated, reverse=True)


@dataclass
class CheckMeasured:
    check: ClientCheck
    phase: str
    result: BenchResult


def measure_phase(
    plan: ClientPlan,
    request: CheckRequest,
    *,
    store: CheckStore | None = None,
    database: ResultsDatabase | None = None,
    backups: BackupStore | None = None,
    cancel: CancelToken | None = None,
    on_event: Callable[[BenchEvent], None] | None = None,
) -> CheckMeasured:
    """Measure one phase of ``plan``'s check, save it as a session and the check's state;
    after the after phase, with the verdict. Cancelled: nothing is saved, and the test's
    files are gone from the path (the benchmark removes them however it ends)."""
    store = store or CheckStore()
    existing = store.load(plan.id)
    before_session: StoredSession | None = None
    if request.phase == AFTER:
        check = _after_of(plan, request, existing)
        database = database or ResultsDatabase()
        assert check.before is not None
        try:
            before_session = database.load(check.before.session_id)
        except InvalidInput as exc:
            raise InvalidInput(
                f"The before measurement of plan {plan.id} (session {check.before.session_id}) "
                "is no longer in the results: measure before again.",
                details=exc.message,
            ) from exc
    else:
        check = _before_of(plan, request)
    _check_directory(check.path)
    _check_share(check, request)
    database = database or ResultsDatabase()
    cancel = cancel or CancelToken()
    if on_event is not None:
        on_event(Progress(0.0, f"measuring {request.phase} the change: {TESTS[check.test]} on {check.path}"))
    result = _run(check, cancel, on_event)
    database.save(result, note=f"client plan {plan.id}: {request.phase} (sambatune client check)")
    record = PhaseRecord.of(result)
    if request.phase == BEFORE:
        if check.test == SMB_CLIENT and check.size is None:
            # The probe chose a size: the after run repeats it, so the test stays the same.
            size = result.parameters.get("size")
            check.size = int(size) if isinstance(size, int) else None
        check.before = record
    else:
        assert before_session is not None
        check.after = record
        verdict = judge(before_session, database.load(record.session_id))
        check.notes = _after_notes(plan.id, check, backups)
        check.verdict = verdict_record(verdict, plan.id, backups)
    store.save(check)
    return CheckMeasured(check, request.phase, result)


def _before_of(plan: ClientPlan, request: CheckRequest) -> ClientCheck:
    test = request.test or default_test(plan)
    path = request.path or default_path(plan, test)
    if not path:
        examples = linked_paths(plan, test)
        raise InvalidInput(
            "Which path? Give the share as this computer mounted it (--path).",
            details=(f"The plan names {', '.join(examples)} as an example. " if examples else "")
            + "A mount point (/mnt/data, /Volumes/data) or a UNC path (\\\\server\\data) on Windows.",
        )
    if is_example_share(path):
        raise InvalidInput(
            f"{path} is the plan's example, not a share: give the real one (its mount point, "
            "or its UNC path on Windows)."
        )
    runs = DEFAULT_RUNS if request.runs is None else request.runs
    warmup = DEFAULT_WARMUP if request.warmup is None else request.warmup
    if runs < 2:
        raise InvalidInput(
            f"A before/after check needs at least 2 counted runs per measurement, not {runs}.",
            details="Welch's test compares the run-to-run spread, which one run cannot show.",
        )
    Method(runs=runs, warmup=warmup)  # says what is wrong with a negative warm-up
    count = (request.count or DEFAULT_COUNT) if test == FILES else None
    size = (
        request.size if test == SMB_CLIENT else (DEFAULT_FILE_SIZE if request.size is None else request.size)
    )
    check = ClientCheck(plan.id, plan.to_json(), test, path, runs, warmup, size, count)
    _options(check)  # the bench classes' own checks of the sizes, before anything runs
    return check


def _after_of(plan: ClientPlan, request: CheckRequest, existing: ClientCheck | None) -> ClientCheck:
    if existing is None or existing.before is None:
        raise InvalidInput(
            f"Plan {plan.id} has no before measurement: measure before applying the plan.",
            details=f"sambatune client check {plan.id} --before --path PATH; then apply the plan, "
            "mount the share again and measure after.",
        )
    if request.test is not None and request.test != existing.test:
        raise InvalidInput(
            f"The before measurement of plan {plan.id} was the {existing.test} test; the after "
            f"one must be the same test, not {request.test}.",
            details="Measure before again to check with the other test.",
        )
    if request.path is not None and not same_path(request.path, existing.path):
        raise InvalidInput(
            f"The before measurement of plan {plan.id} ran on {existing.path}; the after one must "
            f"run there too, not on {request.path}.",
            details="Another path may be another share or disk. Measure before again to use it.",
        )
    given = {"runs": request.runs, "warmup": request.warmup, "size": request.size, "count": request.count}
    recorded = {
        "runs": existing.runs,
        "warmup": existing.warmup,
        "size": existing.size,
        "count": existing.count,
    }
    differing = [k for k, v in given.items() if v is not None and v != recorded[k]]
    if differing:
        raise InvalidInput(
            "The after measurement repeats the before one ("
            + ", ".join(f"{k} {recorded[k]}" for k in differing)
            + "); leave out "
            + ", ".join(f"--{k}" for k in differing)
            + ", or measure before again.",
        )
    existing.plan = plan.to_json()
    existing.after = None
    existing.verdict = None
    existing.notes = []
    return existing


def _check_directory(path: str) -> None:
    where = Path(path)
    if not where.exists():
        raise InvalidInput(
            f"{path} does not exist on this computer: is the share mounted?",
            details="Give the share's mount point (Linux, macOS) or its UNC path (Windows).",
        )
    if not where.is_dir():
        raise InvalidInput(f"{path} is not a directory: give the share's mount point, or a folder on it.")


def _check_share(check: ClientCheck, request: CheckRequest) -> None:
    """Refuse a folder on a local disk unless the user asked for it: the plan changes how
    this computer talks SMB, which a local disk never shows."""
    from sambatune.client.share_path import filesystem_of

    where = filesystem_of(check.path)
    if where.on_smb is not False:
        return
    if request.phase == BEFORE and not request.any_directory:
        raise InvalidInput(
            f"{where.describe()}, not on an SMB share: the plan changes how this computer "
            "talks SMB, which a folder on a local disk does not show.",
            details="Give the share's mount point (mount -t cifs, /Volumes/...) or its UNC path. "
            "To measure this folder anyway, for comparison: --any-directory (the GUI's "
            "'Not an SMB share: measure anyway').",
        )
    if request.phase == BEFORE:
        check.not_a_share = where.describe()
    elif check.not_a_share is None:
        raise InvalidInput(
            f"{where.describe()} now, not on an SMB share: is the share mounted there again?",
            details="Mount the share, then measure after.",
        )


def _options(check: ClientCheck) -> SmbClientOptions | SmallFilesOptions:
    if check.test == FILES:
        return SmallFilesOptions(
            path=check.path,
            count=check.count or DEFAULT_COUNT,
            size=DEFAULT_FILE_SIZE if check.size is None else check.size,
        )
    return SmbClientOptions(path=check.path, size=check.size)


def _run(
    check: ClientCheck, cancel: CancelToken, on_event: Callable[[BenchEvent], None] | None
) -> BenchResult:
    method = Method(runs=check.runs, warmup=check.warmup)
    options = _options(check)
    if isinstance(options, SmallFilesOptions):
        return SmallFilesBenchmark(None, method, options, cancel=cancel).run(on_event)
    return SmbClientBenchmark(None, method, options, cancel=cancel).run(on_event)


def _plan_backups(plan_id: str, backups: BackupStore | None) -> list[dict[str, Any]]:
    """The backups the apply of this plan made, oldest first."""
    try:
        entries = (backups or BackupStore()).list()
    except OSError:
        return []
    return [e for e in entries if e.get("plan_id") == plan_id and e.get("kind") == "before-apply"]


def _after_notes(plan_id: str, check: ClientCheck, backups: BackupStore | None) -> list[str]:
    assert check.before is not None
    notes = []
    if check.not_a_share:
        notes.append(
            f"Measured as asked though {check.not_a_share}, not on an SMB share: what the plan "
            "changes in this computer's SMB client does not show in these figures."
        )
    applied = [
        e for e in _plan_backups(plan_id, backups) if str(e.get("created", "")) >= check.before.measured_at
    ]
    if not applied:
        # Applied by hand or on a .reg file is possible, so this is a note, not a refusal.
        notes.append(
            f"No apply of plan {plan_id} by SambaTune is on record since the before measurement: "
            "if the plan was not applied (and the share mounted again), before and after measured "
            "the same settings."
        )
    return notes


def verdict_record(verdict: Verdict, plan_id: str, backups: BackupStore | None = None) -> dict[str, Any]:
    """The judge's verdict with the client's own words, and how to put the values back."""
    data = verdict.to_json()
    explanation = EXPLANATIONS[verdict.overall]
    restore = None
    if verdict.overall in ("worse", "mixed", "no real difference"):
        made = [e for e in _plan_backups(plan_id, backups) if not e.get("restored_at")]
        if made:
            backup_id = str(made[-1]["id"])
            restore = {"backup_id": backup_id, "command": f"sambatune client restore {backup_id}"}
    if verdict.recommendation == "revert":
        explanation += (
            f" The apply saved backup {restore['backup_id']}: {restore['command']} (or Restore on "
            "the Backups tab)."
            if restore
            else " No SambaTune backup of this plan's apply is on record: undo it as it was applied."
        )
    data["explanation"] = explanation
    data["restore"] = restore
    return data
