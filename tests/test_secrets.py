"""Secrets stay in memory unless the user opts in; then they go to the OS keyring only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from sambatune.profiles import ServerProfile
from sambatune.remote import secrets
from sambatune.ui.main_window import MainWindow
from sambatune.ui.prompts import SecretDialog
from testbed.memory_keyring import MemoryKeyring
from testbed.memory_keyring import memory_keyring as in_memory_keyring
from testbed.sshd import SshServer
from testbed.sudo_user import SudoUser


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    with in_memory_keyring() as backend:
        yield backend


def test_no_keyring_means_nothing_is_saved() -> None:
    from keyring.backends import fail

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        assert not secrets.keyring_available()
        with pytest.raises(secrets.KeyringUnavailable):
            secrets.save_secret("password", "x", "secret")
        assert secrets.load_secret("password", "x") is None
    finally:
        keyring.set_keyring(previous)


def test_password_remembered_only_when_asked(
    qtbot: QtBot,
    memory_keyring: MemoryKeyring,
    sshd_password: SshServer,
    sudo_user: SudoUser,
    isolated_home: Path,
) -> None:
    (isolated_home / ".ssh" / "known_hosts").write_text(sshd_password.known_hosts_line)
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    profile = ServerProfile(
        name="pw", host="127.0.0.1", port=sshd_password.port, user=sudo_user.name, auth="password"
    )
    window.add_profile(profile)
    session = window.session(profile.id)

    # First connect: asked, not remembered.
    window.connect_server(profile.id)
    qtbot.waitUntil(lambda: window.findChild(SecretDialog) is not None, timeout=15000)
    dialog = window.findChild(SecretDialog)
    assert dialog is not None
    secret = dialog.findChild(QLineEdit, "secret")
    assert secret is not None
    secret.setText(sudo_user.password)
    dialog.accept()
    qtbot.waitUntil(lambda: session.state == "connected", timeout=30000)
    assert memory_keyring.store == {}
    session.close_connection()

    # Second connect: asked again; this time the user ticks "remember".
    window.connect_server(profile.id)
    qtbot.waitUntil(lambda: window.findChild(SecretDialog) is not None, timeout=15000)
    dialog = window.findChild(SecretDialog)
    assert dialog is not None
    assert dialog.remember.isEnabled()
    secret = dialog.findChild(QLineEdit, "secret")
    assert secret is not None
    secret.setText(sudo_user.password)
    dialog.remember.setChecked(True)
    dialog.accept()
    qtbot.waitUntil(lambda: session.state == "connected", timeout=30000)
    assert list(memory_keyring.store.values()) == [sudo_user.password]
    session.close_connection()

    # Third connect: no question at all.
    window.connect_server(profile.id)
    qtbot.waitUntil(lambda: session.state == "connected", timeout=30000)
    assert window.findChild(SecretDialog) is None
    from sambatune.profiles import ProfileStore

    assert sudo_user.password not in ProfileStore().path.read_text()
