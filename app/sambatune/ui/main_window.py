"""The main window: servers on the left, the chosen server's workspace on the right."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QCloseEvent, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QMainWindow,
    QMessageBox,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from sambatune.errors import SambaTuneError
from sambatune.profiles import ProfileStore, ServerProfile, local_profile
from sambatune.ui.message_bar import MessageBar
from sambatune.ui.profile_dialog import ProfileDialog
from sambatune.ui.server_list import ServerList
from sambatune.ui.session import ServerSession
from sambatune.ui.tasks import TaskRunner
from sambatune.ui.workspace import ServerWorkspace

if TYPE_CHECKING:  # opened on demand: their modules load when first needed
    from sambatune.ui.editor.file_window import ConfFileWindow
    from sambatune.ui.editor.page import ConfEditorPage
    from sambatune.ui.fleet.window import FleetWindow

#: The window's first size, where the screen has room for it.
DEFAULT_SIZE = QSize(1180, 780)


def default_size(available: QSize) -> QSize:
    """The default size, shrunk to fit a small screen (a 1366x768 laptop, or 1920x1080 at
    150%, which leaves 1280x720 for windows): the window manager's title bar and the
    panel need room too."""
    return QSize(
        min(DEFAULT_SIZE.width(), int(available.width() * 0.96)),
        min(DEFAULT_SIZE.height(), int(available.height() * 0.92)),
    )


class MainWindow(QMainWindow):
    def __init__(self, store: ProfileStore | None = None) -> None:
        super().__init__()
        self.setObjectName("mainWindow")
        self.setWindowTitle("SambaTune")
        self.resize(default_size(self.screen().availableGeometry().size()))
        self.store = store or ProfileStore()
        self.runner = TaskRunner(self)
        self.sessions: dict[str, ServerSession] = {}
        self.workspaces: dict[str, ServerWorkspace] = {}
        self.file_windows: list[ConfFileWindow] = []
        self.fleet_windows: list[FleetWindow] = []
        self._quit_confirmed = False

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        self.server_list = ServerList()
        self.server_list.setMinimumWidth(220)
        self.stack = QStackedWidget()
        splitter.addWidget(self.server_list)
        splitter.addWidget(self.stack)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([260, 920])
        layout.addWidget(splitter, 1)
        self.message_bar = MessageBar()
        bar_holder = QWidget()
        bar_layout = QVBoxLayout(bar_holder)
        bar_layout.setContentsMargins(8, 0, 8, 8)
        bar_layout.addWidget(self.message_bar)
        layout.addWidget(bar_holder)
        self.setCentralWidget(central)
        self._build_menu()

        self.server_list.selected.connect(self.show_server)
        self.server_list.add_requested.connect(self.add_server)
        self.server_list.edit_requested.connect(self.edit_server)
        self.server_list.remove_requested.connect(self.remove_server)
        self.server_list.connect_requested.connect(self.connect_server)

        self.profiles: list[ServerProfile] = [local_profile()]
        try:
            self.profiles += self.store.load()
        except SambaTuneError as error:
            self.show_error(error)
        self._refresh_list()
        self.show_server(self.profiles[0].id)

    # -- menu -----------------------------------------------------------------------
    def _build_menu(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        add = QAction("&Add server…", self)
        add.setShortcut(QKeySequence.StandardKey.New)
        add.triggered.connect(self.add_server)
        file_menu.addAction(add)
        open_conf = QAction("&Open smb.conf file…", self)
        open_conf.setShortcut(QKeySequence.StandardKey.Open)
        open_conf.triggered.connect(self.ask_open_conf_file)
        file_menu.addAction(open_conf)
        open_inventory = QAction("Open Ansible &inventory…", self)
        open_inventory.setObjectName("openInventoryAction")
        open_inventory.triggered.connect(lambda: self.open_fleet(browse=True))
        file_menu.addAction(open_inventory)
        file_menu.addSeparator()
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)
        server_menu = self.menuBar().addMenu("&Server")
        wizard = QAction("Tuning &wizard", self)
        wizard.setObjectName("wizardAction")
        wizard.setShortcut(QKeySequence("Ctrl+Shift+W"))
        wizard.triggered.connect(self.open_wizard)
        server_menu.addAction(wizard)
        fleet = QAction("&Fleet…", self)
        fleet.setObjectName("fleetAction")
        fleet.triggered.connect(lambda: self.open_fleet(browse=False))
        server_menu.addAction(fleet)
        help_menu = self.menuBar().addMenu("&Help")
        open_logs = QAction("Open &log folder", self)
        open_logs.setObjectName("openLogFolderAction")
        open_logs.triggered.connect(self.open_log_folder)
        help_menu.addAction(open_logs)
        about = QAction("&About SambaTune", self)
        about.triggered.connect(self.show_about)
        help_menu.addAction(about)

    def open_log_folder(self) -> None:
        """The folder with sambatune.log and crash.log, in the file manager."""
        from PySide6.QtCore import QUrl
        from PySide6.QtGui import QDesktopServices

        from sambatune.appdirs import log_dir

        folder = log_dir()
        if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))):
            self.message_bar.show_message(
                "info", f"The log folder is {folder} (no file manager could open it)."
            )

    def show_about(self) -> None:
        from sambatune import __version__

        box = QMessageBox(self)
        box.setObjectName("aboutBox")
        box.setWindowTitle("About SambaTune")
        box.setIconPixmap(self.windowIcon().pixmap(64, 64))
        box.setText(f"<b>SambaTune {__version__}</b>")
        box.setInformativeText(
            "Measure and tune Samba file servers and the computers that use them, "
            "one measured change at a time."
        )
        box.open()

    # -- smb.conf files of this computer ---------------------------------------------------
    def ask_open_conf_file(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        dialog = QFileDialog(
            self, "Open smb.conf file", "/etc/samba", "Samba configuration (*.conf smb.conf*);;All files (*)"
        )
        dialog.setObjectName("openConfDialog")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.fileSelected.connect(self.open_conf_file)
        dialog.open()

    def open_conf_file(self, path: str) -> ConfFileWindow:
        """Edit a local smb.conf in its own window (saved atomically, never applied)."""
        from sambatune.ui.editor.file_window import ConfFileWindow
        from sambatune.ui.editor.sources import LocalFile

        window = ConfFileWindow(LocalFile(path), runner=self.runner)
        window.page.failed.connect(self.show_error)
        self.file_windows = [w for w in self.file_windows if w.isVisible()] + [window]
        window.show()
        return window

    def open_fleet(self, *, browse: bool) -> QMainWindow:
        """The Fleet window (many servers at once); ``browse`` asks for an inventory first."""
        from sambatune.fleet.inventory import FleetHost
        from sambatune.ui.fleet.window import FleetWindow, profile_for

        def open_server(host: FleetHost) -> None:
            profile = profile_for(host)
            self.add_profile(profile)
            self.connect_server(profile.id)
            self.raise_()

        window = FleetWindow(runner=self.runner, open_server=open_server, parent=self)
        self.fleet_windows = [w for w in self.fleet_windows if w.isVisible()] + [window]
        window.show()
        window.start(browse=browse)
        return window

    def unsaved_pages(self) -> list[ConfEditorPage]:
        pages = [page for workspace in self.workspaces.values() if (page := workspace.made_editor)]
        pages += [window.page for window in self.file_windows if window.isVisible()]
        return [page for page in pages if page.dirty]

    # -- servers ----------------------------------------------------------------------
    def profile(self, profile_id: str) -> ServerProfile | None:
        return next((p for p in self.profiles if p.id == profile_id), None)

    def session(self, profile_id: str) -> ServerSession:
        if profile_id not in self.sessions:
            profile = self.profile(profile_id)
            assert profile is not None
            session = ServerSession(profile, self.runner, self)
            session.failed.connect(self.show_error)
            session.recovered.connect(self.message_bar.dismiss)
            session.state_changed.connect(lambda _state: self._refresh_list())
            self.sessions[profile_id] = session
            workspace = ServerWorkspace(session)
            workspace.profile_changed.connect(self._save)
            self.workspaces[profile_id] = workspace
            self.stack.addWidget(workspace)
        return self.sessions[profile_id]

    def show_server(self, profile_id: str) -> None:
        if self.profile(profile_id) is None:
            return
        self.session(profile_id)
        self.stack.setCurrentWidget(self.workspaces[profile_id])
        self.server_list.select(profile_id)

    def open_wizard(self) -> None:
        """The chosen server's tuning wizard (its Connect button first, if not connected)."""
        profile_id = self.server_list.current_id() or self.profiles[0].id
        self.show_server(profile_id)
        self.workspaces[profile_id].open_wizard()

    def connect_server(self, profile_id: str) -> None:
        self.show_server(profile_id)
        self.session(profile_id).connect_and_survey()

    def add_server(self) -> None:
        dialog = ProfileDialog(None, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # one per click, gone when closed

        def saved() -> None:
            if dialog.result_profile is not None:
                self.add_profile(dialog.result_profile)

        dialog.accepted.connect(saved)
        dialog.open()

    def add_profile(self, profile: ServerProfile) -> None:
        self.profiles.append(profile)
        self._save()
        self._refresh_list()
        self.show_server(profile.id)

    def edit_server(self, profile_id: str) -> None:
        profile = self.profile(profile_id)
        if profile is None or profile.is_local:
            return
        dialog = ProfileDialog(profile, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def saved() -> None:
            updated = dialog.result_profile
            if updated is None:
                return
            self.profiles = [updated if p.id == profile_id else p for p in self.profiles]
            self._save()
            if profile_id in self.sessions:
                old_config_path = self.sessions[profile_id].profile.config_path
                self.sessions[profile_id].profile = updated
                self.workspaces[profile_id].connect_panel.refresh_profile()
                self.workspaces[profile_id].profile_edited(old_config_path)
            self._refresh_list()

        dialog.accepted.connect(saved)
        dialog.open()

    def remove_server(self, profile_id: str) -> None:
        profile = self.profile(profile_id)
        if profile is None or profile.is_local:
            return
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Remove server",
            f"Remove “{profile.name}” from the list? Its saved results stay in the database.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            self,
        )
        box.setObjectName("removeServerBox")

        def answered(button: int) -> None:
            if button != QMessageBox.StandardButton.Yes:
                return
            session = self.sessions.pop(profile_id, None)
            if session is not None:
                session.close_connection()
                workspace = self.workspaces.pop(profile_id)
                self.stack.removeWidget(workspace)
                workspace.deleteLater()
            self.profiles = [p for p in self.profiles if p.id != profile_id]
            self._save()
            self._refresh_list()
            self.show_server(self.profiles[0].id)

        box.finished.connect(answered)
        box.open()

    def _save(self) -> None:
        try:
            self.store.save(self.profiles)
        except (OSError, SambaTuneError) as error:
            self.show_error(
                error
                if isinstance(error, SambaTuneError)
                else SambaTuneError(f"Could not save the server list: {error}")
            )

    def _refresh_list(self) -> None:
        states = {pid: s.state for pid, s in self.sessions.items()}
        self.server_list.set_profiles(self.profiles, states)

    # -- errors -----------------------------------------------------------------------
    def show_error(self, error: SambaTuneError) -> None:
        self.message_bar.show_error(error)

    def quit_without_asking(self) -> None:
        """Close even with unsaved smb.conf edits (the user already agreed to lose them)."""
        self._quit_confirmed = True
        self.close()

    def running_work(self) -> list[tuple[str, str]]:
        """Measurements, wizard steps, applies and fleet work under way: (what, what
        stopping costs)."""
        work = [item for workspace in self.workspaces.values() for item in workspace.running_work()]
        for window in self.fleet_windows:
            if window.isVisible():
                work += window.running_work()
        return work

    def closeEvent(self, event: QCloseEvent) -> None:
        unsaved = self.unsaved_pages()
        running = self.running_work()
        if (unsaved or running) and not self._quit_confirmed:
            event.ignore()
            names = ", ".join(page.source.title for page in unsaved[:3])
            lost = f"{len(unsaved)} smb.conf file(s) have unsaved changes ({names})." if unsaved else ""
            if running:
                title = "Work is still running"
                costs = " ".join(dict.fromkeys(cost for _what, cost in running))
                text = (
                    "Still running:\n"
                    + "".join(f"• {what}\n" for what, _ in running)
                    + f"\nQuitting stops {'it' if len(running) == 1 else 'them'}. {costs}"
                    + (f"\n\nAlso, {lost[:1].lower()}{lost[1:]}" if lost else "")
                    + "\n\nQuit anyway?"
                )
            else:
                title, text = "Unsaved changes", f"{lost} Quit and lose them?"
            box = QMessageBox(
                QMessageBox.Icon.Warning,
                title,
                text,
                QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
                self,
            )
            box.setObjectName("quitRunningBox" if running else "quitUnsavedBox")
            box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            if running:
                box.button(QMessageBox.StandardButton.Discard).setText("Stop and quit")
                box.button(QMessageBox.StandardButton.Cancel).setText("Keep running")
                box.setDefaultButton(QMessageBox.StandardButton.Cancel)

            def answered(button: int) -> None:
                if button == QMessageBox.StandardButton.Discard:
                    self.quit_without_asking()

            box.finished.connect(answered)
            box.open()
            return
        for window in self.file_windows:
            window.close_without_asking()
        self.runner.cancel_all()
        for session in self.sessions.values():
            session.close_connection()
        self.runner.shutdown(3000)
        super().closeEvent(event)


#: Larger renderings are for the macOS .icns and Linux icon themes; as a window icon
#: they only cost start-up time (decoding) and X11 traffic (Qt sends every size).
WINDOW_ICON_MAX = 256


def app_icon() -> QIcon:
    """The app icon from the PNGs installer/make_icons.py renders: Qt picks the
    nearest size, so title bars and taskbars get the drawing made for small sizes."""
    import re

    from PySide6.QtGui import QPixmap

    from sambatune.packaged import resource

    icon = QIcon()
    for entry in resource("icons").iterdir():
        match = re.fullmatch(r"sambatune-(\d+)\.png", entry.name)
        if match and int(match.group(1)) <= WINDOW_ICON_MAX:
            pixmap = QPixmap()
            pixmap.loadFromData(entry.read_bytes(), "PNG")
            icon.addPixmap(pixmap)
    return icon
