"""Render every page in a process of its own, on the screen QT_QPA_PLATFORM describes.

    QT_QPA_PLATFORM=offscreen:configfile=SCREEN.json python tests/scaled_screens.py PROFILE.json OUT
    python tests/scaled_screens.py PROFILE.json OUT -platform offscreen --size 1180x780 \
        --font-dir FONTS --font "Tahoma 9"

A scaled screen (125%, 150%) needs its own process: Qt reads the screen and its device
pixel ratio once, when the application starts, and the test process has one already.
Connects to the server PROFILE.json describes (keyword arguments of ServerProfile),
saves each page as OUT/<page>.png and prints one JSON object: the screen, the window's
size, and what screen_checks found on each page. Qt's own ``-platform`` argument does
what QT_QPA_PLATFORM does where the variable cannot reach the process (Wine keeps
QT_* variables from Windows programs); ``--size`` sets the window's size; ``--font-dir``
and ``--font`` give offscreen Qt on Windows, which finds no system fonts, the folder of
its fonts and the font for the whole app.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication

from sambatune.profiles import ServerProfile
from sambatune.ui.main_window import MainWindow
from screen_checks import problems_of, workspace_pages


def _until(app: QApplication, condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        app.processEvents()
        time.sleep(0.01)


def _settle(app: QApplication, seconds: float = 0.3) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def main() -> int:
    profile_file, out, *rest = sys.argv[1:]
    options = dict(zip(rest[::2], rest[1::2], strict=True))
    Path(out).mkdir(parents=True, exist_ok=True)
    if "--font-dir" in options:
        os.environ["QT_QPA_FONTDIR"] = options["--font-dir"]
    qt_args = ["-platform", options["-platform"]] if "-platform" in options else []
    app = QApplication([sys.argv[0], *qt_args])
    if "--font" in options:
        family, _, points = options["--font"].rpartition(" ")
        app.setFont(QFont(family, int(points)))
    screen = app.primaryScreen()
    window = MainWindow()
    window.show()
    if "--size" in options:
        width, height = (int(n) for n in options["--size"].split("x"))
        window.resize(width, height)
    profile = ServerProfile(**json.loads(Path(profile_file).read_text()))
    window.add_profile(profile)
    window.connect_server(profile.id)
    _until(app, lambda: window.sessions[profile.id].survey is not None, 60, "the survey")
    workspace = window.workspaces[profile.id]
    _until(app, lambda: workspace.pages_built, 60, "the pages")
    problems: dict[str, list[str]] = {}
    for name, page in workspace_pages(workspace):
        workspace.tabs.setCurrentWidget(page)
        if page is workspace.editor:
            _until(app, lambda: workspace.editor.loaded, 60, "the editor")
        _settle(app)
        window.grab().save(str(Path(out) / f"{name}.png"))
        if found := problems_of(page):
            problems[name] = found
        if page is workspace.editor:
            workspace.editor.show_view(1)  # the form view
            _settle(app)
            window.grab().save(str(Path(out) / "editor-form.png"))
            if found := problems_of(page):
                problems["editor-form"] = found
            workspace.editor.show_view(0)
    report = {
        "screen": [screen.geometry().width(), screen.geometry().height()],
        "device_pixel_ratio": screen.devicePixelRatio(),
        "window": [window.width(), window.height()],
        "platform": app.platformName(),
        "frame_fits": screen.availableGeometry().contains(window.frameGeometry()),
        "problems": problems,
    }
    window.runner.shutdown(5000)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
