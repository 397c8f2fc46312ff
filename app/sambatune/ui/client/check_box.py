""" "Before and after" under a client plan: measure through the mounted share, apply, measure again.

The plan's items name the test that shows them (large files, or many small files)
through the share as this computer mounted it. This box runs that test before the
apply and after it, in a task off the GUI thread with its own progress and Cancel, and
shows what Welch's test made of the two (:mod:`sambatune.wizard.client_check` decides
and stores everything; the box only asks and shows). The state is stored per plan, so
it is there again after leaving the page, or the app, between the two measurements.
"""

from __future__ import annotations

import datetime as _dt
import html
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from sambatune.bench.progress import ProgressTracker
from sambatune.cancellation import CancelToken
from sambatune.client.backups import BackupStore
from sambatune.client.plan import ClientPlan
from sambatune.errors import InvalidInput, SambaTuneError
from sambatune.ui.tasks import Task, TaskRunner
from sambatune.units import format_figure
from sambatune.wizard.client_check import (
    AFTER,
    BEFORE,
    DEFAULT_RUNS,
    FILES,
    SMB_CLIENT,
    TESTS,
    CheckMeasured,
    CheckRequest,
    CheckStore,
    ClientCheck,
    PhaseRecord,
    default_path,
    default_test,
    has_links,
    linked_items,
    linked_paths,
    same_path,
)

VERDICT_STYLES = {
    "better": "background:#edf7ed; color:#1e4620; border:1px solid #b7dfb9;",
    "worse": "background:#fdecea; color:#611a15; border:1px solid #f5c2c0;",
    "mixed": "background:#fff4e5; color:#663c00; border:1px solid #ffd8a8;",
    "no real difference": "background:#e8f4fd; color:#0d3c61; border:1px solid #b6dcfb;",
    "too few runs": "background:#fff4e5; color:#663c00; border:1px solid #ffd8a8;",
}
TEST_CHOICES = {
    SMB_CLIENT: "Large files: write and read",
    FILES: "Many small files",
}


def local_time(iso: str) -> str:
    try:
        return _dt.datetime.fromisoformat(iso).astimezone().strftime("%d %b %H:%M")
    except ValueError:
        return iso


def p_text(p: float | None) -> str:
    if p is None:
        return "no test"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}" if p < 0.01 else f"p = {p:.2f}"


def phase_text(record: PhaseRecord) -> str:
    return f"{record.summary()} (session {record.session_id}, {local_time(record.measured_at)})"


def series_line(check: ClientCheck) -> str:
    """ "write 1.18 GB/s → 0.89 GB/s (−25%, p = 0.20) · read …": every series at a glance;
    the full sentences are in the tooltip."""
    verdict = check.verdict or {}
    units = {name: str(m.get("unit")) for name, m in (check.before.means if check.before else {}).items()}
    parts = []
    for series in verdict.get("series") or []:
        unit = units.get(series["series"], "bytes")
        change = series.get("relative_change")
        percent = "" if change is None else f"{'+' if change >= 0 else '−'}{abs(change):.0%}, "
        parts.append(
            f"{series['series']} {format_figure(series['mean_before'], unit)} → "
            f"{format_figure(series['mean_after'], unit)} ({percent}{p_text(series.get('p_value'))})"
        )
    return " · ".join(parts)


class BeforeAfterBox(QGroupBox):
    """The before/after check of the plan on screen."""

    #: A measurement started or ended (the page disables its own buttons meanwhile).
    busy_changed = Signal()
    #: A phase was measured and stored (its CheckMeasured).
    measured = Signal(object)
    #: The stored state of the plan on screen was read (a ClientCheck, or None).
    state_loaded = Signal(object)

    def __init__(
        self,
        runner: TaskRunner,
        *,
        store_factory: Callable[[], CheckStore] = CheckStore,
        backups_factory: Callable[[], BackupStore] = BackupStore,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("Before and after: measure this plan from this computer", parent)
        self.setObjectName("beforeAfterBox")
        self.runner = runner
        self.store_factory = store_factory
        self.backups_factory = backups_factory
        self.plan: ClientPlan | None = None
        self.check: ClientCheck | None = None
        self.task: Task | None = None
        self.blocked = False
        #: Warm-up runs, file size and file count of a before run (None: the defaults). Not
        #: on screen: the defaults suit a share; tests and demos make them small.
        self.method: dict[str, int | None] = {"warmup": None, "size": None, "count": None}
        self.tracker = ProgressTracker()
        self._build()
        self.hide()

    # -- layout ------------------------------------------------------------------------
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 6)
        layout.setSpacing(4)
        # What the box does is in its tooltip: a line of its own took two rows of the plan.
        self.setToolTip(
            "The same test through the mounted share before you apply the plan and after it "
            "(mount the share again first); Welch's test says whether the difference is real."
        )

        fields = QHBoxLayout()
        fields.addWidget(QLabel("Mounted share:"))
        self.path = QLineEdit()
        self.path.setObjectName("checkPath")
        self.path.setToolTip(
            "A directory on the share as this computer mounted it: a mount point, or a UNC path."
        )
        self.path.textChanged.connect(self._update_buttons)
        fields.addWidget(self.path, 1)
        self.browse = QPushButton("Browse…")
        self.browse.setObjectName("checkBrowseButton")
        self.browse.clicked.connect(self._choose_directory)
        fields.addWidget(self.browse)
        fields.addSpacing(8)
        fields.addWidget(QLabel("Test:"))
        self.test = QComboBox()
        self.test.setObjectName("checkTest")
        for key, text in TEST_CHOICES.items():
            self.test.addItem(text, key)
        self.test.currentIndexChanged.connect(self._update_buttons)
        fields.addWidget(self.test)
        fields.addSpacing(8)
        fields.addWidget(QLabel("Runs:"))
        self.runs = QSpinBox()
        self.runs.setObjectName("checkRuns")
        self.runs.setRange(2, 30)
        self.runs.setValue(DEFAULT_RUNS)
        self.runs.setToolTip(
            "Counted runs per measurement, after one warm-up run; the after one repeats the before's."
        )
        fields.addWidget(self.runs)
        layout.addLayout(fields)

        actions = QHBoxLayout()
        self.before_button = QPushButton("Measure before")
        self.before_button.setObjectName("measureBeforeButton")
        self.before_button.clicked.connect(lambda: self.measure(BEFORE))
        actions.addWidget(self.before_button)
        self.after_button = QPushButton("Measure after")
        self.after_button.setObjectName("measureAfterButton")
        self.after_button.clicked.connect(lambda: self.measure(AFTER))
        actions.addWidget(self.after_button)
        self.any_directory = QCheckBox("Not an SMB share: measure anyway")
        self.any_directory.setObjectName("checkAnyDirectory")
        self.any_directory.setToolTip(
            "A folder on this computer's own disk is refused: the plan changes how this computer "
            "talks SMB, which a local disk does not show. Tick to measure such a folder for comparison."
        )
        actions.addWidget(self.any_directory)
        self.status = QLabel()
        self.status.setObjectName("checkStatus")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        actions.addWidget(self.status, 1)
        layout.addLayout(actions)

        running = QHBoxLayout()
        running.setContentsMargins(0, 0, 0, 0)
        self.progress = QProgressBar()
        self.progress.setObjectName("checkProgress")
        self.progress.setRange(0, 100)
        self.progress.setMaximumWidth(220)
        running.addWidget(self.progress)
        self.progress_label = QLabel()
        self.progress_label.setObjectName("checkProgressLabel")
        running.addWidget(self.progress_label, 1)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("checkCancelButton")
        self.cancel_button.clicked.connect(self.cancel)
        running.addWidget(self.cancel_button)
        self.running = QWidget()
        self.running.setLayout(running)
        self.running.hide()
        layout.addWidget(self.running)

        self.message = QLabel()
        self.message.setObjectName("checkMessage")
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color:#611a15;")
        self.message.hide()
        layout.addWidget(self.message)

        self.verdict = QLabel()
        self.verdict.setObjectName("checkVerdict")
        self.verdict.setWordWrap(True)
        self.verdict.setTextFormat(Qt.TextFormat.RichText)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.verdict.hide()
        layout.addWidget(self.verdict)

    # -- state -------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return self.task is not None

    def set_blocked(self, blocked: bool) -> None:
        """The page is busy with something else (planning, applying): no measuring now."""
        self.blocked = blocked
        self._update_buttons()

    def show_plan(self, plan: ClientPlan | None) -> None:
        """Show the check of ``plan`` (stored state read in a worker); hidden without links,
        and for another system's plan: these measurements are of this computer."""
        self.plan = plan
        self.check = None
        self.message.hide()
        self.verdict.hide()
        if plan is None or not has_links(plan) or not plan.os.detected:
            self.hide()
            return
        shown_by = "\n".join(
            f"{TEST_CHOICES[key]} show: {', '.join(dict.fromkeys(titles))}"
            for key, titles in linked_items(plan).items()
            if key in TEST_CHOICES
        )
        try:
            test = default_test(plan)
            self.test.setToolTip(shown_by)
        except InvalidInput:
            # The items name both tests: large files first (the TCP window shows there), and
            # the tooltip says each check compares one test.
            test = SMB_CLIENT
            self.test.setToolTip(
                shown_by + "\n\nEach check compares one test; measure the other in a second "
                "check if it matters."
            )
        self.test.setCurrentIndex(self.test.findData(test))
        self.path.setText(default_path(plan, test) or "")
        examples = linked_paths(plan, test)
        self.path.setPlaceholderText(
            f"e.g. {examples[0]}, with the share's real name" if examples else "e.g. /mnt/data"
        )
        self.runs.setValue(DEFAULT_RUNS)
        self._show_state()
        self.show()
        store_factory, plan_id = self.store_factory, plan.id

        def work(report: Callable[[Any], None], cancel: CancelToken) -> ClientCheck | None:
            return store_factory().load(plan_id)

        self.runner.start(work, name="Reading the plan's before and after", on_done=self._loaded)

    def _loaded(self, check: ClientCheck | None) -> None:
        if self.plan is None or (check is not None and check.plan_id != self.plan.id):
            return  # another plan came on screen meanwhile
        self.check = check
        if check is not None:
            self.path.setText(check.path)
            self.test.setCurrentIndex(self.test.findData(check.test))
            self.runs.setValue(max(2, check.runs))
        self._show_state()
        self.state_loaded.emit(check)

    def _matches_before(self) -> tuple[bool, str]:
        check = self.check
        if check is None or check.before is None:
            return False, "Measure before first, ahead of the apply."
        if self.test.currentData() != check.test or not same_path(
            self.path.text().strip() or ".", check.path
        ):
            return False, (
                f"The after measurement repeats the before one: {TESTS[check.test]} on {check.path}. "
                "Measure before again to use another test or path."
            )
        return True, (
            f"Repeat the before measurement ({TESTS[check.test]} on {check.path}, {check.runs} runs) "
            "and compare. Apply the plan and mount the share again first."
        )

    def _update_buttons(self) -> None:
        idle = not self.busy and not self.blocked
        has_path = bool(self.path.text().strip())
        self.before_button.setEnabled(idle and has_path and self.plan is not None)
        self.before_button.setText(
            "Measure before again" if self.check is not None and self.check.before else "Measure before"
        )
        self.before_button.setToolTip(
            "Run the test now, before the plan is applied."
            if has_path
            else "Type the share's path as this computer mounted it."
        )
        self.after_button.setText(
            "Measure after again" if self.check is not None and self.check.after else "Measure after"
        )
        can_after, why = self._matches_before()
        self.after_button.setEnabled(idle and can_after)
        self.after_button.setToolTip(why)
        for widget in (self.path, self.browse, self.test, self.runs, self.any_directory):
            widget.setEnabled(not self.busy)

    def _show_state(self) -> None:
        check = self.check
        before = check.before if check else None
        after = check.after if check else None
        if before is None:
            status = (
                "Before: not measured yet. Measure before applying the plan; after it, measure "
                "again: Welch's test says whether the difference is real."
            )
        else:
            status = f"Before: {phase_text(before)}."
            if after is None:
                status += " After: apply the plan, mount the share again, then Measure after."
            else:
                status += f" After: {phase_text(after)}."
        self.status.setText(status)
        verdict = check.verdict if check else None
        if verdict and check is not None:
            e = html.escape
            overall = str(verdict.get("overall", ""))
            self.verdict.setText(
                f"<b>{e(overall[:1].upper() + overall[1:])}.</b> {e(str(verdict.get('explanation', '')))}"
                f"<br><small>{e(series_line(check))}</small>"
                # "Nothing was applied in between" changes what the verdict means: on screen.
                + "".join(f"<br><small><i>{e(note)}</i></small>" for note in check.notes)
            )
            self.verdict.setToolTip(
                "\n".join(f"{s['label']}: {s['sentence']}" for s in verdict.get("series") or [])
            )
            self.verdict.setStyleSheet(
                VERDICT_STYLES.get(overall, VERDICT_STYLES["no real difference"])
                + "border-radius:4px; padding:4px 6px;"
            )
            self.verdict.show()
        else:
            self.verdict.hide()
        self._update_buttons()

    def _choose_directory(self) -> None:
        chosen = QFileDialog.getExistingDirectory(
            self, "The share as this computer mounted it", self.path.text()
        )
        if chosen:
            self.path.setText(chosen)

    # -- measuring ---------------------------------------------------------------------
    def measure(self, phase: str) -> None:
        plan = self.plan
        if plan is None or self.busy or self.blocked:
            return
        path = self.path.text().strip()
        if phase == BEFORE:
            request = CheckRequest(
                BEFORE,
                path=path,
                test=self.test.currentData(),
                runs=self.runs.value(),
                warmup=self.method.get("warmup"),
                size=self.method.get("size"),
                count=self.method.get("count"),
                any_directory=self.any_directory.isChecked(),
            )
        else:
            request = CheckRequest(AFTER, path=path, test=self.test.currentData())
        store_factory, backups_factory = self.store_factory, self.backups_factory

        def work(report: Callable[[Any], None], cancel: CancelToken) -> CheckMeasured:
            from sambatune.wizard.client_check import measure_phase

            return measure_phase(
                plan,
                request,
                store=store_factory(),
                backups=backups_factory(),
                cancel=cancel,
                on_event=report,
            )

        name = f"Measuring {phase} the change"
        self.tracker.reset(f"{name}…")
        self.progress.setRange(0, 0)
        self.progress_label.setText(f"{name}…")
        self.cancel_button.setEnabled(True)
        self.running.show()
        self.message.hide()
        self.task = self.runner.start(
            work,
            name=name,
            on_event=self._progress,
            on_done=self._measured,
            on_failed=self._failed,
            on_cancelled=self._cancelled,
            on_finished=self._finished,
        )
        self._update_buttons()
        self.busy_changed.emit()

    def _progress(self, event: Any) -> None:
        self.tracker.observe(event)
        fraction = self.tracker.fraction
        if fraction is None:
            self.progress.setRange(0, 0)
        else:
            self.progress.setRange(0, 100)
            self.progress.setValue(int(fraction * 100))
        line = self.tracker.line()
        if line and self.task is not None and not self.task.cancel_token.cancelled:
            self.progress_label.setText(line)

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.cancel_button.setEnabled(False)
            self.progress_label.setText("Cancelling: removing the test's files from the share…")

    def _measured(self, measured: CheckMeasured) -> None:
        if self.plan is not None and measured.check.plan_id == self.plan.id:
            self.check = measured.check
            self._show_state()
        self.measured.emit(measured)

    def _failed(self, error: SambaTuneError) -> None:
        self._say(error.message + (f" {error.details}" if error.details else ""))

    def _cancelled(self) -> None:
        self._say(
            "Cancelled: nothing was recorded, and the test's files are gone from the share.", error=False
        )

    def _say(self, text: str, *, error: bool = True) -> None:
        self.message.setText(text)
        self.message.setStyleSheet("color:#611a15;" if error else "color:#555;")
        self.message.show()

    def _finished(self) -> None:
        self.task = None
        self.running.hide()
        self._update_buttons()
        self.busy_changed.emit()
