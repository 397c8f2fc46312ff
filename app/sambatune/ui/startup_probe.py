"""When did the main window first paint? For bench/startup_time.py.

With ``SAMBATUNE_STARTUP_PROBE=FILE`` set, the app writes ``{"first_paint_at": T,
"modules": [...]}`` (T from time.time(); the modules loaded by then) to FILE when its main
window first paints, then quits. The benchmark compares T with the moment it started the
process; tests check that nothing a connection needs was loaded before the paint.
"""

from __future__ import annotations

import json
import sys
import time

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer

STARTUP_PROBE_ENV = "SAMBATUNE_STARTUP_PROBE"


class FirstPaintProbe(QObject):
    def __init__(self, path: str, window: QObject) -> None:
        super().__init__(window)
        self.path = path
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            watched.removeEventFilter(self)
            with open(self.path, "w", encoding="utf-8") as file:
                json.dump({"first_paint_at": time.time(), "modules": sorted(sys.modules)}, file)
            QTimer.singleShot(0, QCoreApplication.quit)
        return False
