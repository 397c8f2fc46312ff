"""The Fleet window's Ansible tab: the change of the Roll out tab as an Ansible project,
and, where Ansible runs on this computer, that project run with its events streamed in.

Export writes a self-contained project (``fleet export``) any ``ansible-playbook``, AWX
or Semaphore runs unchanged. Run goes through ansible-runner; on Windows without WSL,
or without the fleet extra, the tab says why and the export is still there to carry
to a machine that has Ansible.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from sambatune.cancellation import CancelToken
from sambatune.errors import SambaTuneError
from sambatune.fleet.ansible_run import RunEvent, RunResult, ansible_unavailable, run_project
from sambatune.fleet.change import Edit
from sambatune.fleet.export import ExportReport, fleet_export
from sambatune.fleet.rollout import RolloutOptions
from sambatune.ui import file_places
from sambatune.ui.fleet.context import LoadedFleet
from sambatune.ui.tables import SelectionMode, read_only_table
from sambatune.ui.tasks import Report, Task, TaskRunner

EXPORT_COLUMNS = ("Host", "smb.conf", "Takes effect by", "Notes")
EVENT_COLUMNS = ("Time", "Event", "Host", "Task", "Message")
_BAD = ("failed", "unreachable")

#: The change and its options, from the Roll out tab (raises InvalidInput when unfinished).
ChangeSource = Callable[[], tuple[list[Edit], RolloutOptions]]


class AnsibleTab(QWidget):
    def __init__(self, runner: TaskRunner, change: ChangeSource, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.change = change
        self.loaded: LoadedFleet | None = None
        self.project: Path | None = None
        self.unavailable: str | None = "Checking whether Ansible is installed…"
        self.task: Task | None = None
        self.last_export: ExportReport | None = None
        self.last_run: RunResult | None = None

        layout = QVBoxLayout(self)
        intro = QLabel(
            "Export writes the change typed on the Roll out tab as an Ansible project: it validates "
            "each host's new smb.conf with testparm, keeps a backup, reloads (restarts only where "
            "allowed and needed), goes in waves and puts the backup back on any failure. "
            "ansible-playbook, AWX or Semaphore run it unchanged."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        buttons = QHBoxLayout()
        self.export_button = QPushButton("Export project…")
        self.export_button.setObjectName("fleetExportButton")
        self.export_button.clicked.connect(self.choose_folder)
        self.run_button = QPushButton("Run with Ansible")
        self.run_button.setObjectName("fleetAnsibleRunButton")
        self.run_button.setEnabled(False)
        self.run_button.clicked.connect(self.start_run)
        self.check_button = QPushButton("Check")
        self.check_button.setObjectName("fleetAnsibleCheckButton")
        self.check_button.setToolTip(
            "ansible-playbook --check --diff: validate each host's new smb.conf and show what "
            "would change, changing nothing"
        )
        self.check_button.setEnabled(False)
        self.check_button.clicked.connect(lambda: self.start_run(check=True))
        self.stop_button = QPushButton("Stop")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        for button in (self.export_button, self.check_button, self.run_button, self.stop_button):
            buttons.addWidget(button)
        self.status = QLabel()
        self.status.setObjectName("fleetAnsibleStatus")
        self.status.setWordWrap(True)
        buttons.addWidget(self.status, 1)
        layout.addLayout(buttons)
        self.availability = QLabel(self.unavailable)
        self.availability.setObjectName("fleetAnsibleAvailability")
        self.availability.setWordWrap(True)
        layout.addWidget(self.availability)

        split = QSplitter(Qt.Orientation.Vertical)
        top = QWidget()
        top_layout = QHBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        self.exported = read_only_table(
            EXPORT_COLUMNS, "fleetExportTable", select=SelectionMode.SingleSelection
        )
        self.exported.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        top_layout.addWidget(self.exported, 3)
        self.files = QLabel()
        self.files.setObjectName("fleetExportFiles")
        self.files.setWordWrap(True)
        self.files.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.files.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        top_layout.addWidget(self.files, 2)
        split.addWidget(top)
        self.events = read_only_table(
            EVENT_COLUMNS, "fleetAnsibleEvents", select=SelectionMode.SingleSelection
        )
        self.events.setWordWrap(False)
        self.events.horizontalHeader().setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        split.addWidget(self.events)
        layout.addWidget(split, 1)

        runner.start(lambda _r, _c: ansible_unavailable(), name="Ansible check", on_done=self._availability)

    def _availability(self, reason: str | None) -> None:
        self.unavailable = reason
        if reason is None:
            self.availability.setText(
                "Ansible is installed here: Run with Ansible runs the exported project now."
            )
        else:
            self.availability.setText(f"Run with Ansible is not possible here. {reason} Export still works.")
            self.availability.setStyleSheet("color:#8a5a00;")
        self._buttons()

    def _buttons(self) -> None:
        busy = self.task is not None
        self.export_button.setEnabled(not busy and self.loaded is not None)
        can_run = not busy and self.unavailable is None and self.project is not None
        self.run_button.setEnabled(can_run)
        self.check_button.setEnabled(can_run)
        self.stop_button.setEnabled(busy)

    def set_fleet(self, loaded: LoadedFleet) -> None:
        self.loaded = loaded
        self._buttons()

    # -- export ---------------------------------------------------------------------
    def choose_folder(self) -> None:
        dialog = QFileDialog(self, "Folder for the Ansible project", file_places.suggested())
        dialog.setObjectName("fleetExportDialog")
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(lambda path: self.export_to(Path(path)))
        dialog.open()

    def export_to(self, out: Path) -> None:
        if self.loaded is None or self.task is not None:
            return
        try:
            edits, options = self.change()
        except SambaTuneError as error:
            self.status.setText(f"{error.message} (on the Roll out tab)")
            return
        loaded = self.loaded
        self.status.setText(f"Reading {len(loaded.hosts)} hosts and writing {out}…")

        def work(report: Report, cancel: CancelToken) -> ExportReport:
            return fleet_export(
                loaded.hosts,
                edits,
                out,
                wave=options.wave,
                allow_restart=options.allow_restart,
                connector=loaded.connect,
                cancel=cancel,
                on_host=lambda host, error: report((host, error)),
            )

        self._start(work, "Fleet export", on_done=self._exported)

    def _exported(self, report: ExportReport) -> None:
        self.last_export = report
        rows = [
            (
                c.host.name,
                c.path,
                "no change" if c.unchanged else "restart" if c.restart_changes else "reload",
                "; ".join(c.warnings),
            )
            for c in report.exported
        ]
        rows += [(host, "-", "left out", why) for host, why in report.refused.items()]
        self.exported.setRowCount(len(rows))
        for row, values in enumerate(rows):
            for column, text in enumerate(values):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                if values[2] == "left out":
                    item.setForeground(QColor("#b3261e"))
                self.exported.setItem(row, column, item)
        if report.exported:
            self.project = report.out
            self.files.setText(f"Written to {report.out}:\n" + "\n".join(report.files))
            run = f"cd {report.out} && ansible-playbook site.yml"
            left = f" {len(report.refused)} host(s) left out (see the table)." if report.refused else ""
            self.status.setText(f"Exported {len(report.exported)} host(s).{left} Run it yourself with: {run}")
        else:
            self.project = None
            self.files.clear()
            self.status.setText("Nothing was written: no host could be prepared (see the table).")

    # -- run --------------------------------------------------------------------------
    def start_run(self, *, check: bool = False) -> None:
        """Run the exported project; ``check``: --check --diff, which changes nothing."""
        project = self.project
        if project is None or self.unavailable is not None or self.task is not None:
            return
        self.events.setRowCount(0)
        how = " --check --diff" if check else ""
        self.status.setText(f"Running ansible-playbook site.yml{how} in {project}…")

        def work(report: Report, cancel: CancelToken) -> RunResult:
            return run_project(project, on_event=report, check=check, cancel=cancel)

        def ran(result: RunResult) -> None:
            self._ran(result, check=check)

        self._start(work, "Ansible check" if check else "Ansible run", on_done=ran, on_event=self._event)

    def _event(self, event: Any) -> None:
        if not isinstance(event, RunEvent):
            return
        row = self.events.rowCount()
        self.events.insertRow(row)
        for column, text in enumerate(
            (time.strftime("%H:%M:%S"), event.kind, event.host or "", event.task or "", event.message)
        ):
            item = QTableWidgetItem(text)
            item.setToolTip(text)
            if event.kind in _BAD:
                item.setForeground(QColor("#b3261e"))
            self.events.setItem(row, column, item)
        self.events.scrollToBottom()

    def _ran(self, result: RunResult, *, check: bool = False) -> None:
        self.last_run = result
        self.events.resizeColumnsToContents()
        failed = ", ".join(result.failed_hosts) or "a host"
        if check and result.ok:
            self.status.setText("Check passed: every host's new smb.conf validates; nothing was changed.")
        elif check:
            self.status.setText(
                f"Check failed on {failed}: the run would stop there (the events say why). "
                "Nothing was changed."
            )
        elif result.ok:
            self.status.setText(f"Ansible finished: every host done (ansible-playbook {result.status}).")
        else:
            self.status.setText(
                f"Ansible halted: failed on {failed} (ansible-playbook {result.status}, exit "
                f"{result.exit_code}). The events say what its rescue put back."
            )

    def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def _ended(self) -> None:
        self.task = None  # busy until this ran, not merely until the worker returned
        self._buttons()

    def _start(self, work: Any, name: str, *, on_done: Any, on_event: Any = None) -> None:
        def failed(error: SambaTuneError) -> None:
            self.status.setText(error.message)

        self.task = self.runner.start(
            work,
            name=name,
            on_event=on_event,
            on_done=on_done,
            on_failed=failed,
            on_cancelled=lambda: self.status.setText("Stopped."),
            on_finished=self._ended,
        )
        self._buttons()
