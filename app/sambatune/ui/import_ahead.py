"""Load, in the background, the modules the first connection (or Fleet window) will need.

The window paints with only what it shows first (the server list and a Connect button).
A connection then needs SSH (paramiko), the smb.conf editor, and the Benchmarks page
with pyqtgraph and numpy: about 0.6 s of imports which, made on the GUI thread at the
first Connect, froze the window. After the first paint a thread imports them while the
window waits for a click; Python lets the GUI thread run every few milliseconds
meanwhile. The thread only imports: it makes no Qt objects, and a module it has not
finished when the GUI thread asks for it is simply waited for.

One thing only the GUI thread may do is done there, in a turn of its own: the icon theme
lookup behind a line edit's clear button (45 ms the first time on X11), which the
smb.conf page otherwise pays while it is made.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable, Sequence

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QStyle

log = logging.getLogger(__name__)

#: In the order a first connection asks for them.
MODULES = (
    "sambatune.ui.prompts",  # paramiko: the Connect button's host-key prompts
    "sambatune.remote.connection",
    "sambatune.ui.overview_page",
    "sambatune.ui.editor.page",
    "sambatune.ui.wizard.page",
    "sambatune.ui.bench.page",  # pyqtgraph and numpy
    "sambatune.ui.history_page",
    "sambatune.ui.client.tuning_page",
    "sambatune.ui.fleet.window",  # File > Open Ansible inventory…
)

THREAD_NAME = "sambatune-import-ahead"


def import_all(modules: Sequence[str], first: Callable[[], None] | None = None) -> None:
    if first is not None:
        first()
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # the GUI thread's own import reports it where it is needed
            log.debug("importing %s ahead failed", name, exc_info=True)


class AfterFirstPaint(QObject):
    """Start ``import_all`` in a thread when ``window`` first paints."""

    def __init__(
        self, window: QObject, first: Callable[[], None] | None = None, modules: Sequence[str] = MODULES
    ) -> None:
        super().__init__(window)
        self.first = first
        self.modules = modules
        self.worker: threading.Thread | None = None
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            watched.removeEventFilter(self)
            # Once this paint is on the screen: the thread would hold Python's lock
            # while the window draws.
            QTimer.singleShot(0, self._start)
        return False

    def _start(self) -> None:
        if self.worker is None:
            self.worker = threading.Thread(
                target=import_all, args=(self.modules, self.first), name=THREAD_NAME, daemon=True
            )
            self.worker.start()
            QTimer.singleShot(0, look_up_theme_icons)

    def wait(self, seconds: float = 30.0) -> None:
        """Let the imports end before Python does: an interpreter that shuts down while a
        thread is inside an extension module's import (numpy, Qt) can crash (a window
        closed at once, the start-up probe's quit)."""
        if self.worker is not None:
            self.worker.join(seconds)


def look_up_theme_icons() -> None:
    style = QApplication.style()
    if style is not None:
        style.standardIcon(QStyle.StandardPixmap.SP_LineEditClearButton)
