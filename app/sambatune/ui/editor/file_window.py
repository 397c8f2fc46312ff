"""A window for one smb.conf file of this computer (File > Open smb.conf file…).

Also shows the files a server's smb.conf includes, read-only. Closing with unsaved
changes asks first.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import QMainWindow, QWidget

from sambatune.ui.editor.page import TEXT_VIEW, ConfEditorPage
from sambatune.ui.editor.sources import ConfSource, LocalFile
from sambatune.ui.tasks import TaskRunner


class ConfFileWindow(QMainWindow):
    def __init__(
        self,
        source: ConfSource,
        *,
        runner: TaskRunner | None = None,
        read_only: bool = False,
        parent_page: Any = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("confFileWindow")
        self.resize(1180, 780)
        self.runner = runner or (parent_page.runner if parent_page is not None else TaskRunner(self))
        self._own_runner = runner is None and parent_page is None
        self.page = ConfEditorPage(source, self.runner, read_only=read_only)
        if parent_page is not None:
            self.page.failed.connect(parent_page.failed.emit)
        self.setCentralWidget(self.page)
        self.page.title_changed.connect(lambda _title: self._update_title())
        self._closing_confirmed = False
        self._build_menu()
        self._update_title()
        self.page.open()

    def _build_menu(self) -> None:
        page = self.page
        file_menu = self.menuBar().addMenu("&File")
        if isinstance(page.source, LocalFile) and not page.read_only:
            file_menu.addAction(page.save_action)
            file_menu.addAction(page.save_as_action)
        else:
            file_menu.addAction(page.save_as_action)
        file_menu.addSeparator()
        close = QAction("&Close", self)
        close.setShortcut(QKeySequence.StandardKey.Close)
        close.triggered.connect(self.close)
        file_menu.addAction(close)
        edit_menu = self.menuBar().addMenu("&Edit")
        if not page.read_only:
            edit_menu.addAction(page.undo_action)
            edit_menu.addAction(page.redo_action)
            edit_menu.addSeparator()
        edit_menu.addAction(page.find_action)
        edit_menu.addAction(page.find_next_action)
        edit_menu.addAction(page.find_previous_action)
        edit_menu.addAction(page.goto_action)
        view_menu = self.menuBar().addMenu("&View")
        text = QAction("&Text", self)
        text.triggered.connect(lambda: page.show_view(TEXT_VIEW))
        form = QAction("&Form", self)
        form.triggered.connect(lambda: page.show_view(1))
        view_menu.addActions([text, form])

    def _update_title(self) -> None:
        page = self.page
        mark = "• " if page.dirty else ""
        suffix = " (read-only)" if page.read_only else ""
        self.setWindowTitle(f"{mark}{page.source.title}{suffix} — SambaTune")

    def close_without_asking(self) -> None:
        """Close even with unsaved changes (the user already agreed to lose them)."""
        self._closing_confirmed = True
        self.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._closing_confirmed or not self.page.dirty:
            self.page.stop_tasks()
            if self._own_runner:
                self.runner.shutdown(3000)
            super().closeEvent(event)
            return
        event.ignore()

        def close_now() -> None:
            self._closing_confirmed = True
            self.close()

        self.page.confirm_close(close_now)
