"""The row at the top of the Fleet window: where the hosts come from, and which of them.

An Ansible inventory (the usual case: admins already keep one), the single-host
``Host`` entries of an ssh config, or hosts typed by hand; narrowed with Ansible's
``--limit`` patterns. Loading reads files, so the window does it on a worker.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QStackedWidget,
    QWidget,
)

from sambatune.ui import file_places
from sambatune.ui.fleet.context import BY_HAND, INVENTORY, SSH_CONFIG, FleetSource

KINDS = (
    (INVENTORY, "Ansible inventory"),
    (SSH_CONFIG, "Hosts of an ssh config"),
    (BY_HAND, "Hosts typed by hand"),
)


class FleetSourceBar(QWidget):
    requested = Signal(object)  # a FleetSource, when Load is pressed

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("Hosts from:"))
        self.kind = QComboBox()
        self.kind.setObjectName("fleetSourceKind")
        for kind, label in KINDS:
            self.kind.addItem(label, kind)
        layout.addWidget(self.kind)

        self.inventory = QLineEdit()
        self.inventory.setObjectName("fleetInventoryPath")
        self.inventory.setPlaceholderText("inventory file or folder, e.g. ~/ansible/inventory/hosts.ini")
        self.ssh_config = QLineEdit()
        self.ssh_config.setObjectName("fleetSshConfigPath")
        self.ssh_config.setPlaceholderText("~/.ssh/config (leave empty for yours)")
        self.by_hand = QLineEdit()
        self.by_hand.setObjectName("fleetHostsByHand")
        self.by_hand.setPlaceholderText("admin@nas1, nas2:2222, root@[2001:db8::5]")
        self.fields = QStackedWidget()
        for field in (self.inventory, self.ssh_config, self.by_hand):
            self.fields.addWidget(field)
        layout.addWidget(self.fields, 3)
        self.browse = QPushButton("Browse…")
        self.browse.clicked.connect(self._browse)
        layout.addWidget(self.browse)

        layout.addWidget(QLabel("Limit:"))
        self.limit = QLineEdit()
        self.limit.setObjectName("fleetLimit")
        self.limit.setPlaceholderText("all hosts; or fileservers:!nas03")
        self.limit.setToolTip(
            "Ansible's --limit patterns: host or group names, a:b (either), &g (also in g), "
            "!x (not x), * wildcards."
        )
        layout.addWidget(self.limit, 2)
        self.load_button = QPushButton("Load")
        self.load_button.setObjectName("fleetLoadButton")
        self.load_button.setDefault(True)
        self.load_button.clicked.connect(self._load)
        for field in (self.inventory, self.ssh_config, self.by_hand, self.limit):
            field.returnPressed.connect(self._load)
        layout.addWidget(self.load_button)
        self.kind.currentIndexChanged.connect(self._kind_changed)

    def _kind_changed(self) -> None:
        self.fields.setCurrentIndex(self.kind.currentIndex())
        self.browse.setEnabled(self.kind.currentData() != BY_HAND)

    def set_source(self, source: FleetSource) -> None:
        index = self.kind.findData(source.kind)
        self.kind.setCurrentIndex(max(0, index))
        self._kind_changed()
        self._field(source.kind).setText(source.value)
        self.limit.setText(source.limit)

    def source(self) -> FleetSource:
        kind = str(self.kind.currentData())
        return FleetSource(kind, self._field(kind).text().strip(), self.limit.text().strip())

    def _field(self, kind: str) -> QLineEdit:
        return {INVENTORY: self.inventory, SSH_CONFIG: self.ssh_config, BY_HAND: self.by_hand}[kind]

    def browse_inventory(self) -> None:
        self.kind.setCurrentIndex(self.kind.findData(INVENTORY))
        self._browse()

    def _browse(self) -> None:
        kind = str(self.kind.currentData())
        dialog = QFileDialog(
            self,
            "Open Ansible inventory" if kind == INVENTORY else "Open ssh config",
            self._field(kind).text() or file_places.suggested(),
            "Inventories (*.ini *.yml *.yaml hosts inventory*);;All files (*)"
            if kind == INVENTORY
            else "All files (*)",
        )
        dialog.setObjectName("fleetSourceDialog")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)

        def chosen(path: str) -> None:
            file_places.remember(path)
            self._field(kind).setText(path)
            self._load()

        dialog.fileSelected.connect(chosen)
        dialog.open()

    def _load(self) -> None:
        self.requested.emit(self.source())
