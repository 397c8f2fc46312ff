"""Start the desktop app."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any


def _application() -> Any:
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        app = QApplication([sys.argv[0] if sys.argv else "sambatune"])
        app.setApplicationName("SambaTune")
        app.setOrganizationName("SambaTune")
        app.setDesktopFileName("sambatune")
    return app


def draw_live_plot_once() -> tuple[int, int, str]:
    """Feed the live plot two runs of samples and render it; for --self-check --gui.

    Exercises what a frozen build must carry for the Benchmarks page (pyqtgraph, numpy,
    the Qt painting behind them). Returns (points plotted, pixels in the first run's
    colour, the libraries' versions).
    """
    import numpy
    import pyqtgraph
    from PySide6.QtGui import QColor

    from sambatune.bench.events import Sample
    from sambatune.ui.bench.live_plot import COLORS, LivePlot

    _application()
    plot = LivePlot()
    plot.resize(480, 320)
    plot.clear("self-check", seconds=1.0)
    for attempt in (1, 2):
        plot.run_started("read", attempt, False, "read")
        for step in range(1, 11):
            plot.add(Sample("read", attempt, step / 10, step << 20, (100 + 10 * attempt) * 1e6))
        plot.finish()
    image = plot.grab().toImage()
    first = QColor(COLORS[0]).rgb()
    colored = sum(
        1 for x in range(image.width()) for y in range(image.height()) if image.pixel(x, y) == first
    )
    return plot.points, colored, f"pyqtgraph {pyqtgraph.__version__}, numpy {numpy.__version__}"


def _log_versions() -> None:
    """What a bug report needs first: which SambaTune, on what."""
    import logging
    import platform

    import PySide6

    from sambatune import __version__

    logging.getLogger(__name__).info(
        "SambaTune %s starting: Python %s, PySide6 %s, %s",
        __version__,
        platform.python_version(),
        PySide6.__version__,
        platform.platform(),
    )


def main(argv: Sequence[str] | None = None) -> int:
    from sambatune.logfile import start_crash_log, start_file_log
    from sambatune.ui.error_hooks import ErrorHooks
    from sambatune.ui.import_ahead import AfterFirstPaint
    from sambatune.ui.main_window import MainWindow, app_icon
    from sambatune.ui.startup_probe import STARTUP_PROBE_ENV, FirstPaintProbe

    start_file_log()
    start_crash_log()
    app = _application()
    hooks = ErrorHooks()
    hooks.install()
    app.setWindowIcon(app_icon())
    window = MainWindow()
    hooks.show = window.show_error
    probe = os.environ.get(STARTUP_PROBE_ENV)
    if probe:
        FirstPaintProbe(probe, window)
    # The versions (importlib.metadata) are looked up after the first paint too.
    imports = AfterFirstPaint(window, first=_log_versions)
    window.show()
    code = int(app.exec())
    imports.wait()
    return code


def open_main_window_once() -> tuple[str, str]:
    """Open the main window, let it paint, close it; for --self-check --gui.

    Returns the window title and the name of the Qt platform plugin that showed it.
    """
    from PySide6.QtCore import QTimer

    from sambatune.ui.main_window import MainWindow, app_icon

    app = _application()
    app.setWindowIcon(app_icon())
    window = MainWindow()
    window.show()
    QTimer.singleShot(200, window.close)
    QTimer.singleShot(400, app.quit)
    app.exec()
    return window.windowTitle(), app.platformName()
