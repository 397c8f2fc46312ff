"""The Fleet window's Drift tab: which parameters differ between the hosts, and what
bringing each host in line takes (a reload, or a restart that ends every connection).

``fleet_drift`` reads each host's smb.conf as its own Samba reads it (testparm on the
host) on a worker, and compares them with the majority or with a golden smb.conf. One
row per parameter, one column per host; the cells that differ are marked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from sambatune.cancellation import CancelToken
from sambatune.conf.activation import Activation
from sambatune.errors import InvalidInput
from sambatune.fleet.drift import DriftReport, HostStatus, ParameterDrift, fleet_drift
from sambatune.ui import file_places
from sambatune.ui.fleet.context import LoadedFleet
from sambatune.ui.tables import SelectionMode, read_only_table
from sambatune.ui.tasks import Report, Task, TaskRunner

DIFFERS = QColor("#fde2e1")
MISSING = "(no such share)"
#: Column caps (px): the parameter, each value, the hosts that differ.
PARAMETER_WIDTH, VALUE_WIDTH, DIFFERS_WIDTH = 200, 90, 120


def fix_text(drift: ParameterDrift) -> str:
    if not drift.differing:
        return "differs by design"
    if drift.needs_restart:
        return "restart (ends every connection)"
    if any(d.activation is Activation.NEW_CONNECTIONS for d in drift.differing):
        return "reload (new connections)"
    return "reload"


class DriftTab(QWidget):
    def __init__(self, runner: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.loaded: LoadedFleet | None = None
        self.report: DriftReport | None = None
        self.task: Task | None = None
        self.read_count = 0

        layout = QVBoxLayout(self)
        against = QHBoxLayout()
        against.addWidget(QLabel("Compare with:"))
        self.majority = QRadioButton("what most hosts have")
        self.majority.setChecked(True)
        self.golden_choice = QRadioButton("a golden smb.conf:")
        group = QButtonGroup(self)
        group.addButton(self.majority)
        group.addButton(self.golden_choice)
        against.addWidget(self.majority)
        against.addWidget(self.golden_choice)
        self.golden = QLineEdit()
        self.golden.setObjectName("fleetGoldenPath")
        self.golden.setPlaceholderText("a local smb.conf; each host's samba_overlay is laid over it")
        self.golden.textEdited.connect(lambda _text: self.golden_choice.setChecked(True))
        against.addWidget(self.golden, 1)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        against.addWidget(browse)
        self.compare_button = QPushButton("Compare")
        self.compare_button.setObjectName("fleetDriftButton")
        self.compare_button.setToolTip(
            "Read every host's smb.conf as its Samba reads it (nothing is changed)"
        )
        self.compare_button.clicked.connect(self.start_drift)
        against.addWidget(self.compare_button)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        against.addWidget(self.cancel_button)
        layout.addLayout(against)

        self.summary = QLabel("Load a fleet, then Compare.")
        self.summary.setObjectName("fleetDriftSummary")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.table = read_only_table(["Parameter"], "fleetDriftTable", select=SelectionMode.SingleSelection)
        self.table.setWordWrap(False)  # one line per parameter; a long value is elided
        layout.addWidget(self.table, 1)
        self.by_design = QCheckBox(
            "Also show what differs by design (names, paths, ports) or by Samba release (defaults)"
        )
        self.by_design.setObjectName("fleetDriftByDesign")
        self.by_design.toggled.connect(lambda _on: self._show())
        layout.addWidget(self.by_design)
        self.shares = QLabel()
        self.shares.setObjectName("fleetDriftShares")
        self.shares.setWordWrap(True)
        layout.addWidget(self.shares)

    def set_fleet(self, loaded: LoadedFleet) -> None:
        self.cancel()
        self.loaded = loaded
        self.report = None
        self.table.setRowCount(0)
        self.shares.clear()
        self.summary.setText(
            f"{len(loaded.hosts)} hosts. Compare reads each host's smb.conf as its own Samba reads it."
        )

    def _browse(self) -> None:
        dialog = QFileDialog(
            self,
            "Golden smb.conf",
            file_places.suggested(),
            "Samba configuration (*.conf smb.conf*);;All files (*)",
        )
        dialog.setObjectName("fleetGoldenDialog")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)

        def chosen(path: str) -> None:
            file_places.remember(path)
            self.golden.setText(path)
            self.golden_choice.setChecked(True)

        dialog.fileSelected.connect(chosen)
        dialog.open()

    # -- the comparison -------------------------------------------------------------
    def start_drift(self) -> None:
        if self.loaded is None or self.task is not None:
            return
        loaded = self.loaded
        golden_path = self.golden.text().strip() if self.golden_choice.isChecked() else ""
        self.read_count = 0
        self.compare_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.summary.setText(f"Reading {len(loaded.hosts)} hosts…")

        def work(report: Report, cancel: CancelToken) -> DriftReport:
            golden = None
            if golden_path:
                try:
                    golden = Path(golden_path).expanduser().read_bytes()
                except OSError as error:
                    raise InvalidInput(f"Cannot read {golden_path}: {error.strerror}") from error
            return fleet_drift(
                loaded.hosts,
                golden=golden,
                golden_name=golden_path or None,
                base_dir=loaded.source.base_dir,
                connector=loaded.connect,
                cancel=cancel,
                on_host=report,
            )

        self.task = self.runner.start(
            work,
            name="Fleet drift",
            on_event=self._host_read,
            on_done=self.show_report,
            on_failed=lambda error: self.summary.setText(f"Not compared: {error.message}"),
            on_cancelled=lambda: self.summary.setText("Cancelled."),
            on_finished=self._finished,
        )

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def _host_read(self, status: Any) -> None:
        if isinstance(status, HostStatus) and self.loaded is not None:
            self.read_count += 1
            self.summary.setText(
                f"Read {self.read_count} of {len(self.loaded.hosts)} hosts (latest: {status.host})…"
            )

    def _finished(self) -> None:
        self.task = None  # busy until this ran, not merely until the worker returned
        self.compare_button.setEnabled(True)
        self.cancel_button.setEnabled(False)

    def show_report(self, report: DriftReport) -> None:
        self.report = report
        self._show()

    # -- showing it -----------------------------------------------------------------
    def _show(self) -> None:
        report = self.report
        if report is None:
            return
        reachable = [h.host for h in report.hosts if h.reachable]
        against = f"the golden file {report.golden}" if report.golden else "what most hosts have"
        drifting = [p for p in report.parameters if p.differing]
        text = (
            f"{len(reachable)} of {len(report.hosts)} hosts read in {report.seconds:.1f} s, compared with "
            f"{against}: "
        )
        if drifting:
            restarts = sum(1 for p in drifting if p.needs_restart)
            text += f"{len(drifting)} parameter{' differs' if len(drifting) == 1 else 's differ'}"
            text += (
                f" ({restarts} need a restart to bring in line)."
                if restarts
                else " (a reload brings each in line)."
            )
        else:
            text += "no drift, every host reads the same values."
        if drifting:
            text += " Red cells differ from the expected value; point at one for why."
        for status in report.unreachable:
            text += f"\n{status.host} was not read: {status.error}"
        self.summary.setText(text)

        shown = [p for p in report.parameters if p.differing or self.by_design.isChecked()]
        headers = ["Parameter", "Expected", *reachable, "Differs on", "To bring in line"]
        self.table.clear()
        self.table.setColumnCount(len(headers))
        self.table.setHorizontalHeaderLabels(headers)
        self.table.setRowCount(len(shown))
        for row, drift in enumerate(shown):
            self._cell(row, 0, f"[{drift.section}] {drift.parameter}")
            expected = "(per release)" if drift.version_defaults else "(per host)"
            self._cell(row, 1, drift.reference if drift.reference is not None else expected)
            differing = {d.host: d for d in drift.differing}
            for column, host in enumerate(reachable, start=2):
                value = drift.values.get(host)
                item = self._cell(row, column, MISSING if value is None else (value or '""'))
                difference = differing.get(host)
                if difference is not None:
                    item.setBackground(QBrush(DIFFERS))
                    item.setToolTip(f"{host}: {value!r}, expected {difference.expected!r}. {difference.why}")
            self._cell(row, len(headers) - 2, ", ".join(differing) or "-")
            self._cell(row, len(headers) - 1, fix_text(drift))
        self._fit_columns(len(reachable))

        lines = []
        for share in report.shares:
            parts = []
            if share.present_on:
                parts.append("on " + ", ".join(share.present_on))
            if share.missing_on:
                parts.append("missing on " + ", ".join(share.missing_on))
            if share.not_in_golden_on:
                parts.append("not in the golden file")
            lines.append(f"[{share.share}] " + "; ".join(parts))
        self.shares.setText(("Shares on some hosts only: " + " · ".join(lines)) if lines else "")

    def _fit_columns(self, hosts: int) -> None:
        """As wide as their contents, up to a cap, so eight hosts fit at 1180 px and more
        scroll: a long value (socket options, a path) is elided, whole in its tooltip."""
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        caps = [PARAMETER_WIDTH, VALUE_WIDTH, *([VALUE_WIDTH] * hosts), DIFFERS_WIDTH]
        for column, cap in enumerate(caps):
            self.table.resizeColumnToContents(column)
            header.resizeSection(column, min(header.sectionSize(column), cap))
        self.table.resizeColumnToContents(len(caps))

    def _cell(self, row: int, column: int, text: str) -> QTableWidgetItem:
        item = QTableWidgetItem(text)
        item.setToolTip(text)
        self.table.setItem(row, column, item)
        return item
