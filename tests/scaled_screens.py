"""Render every page in a process of its own, on the screen QT_QPA_PLATFORM describes.

    QT_QPA_PLATFORM=offscreen:configfile=SCREEN.json python tests/scaled_screens.py PROFILE.json OUT

A scaled screen (125%, 150%) needs its own process: Qt reads the screen and its device
pixel ratio once, when the application starts, and the test process has one already.
Connects to the server PROFILE.json describes (keyword arguments of ServerProfile),
saves each page as OUT/<page>.png and prints one JSON object: the screen, the window's
size, and what screen_checks found on each page.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

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
    profile_file, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication([])
    screen = app.primaryScreen()
    window = MainWindow()
    window.show()
    profile = ServerProfile(**json.loads(profile_file.read_text()))
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
        window.grab().save(str(out / f"{name}.png"))
        if found := problems_of(page):
            problems[name] = found
    report = {
        "screen": [screen.geometry().width(), screen.geometry().height()],
        "device_pixel_ratio": screen.devicePixelRatio(),
        "window": [window.width(), window.height()],
        "frame_fits": screen.availableGeometry().contains(window.frameGeometry()),
        "problems": problems,
    }
    window.runner.shutdown(5000)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
