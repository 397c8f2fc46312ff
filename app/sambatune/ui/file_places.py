"""Where file dialogs open: the folder used last, else the user's documents.

A dialog given a bare file name opens in the process's working directory, which for
an app started from a menu is somewhere the user never chose.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, QStandardPaths

_KEY = "files/last_folder"


def suggested(file_name: str = "") -> str:
    """A path for a dialog: ``file_name`` in the folder used last (or Documents)."""
    folder = str(QSettings().value(_KEY, "") or "")
    if not folder or not Path(folder).is_dir():
        folder = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation) or str(
            Path.home()
        )
    return str(Path(folder) / file_name) if file_name else folder


def remember(path: str | Path) -> None:
    """Note the folder of a file the user chose, for the next dialog."""
    QSettings().setValue(_KEY, str(Path(path).parent))
