"""Connection questions asked from a worker thread and answered in dialogs.

The worker blocks on a threading.Event (or its cancel token) while the GUI thread
shows a window-modal dialog; the GUI thread itself never waits.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QFont, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from sambatune.cancellation import CancelToken
from sambatune.remote.hostkeys import HostKeyQuestion
from sambatune.remote.prompts import SecretRequest


@dataclass
class PendingQuestion:
    payload: Any
    answered: threading.Event = field(default_factory=threading.Event)
    answer: Any = None


class HostKeyDialog(QDialog):
    def __init__(self, question: HostKeyQuestion, parent: QWidget | None) -> None:
        super().__init__(parent)
        self.setObjectName("hostKeyDialog")
        self.setWindowTitle("Unknown server key")
        self.question = question
        layout = QVBoxLayout(self)
        intro = QLabel(
            f"<b>SambaTune has never seen the key of {question.host}.</b><br>"
            "Before you trust it, compare the fingerprint below with the one the server "
            "itself shows (run <tt>ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub</tt> "
            "on the server, or ask its administrator)."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        fingerprint = QLabel(f"{question.key_type} key ({question.bits} bits)\n{question.fingerprint}")
        fingerprint.setObjectName("fingerprint")
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        fingerprint.setFont(mono)
        fingerprint.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        fingerprint.setStyleSheet("padding: 8px; background: palette(alternate-base);")
        layout.addWidget(fingerprint)
        if question.note:
            note = QLabel(question.note)
            note.setWordWrap(True)
            layout.addWidget(note)
        buttons = QDialogButtonBox()
        self.trust_button = buttons.addButton("Trust and connect", QDialogButtonBox.ButtonRole.AcceptRole)
        self.reject_button = buttons.addButton("Do not connect", QDialogButtonBox.ButtonRole.RejectRole)
        # Enter and Space must never trust a key nobody compared: "Do not connect" is
        # the default and has the focus. A focused push button in a dialog makes itself
        # the default (autoDefault), so the trust button may not.
        self.trust_button.setAutoDefault(False)
        self.reject_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.reject_button.setFocus(Qt.FocusReason.OtherFocusReason)


class SecretDialog(QDialog):
    def __init__(self, request: SecretRequest, keyring_ok: bool, parent: QWidget | None) -> None:
        super().__init__(parent)
        self.setObjectName("secretDialog")
        self.request = request
        titles = {"passphrase": "Key passphrase", "sudo": "sudo password"}
        self.setWindowTitle(titles.get(request.kind, "Password"))
        layout = QVBoxLayout(self)
        text = request.prompt()
        if request.attempt > 1:
            text = f"That did not work. {text}"
        label = QLabel(text + ":")
        label.setWordWrap(True)
        layout.addWidget(label)
        self.edit = QLineEdit()
        self.edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.edit.setObjectName("secret")
        layout.addWidget(self.edit)
        self.remember = QCheckBox("Remember it in the system keyring")
        self.remember.setEnabled(keyring_ok)
        if not keyring_ok:
            self.remember.setToolTip("No system keyring is available on this computer.")
        layout.addWidget(self.remember)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def secret(self) -> str:
        return self.edit.text()


class GuiPrompts(QObject):
    """ConnectionPrompts for worker threads, answered by dialogs on the GUI thread."""

    _ask = Signal(object, str)

    def __init__(self, parent_widget: QWidget, cancel: CancelToken, profile_key: str) -> None:
        super().__init__(parent_widget)
        self.parent_widget = parent_widget
        self.cancel = cancel
        self.profile_key = profile_key
        self.dialog: QDialog | None = None
        self._ask.connect(self._show)
        self.secrets_to_remember: list[tuple[str, str, str]] = []

    # -- called from the worker thread -------------------------------------------
    def confirm_host_key(self, question: HostKeyQuestion) -> bool:
        return bool(self._wait(PendingQuestion(question), "hostkey"))

    def ask_secret(self, request: SecretRequest) -> str | None:
        from sambatune.remote.secrets import load_secret

        if request.attempt == 1:
            stored = load_secret(request.kind, self._secret_target(request))
            if stored is not None:
                return stored
        answer = self._wait(PendingQuestion(request), "secret")
        return None if answer is None else str(answer)

    def _secret_target(self, request: SecretRequest) -> str:
        return request.target if request.kind == "passphrase" else self.profile_key

    def _wait(self, pending: PendingQuestion, kind: str) -> Any:
        self._ask.emit(pending, kind)
        while not pending.answered.wait(0.1):
            if self.cancel.cancelled:
                return None
        return pending.answer

    # -- GUI thread -------------------------------------------------------------
    @Slot(object, str)
    def _show(self, pending: PendingQuestion, kind: str) -> None:
        from sambatune.remote.secrets import keyring_available

        if self.cancel.cancelled:
            pending.answered.set()
            return
        dialog: QDialog
        if kind == "hostkey":
            dialog = HostKeyDialog(pending.payload, self.parent_widget)
        else:
            dialog = SecretDialog(pending.payload, keyring_available(), self.parent_widget)
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        self.dialog = dialog

        def finished(result: int) -> None:
            accepted = result == QDialog.DialogCode.Accepted
            if isinstance(dialog, HostKeyDialog):
                pending.answer = accepted
            else:
                assert isinstance(dialog, SecretDialog)
                pending.answer = dialog.secret() if accepted else None
                if accepted and dialog.remember.isChecked():
                    request = dialog.request
                    self.secrets_to_remember.append(
                        (request.kind, self._secret_target(request), dialog.secret())
                    )
            self.dialog = None
            pending.answered.set()
            dialog.deleteLater()

        dialog.finished.connect(finished)
        self.cancel.on_cancel(lambda: pending.answered.set())
        dialog.open()

    def remember_secrets(self) -> None:
        """After a successful connect: store what the user asked us to keep."""
        from sambatune.remote.secrets import save_secret

        for kind, target, secret in self.secrets_to_remember:
            save_secret(kind, target, secret)
        self.secrets_to_remember.clear()
