"""File dialogs open in the folder used last, else Documents, never the working directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from sambatune.ui.file_places import remember, suggested


def test_dialogs_start_in_documents_then_in_the_last_folder(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    first = Path(suggested("report.html"))
    assert first.name == "report.html" and first.parent != Path(os.getcwd())
    chosen = tmp_path / "exports"
    chosen.mkdir()
    remember(chosen / "plan.json")
    assert suggested("next.csv") == str(chosen / "next.csv")
    chosen.rmdir()  # a folder that is gone is not offered again
    assert Path(suggested("x")).parent != chosen
