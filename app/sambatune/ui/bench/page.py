"""The Benchmarks tab: choose a test, run it by the method, watch it live, compare, find the limit.

Everything slow happens in a worker (``session.run_task``): connecting agents, the
transfers, the results database, report writing. The GUI thread only receives events:
samples go to the live plot through a 100 ms throttle, runs to the table as they finish.
The status line under the progress bar says which step and which run of how many, the
live figure and the time left (:class:`ProgressTracker`), and counts down between events.
A test made of steps (the SMB test and its ceilings) shows each step's curves while it
runs and, at the end, the step of its main figure again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from sambatune.bench.events import Notice, Progress, RunFinished, RunStarted, Sample, Step
from sambatune.bench.kinds import KINDS
from sambatune.bench.kinds.arguments import SECRET_KIND
from sambatune.bench.kinds.kind import RunRequest
from sambatune.bench.kinds.small_files import small_files_options
from sambatune.bench.kinds.smb_client import server_session_reader
from sambatune.bench.progress import ProgressTracker
from sambatune.bench.records import BenchResult
from sambatune.cancellation import CancelToken
from sambatune.errors import SambaTuneError
from sambatune.remote.survey import Survey
from sambatune.ui.bench import run_heap
from sambatune.ui.bench.bottleneck_panel import BottleneckPanel
from sambatune.ui.bench.form import BenchForm
from sambatune.ui.bench.history import HistoryView
from sambatune.ui.bench.live_plot import LivePlot
from sambatune.ui.bench.operations_table import OperationsTable, plan_caption
from sambatune.ui.bench.run_table import RunTable
from sambatune.ui.bench.security_table import SecurityTable, has_comparison, sentences, status_figures
from sambatune.ui.bench.sockbuf_view import SockbufView
from sambatune.ui.session import ServerSession
from sambatune.ui.tasks import Task

#: The status line is redrawn at most this often (ms), and counts the time left down.
STATUS_EVERY_MS = 250

if TYPE_CHECKING:  # loaded on a worker thread, when the analysis is read
    from sambatune.bench.bottleneck_inputs import SessionFacts
    from sambatune.bench.results_db import StoredSession


class BenchmarksPage(QWidget):
    def __init__(self, session: ServerSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("benchmarksPage")
        self.session = session
        self.task: Task | None = None
        self.last_result: BenchResult | None = None
        self._surveyed_port: int | None = None  # the port the last survey put in the form
        self._surveyed_address = ""  # ...and the address
        self.run_numbers: dict[str, int] = {}
        self.tracker = ProgressTracker()
        self.steps: list[Step] = []
        self.shown_step: Step | None = None
        self.status_ticker = QTimer(self)
        self.status_ticker.setInterval(STATUS_EVERY_MS)
        self.status_ticker.timeout.connect(self._show_status)
        outer = QHBoxLayout(self)
        outer.setContentsMargins(8, 8, 8, 8)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        outer.addWidget(splitter)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(4, 0, 8, 0)
        self.form = BenchForm()
        left_layout.addWidget(self.form)
        self.explanation = QLabel()
        self.explanation.setObjectName("benchExplanation")
        self.explanation.setWordWrap(True)
        self.explanation.setStyleSheet("color: palette(mid);")
        left_layout.addWidget(self.explanation)
        buttons = QHBoxLayout()
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("benchRun")
        self.run_button.setDefault(True)
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("benchCancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        left_layout.addLayout(buttons)
        self.progress = QProgressBar()
        self.progress.setObjectName("benchProgress")
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        left_layout.addWidget(self.progress)
        self.status = QLabel("Choose a test and press Run.")
        self.status.setObjectName("benchStatus")
        self.status.setWordWrap(True)
        left_layout.addWidget(self.status)
        left_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(left)
        scroll.setMinimumWidth(330)
        splitter.addWidget(scroll)

        self.views = QTabWidget()
        self.views.setObjectName("benchViews")
        live = QWidget()
        live_layout = QVBoxLayout(live)
        live_layout.setContentsMargins(0, 0, 0, 0)
        live_split = QSplitter(Qt.Orientation.Vertical)
        self.live = LivePlot()
        self.operations = OperationsTable()
        # One of the two at a time: the curves, or the small-file test's per-operation table.
        self.figures = QStackedWidget()
        self.figures.addWidget(self.live)
        self.figures.addWidget(self.operations)
        live_split.addWidget(self.figures)
        self.runs = RunTable()
        live_split.addWidget(self.runs)
        live_split.setSizes([330, 260])
        live_layout.addWidget(live_split, 1)
        self.notes = QLabel("")
        self.notes.setObjectName("benchNotes")
        self.notes.setWordWrap(True)
        self.notes.setStyleSheet("color: #1e5a8c;")
        live_layout.addWidget(self.notes)
        self.views.addTab(live, "Run")
        self.history = HistoryView(self._run_task, self._server_label)
        self.views.addTab(self.history, "History && compare")
        # A tab of its own: beside the curves, run table and notes of the Run tab, three
        # sessions side by side would not fit the window's height.
        self.security = SecurityTable()
        self.views.addTab(self.security, "Signing && encryption")
        self.sockbuf = SockbufView()
        self.views.addTab(self.sockbuf, "Socket buffers")
        self.bottleneck = BottleneckPanel()
        self.views.addTab(self.bottleneck, "Bottleneck")
        self.views.currentChanged.connect(self._view_changed)
        splitter.addWidget(self.views)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([350, 800])

        self.form.test.currentIndexChanged.connect(self._test_changed)
        self._test_changed()

    # -- server facts ---------------------------------------------------------------
    def _server_label(self) -> str:
        transport = self.session.transport
        return transport.label if transport is not None else self.session.profile.target_label

    def _run_task(self, name: str, work: Any, **callbacks: Any) -> Task:
        return self.session.run_task(name, work, **callbacks)

    def show_survey(self, survey: Survey) -> None:
        from sambatune.bench.context import BenchContext, data_address

        self.form.set_shares([str(s.get("name")) for s in survey.shares if not s.get("printable")])
        if self.session.transport is None:
            return
        # Follow the managed smbd's address and port on every survey, unless the admin
        # typed others.
        context = BenchContext(
            data_address(self.session.transport), survey=survey, smb_conf_path=survey.config_path
        )
        if survey.ambiguous:  # no instance chosen yet: the Overview asks for one
            if not self.form.server.text():
                self.form.server.setText(context.data_address)
            return
        address = context.client_smb_address()
        if not self.form.server.text() or self.form.server.text() == self._surveyed_address:
            self.form.server.setText(address)
        self._surveyed_address = address
        if self._surveyed_port is None or self.form.port.value() == self._surveyed_port:
            self.form.port.setValue(context.smb_port())
        self._surveyed_port = context.smb_port()

    def _test_changed(self) -> None:
        test = self.form.current_test()
        self.explanation.setText(KINDS[test].explanation)
        if not self.running:
            self._show_figures_of(test)

    def _show_figures_of(self, test: str) -> None:
        """The curves, or the per-operation table for a test that counts calls."""
        # Tests that count calls have no throughput curve: their per-operation table shows.
        operations = _counts_operations(test)
        self.figures.setCurrentWidget(self.operations if operations else self.live)
        # A single run per operation: the run table would only repeat the operations table.
        self.runs.setVisible(not operations or self.form.runs.value() + self.form.warmup.value() > 1)

    def _view_changed(self, index: int) -> None:
        widget = self.views.widget(index)
        if widget is self.history:
            self.history.refresh()
        elif widget in (self.bottleneck, self.sockbuf) or (
            widget is self.security and self.security.result is None
        ):
            self.refresh_analysis()

    # -- running ----------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.task is not None

    def run(self) -> None:
        if self.running:
            return
        try:
            request = self.form.request()
        except SambaTuneError as error:
            self.session.failed.emit(error)
            return
        kind = KINDS[request.test]
        self.live.clear(kind.title, request.seconds if kind.timed else None)
        if kind.result_view == "operations":
            where = small_files_options(request, {}).where
            caption = plan_caption(
                request.count, request.size or 0, request.outstanding, where, request.connections
            )
            self.operations.clear(caption)
        self._show_figures_of(request.test)
        self.runs.clear()
        self.notes.setText("")
        self.run_numbers.clear()
        self.steps.clear()
        self.shown_step = None
        self.tracker.reset(f"Starting: {kind.title}…")
        self.progress.setValue(0)
        self.views.setCurrentIndex(0)
        session = self.session
        profile = session.profile

        def work(report: Any, cancel: CancelToken) -> BenchResult:
            from sambatune.bench.context import collect_context
            from sambatune.bench.results_db import ResultsDatabase

            transport = session.require_transport()
            report(Progress(None, "reading smb.conf…"))
            context = collect_context(
                transport, config_path=profile.config_path or None, survey=session.survey, cancel=cancel
            )
            # Names what each compared session negotiated from the server's smbstatus; sudo
            # is checked here, in the worker, as it may run a command on the server.
            extra = {}
            if kind.compares_sessions:
                reader = server_session_reader(transport, session.survey) if request.security else None
                extra["server_sessions"] = reader
            bench = kind.from_form(request, transport, context, cancel, **extra)
            for event in bench.events():
                report(event)
            assert bench.result is not None
            ResultsDatabase().save(bench.result, context, note=request.note)
            _remember_password(request)
            return bench.result

        self._set_busy(True)
        run_heap.run_started()
        self.status.setText(f"Starting: {kind.title}…")
        self.status_ticker.start()
        self.task = self.session.run_task(
            f"Benchmark: {kind.title}",
            work,
            on_event=self._on_event,
            on_done=self._done,
            on_failed=self._failed,
            on_cancelled=self._cancelled,
        )

    def cancel(self) -> None:
        if self.task is not None:
            self.status_ticker.stop()
            self.status.setText("Cancelling: the agents stop and clean up…")
            self.task.cancel()

    def _set_busy(self, busy: bool) -> None:
        self.run_button.setEnabled(not busy)
        self.cancel_button.setEnabled(busy)
        self.form.setEnabled(not busy)

    def _on_event(self, event: Any) -> None:
        self.tracker.observe(event)
        if isinstance(event, Sample):
            self.live.add(event)
        elif isinstance(event, Step):
            self.steps.append(event)
            if event.count > 1 and event.series:
                # Each step's own curves: SMB at 2 MB/s beside TCP at 4 GB/s would be a flat line.
                self.live.clear(f"Step {event.index} of {event.count}: {event.title}")
                self.shown_step = event
            self._show_status()
        elif isinstance(event, RunStarted):
            self.live.run_started(event.series, event.attempt, event.warmup, event.label)
            self.operations.run_started(event.series, event.warmup)
            self._show_status()
        elif isinstance(event, RunFinished):
            record = event.record
            self.live.run_finished(record)
            self.operations.run_finished(record)
            number = None
            if not record.warmup:
                number = self.run_numbers[record.series] = self.run_numbers.get(record.series, 0) + 1
            self.runs.add_run(record.series, record, number)
        elif isinstance(event, Progress):
            if event.fraction is None:
                self.progress.setRange(0, 0)
            else:
                self.progress.setRange(0, 1000)
                self.progress.setValue(int(event.fraction * 1000))
        elif isinstance(event, Notice):
            shown = self.notes.text()
            self.notes.setText((shown + "<br>" if shown else "") + "ℹ " + event.message)

    def _show_status(self) -> None:
        """The tracker's line: step, run of how many, live figure, time left."""
        if self.task is None:
            return
        line = self.tracker.line()
        if line and line != self.status.text():
            self.status.setText(line)

    def _end(self) -> None:
        if self.task is not None:
            run_heap.run_ended()
        self.task = None
        self.status_ticker.stop()
        self.live.finish()
        self._set_busy(False)
        self.progress.setRange(0, 1000)

    def _done(self, result: BenchResult) -> None:
        self._end()
        self.last_result = result
        self.progress.setValue(1000)
        self._show_main_step(result)
        self.runs.show_series(list(result.series.values()))
        if _counts_operations(result.test):
            self.operations.show_result(result)
            if all(len(series.counted) < 2 for series in result.series.values()):
                # One run per operation: the table above has its figures, and six notes
                # that one run shows no spread would say nothing about its N calls.
                self.runs.summary.setText("")
        mean = self._means_text(result)
        if has_comparison(result):
            # One figure would be one session's: each session's, the tab has the rest.
            mean = f": {status_figures(result)} (see Signing & encryption)"
        self.status.setText(f"Done, saved as session {result.session_id}{mean}.")
        if _view_of(result.test) == "sweep":
            self.sockbuf.show_result(result, f" (session {result.session_id})")
        if has_comparison(result):
            # The answer the admin ran it for, shown at once.
            self.security.show_result(result)
            self.views.setCurrentWidget(self.security)
            self._notes_without(sentences(result))
        self.history.refresh()

    def _means_text(self, result: BenchResult) -> str:
        """``: mean 112 MB/s``; for a test of two ways (write and read, upload and download)
        each one's mean, since one figure would hide the other direction."""
        from sambatune.units import format_figure

        main = next((step for step in self.steps if result.primary in step.series), None)
        if main is not None:
            names = [n for n in main.series if n in result.series]
        else:  # a test of one part: its series measured like the main one
            names = [n for n, s in result.series.items() if s.unit == result.summary.unit]
        if _counts_operations(result.test) or len(names) < 2:
            summary = result.summary.stats()
            if summary is None:
                return ""
            figure = format_figure(summary.mean, result.summary.unit)
            # Of several operations, say which one the figure is.
            return f": {result.primary} {figure}" if _counts_operations(result.test) else f": mean {figure}"
        parts = []
        for name in names:
            series = result.series[name]
            stats = series.stats()
            if stats is not None:
                parts.append(f"{name} {format_figure(stats.mean, series.unit)}")
        return ": mean " + ", ".join(parts) if parts else ""

    def _notes_without(self, moved: list[str]) -> None:
        """The Run tab's notes less the sentences another tab now shows, and a line saying
        where they went: with three sessions they would push the run table off the tab."""
        gone = {f"ℹ {text}" for text in moved}
        kept = [line for line in self.notes.text().split("<br>") if line and line not in gone]
        kept.append(
            "ℹ What each session negotiated, what signing and encryption cost and whether "
            "this computer's client was the limit: the Signing & encryption tab."
        )
        self.notes.setText("<br>".join(kept))

    def _show_main_step(self, result: BenchResult) -> None:
        """After a test of several steps, the curves of the step its main figure comes from
        (the SMB runs, not the raw TCP ceiling measured last)."""
        main = next((step for step in self.steps if result.primary in step.series), None)
        if main is None or main is self.shown_step or main.count < 2:
            return
        labels = {name: result.series[name].label for name in main.series if name in result.series}
        warmups = [(r.series, r.attempt) for name in labels for r in result.series[name].runs if r.warmup]
        title = main.title[:1].upper() + main.title[1:]
        records = [r for name in labels for r in result.series[name].runs]
        self.live.show_samples(title, result.samples, labels, warmups, records)
        self.shown_step = main

    def _failed(self, error: SambaTuneError) -> None:
        self._end()
        self.progress.setValue(0)  # nothing was saved: an empty bar, not a finished one
        self.status.setText(f"Failed: {error.message}")
        self.session.failed.emit(error)

    def _cancelled(self) -> None:
        self._end()
        self.progress.setValue(0)
        self.status.setText("Cancelled; nothing was saved.")

    # -- analysis views -----------------------------------------------------------------
    def refresh_analysis(self) -> None:
        server = self._server_label()

        def work(report: Any, cancel: CancelToken) -> tuple[list[StoredSession], dict[int, SessionFacts]]:
            from sambatune.bench.bottleneck_inputs import SessionFacts
            from sambatune.bench.results_db import ResultsDatabase

            database = ResultsDatabase()
            sessions = [database.load(s.id) for s in database.sessions(server=server, limit=200)]
            return sessions, {s.id: SessionFacts.of(s) for s in sessions}

        self._run_task(
            "Reading the measured layers", work, on_done=lambda loaded: self._show_analysis(*loaded)
        )

    def _show_analysis(self, sessions: list[StoredSession], facts: dict[int, SessionFacts]) -> None:
        self.bottleneck.show_results(sessions, facts)
        sweeps = [s.result for s in sessions if _view_of(s.result.test) == "sweep"]
        if sweeps:
            newest = max(sweeps, key=lambda r: r.session_id or 0)
            self.sockbuf.show_result(newest, f" (session {newest.session_id})")
        comparisons = [s.result for s in sessions if has_comparison(s.result)]
        if comparisons and self.security.result is None:
            # Nothing compared since the page opened: the newest comparison stored for this server.
            self.security.show_result(max(comparisons, key=lambda r: r.session_id or 0))


def _remember_password(request: RunRequest) -> None:
    """After a good run, and only when asked: the SMB password into the keyring (worker thread)."""
    if request.remember and request.user and request.password:
        from sambatune.remote.secrets import save_secret

        save_secret(SECRET_KIND, request.secret_target, request.password)


def _view_of(test: str) -> str:
    """How a result of ``test`` shows; a stored test no kind knows any more shows its runs."""
    kind = KINDS.get(test)
    return kind.result_view if kind is not None else "runs"


def _counts_operations(test: str) -> bool:
    return _view_of(test) == "operations"
