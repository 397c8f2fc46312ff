"""What an admin notices at once on a page: a form that scrolls sideways, a label cut short.

Shared by tests/test_screens.py (in the test process) and tests/scaled_screens.py (in a
child process whose screen is scaled to 125% or 150%).
"""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtWidgets import QAbstractScrollArea, QLabel, QWidget

from sambatune.ui.workspace import ServerWorkspace

#: Scroll areas that scroll sideways on purpose: the editor's text and the diff, like any editor.
SIDEWAYS_BY_DESIGN = ("confTextEdit", "applyDiff")


def sideways(page: QWidget) -> list[str]:
    """Scroll areas on the page that need a horizontal scroll bar."""
    return [
        area.objectName() or type(area).__name__
        for area in page.findChildren(QAbstractScrollArea)
        if area.isVisible()
        and area.horizontalScrollBar().isVisible()
        and area.objectName() not in SIDEWAYS_BY_DESIGN
    ]


def clipped_labels(page: QWidget) -> list[str]:
    """Visible one-line labels narrower than their text: the text is cut."""
    found = []
    for label in page.findChildren(QLabel):
        if not label.isVisible() or label.wordWrap() or not label.text().strip():
            continue
        if "<" in label.text():
            continue  # rich text: its width is not the plain text's
        if label.width() + 2 < label.fontMetrics().horizontalAdvance(label.text()):
            found.append(label.text()[:40])
    return found


def workspace_pages(workspace: ServerWorkspace) -> list[tuple[str, QWidget]]:
    """Every page of a server's workspace, by the name its picture is saved under."""
    return [
        ("overview", workspace.overview),
        ("editor", workspace.editor),
        ("wizard", workspace.wizard),
        ("benchmarks", workspace.benchmarks),
        ("history", workspace.history),
        ("client-tuning", workspace.client_tuning),
    ]


def problems_of(page: QWidget) -> list[str]:
    return sideways(page) + clipped_labels(page)


def write_profile(path: Path, port: int, user: str, identity_file: str, config_path: str) -> Path:
    """The server profile tests/scaled_screens.py connects to (ServerProfile's keywords)."""
    fields = {"name": "files1", "host": "127.0.0.1", "port": port, "user": user}
    path.write_text(json.dumps({**fields, "identity_file": identity_file, "config_path": config_path}))
    return path
