"""One server (or this computer) as the GUI sees it: its connection, survey and tasks."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from sambatune.cancellation import CancelToken
from sambatune.errors import SambaTuneError
from sambatune.profiles import ServerProfile
from sambatune.states import TextState
from sambatune.ui.tasks import Task, TaskRunner

if TYPE_CHECKING:  # loaded by the first connection, not before the window paints
    from sambatune.remote.agents import AgentEvent
    from sambatune.remote.survey import Survey
    from sambatune.remote.transport import Transport


class SessionState(TextState):
    DISCONNECTED = "disconnected"
    CONNECTING = "connecting"
    CONNECTED = "connected"


class ServerSession(QObject):
    #: The new SessionState; Qt hands it to the slots as a plain str, equal to the member.
    state_changed = Signal(str)
    progress = Signal(str)
    survey_changed = Signal(object)
    failed = Signal(object)
    #: An action that failed with this message has since succeeded: its error may go.
    recovered = Signal(str)
    #: An apply, a restore or a wizard step ended that may have changed the smb.conf at
    #: this path (str), told by what (str, e.g. "a restore from smb.conf history"): the
    #: pages that show the file read it again.
    live_config_changed = Signal(str, str)

    def __init__(self, profile: ServerProfile, runner: TaskRunner, window: QWidget) -> None:
        super().__init__(window)
        self.profile = profile
        self.runner = runner
        self.window = window
        self.transport: Transport | None = None
        self.survey: Survey | None = None
        self.state = SessionState.DISCONNECTED
        self._connect_task: Task | None = None
        self.prompts: Any = None

    def _set_state(self, state: SessionState) -> None:
        self.state = state
        self.state_changed.emit(state)

    # -- connecting ----------------------------------------------------------------
    def connect_and_survey(self) -> None:
        if self.state == SessionState.CONNECTING:
            return
        from sambatune.ui.prompts import GuiPrompts

        cancel = CancelToken()
        prompts = GuiPrompts(self.window, cancel, f"{self.profile.id}:{self.profile.describe()}")
        self.prompts = prompts
        profile = self.profile

        def work(report: Callable[[Any], None], task_cancel: CancelToken) -> tuple[Transport, Survey]:
            from sambatune.remote.connection import open_target
            from sambatune.remote.survey import run_survey

            task_cancel.on_cancel(cancel.cancel)
            report(f"Connecting to {profile.target_label}…")
            transport = open_target(profile.connection_options(), prompts, cancel=cancel)
            try:
                report("Surveying the server…")

                def on_agent(event: AgentEvent) -> None:
                    if event.type == "progress":
                        report(f"Surveying the server: {event.data.get('message', '')}…")

                survey = run_survey(
                    transport,
                    config_path=profile.config_path or None,
                    cancel=cancel,
                    on_event=on_agent,
                )
            except BaseException:
                transport.close()
                raise
            return transport, survey

        def done(result: tuple[Transport, Survey]) -> None:
            self.transport, self.survey = result
            self._connect_task = None
            try:
                prompts.remember_secrets()
            except SambaTuneError as error:
                self.failed.emit(error)
            self._set_state(SessionState.CONNECTED)
            self.survey_changed.emit(self.survey)

        def failed(error: SambaTuneError) -> None:
            self._connect_task = None
            self._set_state(SessionState.DISCONNECTED)
            self.failed.emit(error)

        def cancelled() -> None:
            self._connect_task = None
            self._set_state(SessionState.DISCONNECTED)
            self.progress.emit("Cancelled.")

        self._set_state(SessionState.CONNECTING)
        self._connect_task = self.runner.start(
            work,
            name=f"Connecting to {profile.name}",
            on_event=self.progress.emit,
            on_done=done,
            on_failed=failed,
            on_cancelled=cancelled,
        )

    def cancel_connect(self) -> None:
        if self._connect_task is not None:
            self._connect_task.cancel()

    def refresh_survey(self) -> None:
        if self.transport is None:
            self.connect_and_survey()
            return
        transport = self.transport
        profile = self.profile

        def work(report: Callable[[Any], None], cancel: CancelToken) -> Survey:
            from sambatune.remote.survey import run_survey

            report("Surveying the server…")
            return run_survey(transport, config_path=profile.config_path or None, cancel=cancel)

        def done(survey: Survey) -> None:
            self.survey = survey
            self.survey_changed.emit(survey)

        self.run_task("Survey", work, on_done=done)

    def close_connection(self) -> None:
        transport, self.transport = self.transport, None
        self.survey = None
        if transport is not None:
            self.runner.start(lambda report, cancel: transport.close(), name="Disconnect")
        self._set_state(SessionState.DISCONNECTED)

    # -- helpers for page work (called in worker threads) ------------------------------
    def require_transport(self) -> Transport:
        from sambatune.errors import ConnectionFailed

        if self.transport is None:
            raise ConnectionFailed(f"Not connected to {self.profile.target_label}.")
        return self.transport

    def config_path(self) -> str:
        """The smb.conf this server uses: the profile's, or what the survey found.

        Never a default while smbd runs with other files: with several instances and
        none chosen this refuses, naming them, until the admin picks one (Overview).
        """
        from sambatune.errors import InvalidInput

        if self.profile.config_path:
            return self.profile.config_path
        if self.survey is not None and self.survey.ambiguous:
            raise InvalidInput(
                f"Several smbd run on {self.profile.target_label} with different smb.conf "
                f"files ({', '.join(self.survey.config_candidates)}). Choose the one "
                "SambaTune manages on the Overview page."
            )
        if self.survey is not None and self.survey.config_path:
            return self.survey.config_path
        return "/etc/samba/smb.conf"

    def prepare_root(self, transport: Transport, path: str, cancel: CancelToken) -> bool:
        """Whether changing ``path`` needs sudo; asks for the sudo password if it does."""
        from sambatune.errors import SudoFailed
        from sambatune.remote.config_location import needs_sudo
        from sambatune.remote.prompts import SecretRequest

        sudo = self.profile.use_sudo or needs_sudo(transport, path)
        if not sudo or transport.sudo_mode() in ("root", "nopasswd"):
            return sudo
        attempt = 1
        while True:
            try:
                transport.check_sudo()
                return True
            except SudoFailed:
                if attempt > 3 or self.prompts is None:
                    raise
            cancel.raise_if_cancelled()
            secret = self.prompts.ask_secret(SecretRequest("sudo", self.profile.target_label, attempt))
            if secret is None:
                raise SudoFailed(
                    f"Root rights are needed on {self.profile.target_label} and no sudo password was given."
                )
            transport.set_sudo_password(secret)
            attempt += 1

    def apply_journal(self, transport: Transport, path: str) -> Any:
        """Where safe apply records its runs on this computer (before and after the swap)."""
        from sambatune.applied_versions import AppliedVersions

        return AppliedVersions().journal(transport.label, path)

    def reconnector(self, transport: Transport) -> Callable[[], Transport]:
        """For safe apply in a worker thread: connect again as the first time (asking in
        dialogs if needed) with the same sudo password, when the connection dropped."""
        from sambatune.remote.connection import open_target
        from sambatune.remote.prompts import NoPrompts

        def reconnect() -> Transport:
            fresh = open_target(self.profile.connection_options(), self.prompts or NoPrompts())
            transport.share_sudo_with(fresh)
            # The session's pages go on with the connection that works.
            self.transport = fresh
            return fresh

        return reconnect

    # -- work for pages ------------------------------------------------------------
    def run_task(
        self,
        name: str,
        work: Callable[[Callable[[Any], None], CancelToken], Any],
        *,
        on_event: Callable[[Any], None] | None = None,
        on_done: Callable[[Any], None] | None = None,
        on_failed: Callable[[SambaTuneError], None] | None = None,
        on_cancelled: Callable[[], None] | None = None,
        on_finished: Callable[[], None] | None = None,
    ) -> Task:
        """Run ``work(report, cancel)`` off the GUI thread; errors go to the message bar."""
        return self.runner.start(
            work,
            name=name,
            on_event=on_event,
            on_done=on_done,
            on_failed=on_failed or self.failed.emit,
            on_cancelled=on_cancelled,
            on_finished=on_finished,
        )
