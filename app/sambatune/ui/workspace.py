"""Everything about one server in one place: connect, then its pages in tabs."""

from __future__ import annotations

import contextlib

from PySide6.QtCore import Qt, Signal
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
from sambatune.remote.survey import Survey
from sambatune.ui.client_tuning_page import ClientTuningPage, PlanTarget
from sambatune.ui.editor.page import ConfEditorPage
from sambatune.ui.editor.sources import ServerConfig
from sambatune.ui.history_page import HistoryPage
from sambatune.ui.overview_page import OverviewPage
from sambatune.ui.session import ServerSession, SessionState


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
    profile = session.profile
    if profile.is_local:
        return None
    host = profile.host.strip()
    peer = getattr(session.transport, "peer_address", None)
    if callable(peer):
        with contextlib.suppress(OSError):
            host = peer()
    ports = tuple(dict.fromkeys((445, profile.port or 22, 139)))
    survey = session.survey
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
        self.overview = OverviewPage()
        self.overview.refresh_requested.connect(session.refresh_survey)
        self.overview.instance_chosen.connect(self.manage_instance)
        self.tabs.addTab(self.overview, "Overview")
        self.editor = ConfEditorPage(ServerConfig(session), session.runner, session=session)
        self.editor.failed.connect(session.failed.emit)
        self.editor.title_changed.connect(self._editor_title)
        self.tabs.addTab(self.editor, "smb.conf")
        self.pages_built = False
        connected_layout.addWidget(self.tabs)
        self.stack.addWidget(self.connected_view)

        session.state_changed.connect(self._state_changed)
        session.survey_changed.connect(self._survey_changed)
        # Whatever applied or restored smb.conf (the editor, smb.conf history, the wizard),
        # every page showing it follows the live file.
        session.live_config_changed.connect(self._live_config_changed)
        self._state_changed(session.state)

    def build_pages(self) -> None:
        """The pages a connection needs, made at the first connection rather than with the
        window: the benchmark and wizard pages bring pyqtgraph and numpy, a third of a
        second of start-up for a window that first shows servers and a Connect button."""
        if self.pages_built:
            return
        from sambatune.ui.bench_page import BenchmarksPage
        from sambatune.ui.wizard_page import WizardPage

        session = self.session
        self.wizard = WizardPage(session)
        self.tabs.addTab(self.wizard, "Tuning wizard")
        self.benchmarks = BenchmarksPage(session)
        self.tabs.addTab(self.benchmarks, "Benchmarks")
        self.history = HistoryPage(session)
        self.tabs.addTab(self.history, "smb.conf history")
        self.editor.applied.connect(lambda _outcome: self.history.refresh())
        self.client_tuning = ClientTuningPage(session.runner, lambda: plan_target(session))
        self.client_tuning.failed.connect(session.failed.emit)
        self.client_tuning.recovered.connect(session.recovered.emit)
        self.tabs.addTab(self.client_tuning, "Tune this computer")
        self.tabs.currentChanged.connect(self._tab_changed)
        self.pages_built = True
        if session.survey is not None:  # the overview has it already
            self.benchmarks.show_survey(session.survey)
            self.wizard.show_survey(session.survey)

    def _state_changed(self, state: str) -> None:
        if state == SessionState.CONNECTED:
            self.build_pages()
            if self.tabs.currentWidget() is self.editor and not self.editor.loaded:
                self.editor.open()
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
        if self.tabs.widget(index) is self.history and self.session.transport is not None:
            self.history.refresh()
        if (
            self.tabs.widget(index) is self.editor
            and self.session.transport is not None
            and (not self.editor.loaded and self.editor.task is None)
        ):
            self.editor.open()

    def _editor_title(self, title: str) -> None:
        self.tabs.setTabText(self.tabs.indexOf(self.editor), title)

    def disconnect_server(self) -> None:
        """Disconnect; unsaved smb.conf edits are kept only if the user says so."""

        def close() -> None:
            self.editor.forget()
            self.session.close_connection()

        self.editor.confirm_close(close)

    def manage_instance(self, config_path: str) -> None:
        """Make the smbd running with ``config_path`` the one every page works on."""

        def switch() -> None:
            self.session.profile.config_path = config_path
            self.profile_changed.emit()
            self.editor.forget()
            self.session.refresh_survey()

        self.editor.confirm_close(switch)

    def running_work(self) -> list[tuple[str, str]]:
        """Long work under way for this server that quitting would stop: (what, in words;
        what stopping it costs)."""
        where = self.session.profile.name
        work: list[tuple[str, str]] = []
        if self.pages_built:
            if self.benchmarks.task is not None:
                work.append((f"{where}: {self.benchmarks.task.name}", "The measurement under way is lost."))
            step = self.wizard.running_step
            if step is not None:
                work.append(
                    (
                        f"{where}: tuning wizard, {step[:1].lower()}{step[1:]}",
                        "The wizard's step under way is lost; its finished steps are "
                        "kept and it can be resumed.",
                    )
                )
            client = self.client_tuning.task
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
        dialogs = [self.editor.apply_dialog] + ([self.history.dialog] if self.pages_built else [])
        if any(d is not None and d.task is not None for d in dialogs):
            work.append(
                (
                    f"{where}: applying smb.conf",
                    "An apply stops before the swap; past it, it finishes or puts the old file back first.",
                )
            )
        return work

    def _live_config_changed(self, path: str, what: str) -> None:
        self.editor.follow_live(path, what)
        if self.pages_built and self.history.isVisible():
            self.history.refresh()

    def profile_edited(self, old_config_path: str) -> None:
        """The server's settings were edited: a new smb.conf path is surveyed at once."""
        if (
            self.session.state == SessionState.CONNECTED
            and self.session.profile.config_path != old_config_path
        ):
            self.session.refresh_survey()

    def _survey_changed(self, survey: Survey | None) -> None:
        if survey is not None:
            self.overview.show_survey(survey)
            # One source of truth: the editor follows the managed file when it changed.
            self._follow_config_path()
            if (
                self.tabs.currentWidget() is self.editor
                and not self.editor.loaded
                and self.editor.task is None
                and self.session.transport is not None
            ):
                self.editor.open()
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
        editor = self.editor
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
