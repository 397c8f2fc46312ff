"""What happened, afterwards: the GUI logs every error with its traceback, survives
exceptions nobody caught, routes Qt's warnings to the log and opens the log folder."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator

import pytest
from PySide6.QtCore import QTimer, QUrl, qCritical, qWarning
from PySide6.QtGui import QAction, QDesktopServices
from PySide6.QtWidgets import QMenu
from pytestqt.qtbot import QtBot

from sambatune import appdirs
from sambatune.errors import Cancelled, InvalidInput
from sambatune.ui.error_hooks import ErrorHooks
from sambatune.ui.main_window import MainWindow
from sambatune.ui.tasks import TaskRunner


@pytest.fixture
def window(qtbot: QtBot) -> MainWindow:
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    return win


@pytest.fixture
def hooks(window: MainWindow) -> Iterator[ErrorHooks]:
    """The app's hooks, installed as app.main installs them, for this test only."""
    installed = ErrorHooks(window.show_error)
    installed.install()
    yield installed
    installed.uninstall()


def records_of(caplog: pytest.LogCaptureFixture, name: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == name]


# -- the task runner ----------------------------------------------------------------------


def run_task(qtbot: QtBot, work: Callable[[], object]) -> None:
    runner = TaskRunner()
    finished: list[bool] = []
    runner.start(
        lambda report, cancel: work(), name="Reading files1", on_finished=lambda: finished.append(True)
    )
    qtbot.waitUntil(lambda: bool(finished), timeout=5000)
    # The runner's lifetime rule (ui/tasks.py): its worker may still be winding down.
    assert runner.shutdown(5000)


def test_a_task_failure_is_logged_with_details_and_traceback(
    qtbot: QtBot,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def fail() -> None:
        raise InvalidInput("The file is gone.", details="/etc/samba/smb.conf: no such file")

    run_task(qtbot, fail)
    [record] = records_of(caplog, "sambatune.ui.tasks")
    assert record.levelno == logging.WARNING
    assert record.getMessage() == (
        "Reading files1 failed: The file is gone.\n/etc/samba/smb.conf: no such file"
    )
    assert record.exc_info is not None and "in fail" in caplog.text


@pytest.mark.expect_log_errors("Reading files1 failed unexpectedly")
def test_a_bug_in_a_task_is_logged_as_an_error(
    qtbot: QtBot,
    caplog: pytest.LogCaptureFixture,
) -> None:
    empty: dict[str, int] = {}
    run_task(qtbot, lambda: empty["no such key"])
    [record] = records_of(caplog, "sambatune.ui.tasks")
    assert record.levelno == logging.ERROR
    assert record.exc_info is not None and record.exc_info[0] is KeyError


def test_a_cancelled_task_is_no_error(qtbot: QtBot, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="sambatune.ui.tasks")

    def cancelled() -> None:
        raise Cancelled()

    run_task(qtbot, cancelled)
    assert [(r.levelno, r.getMessage()) for r in records_of(caplog, "sambatune.ui.tasks")] == [
        (logging.INFO, "Reading files1: cancelled")
    ]


# -- exceptions nobody caught ----------------------------------------------------------


@pytest.mark.qt_no_exception_capture
@pytest.mark.expect_log_errors("Uncaught RuntimeError")
def test_an_exception_in_a_slot_is_logged_and_shown_and_the_app_goes_on(
    window: MainWindow,
    hooks: ErrorHooks,
    qtbot: QtBot,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def clicked() -> None:
        raise RuntimeError("the button handler broke")

    QTimer.singleShot(0, clicked)
    qtbot.waitUntil(lambda: window.message_bar.isVisible(), timeout=5000)
    assert window.message_bar.message == (
        "Something went wrong inside SambaTune: RuntimeError: the button handler broke. "
        "The app keeps running; what you were doing may not have finished."
    )
    assert "in clicked" in window.message_bar._details
    [record] = records_of(caplog, "sambatune.ui.error_hooks")
    assert record.levelno == logging.ERROR and record.exc_info is not None
    assert window.isVisible()


@pytest.mark.expect_log_errors("Uncaught ValueError in survey-thread")
def test_an_exception_in_a_thread_reaches_the_window(
    window: MainWindow,
    hooks: ErrorHooks,
    qtbot: QtBot,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def work() -> None:
        raise ValueError("bad answer")

    thread = threading.Thread(target=work, name="survey-thread")
    thread.start()
    thread.join()
    qtbot.waitUntil(lambda: window.message_bar.isVisible(), timeout=5000)
    assert "ValueError: bad answer" in window.message_bar.message
    assert "Uncaught ValueError in survey-thread" in caplog.text


def test_hooks_put_back_what_was_there(window: MainWindow) -> None:
    import sys

    before = sys.excepthook, threading.excepthook
    hooks = ErrorHooks(window.show_error)
    hooks.install()
    assert sys.excepthook == hooks.excepthook
    hooks.uninstall()
    assert (sys.excepthook, threading.excepthook) == before


# -- Qt's messages -----------------------------------------------------------------------


@pytest.mark.expect_log_errors("a critical one")
def test_qt_messages_go_to_the_log(
    hooks: ErrorHooks,
    caplog: pytest.LogCaptureFixture,
) -> None:
    qWarning("QLayout: a warning from Qt")
    qCritical("a critical one")
    assert [
        (r.name, r.levelno, r.getMessage().split(" (")[0]) for r in caplog.records if r.name.startswith("qt")
    ] == [
        ("qt", logging.WARNING, "QLayout: a warning from Qt"),
        ("qt", logging.ERROR, "a critical one"),
    ]


# -- Help > Open log folder -----------------------------------------------------------------


def test_help_opens_the_log_folder(
    window: MainWindow,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    opened: list[QUrl] = []

    def open_url(url: QUrl) -> bool:
        opened.append(url)
        return True

    monkeypatch.setattr(QDesktopServices, "openUrl", open_url)
    action = window.findChild(QAction, "openLogFolderAction")
    assert action is not None and action.text() == "Open &log folder"
    help_menu = window.menuBar().actions()[-1].menu()  # a QObject to PySide6's stub
    assert isinstance(help_menu, QMenu)
    assert action in help_menu.actions()
    action.trigger()
    assert [url.toLocalFile() for url in opened] == [str(appdirs.log_dir())]
    assert not window.message_bar.isVisible()


def test_without_a_file_manager_the_folder_is_named(
    window: MainWindow,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: False)
    action = window.findChild(QAction, "openLogFolderAction")
    assert action is not None
    action.trigger()
    assert window.message_bar.message == (
        f"The log folder is {appdirs.log_dir()} (no file manager could open it)."
    )


def test_a_finished_task_is_let_go_on_the_gui_thread_only(qtbot: QtBot) -> None:
    """A worker still holds its task while it leaves run(); the runner keeps every ended
    task until no worker runs, so a task (and its signals object) is never destroyed on a
    worker thread while the GUI thread delivers its signals."""
    import weakref

    runner = TaskRunner()
    freed_on: list[str] = []
    finished: list[bool] = []
    for _ in range(200):
        task = runner.start(
            lambda report, cancel: None, name="quick", on_finished=lambda: finished.append(True)
        )
        weakref.finalize(task, lambda: freed_on.append(threading.current_thread().name))
        del task
    qtbot.waitUntil(lambda: len(finished) == 200, timeout=20000)
    assert runner.shutdown(5000)
    qtbot.wait(50)  # the relays' deferred deletes
    assert len(freed_on) == 200
    assert set(freed_on) == {threading.main_thread().name}


def test_a_runner_let_go_after_its_tasks_is_freed_at_once(qtbot: QtBot) -> None:
    """A finished task's relay waits for its deferred delete; it must not keep the runner
    alive meanwhile, or that delete (the runner's child) destroys the runner under itself
    and the process crashes."""
    import time
    import weakref

    from PySide6.QtCore import QCoreApplication

    from sambatune.ui.tasks import _Relay

    runner = TaskRunner()
    finished: list[bool] = []
    runner.start(lambda report, cancel: None, name="quick", on_finished=lambda: finished.append(True))
    deadline = time.monotonic() + 5
    while not finished and time.monotonic() < deadline:
        QCoreApplication.processEvents()  # delivers signals, leaves deferred deletes waiting
        time.sleep(0.001)
    assert finished and runner.findChildren(_Relay)  # the relay awaits its deferred delete
    assert runner.shutdown(5000)
    gone = weakref.ref(runner)
    del runner
    assert gone() is None
