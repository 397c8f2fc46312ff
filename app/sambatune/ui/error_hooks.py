"""Nothing goes wrong in the app without a trace.

PySide hands an exception raised in a slot or a Qt virtual to ``sys.excepthook`` and
carries on; Python's default prints it to a terminal the desktop user never sees, and
the click just seems to do nothing. :class:`ErrorHooks` logs such exceptions (of any
thread) with their traceback and shows them in the main window's message bar; the app
keeps running. Qt's own messages (warnings from the platform plugin, from layouts,
from painting) go to the log too, under their Qt category.
"""

from __future__ import annotations

import logging
import sys
import threading
import traceback
from collections.abc import Callable
from types import TracebackType
from typing import Any

from PySide6.QtCore import (
    QMessageLogContext,
    QObject,
    QtMsgType,
    Signal,
    Slot,
    qInstallMessageHandler,
)

from sambatune.errors import SambaTuneError

log = logging.getLogger(__name__)

QT_LEVELS = {
    QtMsgType.QtDebugMsg: logging.DEBUG,
    QtMsgType.QtInfoMsg: logging.INFO,
    QtMsgType.QtWarningMsg: logging.WARNING,
    QtMsgType.QtCriticalMsg: logging.ERROR,
    QtMsgType.QtFatalMsg: logging.CRITICAL,
}


def qt_message(kind: QtMsgType, context: QMessageLogContext, message: str) -> None:
    """Qt's message handler: the message to the log, under ``qt`` or its category."""
    category = context.category or ""
    logger = logging.getLogger(category if category.startswith("qt") else "qt")
    where = f" ({context.file}:{context.line})" if context.file else ""
    logger.log(QT_LEVELS.get(kind, logging.WARNING), "%s%s", message, where)
    if kind == QtMsgType.QtFatalMsg:
        # Qt aborts when this returns: what the log holds must be on disk first.
        for handler in logging.getLogger().handlers:
            handler.flush()


def uncaught_error(value: BaseException, tb: TracebackType | None) -> SambaTuneError:
    """What the message bar shows for an exception nobody caught."""
    trace = "".join(traceback.format_exception(type(value), value, tb))
    if isinstance(value, SambaTuneError):
        details = f"{value.details}\n\n{trace}" if value.details else trace
        return SambaTuneError(value.message, details=details)
    return SambaTuneError(
        f"Something went wrong inside SambaTune: {type(value).__name__}: {value}. "
        "The app keeps running; what you were doing may not have finished.",
        details=trace + "\nThis is in the log too (Help > Open log folder); "
        "please include it in a bug report.",
    )


class ErrorHooks(QObject):
    """``sys.excepthook``, ``threading.excepthook`` and Qt's message handler, installed
    together by :meth:`install` (the app does it once) and put back by :meth:`uninstall`.

    Exceptions may come from any thread; :attr:`uncaught` brings them to the GUI thread,
    where ``show`` (the main window's message bar) gets them.
    """

    uncaught = Signal(object)  # a SambaTuneError

    def __init__(self, show: Callable[[SambaTuneError], None] | None = None) -> None:
        super().__init__()
        self.show = show
        self.uncaught.connect(self._show)
        self._previous: tuple[Any, Any, Any] | None = None

    def install(self) -> None:
        previous_qt = qInstallMessageHandler(qt_message)
        self._previous = (sys.excepthook, threading.excepthook, previous_qt)
        sys.excepthook = self.excepthook
        threading.excepthook = self.thread_excepthook

    def uninstall(self) -> None:
        if self._previous is None:
            return
        sys.excepthook, threading.excepthook, previous_qt = self._previous
        qInstallMessageHandler(previous_qt)
        self._previous = None

    def excepthook(self, kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):  # Ctrl+C in the terminal that started us
            sys.__excepthook__(kind, value, tb)
            return
        log.error("Uncaught %s", kind.__name__, exc_info=(kind, value, tb))
        self._hand_over(uncaught_error(value, tb))

    def thread_excepthook(self, args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit or args.exc_value is None:
            return
        name = args.thread.name if args.thread is not None else "a thread"
        log.error(
            "Uncaught %s in %s",
            args.exc_type.__name__,
            name,
            exc_info=(args.exc_type, args.exc_value, args.exc_traceback),
        )
        self._hand_over(uncaught_error(args.exc_value, args.exc_traceback))

    def _hand_over(self, error: SambaTuneError) -> None:
        try:
            self.uncaught.emit(error)
        except RuntimeError:  # shutting down: the log has it
            pass

    @Slot(object)
    def _show(self, error: SambaTuneError) -> None:
        if self.show is not None:
            self.show(error)
