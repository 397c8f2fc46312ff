"""The Fleet window's Roll out tab: one change, planned on every host, then rolled out
canary first and in waves, halted and put back on any failure (``fleet apply``'s GUI).

Plan is a dry run of the safe-apply pipeline on every host (nothing is touched); Roll out
asks once, then runs ``start_rollout`` on a worker and shows each step as it is recorded.
Stop ends the rollout between two host steps (never mid-swap); the record lets it be
resumed from Past rollouts, here or with ``sambatune fleet apply --resume``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from sambatune.cancellation import CancelToken
from sambatune.errors import SambaTuneError
from sambatune.fleet.change import Edit
from sambatune.fleet.rollout import (
    Rollout,
    RolloutEvent,
    RolloutOptions,
    RolloutPlan,
    plan_rollout,
    start_rollout,
)
from sambatune.fleet.rollout_store import RolloutRecord, RolloutStatus, RolloutStore, RolloutSummary
from sambatune.ui.fleet.change_form import ChangeForm
from sambatune.ui.fleet.context import FleetSource, LoadedFleet
from sambatune.ui.fleet.rollout_views import (
    RolloutHostsTable,
    add_timeline_row,
    outcome_banner,
    outcome_text,
    set_banner,
    show_timeline,
    timeline_table,
)
from sambatune.ui.tables import SelectionMode, read_only_table
from sambatune.ui.tasks import Report, Task, TaskRunner

PAST_COLUMNS = ("Rollout", "Status", "Started (UTC)", "Hosts", "Changed", "Change", "Why it ended")
RESUMABLE = frozenset({RolloutStatus.INTERRUPTED, RolloutStatus.RUNNING, RolloutStatus.HALTING})


class RolloutTab(QWidget):
    def __init__(self, runner: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.loaded: LoadedFleet | None = None
        self.plan: RolloutPlan | None = None
        self.planned_for: tuple[list[Edit], RolloutOptions] | None = None
        self.record: RolloutRecord | None = None
        self.task: Task | None = None
        self.summaries: list[RolloutSummary] = []

        layout = QVBoxLayout(self)
        self.form = ChangeForm()
        self.form.changed.connect(self._form_changed)
        layout.addWidget(self.form)

        buttons = QHBoxLayout()
        self.plan_button = QPushButton("Plan")
        self.plan_button.setObjectName("fleetPlanButton")
        self.plan_button.setToolTip(
            "A dry run on every host: testparm, the diff, reload or restart. Nothing is changed."
        )
        self.plan_button.clicked.connect(self.start_plan)
        self.rollout_button = QPushButton("Roll out…")
        self.rollout_button.setObjectName("fleetRolloutButton")
        self.rollout_button.setEnabled(False)
        self.rollout_button.clicked.connect(self.confirm_rollout)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("fleetRolloutStop")
        self.stop_button.setToolTip("Stop after the hosts being changed now are checked; resume it later")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        self.status = QLabel("Type the change, then Plan.")
        self.status.setObjectName("fleetRolloutStatus")
        for button in (self.plan_button, self.rollout_button, self.stop_button):
            buttons.addWidget(button)
        buttons.addWidget(self.status, 1)
        layout.addLayout(buttons)

        self.banner = outcome_banner()
        layout.addWidget(self.banner)

        self.inner = QTabWidget()
        self.inner.setObjectName("fleetRolloutInner")
        current = QSplitter(Qt.Orientation.Horizontal)
        self.hosts = RolloutHostsTable()
        current.addWidget(self.hosts.table)
        self.timeline = timeline_table()
        current.addWidget(self.timeline)
        current.setStretchFactor(0, 3)
        current.setStretchFactor(1, 2)
        self.inner.addTab(current, "This rollout")
        past = QWidget()
        past_layout = QVBoxLayout(past)
        self.past = read_only_table(PAST_COLUMNS, "fleetPastRollouts", select=SelectionMode.SingleSelection)
        self.past.itemSelectionChanged.connect(self._past_selected)
        past_layout.addWidget(self.past, 1)
        past_buttons = QHBoxLayout()
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.refresh_past)
        self.resume_button = QPushButton("Resume")
        self.resume_button.setObjectName("fleetResumeButton")
        self.resume_button.setToolTip("Continue an interrupted rollout where it stopped")
        self.resume_button.setEnabled(False)
        self.resume_button.clicked.connect(self.resume_selected)
        self.show_button = QPushButton("Show")
        self.show_button.setToolTip("Show this rollout's hosts and timeline")
        self.show_button.setEnabled(False)
        self.show_button.clicked.connect(self.show_selected)
        past_buttons.addWidget(self.refresh_button)
        past_buttons.addWidget(self.show_button)
        past_buttons.addWidget(self.resume_button)
        past_buttons.addStretch(1)
        past_layout.addLayout(past_buttons)
        self.inner.addTab(past, "Past rollouts")
        layout.addWidget(self.inner, 1)
        self.refresh_past()

    # -- the fleet and the form -----------------------------------------------------
    def set_fleet(self, loaded: LoadedFleet) -> None:
        self.loaded = loaded
        self.form.set_hosts(list(loaded.fleet.names))
        self._forget_plan()

    def _form_changed(self) -> None:
        if self.plan is not None and not self.busy:
            self._forget_plan()
            self.status.setText("The change or its options changed: Plan again.")

    def _forget_plan(self) -> None:
        self.plan = None
        self.planned_for = None
        self.rollout_button.setEnabled(False)

    @property
    def busy(self) -> bool:
        # Until finished() has run here, not merely until the worker returned.
        return self.task is not None

    def _busy(self, on: bool) -> None:
        self.plan_button.setEnabled(not on)
        self.rollout_button.setEnabled(not on and self.plan is not None and not self.plan.refusals)
        self.stop_button.setEnabled(on)
        self.resume_button.setEnabled(not on and self._selected_resumable() is not None)

    # -- plan -----------------------------------------------------------------------
    def start_plan(self) -> None:
        if self.loaded is None or self.busy:
            return
        try:
            edits, options = self.form.edits(), self.form.options()
        except SambaTuneError as error:
            self.status.setText(error.message)
            return
        loaded = self.loaded
        self._forget_plan()
        self.banner.setVisible(False)
        self.inner.setCurrentIndex(0)
        self.timeline.setRowCount(0)
        self.status.setText(f"Planning on {len(loaded.hosts)} hosts (a dry run: nothing is changed)…")

        def work(_report: Report, cancel: CancelToken) -> RolloutPlan:
            return plan_rollout(loaded.hosts, edits, options, connector=loaded.connect, cancel=cancel)

        def done(plan: RolloutPlan) -> None:
            self.plan = plan
            self.planned_for = (edits, options)
            self.hosts.show_plan(plan)
            self.status.setText(self._plan_sentence(plan))
            if plan.refusals:
                reasons = "; ".join(f"{name}: {why}" for name, why in plan.refusals.items())
                set_banner(self.banner, "error", f"This change cannot be rolled out as it is: {reasons}")

        self._run(work, "Fleet rollout plan", on_done=done)

    def _plan_sentence(self, plan: RolloutPlan) -> str:
        if plan.refusals:
            return "The plan refuses: nothing would be changed. See the hosts marked refused."
        if not plan.to_change:
            return "Every host already reads this change: nothing to roll out."
        restarts = [h.name for h in plan.to_change if h.restart_reasons]
        how = f"{len(restarts)} need a restart of smbd" if restarts else "each takes it with a reload"
        return f"Planned: {len(plan.to_change)} host(s) to change, {how}. Nothing changed yet."

    # -- roll out -------------------------------------------------------------------
    def confirm_rollout(self) -> None:
        if self.plan is None or self.planned_for is None or self.plan.refusals or self.busy:
            return
        plan = self.plan
        edits, options = self.planned_for
        canary = plan.hosts[[h.wave for h in plan.hosts].index(0)] if plan.to_change else None
        waves = sorted({h.wave for h in plan.to_change if h.wave})
        lines = [f"Change: {'; '.join(e.describe() for e in edits)}"]
        if canary is not None:
            measured = "measured before and after" if options.measure.value != "none" else "not measured"
            lines.append(
                f"First the canary {canary.name} ({measured}), "
                f"then {len(waves)} wave(s) of up to {options.wave} hosts."
            )
        restarts = [h for h in plan.to_change if h.restart_reasons]
        if restarts:
            lines.append(
                "smbd restarts on: "
                + "; ".join(f"{h.name} ({h.clients or 'nobody connected now'})" for h in restarts)
            )
            lines.append("A restart ends every client's connection to that server.")
        else:
            lines.append("Every host takes it with a reload: open connections stay.")
        lines.append("Any failure halts the rollout and puts every host it changed back.")
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Roll out the change",
            f"Roll this change out to {len(plan.to_change)} host(s)?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setObjectName("fleetRolloutConfirm")
        box.setInformativeText("\n".join(lines))
        box.button(QMessageBox.StandardButton.Yes).setText("Roll out")
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def answered(button: int) -> None:
            if button == QMessageBox.StandardButton.Yes:
                self.start_rollout()

        box.finished.connect(answered)
        box.open()

    def start_rollout(self) -> None:
        if self.loaded is None or self.plan is None or self.planned_for is None or self.busy:
            return
        loaded, plan = self.loaded, self.plan
        edits, options = self.planned_for
        self.timeline.setRowCount(0)
        self.banner.setVisible(False)
        self.status.setText("Rolling out…")

        def work(report: Report, cancel: CancelToken) -> RolloutRecord:
            return start_rollout(
                plan,
                edits,
                options,
                loaded.source.to_record(),
                {h.name: h for h in loaded.hosts},
                loaded.connect,
                RolloutStore(),
                on_event=report,
                cancel=cancel,
            )

        self._forget_plan()  # a plan is used once: the hosts' files change under it
        self._run(work, "Fleet rollout", on_done=self._ended, on_event=self._event)

    def resume_selected(self) -> None:
        summary = self._selected_resumable()
        if summary is None or self.busy:
            return
        rollout_id = summary.id
        known_hosts = self.loaded.source.known_hosts if self.loaded is not None else None
        vault = self.loaded.source.vault if self.loaded is not None else None
        self.inner.setCurrentIndex(0)
        self.timeline.setRowCount(0)
        self.banner.setVisible(False)
        self.status.setText(f"Resuming rollout {rollout_id}…")

        def work(report: Report, cancel: CancelToken) -> RolloutRecord:
            store = RolloutStore()
            record = store.load(rollout_id)
            source = FleetSource.from_record(record.source)
            if source.known_hosts is None and known_hosts is not None:
                source = replace(source, known_hosts=known_hosts)
            source = replace(source, vault=vault)
            loaded = LoadedFleet(source, source.load())
            rollout = Rollout(
                record,
                {h.name: h for h in loaded.hosts},
                loaded.connect,
                store,
                on_event=report,
                cancel=cancel,
            )
            return rollout.run()

        self._run(work, "Fleet rollout resume", on_done=self._ended, on_event=self._event)

    def stop(self) -> None:
        if self.busy and self.task is not None:
            self.task.cancel()
            self.status.setText("Stopping after the hosts being changed now are checked…")

    def _event(self, event: Any) -> None:
        if not isinstance(event, RolloutEvent):
            return
        import time

        add_timeline_row(self.timeline, time.strftime("%H:%M:%S"), event.host, event.what, event.message)
        self.hosts.follow(event)
        self.status.setText(f"{event.host + ': ' if event.host else ''}{event.what}")

    def _ended(self, record: RolloutRecord) -> None:
        self.record = record
        self.hosts.show_record(record)
        show_timeline(self.timeline, record)
        kind, text = outcome_text(record)
        set_banner(self.banner, kind, text)
        self.status.setText(f"Rollout {record.id}: {record.status.value}.")

    # -- running work ---------------------------------------------------------------
    def _run(self, work: Any, name: str, *, on_done: Any, on_event: Any = None) -> None:
        self._busy(True)

        def failed(error: SambaTuneError) -> None:
            self.status.setText(error.message)
            set_banner(self.banner, "error", error.message)

        def cancelled() -> None:
            self.status.setText("Stopped.")

        def finished() -> None:
            self.task = None
            self._busy(False)
            self.refresh_past()

        self.task = self.runner.start(
            work,
            name=name,
            on_event=on_event,
            on_done=on_done,
            on_failed=failed,
            on_cancelled=cancelled,
            on_finished=finished,
        )

    # -- past rollouts --------------------------------------------------------------
    def refresh_past(self) -> None:
        self.runner.start(
            lambda _report, _cancel: RolloutStore().summaries(),
            name="Fleet rollouts on record",
            on_done=self._show_past,
        )

    def _show_past(self, summaries: list[RolloutSummary]) -> None:
        self.summaries = summaries
        self.past.setRowCount(len(summaries))
        for row, summary in enumerate(summaries):
            values = (
                str(summary.id),
                summary.status,
                summary.created_at[:19].replace("T", " "),
                str(summary.hosts),
                str(summary.applied),
                "; ".join(summary.edits),
                summary.reason,
            )
            for column, text in enumerate(values):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.past.setItem(row, column, item)
        self.past.resizeColumnsToContents()
        self._past_selected()

    def _selected_summary(self) -> RolloutSummary | None:
        row = self.past.currentRow()
        return self.summaries[row] if 0 <= row < len(self.summaries) else None

    def _selected_resumable(self) -> RolloutSummary | None:
        summary = self._selected_summary()
        # One a SambaTune runs now (this one or another) is not resumed twice.
        resumable = summary is not None and summary.status in RESUMABLE and not summary.running_now
        return summary if resumable else None

    def _past_selected(self) -> None:
        self.resume_button.setEnabled(not self.busy and self._selected_resumable() is not None)
        self.show_button.setEnabled(self._selected_summary() is not None)

    def show_selected(self) -> None:
        summary = self._selected_summary()
        if summary is None:
            return
        rollout_id = summary.id

        def shown(record: RolloutRecord) -> None:
            self.inner.setCurrentIndex(0)
            self._ended(record)

        def failed(error: SambaTuneError) -> None:
            self.status.setText(error.message)

        self.runner.start(
            lambda _report, _cancel: RolloutStore().load_shown(rollout_id),
            name="Fleet rollout record",
            on_done=shown,
            on_failed=failed,
        )
