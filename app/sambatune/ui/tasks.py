"""Run core work off the GUI thread and hear about it on the GUI thread.

A task is a plain function ``fn(report, cancel)``: it may call ``report(event)``
as often as it likes (from its worker thread) and returns a result or raises.
The GUI gets ``reported``, ``done``, ``failed`` and ``cancelled`` as Qt signals, so
widgets are only ever touched from the GUI thread. Like Picard's ``run_task`` and
napari's ``GeneratorWorker``, with cancel as a flag the core checks.

How each task ends goes to the log: an anticipated failure (a
:class:`~sambatune.errors.SambaTuneError`) at WARNING with its details and traceback,
anything else (a bug) at ERROR with its traceback, before the GUI shows it.
"""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, QTimer, Signal, Slot

from sambatune.cancellation import CancelToken
from sambatune.errors import Cancelled, SambaTuneError

log = logging.getLogger(__name__)

Report = Callable[[Any], None]
SWITCH_INTERVAL_S = 0.001
TaskFunction = Callable[[Report, CancelToken], Any]


class TaskSignals(QObject):
    # Not called `event`: that name is QObject's event handler.
    reported = Signal(object)
    done = Signal(object)
    failed = Signal(object)  # a SambaTuneError (unexpected errors are wrapped)
    cancelled = Signal()
    finished = Signal()  # after any of done / failed / cancelled


class Task:
    """One piece of work. The pool is given its bound ``run``, not the task as a
    QRunnable: PySide keeps a QRunnable the pool started referenced for as long as the
    pool lives, so every task (and whatever its function holds: documents, surveys)
    stayed in memory until its window closed; a callable is let go once it has run."""

    def __init__(self, fn: TaskFunction, name: str) -> None:
        self.fn = fn
        self.name = name
        self.cancel_token = CancelToken()
        self.signals = TaskSignals()
        self.running = True

    def cancel(self) -> None:
        self.cancel_token.cancel()

    def run(self) -> None:
        log.debug("%s: started", self.name)
        try:
            result = self.fn(self.signals.reported.emit, self.cancel_token)
        except Cancelled:
            log.info("%s: cancelled", self.name)
            self._finish(self.signals.cancelled.emit)
        except SambaTuneError as known:
            details = f"\n{known.details}" if known.details else ""
            log.warning("%s failed: %s%s", self.name, known.message, details, exc_info=True)
            self._fail(known)
        except Exception as exc:  # shown to the user, never swallowed
            log.error("%s failed unexpectedly", self.name, exc_info=True)
            self._fail(
                SambaTuneError(
                    f"{self.name} failed unexpectedly: {type(exc).__name__}: {exc}",
                    details=traceback.format_exc(),
                )
            )
        else:
            log.debug("%s: done", self.name)
            if self.cancel_token.cancelled:
                self._finish(self.signals.cancelled.emit)
            else:
                self._finish(lambda: self.signals.done.emit(result))

    def _fail(self, error: SambaTuneError) -> None:
        if self.cancel_token.cancelled:
            self._finish(self.signals.cancelled.emit)
        else:
            self._finish(lambda: self.signals.failed.emit(error))

    def _finish(self, emit: Callable[[], None]) -> None:
        self.running = False
        try:
            emit()
            self.signals.finished.emit()
        except RuntimeError:
            # The application is shutting down and the receiver is gone; nobody listens.
            pass


class _Relay(QObject):
    """Lives in the GUI thread; the worker's signals reach the callbacks through it.

    Connecting worker signals to bound slots of a GUI-thread QObject makes every
    delivery a queued call on the GUI thread, whatever PySide does with bare lambdas.
    """

    def __init__(self, callbacks: dict[str, Callable[..., None] | None], parent: QObject) -> None:
        super().__init__(parent)
        self._callbacks = callbacks

    def release(self) -> None:
        """Let go of the callbacks: they hold the runner and the page's methods."""
        self._callbacks = {}

    def _call(self, name: str, *args: Any) -> None:
        callback = self._callbacks.get(name)
        if callback is not None:
            callback(*args)

    @Slot(object)
    def on_event(self, event: Any) -> None:
        self._call("event", event)

    @Slot(object)
    def on_done(self, result: Any) -> None:
        self._call("done", result)

    @Slot(object)
    def on_failed(self, error: Any) -> None:
        self._call("failed", error)

    @Slot()
    def on_cancelled(self) -> None:
        self._call("cancelled")

    @Slot()
    def on_finished(self) -> None:
        self._call("finished")
        self._call("forget")


class TaskRunner(QObject):
    """Starts tasks on a thread pool and keeps them alive until they finish.

    Its lifetime rule: a runner outlives its tasks. Keep it where something long-lived
    holds it (a window, a page, a test fixture) and call :meth:`shutdown` before letting
    it go. ``finished`` reaches the GUI thread while the worker is still winding down its
    runnable; a runner dropped then takes its thread pool with it under that worker, and
    the process crashes (a test that let its runner go out of scope did, 1 run in 5).
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        # Workers share the GIL with the GUI thread. Python makes a thread that wants
        # the GIL wait up to the switch interval (5 ms by default) for each hand-over,
        # which a busy worker turns into visible lag while typing; 1 ms keeps it small.
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(8)
        self._active: dict[Task, _Relay] = {}
        # Tasks that finished, kept until no worker runs: see _forget.
        self._ended: list[Task] = []

    def start(
        self,
        fn: TaskFunction,
        *,
        name: str,
        on_event: Callable[[Any], None] | None = None,
        on_done: Callable[[Any], None] | None = None,
        on_failed: Callable[[SambaTuneError], None] | None = None,
        on_cancelled: Callable[[], None] | None = None,
        on_finished: Callable[[], None] | None = None,
    ) -> Task:
        task = Task(fn, name)
        relay = _Relay(
            {
                "event": on_event,
                "done": on_done,
                "failed": on_failed,
                "cancelled": on_cancelled,
                "finished": on_finished,
                "forget": lambda: self._forget(task),
            },
            self,
        )
        task.signals.reported.connect(relay.on_event)
        task.signals.done.connect(relay.on_done)
        task.signals.failed.connect(relay.on_failed)
        task.signals.cancelled.connect(relay.on_cancelled)
        task.signals.finished.connect(relay.on_finished)
        self._active[task] = relay
        self._let_go_of_ended()
        self.pool.start(task.run)
        return task

    def _forget(self, task: Task) -> None:
        relay = self._active.pop(task, None)
        if relay is not None:
            # Its "forget" callback holds this runner. Kept until the deferred delete,
            # it could be the runner's last reference: the runner would then be
            # destroyed inside its own child's destruction, and the process crash (the
            # fast tier did, 3 runs in 10, once a test had let its runner go).
            relay.release()
            relay.deleteLater()
        # The worker still holds the task while it leaves run(). Were that the last
        # reference, the task and its signals object would be destroyed on the worker
        # thread while the GUI thread delivers their signals (a rare crash in the fast
        # tier). Ended tasks are let go only once no worker runs.
        self._ended.append(task)
        self._let_go_of_ended()

    def _let_go_of_ended(self) -> None:
        if self.pool.activeThreadCount() == 0:
            self._ended.clear()

    @property
    def active(self) -> list[Task]:
        return list(self._active)

    def cancel_all(self) -> None:
        for task in self.active:
            task.cancel()

    def shutdown(self, timeout_ms: int = 5000) -> bool:
        """Cancel everything and wait (used when the window closes)."""
        self.cancel_all()
        done = bool(self.pool.waitForDone(timeout_ms))
        self._let_go_of_ended()
        return done


class Throttle(QObject):
    """Coalesce a fast event stream into at most one GUI update per interval."""

    def __init__(
        self, interval_ms: int, flush: Callable[[list[Any]], None], parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._pending: list[Any] = []
        self._flush = flush
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._emit)

    def push(self, item: Any) -> None:
        self._pending.append(item)
        if not self._timer.isActive():
            self._timer.start()

    def _emit(self) -> None:
        if not self._pending:
            self._timer.stop()
            return
        items, self._pending = self._pending, []
        self._flush(items)

    def drain(self) -> None:
        self._timer.stop()
        if self._pending:
            self._emit()
