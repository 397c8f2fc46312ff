"""One version, defined in pyproject.toml, and the places that show it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

import sambatune
from sambatune.ui.main_window import MainWindow, app_icon
from screenshots import Screenshot

REPO = Path(__file__).resolve().parents[1]


def pyproject_version() -> str:
    match = re.search(r'^version = "([^"]+)"$', (REPO / "pyproject.toml").read_text(), re.MULTILINE)
    assert match, "pyproject.toml has no version line"
    return match.group(1)


def test_the_package_reports_the_pyproject_version() -> None:
    assert sambatune.__version__ == pyproject_version()


def test_the_command_prints_it() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "sambatune", "--version"], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == f"sambatune {pyproject_version()}"


def test_no_other_file_spells_the_version_out() -> None:
    """The spec, build scripts and installers read it; none may hard-code it."""
    version = pyproject_version()
    for path in (REPO / "installer").rglob("*"):
        if path.is_file() and path.suffix in {".py", ".sh", ".ps1", ".iss", ".spec", ".txt"}:
            assert f'"{version}"' not in path.read_text(encoding="utf-8"), path


def test_about_box_shows_version_and_icon(qtbot: QtBot, screenshot: Screenshot) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    window.setWindowIcon(app_icon())
    window.show()
    window.show_about()
    box = window.findChild(QMessageBox, "aboutBox")
    assert box is not None
    qtbot.waitUntil(box.isVisible)
    assert f"SambaTune {pyproject_version()}" in box.text()
    assert not box.iconPixmap().isNull()
    screenshot(box, "about-box")
    box.close()
