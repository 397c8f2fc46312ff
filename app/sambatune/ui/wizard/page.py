"""The "Tuning wizard" tab: the core wizard (:mod:`sambatune.wizard`) with a face.

The steps are listed on the left, the current one is on the right, the buttons for
what comes next are at the bottom. Every step that talks to the server, the disk or
the database runs in a worker (``session.run_task``) with progress and Cancel; the
wizard writes each finished step to the database, so closing the window at any point
loses at most the step that was running.
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from sambatune.bench.events import Progress, RunFinished, RunStarted
from sambatune.bench.progress import ProgressTracker
from sambatune.cancellation import CancelToken
from sambatune.conf.apply import RUNNING, StepEvent
from sambatune.errors import InvalidInput, SambaTuneError
from sambatune.remote.survey import Survey
from sambatune.ui.file_places import remember, suggested
from sambatune.ui.session import ServerSession
from sambatune.ui.tasks import Task
from sambatune.ui.wizard.views import (
    SERIES_NAMES,
    FindingsView,
    FinishView,
    MeasureView,
    StartView,
    VerdictView,
)
from sambatune.wizard.change import activation_sentence, needs_restart
from sambatune.wizard.machine import (
    APPLY,
    BASELINE,
    CHOOSE,
    DECIDE,
    DONE,
    FINDINGS,
    FINISH,
    MEASURE,
    STEP_TITLES,
    SURVEY,
    VERDICT,
    TuningWizard,
)
from sambatune.wizard.store import WizardStore
from sambatune.wizard.verdict import decision_order

#: Each series' counted runs before and after the change, for the verdict's plot.
#: The list on the left; the wizard's stages in the order an admin meets them.
SHOWN_STEPS = (SURVEY, FINDINGS, BASELINE, CHOOSE, APPLY, MEASURE, VERDICT, DECIDE, DONE)
PAGE_TITLES = {
    "start": "Tuning wizard: one measured change at a time",
    "findings": "What the wizard found",
    "baseline": "Measuring the server as it is now",
    "change": "Applying the change and measuring again",
    "verdict": "Before and after",
    "finish": "Finished",
}


class WizardPage(QWidget):
    def __init__(self, session: ServerSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("wizardPage")
        self.session = session
        self.wizard: TuningWizard | None = None
        self.task: Task | None = None
        outer = QHBoxLayout(self)
        outer.setContentsMargins(8, 8, 8, 8)
        self.steps = QListWidget()
        self.steps.setObjectName("wizardSteps")
        self.steps.setFixedWidth(210)
        self.steps.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.steps.setSelectionMode(QListWidget.SelectionMode.NoSelection)
        outer.addWidget(self.steps)
        right = QVBoxLayout()
        self.title = QLabel()
        self.title.setObjectName("wizardTitle")
        self.title.setStyleSheet("font-size: 15pt; font-weight: 600;")
        right.addWidget(self.title)
        self.stack = QStackedWidget()
        self.start_view = StartView()
        self.findings_view = FindingsView()
        self.measure_view = MeasureView()
        self.verdict_view = VerdictView()
        self.finish_view = FinishView()
        for view in (
            self.start_view,
            self.findings_view,
            self.measure_view,
            self.verdict_view,
            self.finish_view,
        ):
            self.stack.addWidget(view)
        right.addWidget(self.stack, 1)
        bar = QHBoxLayout()
        # At every step: a wizard that cannot go on (a baseline that keeps failing, a
        # server that changed) must not block the page until the app restarts.
        self.discard_button = QPushButton("Discard this wizard…")
        self.discard_button.setObjectName("wizardDiscard")
        self.discard_button.setToolTip(
            "End this wizard here. smb.conf on the server stays as "
            "it is now; the wizard's record is kept, marked "
            "discarded."
        )
        self.discard_button.clicked.connect(self.ask_discard)
        bar.addWidget(self.discard_button)
        self.progress = QProgressBar()
        self.progress.setObjectName("wizardProgress")
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setMaximumWidth(220)
        bar.addWidget(self.progress)
        self.status = QLabel()
        self.status.setObjectName("wizardStatus")
        self.status.setWordWrap(True)
        bar.addWidget(self.status, 1)
        # While a step measures: which run of how many, the live figure, the time left
        # (counted down between events, redrawn at most four times a second).
        self.tracker = ProgressTracker(SERIES_NAMES)
        #: When the running apply step began (its line counts the seconds).
        self._step_started: float | None = None
        self.status_ticker = QTimer(self)
        self.status_ticker.setInterval(250)
        self.status_ticker.timeout.connect(self._show_progress)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("wizardCancel")
        self.cancel_button.clicked.connect(self.cancel)
        bar.addWidget(self.cancel_button)
        self.secondary = QPushButton()
        self.secondary.setObjectName("wizardSecondary")
        bar.addWidget(self.secondary)
        self.primary = QPushButton()
        self.primary.setObjectName("wizardPrimary")
        self.primary.setDefault(True)
        bar.addWidget(self.primary)
        right.addLayout(bar)
        outer.addLayout(right, 1)
        self.last_report: str | None = None
        self._primary_action: Any = None
        self._secondary_action: Any = None
        self.primary.clicked.connect(lambda: self._primary_action and self._primary_action())
        self.secondary.clicked.connect(lambda: self._secondary_action and self._secondary_action())
        self.findings_view.list.currentRowChanged.connect(lambda _row: self._update_choose_button())
        self.start_view.unfinished.currentRowChanged.connect(lambda _row: self._update_discard_button())
        self.show_start()

    # -- what is shown --------------------------------------------------------------------
    def _buttons(self, primary: tuple[str, Any] | None, secondary: tuple[str, Any] | None = None) -> None:
        for button, spec, slot in (
            (self.primary, primary, "_primary_action"),
            (self.secondary, secondary, "_secondary_action"),
        ):
            button.setVisible(spec is not None)
            if spec is not None:
                button.setText(spec[0])
                # A long label must never be clipped by the word-wrapped status beside it.
                button.setMinimumWidth(button.sizeHint().width())
            setattr(self, slot, spec[1] if spec else None)
        self.primary.setEnabled(True)
        self.secondary.setEnabled(True)
        self.cancel_button.setVisible(False)
        self.progress.setVisible(False)
        self._update_discard_button()

    def _update_discard_button(self) -> None:
        """ "Discard this wizard…" for the open one; on the start page, for the selected
        unfinished one. While a step runs, Cancel comes first."""
        wizard = self.wizard
        if wizard is not None:
            shown = wizard.stage != DONE
            self.discard_button.setText("Discard this wizard…")
        else:
            shown = self.start_view.selected_wizard() is not None
            self.discard_button.setText("Discard the selected wizard…")
        self.discard_button.setVisible(shown)
        self.discard_button.setEnabled(self.task is None)
        self.discard_button.setToolTip(
            "Cancel the running step first."
            if self.task is not None
            else "End the wizard here. smb.conf on the server stays as it is now; the wizard's "
            "record is kept, marked discarded."
        )

    def _page(self, name: str, view: QWidget) -> None:
        self.title.setText(PAGE_TITLES[name])
        self.stack.setCurrentWidget(view)
        self._refresh_steps()

    def _refresh_steps(self) -> None:
        stage = self.wizard.stage if self.wizard is not None else None
        self.steps.clear()
        current = SHOWN_STEPS.index(stage) if stage in SHOWN_STEPS else -1
        for index, step in enumerate(SHOWN_STEPS):
            done = stage is not None and (index < current or stage == DONE)
            mark = "✓" if done else ("▶" if index == current else "  ")
            item = QListWidgetItem(f"{mark}  {STEP_TITLES[step]}")
            if index == current and stage != DONE:
                font = item.font()
                font.setBold(True)
                item.setFont(font)
            elif not done:
                item.setForeground(self.palette().placeholderText())
            self.steps.addItem(item)
        if self.wizard is not None:
            self.steps.addItem(QListWidgetItem(""))
            tried = self.wizard.round
            self.steps.addItem(
                QListWidgetItem(
                    f"Wizard {self.wizard.id}: "
                    + (
                        "no change tried yet"
                        if not tried
                        else f"{tried} change{'s' if tried > 1 else ''} tried"
                    )
                )
            )

    def show_start(self) -> None:
        self.wizard = None
        self._page("start", self.start_view)
        self._buttons(("Start the wizard", self.start), ("Resume the selected wizard", self.resume))
        self.secondary.setEnabled(self.start_view.unfinished.count() > 0)
        self.status.setText("Check the test settings, then start.")

    def show_survey(self, survey: Survey) -> None:
        self.start_view.set_shares([str(s.get("name")) for s in survey.shares if not s.get("printable")])
        self.refresh_unfinished()

    def refresh_unfinished(self) -> None:
        server = self._server_label()

        def work(report: Any, cancel: CancelToken) -> Any:
            return WizardStore().summaries(server=server, unfinished=True)

        def done(found: Any) -> None:
            self.start_view.show_unfinished(found)
            if self.wizard is None:
                self.secondary.setEnabled(bool(found) and self.task is None)
            self._update_discard_button()

        self.session.run_task("Reading unfinished wizards", work, on_done=done)

    def show_stage(self) -> None:
        """The view for where the wizard is now (also after a resume)."""
        wizard = self.wizard
        if wizard is None:
            self.show_start()
            return
        stage = wizard.stage
        if stage in (SURVEY, FINDINGS):
            self._run("Looking for problems", self._look)
        elif stage in (BASELINE, CHOOSE):
            self._show_findings()
        elif stage in (APPLY, MEASURE, VERDICT):
            chosen = wizard.record.last(CHOOSE)
            self._page("change", self.measure_view)
            self.measure_view.begin(
                "The wizard stopped in the middle of this change. Continue: it looks at the live "
                "smb.conf and carries on from the last finished step.",
                chosen.data["diff"] if chosen else None,
            )
            applied = wizard.record.last(APPLY)
            if stage != APPLY and applied is not None:
                self.measure_view.applied_earlier(
                    f"Applied safely before the interruption: {applied.data.get('message')}"
                )
            self._buttons((f"Continue: {STEP_TITLES[stage].lower()}", self.apply_and_measure))
        elif stage == DECIDE:
            self._run(
                "Reading the measurements",
                lambda _report, _cancel: wizard.verdict_runs(),
                done=self._show_verdict,
            )
        elif stage == DONE:
            self._show_finish()

    def _show_findings(self) -> None:
        wizard = self.wizard
        assert wizard is not None
        self._page("findings", self.findings_view)
        count = len(wizard.applicable())
        if wizard.stage == BASELINE:
            hint = (
                f"The wizard found {len(wizard.findings)} things worth knowing; {count} of them "
                "(marked ●) propose a change to smb.conf it can apply. Read them through. "
                "Before changing anything, measure how fast the server is now: that baseline "
                "is what every change is compared with."
            )
            self._buttons(("Measure the baseline", self.measure_baseline))
        else:
            hint = (
                "Choose ONE change (marked ●) and apply it. The wizard shows the edit, applies "
                "it safely, and measures again with the same test. Findings marked ○ are for "
                "you to act on by hand or tell you what to measure."
                if count
                else "Nothing left that the wizard can change in smb.conf. Finish to get the report."
            )
            # The figures every next change is measured against, in sight while choosing.
            hint = f"{wizard.baseline_text()}. {hint}"
            self._buttons(
                ("Apply this change and measure", self.apply_and_measure),
                ("Finish and write the report", self.finish),
            )
            self._update_choose_button()
        self.findings_view.show_findings(wizard.findings, hint)
        judged = wizard.record.last(FINDINGS)
        self.status.setText(f"Judged as {judged.data.get('judged_as')}." if judged else "")

    def _update_choose_button(self) -> None:
        if self.wizard is not None and self.wizard.stage == CHOOSE and self.task is None:
            self.primary.setEnabled(self.findings_view.selected_is_applicable())

    def _show_verdict(self, runs: dict[str, tuple[list[float], list[float]]]) -> None:
        wizard = self.wizard
        assert wizard is not None and wizard.verdict is not None
        chosen = wizard.record.last(CHOOSE)
        assert chosen is not None
        self._page("verdict", self.verdict_view)
        self.verdict_view.show_verdict(wizard.verdict, chosen.data["summary"], runs)
        decisions = {
            "keep": ("Keep the change", lambda: self.decide(True)),
            "revert": ("Revert it", lambda: self.decide(False)),
        }
        self._buttons(*(decisions[d] for d in decision_order(wizard.verdict["recommendation"])))
        self.status.setText("Keep or revert: either way the next step is the next change.")

    def _show_finish(self) -> None:
        wizard = self.wizard
        assert wizard is not None
        finished = wizard.record.last(FINISH)
        assert finished is not None
        self._page("finish", self.finish_view)
        self.finish_view.show_finish(finished.data, wizard.round_outcomes())
        self._buttons(("Save the report…", self.save_report), ("Start a new wizard", self._new))
        self.status.setText(f"Wizard {wizard.id} is finished.")

    def _new(self) -> None:
        self.show_start()
        self.refresh_unfinished()

    # -- running steps ---------------------------------------------------------------------
    def _server_label(self) -> str:
        transport = self.session.transport
        return transport.label if transport is not None else self.session.profile.target_label

    def _run(self, name: str, work: Any, *, done: Any = None, changes_conf: bool = False) -> None:
        """Run a step in a worker. ``changes_conf``: the step may apply or revert smb.conf,
        and the other pages (the editor, smb.conf history) follow the live file after it."""
        self.primary.setVisible(False)
        self.secondary.setVisible(False)
        self.progress.setVisible(True)
        self.cancel_button.setVisible(True)
        self.cancel_button.setEnabled(True)
        self.progress.setRange(0, 0)
        self.status.setText(f"{name}…")
        self.tracker.reset(f"{name}…")
        self.status_ticker.start()
        wizard = self.wizard

        def finished(result: Any) -> None:
            self._end()
            (done or (lambda _result: self.show_stage()))(result)

        def ended() -> None:
            if changes_conf and wizard is not None and wizard.record.config_path:
                self.session.live_config_changed.emit(wizard.record.config_path, "the tuning wizard")

        self.task = self.session.run_task(
            name,
            work,
            on_event=self._on_event,
            on_done=finished,
            on_failed=self._failed,
            on_cancelled=self._cancelled,
            on_finished=ended,
        )
        self._update_discard_button()

    def _end(self) -> None:
        self.task = None
        self._step_started = None
        self.status_ticker.stop()
        self.progress.setRange(0, 1000)
        self.progress.setVisible(False)
        self.cancel_button.setVisible(False)
        self._update_discard_button()

    @property
    def running_step(self) -> str | None:
        """The step under way (for the question on quitting), or None."""
        return self.task.name if self.task is not None else None

    def _failed(self, error: SambaTuneError) -> None:
        self._end()
        self.session.failed.emit(error)
        # The test settings belong to the wizard: a baseline they cannot measure (a share
        # that does not exist, a wrong password) needs a new wizard.
        hint = (
            " Measure again, or discard this wizard and start one with other test settings."
            if self.wizard is not None and self.wizard.stage == BASELINE
            else ""
        )
        self._after_interruption(f"Stopped: {error.message}{hint}")

    def _cancelled(self) -> None:
        self._end()
        self._after_interruption("Cancelled. Nothing half-done was recorded; continue when ready.")

    def _after_interruption(self, message: str) -> None:
        if self.wizard is None:
            self.show_start()
        elif self.wizard.stage in (SURVEY, FINDINGS, DECIDE):
            # Repeating these is cheap and changes nothing: offer it instead of a blank page.
            self._buttons(("Try again", self.show_stage))
        else:
            self.show_stage()
        self.status.setText(message)

    def cancel(self) -> None:
        if self.task is not None:
            self.status_ticker.stop()
            self.status.setText("Cancelling: the agents stop and clean up…")
            self.cancel_button.setEnabled(False)
            self.task.cancel()

    def _on_event(self, event: Any) -> None:
        if isinstance(event, (StepEvent, RunStarted, tuple)):
            self._refresh_steps()
        self.tracker.observe(event)
        if isinstance(event, Progress):
            if event.fraction is None:
                self.progress.setRange(0, 0)
            else:
                self.progress.setRange(0, 1000)
                self.progress.setValue(int(event.fraction * 1000))
        elif isinstance(event, RunStarted):
            self._show_progress()
        elif isinstance(event, RunFinished):
            self.measure_view.add_run(event.record)
        elif isinstance(event, StepEvent):
            self.measure_view.apply_step(event.step, event.state, event.message)
            if event.state == RUNNING:
                self.tracker.message(f"{event.title}…")
                self._step_started = time.monotonic()
            else:
                self._step_started = None
            self._show_progress()
        elif isinstance(event, tuple) and event and event[0] == "diff":
            self.measure_view.show_diff(str(event[1]))
        elif isinstance(event, str):
            self.tracker.message(event)
            self._show_progress()

    def _show_progress(self) -> None:
        """The running step's line: run of how many, live figure, time left; during an
        apply step (a restart waits for smbd to answer), how long it has taken so far."""
        line = self.tracker.line()
        if line and self._step_started is not None:
            line += f" · {time.monotonic() - self._step_started:.0f} s"
        if self.task is not None and line and line != self.status.text():
            self.status.setText(line)

    def _transport_and_root(self, cancel: CancelToken) -> tuple[Any, bool]:
        transport = self.session.require_transport()
        path = self.session.config_path()
        return transport, self.session.prepare_root(transport, path, cancel)

    # -- the steps ----------------------------------------------------------------------------
    def start(self) -> None:
        try:
            spec = self.start_view.spec()
        except InvalidInput as error:
            self.session.failed.emit(error)
            return
        profile = self.session.profile
        session = self.session

        def work(report: Any, cancel: CancelToken) -> TuningWizard:
            transport, sudo = self._transport_and_root(cancel)
            wizard = TuningWizard.start(
                WizardStore(),
                transport,
                spec,
                config_path=profile.config_path or session.config_path(),
                sudo=sudo,
            )
            wizard.look(transport, cancel=cancel, on_event=report)
            return wizard

        self._run("Surveying the server and looking for problems", work, done=self._started)

    def _started(self, wizard: TuningWizard, resumed: bool = False) -> None:
        self.wizard = wizard
        self.show_stage()
        if resumed and self.task is None:
            self.status.setText(
                f"Wizard {wizard.id} resumed after its last finished step: "
                f"{STEP_TITLES[wizard.record.steps[-1].step].lower()}."
            )

    def resume(self) -> None:
        wizard_id = self.start_view.selected_wizard()
        if wizard_id is None:
            return
        password = self.start_view.password.text() or None

        def work(report: Any, cancel: CancelToken) -> TuningWizard:
            wizard = TuningWizard.resume(WizardStore(), wizard_id, password=password)
            wizard.look(self.session.require_transport(), cancel=cancel, on_event=report)
            return wizard

        self._run(
            f"Resuming wizard {wizard_id}", work, done=lambda wizard: self._started(wizard, resumed=True)
        )

    def _look(self, report: Any, cancel: CancelToken) -> TuningWizard:
        wizard = self.wizard
        assert wizard is not None
        wizard.look(self.session.require_transport(), cancel=cancel, on_event=report)
        return wizard

    def measure_baseline(self) -> None:
        wizard = self.wizard
        assert wizard is not None
        self._page("baseline", self.measure_view)
        self.measure_view.begin(
            f"The test: {wizard.measure_spec.describe()}. Nothing is changed on the server "
            "while it measures.",
            None,
        )

        def work(report: Any, cancel: CancelToken) -> Any:
            return wizard.measure_baseline(self.session.require_transport(), cancel=cancel, on_event=report)

        self._run("Measuring the baseline", work, done=lambda _result: self._baseline_done())

    def _baseline_done(self) -> None:
        self._show_findings()
        assert self.wizard is not None
        self.status.setText(f"{self.wizard.baseline_text()}. Now choose one change.")

    def apply_and_measure(self) -> None:
        """Choose (when at that step), apply, measure again and compare: each step recorded."""
        wizard = self.wizard
        assert wizard is not None
        index = self.findings_view.selected() if wizard.stage == CHOOSE else None
        if wizard.stage == CHOOSE and index is None:
            return
        if index is not None:
            activation = self.findings_view.findings[index].get("activation") or {}
        else:
            activation = wizard.pending_activation
        if needs_restart(activation):
            self._ask_restart(activation, lambda: self._apply_and_measure(index, allow_restart=True))
            return
        self._apply_and_measure(index, allow_restart=False)

    def _ask_restart(self, activation: dict[str, Any], then: Any) -> None:
        """A restart disconnects every client: the admin says yes to it, each time."""
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Restart smbd?",
            activation_sentence(activation) + "\n\nApply the change and restart smbd now?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setObjectName("restartQuestion")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.finished.connect(lambda button: then() if button == QMessageBox.StandardButton.Yes else None)
        box.open()

    def _apply_and_measure(self, index: int | None, *, allow_restart: bool) -> None:
        wizard = self.wizard
        assert wizard is not None
        self._page("change", self.measure_view)
        pending = wizard.record.last(CHOOSE) if wizard.stage != CHOOSE else None
        self.measure_view.begin(
            "The change goes through the safe steps listed below; then the same test runs again. "
            "If any safe step fails, the previous smb.conf is put back automatically.",
            pending.data["diff"] if pending else "",
        )

        def work(report: Any, cancel: CancelToken) -> Any:
            transport = self.session.require_transport()
            if wizard.stage == CHOOSE:
                assert index is not None
                chosen = wizard.choose(transport, index)
                report(("diff", chosen.data["diff"]))
            if wizard.stage == APPLY:
                self._transport_and_root(cancel)
                applied = wizard.apply(transport, cancel=cancel, on_event=report, allow_restart=allow_restart)
                if not applied.data["ok"]:
                    raise SambaTuneError(
                        f"The change was not applied: {applied.data['message']}",
                        details="smb.conf is unchanged; choose another change.",
                    )
            if wizard.stage == MEASURE:
                report("Measuring again with the same test…")
                wizard.measure_again(transport, cancel=cancel, on_event=report)
            if wizard.stage == VERDICT:
                wizard.compare()
            return wizard.verdict_runs()

        self._run("Applying the change and measuring again", work, done=self._show_verdict, changes_conf=True)

    def decide(self, keep: bool) -> None:
        wizard = self.wizard
        assert wizard is not None
        if not keep:
            self._page("change", self.measure_view)
            self.measure_view.begin("Putting the previous smb.conf back through the same safe steps.", None)

        def work(report: Any, cancel: CancelToken) -> TuningWizard:
            transport, _sudo = self._transport_and_root(cancel)
            wizard.decide(transport, keep, cancel=cancel, on_event=report)
            wizard.look(transport, cancel=cancel, on_event=report)
            return wizard

        def done(_wizard: TuningWizard) -> None:
            self.show_stage()
            self.status.setText(
                "Kept. The measurement after it is the new baseline."
                if keep
                else "Reverted: smb.conf is byte for byte what it was before the change."
            )

        self._run(
            "Keeping the change" if keep else "Reverting the change", work, done=done, changes_conf=not keep
        )

    # -- discarding ---------------------------------------------------------------------------
    def ask_discard(self) -> None:
        """Discard the open wizard (or the selected unfinished one), after asking."""
        if self.task is not None:
            return
        wizard = self.wizard
        wizard_id = wizard.id if wizard is not None else self.start_view.selected_wizard()
        if wizard_id is None:
            return
        left_live = wizard.left_live if wizard is not None else None
        stays = "smb.conf on the server stays exactly as it is now, live: discarding does not touch it."
        if left_live is not None:
            stays += (
                f" That includes the change “{left_live}”, which the "
                "wizard applied and you have not kept or reverted; to undo it, restore "
                "the backup made before it in smb.conf history."
            )
        elif wizard is not None and wizard.kept_changes():
            stays += " The changes you kept stay."
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Discard the wizard?",
            f"Discard wizard {wizard_id}?\n\n{stays}\n\nThe wizard's steps and measurements "
            "stay in the results database, marked discarded; it is no longer listed under "
            "unfinished wizards and cannot be continued.",
            QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setObjectName("discardWizardQuestion")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        discard = box.addButton(f"Discard wizard {wizard_id}", QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.finished.connect(
            lambda _result: self._discard(wizard_id) if box.clickedButton() is discard else None
        )
        box.open()

    def _discard(self, wizard_id: int) -> None:
        open_wizard = self.wizard if self.wizard is not None and self.wizard.id == wizard_id else None

        def work(report: Any, cancel: CancelToken) -> Any:
            wizard = open_wizard or TuningWizard.resume(WizardStore(), wizard_id)
            return wizard.discard()

        def done(_step: Any) -> None:
            self.show_start()
            self.refresh_unfinished()
            self.status.setText(f"Wizard {wizard_id} discarded. smb.conf was left as it is.")

        self._run(f"Discarding wizard {wizard_id}", work, done=done)

    def finish(self) -> None:
        wizard = self.wizard
        assert wizard is not None

        def work(report: Any, cancel: CancelToken) -> Any:
            return wizard.finish(self.session.require_transport())

        self._run("Finishing", work)

    def save_report(self, path: str | None = None) -> None:
        wizard = self.wizard
        assert wizard is not None
        if path is None:
            path, _filter = QFileDialog.getSaveFileName(
                self,
                "Save the wizard's report",
                suggested(f"sambatune-wizard-{wizard.id}.html"),
                "HTML report (*.html)",
            )
            if not path:
                return
            remember(path)

        def work(report: Any, cancel: CancelToken) -> str:
            from pathlib import Path

            Path(path).write_text(wizard.report_html(), encoding="utf-8")
            return str(path)

        def done(saved: str) -> None:
            self._show_finish()
            self.status.setText(f"Report saved: {saved}")
            self.last_report = saved

        self._run("Writing the report", work, done=done)
