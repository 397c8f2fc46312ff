"""Everything about one server in one place: connect, then its pages in tabs."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from sambatune.errors import SambaTuneError
from sambatune.ui.session import ServerSession, SessionState

if TYPE_CHECKING:  # the pages' modules load with the first connection (build_pages)
    from sambatune.remote.survey import Survey
    from sambatune.ui.bench.page import BenchmarksPage
    from sambatune.ui.client.plan_inputs import PlanTarget
    from sambatune.ui.client.tuning_page import ClientTuningPage
    from sambatune.ui.editor.page import ConfEditorPage
    from sambatune.ui.history_page import HistoryPage
    from sambatune.ui.overview_page import OverviewPage
    from sambatune.ui.wizard.page import WizardPage


class ConnectPanel(QWidget):
    """What a server shows before it is connected: where it is, and a Connect button."""

    def __init__(self, session: ServerSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        self.title = QLabel()
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.title.setStyleSheet("font-size: 18pt; font-weight: 600;")
        layout.addWidget(self.title)
        self.where = QLabel()
        self.where.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.where.setStyleSheet("color: palette(mid);")
        layout.addWidget(self.where)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.connect_button = QPushButton("Connect")
        self.connect_button.setObjectName("connectButton")
        self.connect_button.setDefault(True)
        self.connect_button.setMinimumWidth(140)
        self.connect_button.clicked.connect(session.connect_and_survey)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancelConnectButton")
        self.cancel_button.clicked.connect(session.cancel_connect)
        buttons.addWidget(self.connect_button)
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.progress.setMaximumWidth(360)
        self.progress_label = QLabel()
        self.progress_label.setObjectName("connectProgress")
        self.progress_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.progress)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addWidget(self.progress_label)
        layout.addStretch(2)
        session.progress.connect(self.progress_label.setText)
        session.state_changed.connect(self._state_changed)
        self.refresh_profile()
        self._state_changed(session.state)

    def refresh_profile(self) -> None:
        profile = self.session.profile
        self.title.setText(profile.name)
        self.where.setText(
            "Survey and tune the Samba server on this computer, and this computer as a client."
            if profile.is_local
            else f"SSH to {profile.describe()}"
        )

    def _state_changed(self, state: str) -> None:
        busy = state == SessionState.CONNECTING
        self.connect_button.setEnabled(not busy)
        self.cancel_button.setVisible(busy)
        self.progress.setVisible(busy)
        if not busy and state != SessionState.CONNECTED and self.progress_label.text().endswith("…"):
            self.progress_label.setText("")


def plan_target(session: ServerSession) -> PlanTarget | None:
    """Where "Tune this computer" measures to: the server as this computer reaches it.

    None for the local profile: the Samba server is this computer, so there is no path
    to measure; the RTT is entered for the link to plan for.
    """
    from sambatune.ui.client.plan_inputs import PlanTarget

    profile = session.profile
    if profile.is_local:
        return None
    host = profile.host.strip()
    peer = getattr(session.transport, "peer_address", None)
    if callable(peer):
        with contextlib.suppress(OSError):
            host = peer()
    survey = session.survey
    # The port the managed smbd listens on first, as the survey found it: on a server
    # that runs another smbd too (or a test bed's on its own port), 445 may be another's.
    smb_port = survey.smb_port() if survey is not None else None
    ports = tuple(port for port in dict.fromkeys((smb_port, 445, profile.port or 22, 139)) if port)
    audit = survey.client_audit if survey is not None else None
    return PlanTarget(
        host=host,
        label=profile.name,
        ports=ports,
        multichannel=audit.multichannel if audit is not None else None,
        signing=(audit.server_signing or None) if audit is not None else None,
    )


class ServerWorkspace(QWidget):
    #: The server profile changed (the managed smbd instance): save the server list.
    profile_changed = Signal()

    def __init__(self, session: ServerSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.stack = QStackedWidget()
        layout.addWidget(self.stack)
        self.connect_panel = ConnectPanel(session)
        self.stack.addWidget(self.connect_panel)

        self.connected_view = QWidget()
        connected_layout = QVBoxLayout(self.connected_view)
        connected_layout.setContentsMargins(0, 0, 0, 0)
        header = QHBoxLayout()
        header.setContentsMargins(12, 8, 12, 0)
        self.status = QLabel()
        self.status.setObjectName("workspaceStatus")
        header.addWidget(self.status, 1)
        disconnect = QPushButton("Disconnect")
        disconnect.setObjectName("disconnectButton")
        disconnect.clicked.connect(self.disconnect_server)
        header.addWidget(disconnect)
        connected_layout.addLayout(header)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        #: The pages in the order of their tabs, made at the first connection
        #: (``build_pages``); until then only what the window shows first is loaded.
        self._pages: dict[str, Any] = {}
        self.pages_built = False
        connected_layout.addWidget(self.tabs)
        self.stack.addWidget(self.connected_view)

        self.tabs.currentChanged.connect(self._tab_changed)
        session.state_changed.connect(self._state_changed)
        session.survey_changed.connect(self._survey_changed)
        # Whatever applied or restored smb.conf (the editor, smb.conf history, the wizard),
        # every page showing it follows the live file.
        session.live_config_changed.connect(self._live_config_changed)
        self._state_changed(session.state)

    # -- the pages, made at the first connection ----------------------------------------
    #: Each page is one step: made in its own turn of the event loop, the window keeps
    #: answering while they are made (all at once took 0.6 s, imports included).
    PAGE_STEPS = ("overview", "editor", "wizard", "benchmarks", "history", "client_tuning")

    def build_pages(self) -> None:
        """Make every page not made yet, now (a page asked for before its turn)."""
        while self._build_next_page():
            pass

    def build_pages_in_turns(self) -> None:
        """Make the pages one per turn of the event loop."""
        if self._build_next_page():
            QTimer.singleShot(0, self.build_pages_in_turns)

    def _build_next_page(self) -> bool:
        missing = [name for name in self.PAGE_STEPS if name not in self._pages]
        if not missing:
            return False
        name = missing[0]
        page, title = getattr(self, f"_make_{name}")()
        self._pages[name] = page
        self.tabs.addTab(page, title)
        if len(missing) == 1:
            self._pages_done()
        return True

    def _make_overview(self) -> tuple[OverviewPage, str]:
        from sambatune.ui.overview_page import OverviewPage

        overview = OverviewPage()
        overview.refresh_requested.connect(self.session.refresh_survey)
        overview.instance_chosen.connect(self.manage_instance)
        if self.session.survey is not None:
            overview.show_survey(self.session.survey)
        return overview, "Overview"

    def _make_editor(self) -> tuple[ConfEditorPage, str]:
        from sambatune.ui.editor.page import ConfEditorPage
        from sambatune.ui.editor.sources import ServerConfig

        session = self.session
        editor = ConfEditorPage(ServerConfig(session), session.runner, session=session)
        editor.failed.connect(session.failed.emit)
        editor.title_changed.connect(self._editor_title)
        return editor, "smb.conf"

    def _make_wizard(self) -> tuple[WizardPage, str]:
        from sambatune.ui.wizard.page import WizardPage

        return WizardPage(self.session), "Tuning wizard"

    def _make_benchmarks(self) -> tuple[BenchmarksPage, str]:
        from sambatune.ui.bench.page import BenchmarksPage

        return BenchmarksPage(self.session), "Benchmarks"

    def _make_history(self) -> tuple[HistoryPage, str]:
        from sambatune.ui.history_page import HistoryPage

        history = HistoryPage(self.session)
        self.editor.applied.connect(lambda _outcome: history.refresh())
        return history, "smb.conf history"

    def _make_client_tuning(self) -> tuple[ClientTuningPage, str]:
        from sambatune.ui.client.tuning_page import ClientTuningPage

        session = self.session
        page = ClientTuningPage(session.runner, lambda: plan_target(session))
        page.failed.connect(session.failed.emit)
        page.recovered.connect(session.recovered.emit)
        return page, "Tune this computer"

    def _pages_done(self) -> None:
        self.pages_built = True
        survey = self.session.survey
        if survey is not None:  # the overview has it already
            self.benchmarks.show_survey(survey)
            self.wizard.show_survey(survey)

    def _made(self, name: str) -> Any:
        """The page if it is made already, else None (never makes it)."""
        return self._pages.get(name)

    def _page(self, name: str) -> Any:
        if name not in self._pages:
            self.build_pages()
        return self._pages[name]

    @property
    def made_editor(self) -> ConfEditorPage | None:
        """The smb.conf page if it is made (a server never connected has none)."""
        return self._made("editor")

    @property
    def overview(self) -> OverviewPage:
        return self._page("overview")

    @property
    def editor(self) -> ConfEditorPage:
        return self._page("editor")

    @property
    def wizard(self) -> WizardPage:
        return self._page("wizard")

    @property
    def benchmarks(self) -> BenchmarksPage:
        return self._page("benchmarks")

    @property
    def history(self) -> HistoryPage:
        return self._page("history")

    @property
    def client_tuning(self) -> ClientTuningPage:
        return self._page("client_tuning")

    def _state_changed(self, state: str) -> None:
        if state == SessionState.CONNECTED:
            if not self._pages:
                self.build_pages_in_turns()
            editor: ConfEditorPage | None = self._made("editor")
            if editor is not None and self.tabs.currentWidget() is editor and not editor.loaded:
                editor.open()
            self.stack.setCurrentWidget(self.connected_view)
            self.status.setText(f"● Connected to {self.session.profile.target_label}")
            self.status.setStyleSheet("color: #1e7d32; font-weight: 600;")
        else:
            self.stack.setCurrentWidget(self.connect_panel)

    def open_wizard(self) -> None:
        """Show the tuning wizard; before a connection, the Connect button comes first."""
        self.build_pages()
        self.tabs.setCurrentWidget(self.wizard)

    def _tab_changed(self, index: int) -> None:
        page = self.tabs.widget(index)
        if self.session.transport is None or page is None:
            return
        if page is self._made("history"):
            self.history.refresh()
        editor: ConfEditorPage | None = self._made("editor")
        if page is editor and not editor.loaded and editor.task is None:
            editor.open()

    def _editor_title(self, title: str) -> None:
        self.tabs.setTabText(self.tabs.indexOf(self._made("editor")), title)

    def disconnect_server(self) -> None:
        """Disconnect; unsaved smb.conf edits are kept only if the user says so."""

        editor: ConfEditorPage | None = self._made("editor")
        if editor is None:
            self.session.close_connection()
            return

        def close() -> None:
            editor.forget()
            self.session.close_connection()

        editor.confirm_close(close)

    def manage_instance(self, config_path: str) -> None:
        """Make the smbd running with ``config_path`` the one every page works on."""

        editor: ConfEditorPage | None = self._made("editor")

        def switch() -> None:
            self.session.profile.config_path = config_path
            self.profile_changed.emit()
            if editor is not None:
                editor.forget()
            self.session.refresh_survey()

        if editor is None:
            switch()
        else:
            editor.confirm_close(switch)

    def running_work(self) -> list[tuple[str, str]]:
        """Long work under way for this server that quitting would stop: (what, in words;
        what stopping it costs)."""
        where = self.session.profile.name
        work: list[tuple[str, str]] = []
        benchmarks, wizard, client_tuning = (self._made(n) for n in ("benchmarks", "wizard", "client_tuning"))
        if benchmarks is not None and benchmarks.task is not None:
            work.append((f"{where}: {benchmarks.task.name}", "The measurement under way is lost."))
        step = wizard.running_step if wizard is not None else None
        if step is not None:
            work.append(
                (
                    f"{where}: tuning wizard, {step[:1].lower()}{step[1:]}",
                    "The wizard's step under way is lost; its finished steps are kept and it can be resumed.",
                )
            )
        client = client_tuning.task if client_tuning is not None else None
        if client is not None and client.name in ("Planning", "Applying", "Restoring"):
            # It measures the path, or changes this computer's settings.
            work.append(
                (
                    f"Tune this computer: {client.name.lower()}",
                    "The measurement under way is lost."
                    if client.name == "Planning"
                    else "Stopping puts back the settings already changed.",
                )
            )
        editor, history = self._made("editor"), self._made("history")
        dialogs = [
            page.dialog if page is history else page.apply_dialog for page in (editor, history) if page
        ]
        if any(d is not None and d.task is not None for d in dialogs):
            work.append(
                (
                    f"{where}: applying smb.conf",
                    "An apply stops before the swap; past it, it finishes or puts the old file back first.",
                )
            )
        return work

    def _live_config_changed(self, path: str, what: str) -> None:
        editor, history = self._made("editor"), self._made("history")
        if editor is not None:
            editor.follow_live(path, what)
        if history is not None and history.isVisible():
            history.refresh()

    def profile_edited(self, old_config_path: str) -> None:
        """The server's settings were edited: a new smb.conf path is surveyed at once."""
        if (
            self.session.state == SessionState.CONNECTED
            and self.session.profile.config_path != old_config_path
        ):
            self.session.refresh_survey()

    def _survey_changed(self, survey: Survey | None) -> None:
        if survey is not None:
            overview = self._made("overview")
            # Made with it, or (on connecting: the state changes first and builds the
            # pages) made with this very survey a moment ago: drawing it again would
            # replace every widget under a click on its way.
            if overview is not None and overview.survey is not survey:
                overview.show_survey(survey)
            # One source of truth: the editor follows the managed file when it changed.
            self._follow_config_path()
            editor: ConfEditorPage | None = self._made("editor")
            if (
                editor is not None
                and self.tabs.currentWidget() is editor
                and not editor.loaded
                and editor.task is None
                and self.session.transport is not None
            ):
                editor.open()
            if self.pages_built:  # otherwise build_pages passes it on
                self.benchmarks.show_survey(survey)
                self.wizard.show_survey(survey)
                if self.history.isVisible() and self.history.path != self._config_path():
                    self.history.refresh()

    def _config_path(self) -> str | None:
        try:
            return self.session.config_path()
        except SambaTuneError:  # several instances and none chosen: the Overview asks
            return None

    def _follow_config_path(self) -> None:
        """The survey names another smb.conf than the editor shows: open that one (after
        asking, when the shown one has unsaved edits)."""
        editor: ConfEditorPage | None = self._made("editor")
        if editor is None:
            return
        path = self._config_path()
        if path is None or not editor.loaded or editor.source.path == path:
            return

        def switch() -> None:
            editor.forget()
            if self.tabs.currentWidget() is editor and self.session.transport is not None:
                editor.open()

        editor.confirm_close(
            switch, why=f"SambaTune now manages {path} on this server, not {editor.source.path}."
        )
