"""The Fleet window (File > Open Ansible inventory…, Server > Fleet…): many servers at once.

A top-level window like the smb.conf file window: where the hosts come from on top,
then a tab per job (Hosts: survey; Drift; Roll out; Ansible), a message bar at the
bottom. Everything that touches the network or the disk runs on the TaskRunner; the
window only shows what arrives.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import QInputDialog, QLineEdit, QMainWindow, QTabWidget, QVBoxLayout, QWidget

from sambatune.cancellation import CancelToken
from sambatune.errors import SambaTuneError
from sambatune.fleet.ansible_inventory import VaultPasswordNeeded, VaultPasswords
from sambatune.fleet.change import Edit
from sambatune.fleet.inventory import FleetHost
from sambatune.fleet.rollout import RolloutOptions
from sambatune.profiles import ServerProfile
from sambatune.ui.fleet.ansible_tab import AnsibleTab
from sambatune.ui.fleet.context import FleetSource, LoadedFleet
from sambatune.ui.fleet.drift_tab import DriftTab
from sambatune.ui.fleet.hosts_tab import HostsTab
from sambatune.ui.fleet.rollout_tab import RolloutTab
from sambatune.ui.fleet.settings import last_source, remember_source
from sambatune.ui.fleet.source_bar import FleetSourceBar
from sambatune.ui.message_bar import MessageBar
from sambatune.ui.tasks import Report, TaskRunner

HOSTS_TAB, DRIFT_TAB, ROLLOUT_TAB, ANSIBLE_TAB = range(4)


class FleetWindow(QMainWindow):
    def __init__(
        self,
        *,
        runner: TaskRunner | None = None,
        open_server: Callable[[FleetHost], None] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("fleetWindow")
        self.setWindowTitle("Fleet — SambaTune")
        self.resize(1180, 780)
        self.runner = runner or TaskRunner(self)
        self._own_runner = runner is None
        self.loaded: LoadedFleet | None = None
        self._vault: VaultPasswords | None = None  # typed once per window, memory only

        central = QWidget()
        layout = QVBoxLayout(central)
        self.source_bar = FleetSourceBar()
        self.source_bar.requested.connect(self.load)
        layout.addWidget(self.source_bar)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("fleetTabs")
        self.hosts_tab = HostsTab(self.runner, open_server=open_server)
        self.drift_tab = DriftTab(self.runner)
        self.rollout_tab = RolloutTab(self.runner)
        self.ansible_tab = AnsibleTab(self.runner, self._change)
        self.tabs.addTab(self.hosts_tab, "Hosts")
        self.tabs.addTab(self.drift_tab, "Drift")
        self.tabs.addTab(self.rollout_tab, "Roll out")
        self.tabs.addTab(self.ansible_tab, "Ansible")
        self.tabs.setEnabled(False)
        layout.addWidget(self.tabs, 1)
        self.message_bar = MessageBar()
        layout.addWidget(self.message_bar)
        self.setCentralWidget(central)
        self._build_menu()

        # Read once (a small file): start() asks whether there was one.
        self._remembered = last_source()
        if self._remembered is not None:
            self.source_bar.set_source(self._remembered)

    def start(self, *, browse: bool) -> None:
        """What opening the window does: ask for an inventory (File > Open Ansible
        inventory…), or load the hosts used last (Server > Fleet…)."""
        if browse:
            self.source_bar.browse_inventory()
        elif self._remembered is not None:
            self.load(self.source_bar.source())

    def _build_menu(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        close = QAction("&Close", self)
        close.setShortcut(QKeySequence.StandardKey.Close)
        close.triggered.connect(self.close)
        file_menu.addAction(close)

    def _change(self) -> tuple[list[Edit], RolloutOptions]:
        form = self.rollout_tab.form
        return form.edits(), form.options()

    # -- loading the fleet ------------------------------------------------------------
    def load(self, source: FleetSource) -> None:
        """Read the hosts from ``source`` (a file: on a worker) and show them."""
        if not source.value and source.kind != "ssh_config":
            self.message_bar.show_message("info", "Choose an inventory file, or type the hosts, first.")
            return
        self.source_bar.set_source(source)
        self.source_bar.load_button.setEnabled(False)
        if source.vault is None:
            source = replace(source, vault=self._vault)

        def work(_report: Report, _cancel: CancelToken) -> LoadedFleet:
            loaded = LoadedFleet(source, source.load())
            remember_source(source)  # an atomic write with fsync: not on the GUI thread
            return loaded

        def failed(error: SambaTuneError) -> None:
            if isinstance(error, VaultPasswordNeeded):
                self.ask_vault_password(source, error)
            else:
                self.show_error(error)

        self.runner.start(
            work,
            name="Loading the fleet",
            on_done=self.show_fleet,
            on_failed=failed,
            on_finished=lambda: self.source_bar.load_button.setEnabled(True),
        )

    def ask_vault_password(self, source: FleetSource, error: VaultPasswordNeeded) -> None:
        """The inventory holds vault data: ask for its password (kept in memory for this
        window) and read it again; cancelling leaves the error shown."""
        self.show_error(error)
        dialog = QInputDialog(self)
        dialog.setObjectName("vaultPasswordDialog")
        dialog.setWindowTitle("Vault password")
        dialog.setLabelText(f"{error.message}\n\nThe vault password of this inventory:")
        dialog.setTextEchoMode(QLineEdit.EchoMode.Password)

        def given(password: str) -> None:
            if password:
                self._vault = VaultPasswords(password=password)
                self.load(replace(source, vault=self._vault))

        dialog.textValueSelected.connect(given)
        dialog.open()

    def show_fleet(self, loaded: LoadedFleet) -> None:
        self.loaded = loaded
        self.setWindowTitle(f"Fleet: {loaded.source.describe()} — SambaTune")
        for tab in (self.hosts_tab, self.drift_tab, self.rollout_tab, self.ansible_tab):
            tab.set_fleet(loaded)
        self.tabs.setEnabled(True)
        self.message_bar.hide()

    def show_error(self, error: SambaTuneError) -> None:
        self.message_bar.show_error(error)

    def running_work(self) -> list[tuple[str, str]]:
        """Fleet work under way that closing stops: (what, what stopping it costs)."""
        work: list[tuple[str, str]] = []
        if self.rollout_tab.busy:
            work.append(
                (
                    "Fleet: a rollout",
                    "The rollout stops after the host step under way; its record says "
                    "interrupted, and it can be resumed (Past rollouts, or sambatune fleet "
                    "apply --resume).",
                )
            )
        if self.ansible_tab.task is not None:
            work.append(
                (
                    "Fleet: an Ansible run",
                    "ansible-playbook is stopped where it is: a host in the middle of its "
                    "play keeps whatever that play had done.",
                )
            )
        for tab, what in ((self.hosts_tab, "a survey"), (self.drift_tab, "a drift check")):
            if tab.task is not None:
                work.append((f"Fleet: {what}", "Nothing on the servers is changed by stopping it."))
        return work

    def closeEvent(self, event: QCloseEvent) -> None:
        self.hosts_tab.cancel()
        self.drift_tab.cancel()
        self.rollout_tab.stop()
        self.ansible_tab.stop()
        if self._own_runner:
            self.runner.shutdown(3000)
        super().closeEvent(event)


def profile_for(host: FleetHost) -> ServerProfile:
    """A fleet host as a saved server of the main window: opening it there connects the
    usual way, with the host-key question a fleet never asks."""
    return ServerProfile(
        name=host.name,
        host=host.address,
        port=host.port,
        user=host.user or "",
        identity_file=host.identity_file or "",
        use_sudo=host.become,
        config_path=host.samba_conf or "",
    )
