"""Lint while the user types: after a pause, on a snapshot, in a process of its own.

The snapshot is a copy of the conf document taken on the GUI thread (a list copy,
about a millisecond for 50,000 lines). The check runs in a child process
(:mod:`sambatune.conf.lint_process`): in a thread it would hold the interpreter lock
that every keystroke needs. Its findings are handed back only if the text has not
changed since; otherwise the newer text is linted. The effective view, which the
form view shows, is built here only while someone wants it (:attr:`LintRunner.want_view`):
it is a large object graph that cannot cross a pipe cheaply.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from PySide6.QtCore import QObject, QTimer, Signal

from sambatune.cancellation import CancelToken
from sambatune.conf.catalog import ParameterCatalog
from sambatune.conf.effective import EffectiveConfig, IncludeLink, IncludeReader
from sambatune.conf.lint import Finding
from sambatune.conf.lint_process import LintProcess
from sambatune.conf.syntax import is_global_section, section_key
from sambatune.errors import SambaTuneError
from sambatune.ui.editor.buffer import ConfBuffer
from sambatune.ui.editor.text_edit import Marker
from sambatune.ui.tasks import Task, TaskRunner

DELAY_MS = 300


class LintResult(NamedTuple):
    #: The buffer's generation the check was of (loads, edits).
    generation: tuple[int, int]
    findings: list[Finding]
    #: The effective view, when it was wanted (the form view is showing).
    view: EffectiveConfig | None
    #: Findings in the edited file by line, as the gutter shows them.
    markers: dict[int, list[Marker]]
    includes: list[IncludeLink]
    #: Settings each section makes itself, by folded name.
    section_settings: dict[str, int]

    def settings_in(self, section: str) -> int | None:
        """How many settings ``section`` makes itself; None for no such section."""
        return self.section_settings.get("global" if is_global_section(section) else section_key(section))


class LintRunner(QObject):
    finished = Signal(object)  # a LintResult for the text as it is now
    failed = Signal(object)  # a SambaTuneError

    def __init__(self, buffer: ConfBuffer, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.buffer = buffer
        self.runner = runner
        self.catalog: ParameterCatalog | None = None
        #: Reads included files (through the server's transport, or from this disk).
        self.read_include: Callable[[], IncludeReader | None] = lambda: None
        self.latest: LintResult | None = None
        #: Build the effective view with each check (the form view shows it).
        self.want_view = False
        self.process = LintProcess()
        # Results no longer needed. Freeing the objects of a large file's effective view
        # takes milliseconds, so the next worker drops them instead of the GUI thread.
        self._discarded: list[LintResult] = []
        self._running = False
        self._again = False
        self._task: Task | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DELAY_MS)
        self._timer.timeout.connect(self.run_now)
        buffer.changed.connect(self.schedule)

    @property
    def busy(self) -> bool:
        return self._running or self._timer.isActive()

    @property
    def current(self) -> LintResult | None:
        """The latest result, if it is for the text as it is now."""
        latest = self.latest
        return latest if latest is not None and latest.generation == self.buffer.generation else None

    def schedule(self) -> None:
        """The text changed: check it after a pause; a check of the old text stops."""
        self._timer.start()
        if self._task is not None:
            # Its result would be thrown away, and meanwhile it competes with typing
            # for the interpreter.
            self._task.cancel()

    def stop(self) -> None:
        """No more checks (the editor is closing)."""
        self.catalog = None
        self._timer.stop()
        self._again = False
        if self._task is not None:
            self._task.cancel()
        self.process.close()

    def run_now(self) -> None:
        self._timer.stop()
        if self.catalog is None:
            return
        if self._running:
            self._again = True
            return
        self._running = True
        snapshot = self.buffer.document.copy()
        generation = self.buffer.generation
        catalog = self.catalog
        reader = self.read_include()
        want_view = self.want_view
        process = self.process
        discarded, self._discarded = self._discarded, []

        def work(report: Any, cancel: CancelToken) -> LintResult:
            from sambatune.conf.effective import effective_view

            _free(discarded)
            summary = process.check(snapshot.render(), snapshot.path, catalog, reader, cancel)
            view = None
            if want_view:
                # The reader keeps what it read: the includes are not fetched twice.
                view = effective_view(snapshot, catalog, read_include=reader, cancel=cancel)
            markers: dict[int, list[Marker]] = {}
            for finding in summary.findings:
                if finding.file is None:
                    markers.setdefault(finding.line, []).append(Marker(finding.severity, finding.message))
            return LintResult(
                generation, summary.findings, view, markers, summary.includes, summary.section_settings
            )

        self._task = self.runner.start(
            work,
            name="Checking smb.conf",
            on_done=self._done,
            on_failed=self._failed,
            on_finished=self._finished,
        )

    def _done(self, result: LintResult) -> None:
        # A result for older text is dropped: the change that made it old has already
        # asked for a new run.
        if result.generation == self.buffer.generation:
            if self.latest is not None:
                self._discarded.append(self.latest)
            self.latest = result
            self.finished.emit(result)
        else:
            self._discarded.append(result)

    def _failed(self, error: SambaTuneError) -> None:
        self.failed.emit(error)

    def _finished(self) -> None:
        self._running = False
        self._task = None
        if self._again:
            self._again = False
            self.run_now()


def _free(results: list[LintResult]) -> None:
    """Let go of old results a section at a time.

    Freeing a large effective view in one step holds the GIL for tens of milliseconds
    (no bytecode runs while a deep object graph is torn down); one section at a time,
    the GUI thread gets its turn in between. Nothing is changed in the results: a
    view someone still shows stays whole.
    """
    while results:
        view = results.pop().view
        sections = list(view.sections.values()) if view is not None else []
        while sections:
            sections.pop()
