"""Add or edit a server: where it is and how to sign in. Never stores secrets."""

from __future__ import annotations

import dataclasses

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from sambatune.errors import InvalidInput
from sambatune.profiles import ServerProfile

AUTH_LABELS = {
    "key": "SSH key (and ssh-agent)",
    "agent": "ssh-agent only",
    "password": "Password",
}


class ProfileDialog(QDialog):
    def __init__(self, profile: ServerProfile | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("profileDialog")
        self.setWindowTitle("Edit server" if profile else "Add server")
        self.original = profile
        layout = QVBoxLayout(self)
        hint = QLabel(
            "Names from <tt>~/.ssh/config</tt> work here too: their HostName, User, Port, "
            "IdentityFile and ProxyJump apply, as with the ssh command."
        )
        hint.setWordWrap(True)
        layout.addWidget(hint)
        form = QFormLayout()
        self.name = QLineEdit()
        self.name.setPlaceholderText("e.g. Office file server")
        self.host = QLineEdit()
        self.host.setPlaceholderText("files1.example.org, 192.168.1.10 or an ssh alias")
        self.port = QSpinBox()
        self.port.setRange(0, 65535)
        self.port.setSpecialValueText("default (22 or ~/.ssh/config)")
        self.user = QLineEdit()
        self.user.setPlaceholderText("default: from ~/.ssh/config, or your user name")
        self.auth = QComboBox()
        for key, label in AUTH_LABELS.items():
            self.auth.addItem(label, key)
        self.identity = QLineEdit()
        self.identity.setPlaceholderText("default: ~/.ssh/id_ed25519, id_ecdsa, id_rsa")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse_key)
        identity_row = QHBoxLayout()
        identity_row.addWidget(self.identity, 1)
        identity_row.addWidget(browse)
        self.jump = QLineEdit()
        self.jump.setPlaceholderText("optional: user@bastion:22 (like ssh -J)")
        self.sudo = QCheckBox("Use sudo for smb.conf changes and reloads")
        self.config_path = QLineEdit()
        self.config_path.setPlaceholderText("detected (the running smbd's, or smbd -b)")
        form.addRow("Name", self.name)
        form.addRow("Host", self.host)
        form.addRow("SSH port", self.port)
        form.addRow("User", self.user)
        form.addRow("Sign in with", self.auth)
        form.addRow("Key file", identity_row)
        form.addRow("Jump host", self.jump)
        form.addRow("smb.conf", self.config_path)
        form.addRow("", self.sudo)
        layout.addLayout(form)
        self.error = QLabel()
        self.error.setObjectName("profileError")
        self.error.setStyleSheet("color: #b3261e;")
        self.error.hide()
        layout.addWidget(self.error)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.auth.currentIndexChanged.connect(self._auth_changed)
        if profile:
            self._load(profile)
        self._auth_changed()
        self.result_profile: ServerProfile | None = None

    def _load(self, profile: ServerProfile) -> None:
        self.name.setText(profile.name)
        self.host.setText(profile.host)
        self.port.setValue(profile.port or 0)
        self.user.setText(profile.user)
        self.auth.setCurrentIndex(max(0, self.auth.findData(profile.auth)))
        self.identity.setText(profile.identity_file)
        self.jump.setText(profile.jump_host)
        self.sudo.setChecked(profile.use_sudo)
        self.config_path.setText(profile.config_path)

    def _auth_changed(self) -> None:
        self.identity.setEnabled(self.auth.currentData() == "key")

    def _browse_key(self) -> None:
        import os

        path, _ = QFileDialog.getOpenFileName(self, "Private key", os.path.expanduser("~/.ssh"))
        if path:
            self.identity.setText(path)

    def profile(self) -> ServerProfile:
        values = {
            "name": self.name.text().strip() or self.host.text().strip(),
            "host": self.host.text().strip(),
            "port": self.port.value() or None,
            "user": self.user.text().strip(),
            "auth": self.auth.currentData(),
            "identity_file": self.identity.text().strip() if self.auth.currentData() == "key" else "",
            "jump_host": self.jump.text().strip(),
            "use_sudo": self.sudo.isChecked(),
            "config_path": self.config_path.text().strip(),
        }
        if self.original is not None:
            return dataclasses.replace(self.original, **values)
        return ServerProfile(**values)

    def _accept(self) -> None:
        import os

        profile = self.profile()
        try:
            profile.validate()
            key = profile.identity_file
            # Saved now, used later: a typo would only show as a failed connection then.
            if key and not os.path.isfile(os.path.expanduser(key)):
                raise InvalidInput(f"There is no key file at {key}.")
        except InvalidInput as error:
            self.error.setText(error.message)
            self.error.show()
            return
        self.result_profile = profile
        self.accept()
