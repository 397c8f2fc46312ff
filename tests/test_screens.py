"""Every page of the real app, connected to the test bed, at the default and a large size.

Writes artifacts/screens/<width>x<height>/<page>.png for people to look at (and
docs/render_screenshots.py copies the README's from there). What it asserts is what
an admin would notice at once: no form that scrolls sideways, no label cut to a few
letters at the default window size.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QAbstractScrollArea, QLabel, QWidget
from pytestqt.qtbot import QtBot

from sambatune.profiles import ServerProfile
from sambatune.ui.main_window import MainWindow
from testbed.smbd import SmbServer
from testbed.sshd import SshServer, current_user

SCREENS = Path(__file__).resolve().parents[1] / "artifacts" / "screens"
SIZES = ((1180, 780), (1920, 1080))


@pytest.fixture
def window(qtbot: QtBot, sshd: SshServer, user_key: Path, fresh_smbd: SmbServer,
           isolated_home: Path) -> Iterator[MainWindow]:
    (isolated_home / ".ssh" / "known_hosts").write_text(sshd.known_hosts_line)
    main = MainWindow()
    qtbot.addWidget(main)
    main.show()
    profile = ServerProfile(name="files1", host="127.0.0.1", port=sshd.port, user=current_user(),
                            identity_file=str(user_key), config_path=str(fresh_smbd.config))
    main.add_profile(profile)
    main.connect_server(profile.id)
    qtbot.waitUntil(lambda: main.sessions[profile.id].survey is not None, timeout=30000)
    yield main
    main.runner.shutdown(5000)


def _sideways(page: QWidget) -> list[str]:
    """Scroll areas on the page that need a horizontal scroll bar."""
    return [area.objectName() or type(area).__name__
            for area in page.findChildren(QAbstractScrollArea)
            if area.isVisible() and area.horizontalScrollBar().isVisible()
            # The text editor scrolls sideways for long lines, like any editor.
            and area.objectName() not in ("confTextEdit", "applyDiff")]


def _clipped_labels(page: QWidget) -> list[str]:
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


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_every_page_reads_well(window: MainWindow, qtbot: QtBot, width: int,
                               height: int) -> None:
    window.resize(width, height)
    workspace = window.workspaces[window.server_list.current_id() or ""]
    qtbot.waitUntil(lambda: workspace.pages_built, timeout=30000)
    folder = SCREENS / f"{width}x{height}"
    folder.mkdir(parents=True, exist_ok=True)
    problems: dict[str, list[str]] = {}
    pages = [("overview", workspace.overview), ("editor", workspace.editor),
             ("wizard", workspace.wizard), ("benchmarks", workspace.benchmarks),
             ("history", workspace.history), ("client-tuning", workspace.client_tuning)]
    for name, page in pages:
        workspace.tabs.setCurrentWidget(page)
        if page is workspace.editor:
            qtbot.waitUntil(lambda: workspace.editor.loaded, timeout=30000)
        qtbot.wait(300)
        assert window.grab().save(str(folder / f"{name}.png"))
        found = _sideways(page) + _clipped_labels(page)
        if found:
            problems[name] = found
        if page is workspace.editor:
            workspace.editor.show_view(1)
            qtbot.wait(300)
            assert window.grab().save(str(folder / "editor-form.png"))
            if _sideways(page) + _clipped_labels(page):
                problems["editor-form"] = _sideways(page) + _clipped_labels(page)
            workspace.editor.show_view(0)
    assert not problems, problems
