"""The Fleet window's Hosts tab: every host of the fleet, filled in as its survey arrives.

Survey runs ``survey_fleet`` on a worker; each host's result reaches the table when
that host finishes, so one slow or dead server never hides the others. Cancel closes
every open connection under its command: the survey ends within a second or two.
An unknown host key is never accepted here: the row says so and offers to open that
one server in the main window, whose connect shows the fingerprint to compare.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDoubleSpinBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from sambatune.cancellation import CancelToken
from sambatune.fleet.inventory import FleetHost
from sambatune.fleet.survey import (
    DEFAULT_CONCURRENCY,
    DEFAULT_TIMEOUT,
    FleetPrompts,
    FleetSurvey,
    HostStatus,
    HostSurvey,
    findings_counts,
    findings_words,
    survey_fleet,
)
from sambatune.ui.fleet.context import LoadedFleet
from sambatune.ui.fleet.words import (
    nic_text,
    reach_summary,
    smbd_text,
    status_sentence,
    status_word,
)
from sambatune.ui.tables import SelectionMode, read_only_table
from sambatune.ui.tasks import Report, Task, TaskRunner
from sambatune.units import format_seconds

COLUMNS = (
    "Host",
    "Status",
    "Connect as",
    "Groups",
    "smb.conf",
    "Samba",
    "smbd",
    "SHA-256",
    "NICs",
    "P/W/S/I",
    "Time",
)
(HOST, STATUS, CONNECT, GROUPS, CONF, SAMBA, SMBD, DIGEST, NICS, FINDINGS, TIME) = range(len(COLUMNS))

#: The most the selected host's text takes under the table before it scrolls (px).
DETAIL_HEIGHT = 120
#: Status colours: green reached, amber needs a decision, red not reached.
_COLOURS = {
    HostStatus.OK: "#1e7d32",
    HostStatus.HOST_KEY_UNKNOWN: "#8a5a00",
    HostStatus.TIMED_OUT: "#8a5a00",
    HostStatus.CANCELLED: "#666666",
}
_NOT_OK = "#b3261e"

OpenServer = Callable[[FleetHost], None]


class HostsTab(QWidget):
    def __init__(
        self, runner: TaskRunner, *, open_server: OpenServer | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.runner = runner
        self.open_server = open_server
        self.loaded: LoadedFleet | None = None
        self.results: dict[str, HostSurvey] = {}
        self.last_survey: FleetSurvey | None = None
        self.task: Task | None = None

        layout = QVBoxLayout(self)
        controls = QHBoxLayout()
        self.survey_button = QPushButton("Survey")
        self.survey_button.setObjectName("fleetSurveyButton")
        self.survey_button.setToolTip("Connect to every host and read what it runs (nothing is changed)")
        self.survey_button.clicked.connect(self.start_survey)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("fleetSurveyCancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        controls.addWidget(self.survey_button)
        controls.addWidget(self.cancel_button)
        controls.addWidget(QLabel("At once:"))
        self.concurrency = QSpinBox()
        self.concurrency.setRange(1, 64)
        self.concurrency.setValue(DEFAULT_CONCURRENCY)
        self.concurrency.setToolTip("How many hosts are surveyed at the same time")
        controls.addWidget(self.concurrency)
        controls.addWidget(QLabel("Silence allowed:"))
        self.timeout = QDoubleSpinBox()
        self.timeout.setRange(2, 600)
        self.timeout.setDecimals(0)
        self.timeout.setSuffix(" s")
        self.timeout.setValue(DEFAULT_TIMEOUT)
        self.timeout.setToolTip(
            "A host that answers nothing for this long (connecting included) is reported as not "
            "answering; each answer starts the time again"
        )
        controls.addWidget(self.timeout)
        self.progress = QProgressBar()
        self.progress.setObjectName("fleetSurveyProgress")
        self.progress.setFormat("%v of %m hosts")
        self.progress.setVisible(False)
        controls.addWidget(self.progress, 1)
        controls.addStretch(0)
        layout.addLayout(controls)

        self.table = read_only_table(COLUMNS, "fleetHostsTable", select=SelectionMode.SingleSelection)
        self.table.setWordWrap(False)
        # Paths keep their ends (the folder and the file name) when there is no room.
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        header = self.table.horizontalHeader()
        # Long paths, many NICs and many findings must not push the table sideways:
        # fixed, elided, whole in the tooltip, and the user may widen them.
        for column, width in ((CONF, 140), (NICS, 100), (FINDINGS, 70)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(column, width)
        self.table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        findings = self.table.horizontalHeaderItem(FINDINGS)
        if findings is not None:
            findings.setToolTip("The advisor's findings: problems / warnings / suggestions / notes")
        self.table.itemSelectionChanged.connect(self._show_selected)
        layout.addWidget(self.table, 1)

        self.summary = QLabel("Load a fleet, then Survey.")
        self.summary.setObjectName("fleetSurveySummary")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        detail = QHBoxLayout()
        self.detail = QLabel()
        self.detail.setObjectName("fleetHostDetail")
        self.detail.setWordWrap(True)
        self.detail.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # A host's findings can run to many lines: they scroll instead of being cut off.
        # Hidden while no host is chosen: an empty box would only take the table's room.
        self.detail_scroll = QScrollArea()
        self.detail_scroll.setWidgetResizable(True)
        self.detail_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.detail_scroll.setMaximumHeight(DETAIL_HEIGHT)
        self.detail_scroll.setWidget(self.detail)
        self.detail_scroll.setVisible(False)
        detail.addWidget(self.detail_scroll, 1)
        self.open_button = QPushButton("Open as server…")
        self.open_button.setObjectName("fleetOpenAsServer")
        self.open_button.setToolTip(
            "Add this host to the main window's servers and connect: it shows the key's "
            "fingerprint so you can compare it before trusting it"
        )
        self.open_button.setVisible(False)
        self.open_button.clicked.connect(self._open_selected)
        detail.addWidget(self.open_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(detail)

    # -- the fleet ------------------------------------------------------------------
    def set_fleet(self, loaded: LoadedFleet) -> None:
        self.cancel()
        self.loaded = loaded
        self.results = {}
        self.last_survey = None
        self.table.setRowCount(0)
        for host in loaded.hosts:
            row = self.table.rowCount()
            self.table.insertRow(row)
            self._set(row, HOST, host.name)
            self._set(row, STATUS, "not surveyed")
            self._set(row, CONNECT, host.destination)
            self._set(row, GROUPS, ", ".join(g for g in host.groups if g != "ungrouped") or "-")
            self._set(row, CONF, host.samba_conf or "(the running smbd's)")
        count = len(loaded.hosts)
        self.summary.setText(
            f"{count} host{'' if count == 1 else 's'} from {loaded.source.describe()}. "
            "Survey reads each one; nothing is changed."
            if count
            else "No hosts: the limit matches none, or the source names none."
        )
        self.survey_button.setEnabled(bool(count))
        self.detail.clear()
        self.open_button.setVisible(False)

    def row_of(self, name: str) -> int:
        for row in range(self.table.rowCount()):
            item = self.table.item(row, HOST)
            if item is not None and item.text() == name:
                return row
        raise KeyError(name)

    def _set(self, row: int, column: int, text: str, tooltip: str = "") -> QTableWidgetItem:
        item = QTableWidgetItem(text)
        item.setToolTip(tooltip or text)
        self.table.setItem(row, column, item)
        return item

    # -- the survey -----------------------------------------------------------------
    @property
    def running(self) -> bool:
        # Until _finished has run here, not merely until the worker returned: the
        # cancelled/done handlers still have rows and the summary to fill in.
        return self.task is not None

    def start_survey(self) -> None:
        if self.loaded is None or self.running or not self.loaded.hosts:
            return
        loaded = self.loaded
        concurrency, timeout = self.concurrency.value(), float(self.timeout.value())
        self.results = {}
        for row in range(self.table.rowCount()):
            self._set(row, STATUS, "waiting…")
            for column in (SAMBA, SMBD, DIGEST, NICS, FINDINGS, TIME):
                self._set(row, column, "")
        self.progress.setRange(0, len(loaded.hosts))
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self.survey_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.summary.setText(f"Surveying {len(loaded.hosts)} hosts, {concurrency} at a time…")

        def work(report: Report, cancel: CancelToken) -> FleetSurvey:
            return survey_fleet(
                loaded.fleet,
                concurrency=concurrency,
                timeout=timeout,
                cancel=cancel,
                on_result=report,  # from each host's thread; the runner queues it to ours
                prompts=FleetPrompts(accept_new_host_key=False),
                known_hosts=loaded.known_hosts,
            )

        self.task = self.runner.start(
            work,
            name="Fleet survey",
            on_event=self._arrived,
            on_done=self._done,
            on_failed=self._failed,
            on_cancelled=self._cancelled,
            on_finished=self._finished,
        )

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.summary.setText("Cancelling: closing every connection…")

    def _arrived(self, result: Any) -> None:
        if not isinstance(result, HostSurvey) or self.loaded is None:
            return
        self.results[result.host.name] = result
        try:
            row = self.row_of(result.host.name)
        except KeyError:
            return
        self._fill(row, result)
        self.progress.setValue(len(self.results))
        if self.table.currentRow() == row:
            self._show_selected()

    def _fill(self, row: int, result: HostSurvey) -> None:
        status = self._set(row, STATUS, status_word(result), status_sentence(result))
        status.setForeground(QColor(_COLOURS.get(result.status, _NOT_OK)))
        if result.config_path:
            self._set(row, CONF, result.config_path)
        version = (result.samba_version or "").removeprefix("Version ")
        self._set(row, SAMBA, version or ("-" if not result.reachable else "not installed"))
        self._set(row, SMBD, smbd_text(result))
        digest = result.config_sha256 or ""
        self._set(row, DIGEST, digest[:8] or "-", f"smb.conf SHA-256: {digest}" if digest else "not read")
        self._set(row, NICS, nic_text(result))
        self._set(row, FINDINGS, findings_counts(result.findings), findings_words(result.findings))
        self._set(row, TIME, format_seconds(result.seconds))

    def _done(self, survey: FleetSurvey) -> None:
        self.last_survey = survey
        for result in survey.results:
            if result.host.name not in self.results:
                self._arrived(result)
        text = f"{reach_summary(survey.results)}; {format_seconds(survey.seconds)} in all."
        digests = {r.config_sha256 for r in survey.results if r.config_sha256}
        if len(digests) > 1:
            text += f" {len(digests)} different smb.conf files: the Drift tab compares them."
        # Why each host was not surveyed, in words, without clicking through the rows.
        troubles = [r for r in survey.results if r.status is not HostStatus.OK or r.advice_error]
        text += "".join(f"\n• {r.host.name}: {status_sentence(r)}" for r in troubles)
        self.summary.setText(text)

    def _failed(self, error: Any) -> None:
        self.summary.setText(f"The survey stopped: {getattr(error, 'message', error)}")

    def _cancelled(self) -> None:
        if self.loaded is None:
            return
        for host in self.loaded.hosts:
            if host.name not in self.results:
                self._set(self.row_of(host.name), STATUS, "cancelled")
        done = sum(1 for r in self.results.values() if r.status is not HostStatus.CANCELLED)
        self.summary.setText(f"Cancelled: {done} of {len(self.loaded.hosts)} hosts had finished.")

    def _finished(self) -> None:
        self.task = None
        self.progress.setVisible(False)
        self.survey_button.setEnabled(bool(self.loaded and self.loaded.hosts))
        self.cancel_button.setEnabled(False)

    # -- one host -------------------------------------------------------------------
    def _selected(self) -> HostSurvey | None:
        row = self.table.currentRow()
        item = self.table.item(row, HOST) if row >= 0 else None
        return self.results.get(item.text()) if item is not None else None

    def _show_selected(self) -> None:
        result = self._selected()
        self.detail_scroll.setVisible(result is not None)
        if result is None:
            self.detail.clear()
            self.open_button.setVisible(False)
            return
        # The summary above already says why in a sentence; here the evidence, or
        # what the advisor found on a host it judged.
        details = result.error.details if result.error is not None else ""
        text = f"{result.host.name} ({result.host.destination}): {details or status_sentence(result)}"
        if result.finding_titles:
            text += f" {findings_words(result.findings)}:" + "".join(
                f"\n• {'note' if severity == 'info' else severity}: {title}"
                for severity, title, _subject in result.finding_titles
            )
        self.detail.setText(text)
        # Only an unknown key gets an offer: a changed key is never offered a way around.
        self.open_button.setVisible(
            self.open_server is not None and result.status is HostStatus.HOST_KEY_UNKNOWN
        )

    def _open_selected(self) -> None:
        result = self._selected()
        if result is not None and self.open_server is not None:
            self.open_server(result.host)
