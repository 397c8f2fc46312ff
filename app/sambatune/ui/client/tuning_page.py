""" "Tune this computer": plan the admin's own TCP window and MTU towards one server, see
why, dry-run, apply with a backup first, and restore.

The page lives in each server's workspace because everything it measures (RTT, path
MTU) is measured towards *that* server. All reading, measuring, writing and file work
runs in ``TaskRunner`` tasks; the GUI thread only lays out results. The decisions are
the core's (``sambatune.client``): this module turns clicks into requests and results
into widgets.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QShowEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from sambatune.cancellation import CancelToken
from sambatune.client.apply import ApplyResult
from sambatune.client.backups import BackupStore
from sambatune.client.plan import ClientPlan
from sambatune.client.reports import (
    RESTART_SENTENCE,
    TAKES_EFFECT,
    backup_text,
    changes_sentence,
    plan_diff_text,
    result_text,
)
from sambatune.client.snapshot import ClientSnapshot, SystemReading, read_system
from sambatune.client.system import ClientSystem
from sambatune.client.window import format_rtt
from sambatune.errors import SambaTuneError
from sambatune.progress import Progress
from sambatune.ui.client.backups_view import BackupsView
from sambatune.ui.client.bdp_calculator import BdpCalculator
from sambatune.ui.client.check_box import BeforeAfterBox, local_time
from sambatune.ui.client.plan_inputs import (
    PlanInputs,
    PlanTarget,
    bandwidth_input_text,
    rtt_input_text,
)
from sambatune.ui.client.plan_view import PlanView, os_short_name
from sambatune.ui.client.system_view import SystemView
from sambatune.ui.diff_view import DiffView
from sambatune.ui.file_places import remember, suggested
from sambatune.ui.tasks import Task, TaskRunner
from sambatune.units import format_bits
from sambatune.wizard.client_check import CheckStore, ClientCheck

NOTICE_STYLES = {
    "info": "background:#e8f4fd; color:#0d3c61; border:1px solid #b6dcfb;",
    "warning": "background:#fff4e5; color:#663c00; border:1px solid #ffd8a8;",
    "success": "background:#edf7ed; color:#1e4620; border:1px solid #b7dfb9;",
    "error": "background:#fdecea; color:#611a15; border:1px solid #f5c2c0;",
}

SystemFactory = Callable[[str | None], ClientSystem]


def _default_factory(profile: str | None) -> ClientSystem:
    from sambatune.client.system import system_for

    return system_for(profile)


def _monospace() -> QFont:
    font = QFont("monospace")
    font.setStyleHint(QFont.StyleHint.Monospace)
    return font


class ClientTuningPage(QWidget):
    """The "Tune this computer" tab of a server's workspace."""

    failed = Signal(object)
    #: A plan was made after a failed attempt: the message of that failure.
    recovered = Signal(str)
    #: A plan is on screen (tests and the workspace may wait for it).
    plan_shown = Signal(object)
    #: An apply, restore or dry run finished (its ApplyResult).
    result_shown = Signal(object)

    def __init__(
        self,
        runner: TaskRunner,
        target: Callable[[], PlanTarget | None] = lambda: None,
        *,
        system_factory: SystemFactory | None = None,
        store: BackupStore | None = None,
        check_store: CheckStore | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("clientTuningPage")
        self.runner = runner
        self.target_provider = target
        self.system_factory = system_factory or _default_factory
        # The default store makes its folder: that happens in a worker, not here.
        self.store_factory: Callable[[], BackupStore] = (lambda: store) if store is not None else BackupStore
        self.check_store_factory: Callable[[], CheckStore] = (
            (lambda: check_store) if check_store is not None else CheckStore
        )
        self.system: ClientSystem | None = None
        self.snapshot: ClientSnapshot | None = None
        self.elevation: str | None = None
        self.plan: ClientPlan | None = None
        self.plan_applied = False
        self.last_result: ApplyResult | None = None
        self.task: Task | None = None
        self.confirm_box: QMessageBox | None = None
        self._loaded_once = False
        #: The message of the last plan attempt that failed, until a plan is made.
        self._plan_error: str | None = None
        self._build()
        self.inputs.set_target(self.target_provider())
        self._update_buttons()

    # -- layout ------------------------------------------------------------------------
    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(12, 8, 12, 8)
        outer.setSpacing(6)

        self.inputs = PlanInputs()
        self.inputs.profile_changed.connect(self._profile_changed)
        self.inputs.plan_requested.connect(self.make_plan)
        self.inputs.bandwidth_file_chosen.connect(self.load_bandwidth_file)
        self.profile = self.inputs.profile
        outer.addWidget(self.inputs)

        self.banner = QLabel()
        self.banner.setObjectName("profileBanner")
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet(NOTICE_STYLES["warning"] + "border-radius:4px; padding:6px;")
        self.banner.hide()
        outer.addWidget(self.banner)

        progress_row = QHBoxLayout()
        self.progress = QProgressBar()
        self.progress.setObjectName("clientProgress")
        self.progress.setRange(0, 100)
        self.progress.setMaximumWidth(220)
        progress_row.addWidget(self.progress)
        self.progress_label = QLabel()
        self.progress_label.setObjectName("clientProgressLabel")
        progress_row.addWidget(self.progress_label, 1)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("clientCancelButton")
        self.cancel_button.clicked.connect(self.cancel)
        progress_row.addWidget(self.cancel_button)
        self.progress_holder = QWidget()
        self.progress_holder.setLayout(progress_row)
        progress_row.setContentsMargins(0, 0, 0, 0)
        self.progress_holder.hide()
        outer.addWidget(self.progress_holder)

        self.tabs = QTabWidget()
        self.tabs.setObjectName("clientTabs")
        self.plan_view = PlanView()
        self.check_box = BeforeAfterBox(
            self.runner, store_factory=self.check_store_factory, backups_factory=self.store_factory
        )
        self.check_box.busy_changed.connect(self._update_buttons)
        # A measurement answers the notice that asked for it ("waits for the after one").
        self.check_box.measured.connect(lambda _measured: self._set_notice("info", ""))
        self.plan_view.add_footer(self.check_box)
        self.tabs.addTab(self.plan_view, "Plan")
        changes = QSplitter(Qt.Orientation.Vertical)
        self.diff = DiffView()
        self.diff.setObjectName("clientDiff")
        self.diff.setPlaceholderText("Make a plan to see what it would change.")
        changes.addWidget(self.diff)
        self.output = QPlainTextEdit()
        self.output.setObjectName("clientOutput")
        self.output.setReadOnly(True)
        self.output.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.output.setFont(_monospace())
        self.output.setPlaceholderText(
            "Dry run shows here exactly what would be written or run; after Apply or Restore, what was done."
        )
        changes.addWidget(self.output)
        changes.setSizes([170, 370])
        self.tabs.addTab(changes, "Changes and dry run")
        self.changes_tab = changes
        self.system_view = SystemView()
        self.tabs.addTab(self.system_view, "This computer")
        self.backups = BackupsView()
        self.backups.refresh_requested.connect(self.load_backups)
        self.backups.details_requested.connect(self._load_backup_details)
        self.backups.restore_requested.connect(self.restore)
        self.tabs.addTab(self.backups, "Backups")
        self.calculator = BdpCalculator()
        self.tabs.addTab(self.calculator, "Bandwidth-delay calculator")
        outer.addWidget(self.tabs, 1)

        self.notice = QLabel()
        self.notice.setObjectName("clientNotice")
        self.notice.setWordWrap(True)
        self.notice.hide()
        outer.addWidget(self.notice)
        bottom = QHBoxLayout()
        bottom.addStretch(1)
        self.save_button = QPushButton("Save plan…")
        self.save_button.setObjectName("savePlanButton")
        self.save_button.clicked.connect(self._choose_plan_file)
        bottom.addWidget(self.save_button)
        self.save_reg_button = QPushButton("Save .reg file…")
        self.save_reg_button.setObjectName("saveRegButton")
        self.save_reg_button.setToolTip(
            "The registry part of the plan, to import on that Windows machine (regedit or 'reg import')."
        )
        self.save_reg_button.clicked.connect(self._choose_reg_file)
        bottom.addWidget(self.save_reg_button)
        self.dry_run_button = QPushButton("Dry run")
        self.dry_run_button.setObjectName("dryRunButton")
        self.dry_run_button.setToolTip("Show exactly what would be written or run; change nothing.")
        self.dry_run_button.clicked.connect(self.dry_run)
        bottom.addWidget(self.dry_run_button)
        self.apply_button = QPushButton("Apply…")
        self.apply_button.setObjectName("applyButton")
        self.apply_button.clicked.connect(self.confirm_apply)
        bottom.addWidget(self.apply_button)
        outer.addLayout(bottom)

    # -- state -----------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        """Planning, applying, reading or measuring: one thing at a time on this page."""
        return self.task is not None or self.check_box.busy

    @property
    def forced(self) -> bool:
        """True when planning for another system (nothing here can be read or applied)."""
        if self.system is not None:
            return not self.system.os.detected or self.system.apply_blocker() is not None
        return self.profile.currentData() is not None

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._loaded_once:
            self._loaded_once = True
            self.refresh_system()
            self.load_backups()
            self.load_waiting_check()

    def _update_buttons(self) -> None:
        has_plan = self.plan is not None
        changes = bool(self.plan and self.plan.actionable())
        busy = self.busy
        self.inputs.set_busy(busy)
        self.check_box.set_blocked(self.task is not None)
        self.dry_run_button.setEnabled(has_plan and changes and not busy)
        self.save_button.setEnabled(has_plan and not busy)
        reg = bool(self.plan and self.plan.os.is_windows and self.plan.reg_file() is not None)
        self.save_reg_button.setVisible(reg)
        self.save_reg_button.setEnabled(reg and not busy)
        self.backups.set_busy(busy)
        can, why = self._can_apply()
        self.apply_button.setEnabled(can and not busy)
        self.apply_button.setToolTip(why)
        self.apply_button.setText(
            "Apply as administrator…"
            if can and self.snapshot is not None and not self.snapshot.admin
            else "Apply…"
        )

    def _can_apply(self) -> tuple[bool, str]:
        from sambatune.client.elevation import rights_advice

        if self.plan is None:
            return False, "Make a plan first."
        if self.forced:
            return False, ("This plan is for another system; save it (or its .reg file) and apply it there.")
        if not self.plan.actionable():
            return False, "Nothing to change."
        if self.plan_applied:
            return False, "This plan was applied; make a new plan to compare again."
        if self.snapshot is not None and not self.snapshot.admin:
            return self.elevation is not None, rights_advice(self.elevation)
        return True, "Back up the current values, then write the planned ones."

    def _mark_missing(self, error: SambaTuneError) -> None:
        """A figure the plan needs is missing: say so at its field, not only in the bar."""
        self._plan_error = error.message
        field = getattr(error, "field", None)
        if field in ("bandwidth", "rtt"):
            getattr(self.inputs, field).show_error(error.message)

    def _set_notice(self, kind: str, text: str) -> None:
        self.notice.setText(text)
        self.notice.setStyleSheet(NOTICE_STYLES[kind] + "border-radius:4px; padding:4px 6px;")
        self.notice.setVisible(bool(text))

    def _start(
        self,
        name: str,
        work: Callable[[Callable[[Any], None], CancelToken], Any],
        *,
        on_done: Callable[[Any], None],
        on_event: Callable[[Any], None] | None = None,
        on_failed: Callable[[SambaTuneError], None] | None = None,
    ) -> None:
        self.progress.setRange(0, 0)
        self.progress_label.setText(f"{name}…")
        self.progress_holder.show()

        def finished() -> None:
            self.task = None
            self.progress_holder.hide()
            self._update_buttons()

        def failed(error: SambaTuneError) -> None:
            if on_failed is not None:
                on_failed(error)
            self._set_notice("error", f"{name} failed: {error.message}")
            self.failed.emit(error)

        def cancelled() -> None:
            self._set_notice("info", f"{name}: cancelled; nothing more was done.")

        self.task = self.runner.start(
            work,
            name=name,
            on_event=on_event or self._progress,
            on_done=on_done,
            on_failed=failed,
            on_cancelled=cancelled,
            on_finished=finished,
        )
        self._update_buttons()

    def _progress(self, event: Progress) -> None:
        if event.fraction is None:
            self.progress.setRange(0, 0)
        else:
            self.progress.setRange(0, 100)
            self.progress.setValue(int(event.fraction * 100))
        self.progress_label.setText(event.message)

    def cancel(self) -> None:
        if self.task is not None:
            self.progress_label.setText("Cancelling…")
            self.task.cancel()

    # -- this computer -----------------------------------------------------------------
    def refresh_system(self) -> None:
        """Read this computer (or the chosen profile): OS, interfaces, current values."""
        if self.busy:
            return
        profile = self.inputs.profile_key()
        factory = self.system_factory
        target = self.target_provider()

        def work(report: Callable[[Any], None], cancel: CancelToken) -> SystemReading:
            report(Progress(None, "reading the settings"))
            return read_system(factory(profile), target.host if target else None)

        self._start("Reading this computer", work, on_done=self._system_read)

    def _system_read(self, read: SystemReading) -> None:
        from sambatune.client.elevation import rights_advice

        self.system, self.snapshot, self.elevation = read.system, read.snapshot, read.elevation
        system = read.system
        target = self.target_provider()
        self.system_view.show_snapshot(
            read.snapshot, read.towards, target.label if target else None, rights_advice(read.elevation)
        )
        if self.inputs.profile_key() is None:
            self.inputs.set_this_computer(system.os.name)
        self.tabs.setTabText(
            self.tabs.indexOf(self.system_view),
            "This computer" if not self.forced else f"{os_short_name(system.os)} profile",
        )
        if self.forced:
            self.banner.setText(
                f"Planning for {system.os.name}: another system, not this computer. Nothing is "
                "read or changed here; the interface is an example. Save the plan (or its .reg "
                "file) and apply it on that machine."
            )
            self.banner.show()
        else:
            self.banner.hide()
        self._update_buttons()

    def _profile_changed(self) -> None:
        self.system = None
        self.plan = None
        self.plan_applied = False
        self.plan_view.clear("No plan yet for this choice: press Make plan.")
        self.check_box.show_plan(None)
        self.diff.clear()
        self.output.clear()
        self._set_notice("info", "")
        if self._loaded_once:
            self.refresh_system()
        self._update_buttons()

    # -- planning --------------------------------------------------------------------
    def make_plan(self) -> None:
        if self.busy:
            return
        self.inputs.set_target(self.target_provider())
        request = self.inputs.request()
        if request is None:
            return
        profile = self.inputs.profile_key()
        factory = self.system_factory

        def work(report: Callable[[Any], None], cancel: CancelToken) -> SystemReading:
            from sambatune.client.plan_store import PlanStore
            from sambatune.client.planner import make_plan

            system = factory(profile)
            plan = make_plan(system, request, cancel, report)
            # Kept by id, as 'client plan' keeps it: 'client check PLAN_ID' finds it too.
            PlanStore().save(plan)
            report(Progress(0.95, "reading the current values"))
            read = read_system(system, request.server)
            read.plan = plan
            read.towards = plan.interface
            return read

        self._set_notice("info", "")
        self._start("Planning", work, on_done=self._planned, on_failed=self._mark_missing)

    def _planned(self, read: SystemReading) -> None:
        assert read.plan is not None
        self._system_read(read)
        self.plan = plan = read.plan
        self.plan_applied = False
        self.plan_view.show_plan(plan, self._summary_html(plan))
        self.check_box.show_plan(plan)
        self.diff.show_diff(plan_diff_text(plan), "(this plan changes nothing)")
        self.output.clear()
        measured = plan.measurements
        window = plan.window
        if window is not None:
            self.calculator.set_inputs(
                bandwidth_input_text(window.bandwidth_bps), rtt_input_text(window.rtt_seconds)
            )
        if measured.get("rtt_source") != "entered":
            self.inputs.set_measured(
                f"Measured RTT: {format_rtt(measured['rtt_seconds'])} ({measured['rtt_source']})."
            )
        else:
            self.inputs.set_measured("")
        if not plan.actionable():
            self._set_notice(
                "success",
                "Nothing to change: this computer already suits this link."
                if not self.forced
                else "Nothing to change.",
            )
        else:
            self._set_notice("warning" if plan.restart_needed() != "none" else "info", changes_sentence(plan))
        self._update_buttons()
        if self._plan_error is not None:
            # The error of the attempt before is answered by this plan: it need not stay up.
            self.recovered.emit(self._plan_error)
            self._plan_error = None
        self.plan_shown.emit(plan)

    def load_waiting_check(self) -> None:
        """A before measurement waiting for its after one (the apply needed a reboot, say)
        brings its plan back on screen: measuring after is the next step."""
        check_store_factory = self.check_store_factory

        def work(report: Callable[[Any], None], cancel: CancelToken) -> list[ClientCheck]:
            return check_store_factory().waiting()

        self.runner.start(
            work,
            name="Looking for a before measurement",
            on_done=self._resume_check,
            on_failed=self.failed.emit,
        )

    def _resume_check(self, waiting: list[ClientCheck]) -> None:
        # Reading this computer may still go on (it started with the page); planning or
        # measuring means the admin is already at another plan.
        if self.plan is not None or self.check_box.busy or self.inputs.profile_key() is not None:
            return
        target = self.target_provider()
        host = target.host if target else None
        for check in waiting:
            try:
                plan = check.client_plan()
            except SambaTuneError:
                continue
            # Measured towards another server, or planned for another system: not this page's.
            if plan.os.detected and plan.measurements.get("server") == host:
                break
        else:
            return
        self.plan = plan
        self.plan_applied = False
        self.plan_view.show_plan(plan, self._summary_html(plan))
        self.check_box.show_plan(plan)
        self.diff.show_diff(plan_diff_text(plan), "(this plan changes nothing)")
        if plan.window is not None:
            # The fields say what the plan was made from, so Make plan makes it again.
            self.inputs.bandwidth.edit.setText(bandwidth_input_text(plan.window.bandwidth_bps))
            self.inputs.rtt.edit.setText(rtt_input_text(plan.window.rtt_seconds))
        self._set_notice(
            "info",
            f"Plan {plan.id} from {local_time(plan.created)} is back: its before measurement "
            "waits for the after one. Apply it if it is not applied yet, mount the share again, "
            "then Measure after.",
        )
        self._update_buttons()
        self.plan_shown.emit(plan)

    def _summary_html(self, plan: ClientPlan) -> str:
        e = html.escape
        window = plan.window
        measured = plan.measurements
        lines = []
        if window is not None:
            lines.append(
                f"<b>{e(format_bits(window.bandwidth_bps))} × {e(format_rtt(window.rtt_seconds))}"
                f" → a {window.required_window:,}-byte receive window, window scale factor "
                f"{window.scale_shift}.</b> Without scaling (65,535 bytes) one connection gets "
                f"at most {e(format_bits(window.unscaled_throughput_bps))}."
            )
        facts = [f"bandwidth {measured.get('bandwidth_source')}", f"RTT {measured.get('rtt_source')}"]
        probe = (plan.mtu or {}).get("probe")
        if probe and probe.get("note"):
            facts.append(f"path MTU: {probe['note']}")
        lines.append("<span style='color:#555'>" + e("; ".join(facts)) + "</span>")
        changes = len(plan.actionable())
        ignored = sum(1 for c in plan.changes if not c.honoured)
        counts = f"<b>{changes}</b> of {len(plan.changes)} settings change"
        if ignored:
            counts += (
                f"; {ignored} {'is' if ignored == 1 else 'are'} ignored on "
                f"{e(os_short_name(plan.os))} and listed so nobody sets "
                f"{'it' if ignored == 1 else 'them'} in vain"
            )
        # After the window's sentence, not on a line of its own: each line is a plan row less.
        if window is not None:
            lines[0] += f" {counts}."
        else:
            lines.append(counts + ".")
        return "<br>".join(lines)

    def load_bandwidth_file(self, path: Path) -> None:
        def work(report: Callable[[Any], None], cancel: CancelToken) -> tuple[float, str]:
            from sambatune.client.measure import bandwidth_from_file

            return bandwidth_from_file(path)

        self._start(
            "Reading the benchmark result",
            work,
            on_done=lambda result: self.inputs.set_benchmark(*result),
            on_failed=lambda error: self.inputs.bandwidth.show_error(error.message),
        )

    # -- dry run, apply ---------------------------------------------------------------
    def _apply_work(self, dry_run: bool) -> Callable[[Callable[[Any], None], CancelToken], ApplyResult]:
        system, plan, store_factory = self.system, self.plan, self.store_factory
        assert system is not None and plan is not None

        def work(report: Callable[[Any], None], cancel: CancelToken) -> ApplyResult:
            from sambatune.client.elevation import apply_from_window

            return apply_from_window(
                system, store_factory(), plan=plan, dry_run=dry_run, cancel=cancel, report=report
            )

        return work

    def dry_run(self) -> None:
        if self.busy or self.plan is None or self.system is None:
            return
        self._start("Dry run", self._apply_work(True), on_done=self._show_result)

    def confirm_apply(self) -> None:
        can, why = self._can_apply()
        if self.busy or not can or self.plan is None:
            if not can:
                self._set_notice("warning", why)
            return
        changes = self.plan.actionable()
        restart = self.plan.restart_needed()
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Apply to this computer",
            f"Change {len(changes)} setting(s) on this computer?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setObjectName("confirmApplyBox")
        box.setInformativeText(
            "SambaTune reads every value again, saves a backup that puts back exactly what "
            "is there now (absent values included), writes the new values and reads them "
            "back. If one fails, everything already changed is put back. " + RESTART_SENTENCE[restart]
        )
        box.setDetailedText(plan_diff_text(self.plan))
        box.button(QMessageBox.StandardButton.Yes).setText("Back up and apply")

        def answered(button: int) -> None:
            self.confirm_box = None
            if button == QMessageBox.StandardButton.Yes:
                self.apply()

        box.finished.connect(answered)
        self.confirm_box = box
        box.open()

    def apply(self) -> None:
        """Back up, then apply the plan on screen (no question asked: see confirm_apply)."""
        if self.busy or self.plan is None or self.system is None or not self._can_apply()[0]:
            return
        self._start("Applying", self._apply_work(False), on_done=self._applied)

    def _applied(self, result: ApplyResult) -> None:
        if result.ok and not result.dry_run and result.backup_id:
            self.plan_applied = True
        self._show_result(result)
        self.load_backups()

    def _show_result(self, result: ApplyResult) -> None:
        self.last_result = result
        text = result_text(result)
        regfile = self.plan.reg_file() if self.plan is not None and self.forced else None
        if result.dry_run and regfile is not None and any(s.status == "planned" for s in result.steps):
            text += (
                "\n\nThe registry part as a .reg file for that machine (Save .reg file…):"
                "\n\n" + regfile.text().replace("\r\n", "\n")
            )
        self.output.setPlainText(text)
        self.tabs.setCurrentWidget(self.changes_tab)
        if not result.ok:
            self._set_notice("error", result.message)
            self.failed.emit(SambaTuneError(result.message, details=result_text(result)))
        elif result.dry_run:
            effect = TAKES_EFFECT[result.restart_needed]
            self._set_notice(
                "info",
                "Dry run: nothing was written."
                + (f" Applied, the changes would take effect {effect}." if result.steps else ""),
            )
        else:
            self._set_notice("success" if result.restart_needed == "none" else "warning", result.message)
        if not result.dry_run:
            self._refresh_after_change()
        self._update_buttons()
        self.result_shown.emit(result)

    def _refresh_after_change(self) -> None:
        system = self.system
        if system is None:
            return
        target = self.target_provider()

        def work(report: Callable[[Any], None], cancel: CancelToken) -> SystemReading:
            return read_system(system, target.host if target else None)

        self.runner.start(
            work, name="Reading this computer again", on_done=self._system_read, on_failed=self.failed.emit
        )

    # -- saving ----------------------------------------------------------------------
    def _choose_plan_file(self) -> None:
        if self.plan is None:
            return
        path, _ = QFileDialog.getSaveFileName(
            self, "Save the plan", suggested(f"plan-{self.plan.id}.json"), "SambaTune plans (*.json)"
        )
        if path:
            remember(path)
            self.save_plan(Path(path))

    def _choose_reg_file(self) -> None:
        if self.plan is None:
            return
        path, _ = QFileDialog.getSaveFileName(
            self,
            "Save the registry changes",
            suggested(f"sambatune-{self.plan.id}.reg"),
            "Registry files (*.reg)",
        )
        if path:
            remember(path)
            self.save_reg(Path(path))

    def save_plan(self, path: Path) -> None:
        plan = self.plan
        if plan is None:
            return

        def work(report: Callable[[Any], None], cancel: CancelToken) -> Path:
            path.write_text(json.dumps(plan.to_json(), indent=2) + "\n", encoding="utf-8")
            return path

        self._start(
            "Saving the plan",
            work,
            on_done=lambda saved: self._set_notice(
                "success", f"Plan saved to {saved}. Apply it with: sambatune client apply {saved}"
            ),
        )

    def save_reg(self, path: Path) -> None:
        regfile = self.plan.reg_file() if self.plan is not None else None
        if regfile is None:
            return

        def work(report: Callable[[Any], None], cancel: CancelToken) -> Path:
            path.write_bytes(regfile.encode())
            return path

        self._start(
            "Saving the .reg file",
            work,
            on_done=lambda saved: self._set_notice(
                "success",
                f"Registry changes saved to {saved}. On that machine: back up first "
                "(SambaTune does when it applies the plan), then import it.",
            ),
        )

    # -- backups and restore ----------------------------------------------------------
    def load_backups(self) -> None:
        store_factory = self.store_factory

        def work(report: Callable[[Any], None], cancel: CancelToken) -> tuple[list[dict[str, Any]], str]:
            store = store_factory()
            return store.list(), str(store.root)

        self.runner.start(
            work,
            name="Listing backups",
            on_done=lambda listed: self.backups.show_entries(*listed),
            on_failed=self.failed.emit,
        )

    def _load_backup_details(self, backup_id: str) -> None:
        store_factory = self.store_factory

        def work(report: Callable[[Any], None], cancel: CancelToken) -> str:
            backup = store_factory().load(backup_id)
            return backup_text(backup, backup.restore_file_texts())

        self.runner.start(
            work,
            name="Reading a backup",
            on_done=lambda text: self.backups.show_details(backup_id, text),
            on_failed=self.failed.emit,
        )

    def restore(self, backup_id: str, dry_run: bool = False, *, confirmed: bool = False) -> None:
        if self.busy:
            return
        if not dry_run and not confirmed:
            box = QMessageBox(
                QMessageBox.Icon.Question,
                "Restore a backup",
                f"Put back the settings backup {backup_id} recorded?",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
                self,
            )
            box.setObjectName("confirmRestoreBox")
            box.setInformativeText("What is there now is backed up first, so this restore can be undone too.")
            box.button(QMessageBox.StandardButton.Yes).setText("Restore")

            def answered(button: int) -> None:
                self.confirm_box = None
                if button == QMessageBox.StandardButton.Yes:
                    self.restore(backup_id, confirmed=True)

            box.finished.connect(answered)
            self.confirm_box = box
            box.open()
            return
        factory, store_factory = self.system_factory, self.store_factory

        def work(report: Callable[[Any], None], cancel: CancelToken) -> ApplyResult:
            from sambatune.client.elevation import apply_from_window

            return apply_from_window(
                factory(None),
                store_factory(),
                backup_id=backup_id,
                dry_run=dry_run,
                cancel=cancel,
                report=report,
            )

        def done(result: ApplyResult) -> None:
            if not dry_run:
                self.plan_applied = False
                self.load_backups()
            self._show_result(result)

        self._start("Dry run of the restore" if dry_run else "Restoring", work, on_done=done)
