"""Apply a new smb.conf: review the diff, then watch every safe-apply step."""

from __future__ import annotations

import html
from pathlib import PurePosixPath
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from sambatune.cancellation import CancelToken
from sambatune.conf.activation import Activation
from sambatune.conf.apply import (
    STEP_TITLES,
    STEPS,
    ApplyOutcome,
    ApplyStep,
    SmbdAction,
    StepEvent,
    StepState,
)
from sambatune.errors import SambaTuneError
from sambatune.states import ApplyStatus, LiveState
from sambatune.ui.diff_view import DiffView
from sambatune.ui.session import ServerSession
from sambatune.ui.tasks import Task

STATE_MARKS = {
    StepState.PENDING: ("○", "#888888"),
    StepState.RUNNING: ("◔", "#0d5c9e"),
    StepState.DONE: ("✔", "#1e7d32"),
    StepState.WARNING: ("⚠", "#8a5300"),
    StepState.SKIPPED: ("–", "#888888"),
    StepState.FAILED: ("✖", "#b3261e"),
}
FINISHED_STATES = (StepState.DONE, StepState.WARNING, StepState.FAILED, StepState.SKIPPED)
OUTCOME_STYLES = {
    ApplyStatus.APPLIED: ("Applied", "#edf7ed", "#1e4620"),
    ApplyStatus.REFUSED: ("Not applied", "#fff4e5", "#663c00"),
    ApplyStatus.ROLLED_BACK: ("Rolled back", "#fff4e5", "#663c00"),
    ApplyStatus.FAILED: ("Failed", "#fdecea", "#611a15"),
    ApplyStatus.CANCELLED: ("Cancelled", "#f0f0f0", "#333333"),
}


class ApplyDialog(QDialog):
    """Diff first; Apply runs the pipeline in the background and shows each step."""

    finished_outcome = Signal(object)

    def __init__(
        self,
        session: ServerSession,
        *,
        path: str,
        original: bytes,
        candidate: bytes,
        summary: str = "",
        title: str = "Apply smb.conf",
        what: str = "an apply",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        from sambatune.conf.apply import unified_diff

        self.setObjectName("applyDialog")
        self.setWindowTitle(title)
        self.resize(820, 600)
        self.session = session
        self.path = path
        self.original = original
        self.candidate = candidate
        self.outcome: ApplyOutcome | None = None
        self.task: Task | None = None
        self.cancel = CancelToken()
        # The dry run made when the dialog opens: how smbd takes the change, who a
        # restart would cut off. Apply waits for it (both hold the server's apply lock).
        self.plan: ApplyOutcome | None = None
        self.plan_task: Task | None = None
        self._start_when_planned = False
        # What changed the file, for the pages that follow it ("a restore from smb.conf
        # history"); they hear of it when this dialog closes, once its result was read.
        self.what = what
        self._touched_live = False
        self.finished.connect(self._tell_pages)

        layout = QVBoxLayout(self)
        self.pages = QStackedWidget()
        layout.addWidget(self.pages)

        # Page 1: review
        review = QWidget()
        review_layout = QVBoxLayout(review)
        review_layout.setContentsMargins(0, 0, 0, 0)
        intro = QLabel(
            f"These changes will be applied to <b>{path}</b> on "
            f"<b>{session.profile.target_label}</b>. SambaTune validates them with testparm, "
            "backs up the live file, swaps atomically, reloads smbd (restarts it only if you "
            "allow it below) and checks it still serves; on any failure it puts the old file "
            "back."
        )
        intro.setWordWrap(True)
        review_layout.addWidget(intro)
        self.plan_label = QLabel("Checking how smbd takes this change…")
        self.plan_label.setObjectName("applyPlan")
        self.plan_label.setWordWrap(True)
        self.plan_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        review_layout.addWidget(self.plan_label)
        self.allow_restart = QCheckBox(
            "Restart smbd for this change (every connected client is disconnected)"
        )
        self.allow_restart.setObjectName("allowRestart")
        self.allow_restart.hide()
        self.allow_restart.toggled.connect(self._consent_changed)
        review_layout.addWidget(self.allow_restart)
        self.diff = DiffView()
        self.diff.setObjectName("applyDiff")
        self.diff.show_diff(unified_diff(original, candidate, path))
        review_layout.addWidget(self.diff, 1)
        summary_row = QHBoxLayout()
        summary_row.addWidget(QLabel("What this change is:"))
        self.summary = QLineEdit(summary)
        self.summary.setPlaceholderText("e.g. turn off fixed socket buffers")
        summary_row.addWidget(self.summary, 1)
        review_layout.addLayout(summary_row)
        self.pages.addWidget(review)

        # Page 2: progress and result
        progress = QWidget()
        progress_layout = QVBoxLayout(progress)
        progress_layout.setContentsMargins(0, 0, 0, 0)
        self.heading = QLabel()
        self.heading.setObjectName("applyHeading")
        self.heading.setWordWrap(True)
        progress_layout.addWidget(self.heading)
        self.progress = QProgressBar()
        self.progress.setObjectName("applyProgress")
        self.progress.setRange(0, len(STEPS))
        self.progress.setValue(0)
        progress_layout.addWidget(self.progress)
        self.steps = QListWidget()
        self.steps.setObjectName("applySteps")
        # A checklist to read, not a list to pick from.
        self.steps.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.steps.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.steps.setSpacing(2)
        self._rows: dict[ApplyStep, QListWidgetItem] = {}
        for step in STEPS:
            item = QListWidgetItem()
            self._rows[step] = item
            self.steps.addItem(item)
            self._mark(step, StepState.PENDING, "")
        progress_layout.addWidget(self.steps)
        self.result_label = QLabel()
        self.result_label.setObjectName("applyResult")
        self.result_label.setWordWrap(True)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.result_label.hide()
        progress_layout.addWidget(self.result_label)
        self.details_title = QLabel()
        self.details_title.setObjectName("applyDetailsTitle")
        self.details_title.hide()
        progress_layout.addWidget(self.details_title)
        self.result_diff = DiffView()
        self.result_diff.setObjectName("applyDetails")
        self.result_diff.hide()
        progress_layout.addWidget(self.result_diff, 1)
        self.filler = QWidget()
        progress_layout.addWidget(self.filler, 1)
        self.pages.addWidget(progress)
        self._fit_steps()

        self.buttons = QDialogButtonBox()
        self.apply_button = QPushButton("Apply")
        self.apply_button.setObjectName("applyButton")
        self.apply_button.setDefault(True)
        self.apply_button.setEnabled(original != candidate)
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.addButton(self.apply_button, QDialogButtonBox.ButtonRole.AcceptRole)
        self.close_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.close_button.hide()
        self.apply_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self._cancel)
        self.close_button.clicked.connect(self.accept)
        layout.addWidget(self.buttons)
        if original != candidate:
            self._check_plan()
        else:
            self.plan_label.hide()

    # -- the plan (a dry run) ---------------------------------------------------------
    def _check_plan(self) -> None:
        from sambatune.conf.apply import ApplyRequest, apply_config, read_live

        session = self.session
        path, original, candidate = self.path, self.original, self.candidate

        def work(_report: Any, cancel: CancelToken) -> tuple[ApplyOutcome, bytes]:
            transport = session.require_transport()
            sudo = session.prepare_root(transport, path, cancel)
            # Is the "live" side of the review still what is live?
            live = read_live(transport, path, sudo=sudo).data
            return apply_config(
                transport, ApplyRequest(path, original, candidate, sudo=sudo, dry_run=True), cancel=cancel
            ), live

        self.plan_task = session.run_task(
            "Check the change",
            work,
            on_done=lambda result: self._planned(*result),
            on_failed=self._plan_failed,
            on_cancelled=lambda: self._plan_failed(None),
        )

    def _planned(self, plan: ApplyOutcome, live: bytes | None = None) -> None:
        self.plan_task = None
        self.plan = plan
        if live is not None and live != self.original:
            self._changed_since_read(live)
            return
        self.plan_label.setText(plan_html(plan))
        needs_restart = plan.activation is SmbdAction.RESTART
        self.allow_restart.setVisible(needs_restart)
        self._consent_changed(self.allow_restart.isChecked())
        if self._start_when_planned:
            self._start_when_planned = False
            if needs_restart and not self.allow_restart.isChecked():
                self.apply_button.setText("Apply")
            else:
                self.start()

    def _changed_since_read(self, live: bytes) -> None:
        """The file changed on the server after the page read it: this review would not
        compare with what is live, and Apply would refuse. Closing makes the page read
        the live file again (the editor then offers to keep the edits on it)."""
        from sambatune.conf.apply import unified_diff

        self._start_when_planned = False
        self._touched_live = True
        self.apply_button.setEnabled(False)
        self.apply_button.setText("Apply")
        self.plan_label.setText(
            "<span style='color:#b3261e'><b>⚠ smb.conf changed on the server after it was "
            "read</b></span> (that change is below). Apply would refuse rather than overwrite "
            "it. Close this window: SambaTune reads the live file again (the editor offers to "
            "keep your edits on it); then review once more."
        )
        self.diff.show_diff(unified_diff(self.original, live, self.path, "when it was read", "live now"))

    def _plan_failed(self, error: SambaTuneError | None) -> None:
        self.plan_task = None
        reason = f" ({html.escape(error.message)})" if error is not None else ""
        self.plan_label.setText(
            f"Could not check in advance how smbd takes this change{reason}. If it needs a "
            "restart, Apply stops before changing anything and says so."
        )
        if self._start_when_planned:
            self._start_when_planned = False
            self.start()

    def _consent_changed(self, allowed: bool) -> None:
        needs_restart = self.plan is not None and self.plan.activation is SmbdAction.RESTART
        self.apply_button.setEnabled(self.original != self.candidate and (allowed or not needs_restart))
        self.apply_button.setText("Apply and restart smbd" if needs_restart and allowed else "Apply")

    def _fit_steps(self) -> None:
        """As tall as its rows (rollback and restart add some), so nothing scrolls."""
        rows = self.steps.count()
        row_height = max(self.steps.sizeHintForRow(0), self.fontMetrics().height())
        self.steps.setFixedHeight(
            rows * (row_height + 2 * self.steps.spacing()) + 2 * self.steps.frameWidth() + 4
        )

    def _mark(self, step: ApplyStep, state: StepState, message: str, details: str = "") -> None:
        if (
            step is ApplyStep.RESTART
            and step not in self._rows
            and self.step_state(ApplyStep.RELOAD) == StepState.PENDING
        ):
            # A restart takes the reload's place in the list, before the health check.
            self._rows[step] = self._rows.pop(ApplyStep.RELOAD)
        if step not in self._rows:
            item = QListWidgetItem()
            self._rows[step] = item
            self.steps.addItem(item)
            self._fit_steps()
        mark, color = STATE_MARKS.get(state, ("?", "#333"))
        title = STEP_TITLES.get(step, step)
        item = self._rows[step]
        item.setText(f"{mark}  {title}" + (f" — {message}" if message else ""))
        item.setForeground(Qt.GlobalColor.black if state is StepState.PENDING else _qcolor(color))
        item.setData(Qt.ItemDataRole.UserRole, state.value)
        item.setToolTip(details or message)
        finished = min(
            len(STEPS),
            sum(
                1
                for name in self._rows
                if name is not ApplyStep.ROLLBACK and self.step_state(name) in FINISHED_STATES
            ),
        )
        self.progress.setValue(finished)
        if state is StepState.RUNNING:
            self.progress.setFormat(f"Step {min(finished + 1, len(STEPS))} of {len(STEPS)}: {title}")

    def step_state(self, step: ApplyStep) -> str:
        """The state shown for ``step`` (a StepState value), "" before it was listed."""
        item = self._rows.get(step)
        return str(item.data(Qt.ItemDataRole.UserRole)) if item else ""

    # -- running ----------------------------------------------------------------------
    def start(self) -> None:
        from sambatune.conf.apply import ApplyRequest, apply_config

        if self.plan_task is not None:  # the check holds the server's lock: wait for it
            self._start_when_planned = True
            self.apply_button.setText("Checking…")
            return
        allow_restart = self.allow_restart.isChecked()
        self.pages.setCurrentIndex(1)
        self.apply_button.hide()
        session = self.session
        path, original, candidate = self.path, self.original, self.candidate
        summary = self.summary.text().strip() or "changed in SambaTune"
        self.heading.setText(
            f"<b>{html.escape(summary)}</b> — {html.escape(path)} on "
            f"{html.escape(session.profile.target_label)}"
        )
        self.progress.setFormat(f"Step 1 of {len(STEPS)}: {STEP_TITLES[STEPS[0]]}")

        # The pipeline gets a token of its own: cancelling the task itself would drop
        # the outcome the pipeline still returns (it finishes, or rolls back, once the
        # new file is in place), and the admin must see that outcome.
        stop = self.cancel

        def work(report: Any, _task_cancel: CancelToken) -> ApplyOutcome:
            transport = session.require_transport()
            sudo = session.prepare_root(transport, path, stop)
            request = ApplyRequest(
                path, original, candidate, summary=summary, sudo=sudo, allow_restart=allow_restart
            )
            return apply_config(
                transport,
                request,
                on_event=report,
                cancel=stop,
                reconnect=session.reconnector(transport),
                journal=session.apply_journal(transport, path),
            )

        self.task = session.run_task(
            "Apply smb.conf",
            work,
            on_event=self._event,
            on_done=self._done,
            on_failed=self._failed,
            on_cancelled=self._stopped_early,
        )

    def _event(self, event: StepEvent) -> None:
        self._mark(event.step, event.state, event.message, event.details)

    def _done(self, outcome: ApplyOutcome) -> None:
        self.outcome = outcome
        label, background, color = OUTCOME_STYLES.get(outcome.status, ("Done", "#eee", "#333"))
        self.result_label.setStyleSheet(
            f"background:{background}; color:{color}; padding:8px;border-radius:4px;"
        )
        first, dot, rest = outcome.message.partition(". ")
        if first.startswith(label):  # "Applied and verified. …": the verdict says it already
            text = f"<b>{html.escape(first + dot.strip())}</b> {html.escape(rest)}"
        else:
            text = f"<b>{label}.</b> {html.escape(outcome.message)}"
        if outcome.warnings:
            # One per line: each is a sentence of its own (a path, what was cleaned up).
            text += "".join(f"<br>• {html.escape(w)}" for w in outcome.warnings)
        self.result_label.setText(text)
        self.result_label.show()
        self._show_details(outcome)
        self._finish()
        self._touched_live = True
        self.finished_outcome.emit(outcome)

    def _show_details(self, outcome: ApplyOutcome) -> None:
        """What the admin needs to act on: testparm's words, someone else's change, the log."""
        title, text = "", ""
        if outcome.live_diff:
            title = "Someone changed the live file after you opened it; their change:"
            text = outcome.live_diff
        elif outcome.testparm is not None and not outcome.testparm.ok:
            title = f"What testparm said about the new version (exit code {outcome.testparm.exit_code}):"
            text = "\n".join(outcome.testparm.errors + outcome.testparm.warnings)
        else:
            failed = [event for event in outcome.steps if event.state is StepState.FAILED]
            if failed and (failed[-1].details or failed[-1].message):
                title = f"What happened at “{failed[-1].title}”:"
                text = failed[-1].details or failed[-1].message
            elif outcome.live is LiveState.NEW:
                backup = (
                    f" (the previous version is kept as {PurePosixPath(outcome.backup.path).name})"
                    if outcome.backup is not None
                    else ""
                )
                title = f"Now live on the server{backup}:"
                text = self.diff.toPlainText()
        if not text:
            return
        self.details_title.setText(title)
        self.details_title.show()
        self.result_diff.show_diff(text)
        self.result_diff.show()
        self.filler.hide()

    def _failed(self, error: SambaTuneError) -> None:
        self._touched_live = True  # an error mid-pipeline: what is live is read again
        self.result_label.setStyleSheet("background:#fdecea; color:#611a15; padding:8px;")
        self.result_label.setText(f"<b>Failed.</b> {html.escape(error.message)}")
        self.result_label.show()
        if error.details:
            self.details_title.setText("Details:")
            self.details_title.show()
            self.result_diff.show_diff(error.details)
            self.result_diff.show()
            self.filler.hide()
        self._finish()

    def _stopped_early(self) -> None:
        """Cancelled while getting root, before the pipeline started: nothing changed."""
        label, background, color = OUTCOME_STYLES[ApplyStatus.CANCELLED]
        self.result_label.setStyleSheet(
            f"background:{background}; color:{color}; padding:8px;border-radius:4px;"
        )
        self.result_label.setText(f"<b>{label}.</b> Stopped before anything was changed.")
        self.result_label.show()
        self._finish()

    def _finish(self) -> None:
        self.task = None
        self.progress.hide()
        for step in list(self._rows):
            if self.step_state(step) == StepState.PENDING:
                self._mark(step, StepState.SKIPPED, "not run")
        self.cancel_button.hide()
        self.close_button.show()
        self.close_button.setDefault(True)

    def _cancel(self) -> None:
        if self.task is not None:
            # The pipeline honours cancel only until the swap; after that it completes.
            self.cancel.cancel()
            self.cancel_button.setEnabled(False)
            self.cancel_button.setText("Stopping…")
            self.cancel_button.setToolTip(
                "Steps stop before the swap; once the new file is in place SambaTune finishes or rolls back."
            )
        else:
            self.reject()

    def _tell_pages(self, _result: int) -> None:
        """The run may have changed the live file: the pages showing it read it again.

        Told when the dialog closes, so a question about unsaved edits in the editor
        comes after the admin read the result, not over it."""
        if self._touched_live:
            self._touched_live = False
            self.session.live_config_changed.emit(self.path, self.what)

    def reject(self) -> None:
        # Escape or the window's close button while the steps run: stop them, keep the
        # dialog so the admin sees where it ended.
        if self.task is not None:
            self._cancel()
            return
        if self.plan_task is not None:
            self.plan_task.cancel()
        super().reject()


def plan_html(plan: ApplyOutcome) -> str:
    """What the dry run found, for the review: reload or restart, and who it concerns."""
    if plan.status is not ApplyStatus.PLANNED:  # testparm refused it, or someone changed it
        return (
            f"<span style='color:#8a5300'><b>⚠ This change will not apply:</b></span> "
            f"{html.escape(plan.message)}"
        )
    later = [c for c in plan.changes if c.activation is Activation.NEW_CONNECTIONS]
    later_text = ""
    if later:
        later_text = (
            "<br>Clients that connect after the reload get "
            + html.escape(", ".join(c.name for c in later))
            + "; connected ones keep the old value until they reconnect."
        )
    if plan.activation is SmbdAction.NONE:
        untrusted = [w for w in plan.warnings if "does not trust" in w]
        if untrusted:
            return (
                "<span style='color:#b3261e'><b>⚠ The smbd serving this file is not trusted.</b></span> "
                + html.escape(untrusted[0])
            )
        return "smbd is not running for this file: it reads the new version when it starts."
    if plan.activation is SmbdAction.RELOAD:
        return (
            "<span style='color:#1e4620'><b>✔ A reload applies this change.</b></span> "
            "Connected clients stay connected." + later_text
        )
    who = plan.clients.sentence() if plan.clients else "Who is connected is not known."
    return (
        "<span style='color:#b3261e'><b>⚠ This change needs smbd to restart</b></span>, "
        "which disconnects every client. "
        f"<b>Connected now: {html.escape(who)}</b><br>Needs the restart: "
        + html.escape("; ".join(plan.restart_reasons))
        + later_text
    )


def _qcolor(text: str) -> Any:
    from PySide6.QtGui import QColor

    return QColor(text)
