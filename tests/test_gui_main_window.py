"""The desktop app, driven like a user would: add a server, connect, trust the key, read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox, QLabel, QTableWidget
from pytestqt.qtbot import QtBot

from sambatune.profiles import ProfileStore
from sambatune.ui.main_window import MainWindow
from sambatune.ui.profile_dialog import ProfileDialog
from sambatune.ui.prompts import HostKeyDialog
from screenshots import Screenshot
from table_items import item_at
from testbed.smbd import SmbServer
from testbed.sshd import SshServer, current_user


@pytest.fixture
def window(qtbot: QtBot) -> MainWindow:
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    return win


def test_add_connect_trust_and_see_overview(
    window: MainWindow,
    qtbot: QtBot,
    sshd: SshServer,
    user_key: Path,
    smbd: SmbServer,
    isolated_home: Path,
    screenshot: Screenshot,
) -> None:
    screenshot(window, "main-window-empty")
    qtbot.mouseClick(window.server_list.add_button, Qt.MouseButton.LeftButton)
    dialog = window.findChild(ProfileDialog)
    assert dialog is not None
    dialog.name.setText("Test bed")
    dialog.host.setText("127.0.0.1")
    dialog.port.setValue(sshd.port)
    dialog.user.setText(current_user())
    dialog.identity.setText(str(user_key))
    dialog.config_path.setText(str(smbd.config))
    screenshot(dialog, "add-server-dialog")
    buttons = dialog.findChild(QDialogButtonBox)
    assert buttons is not None
    buttons.button(QDialogButtonBox.StandardButton.Save).click()

    # Saved to the config dir, without any secret.
    saved = json.loads(ProfileStore().path.read_text())
    assert saved["servers"][0]["host"] == "127.0.0.1"
    assert "password" not in json.dumps(saved)

    profile_id = window.server_list.current_id()
    assert profile_id and profile_id != "local"
    workspace = window.workspaces[profile_id]
    qtbot.mouseClick(workspace.connect_panel.connect_button, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: window.findChild(HostKeyDialog) is not None, timeout=15000)
    host_dialog = window.findChild(HostKeyDialog)
    assert host_dialog is not None
    fingerprint = host_dialog.findChild(QLabel, "fingerprint")
    assert fingerprint is not None
    shown = fingerprint.text()
    assert sshd.host_key_fingerprint in shown
    screenshot(host_dialog, "host-key-prompt")
    host_dialog.trust_button.click()

    qtbot.waitUntil(lambda: workspace.overview.survey is not None, timeout=30000)
    assert workspace.overview.survey is not None
    version = workspace.overview.survey.data["samba"]["version_text"].replace("Version ", "")
    labels = [label.text() for label in workspace.overview.findChildren(QLabel)]
    assert any(version in text for text in labels), labels
    shares = workspace.overview.findChild(QTableWidget, "shareTable")
    assert shares is not None
    assert smbd.share in [item_at(shares, r, 0).text() for r in range(shares.rowCount())]
    window.resize(1280, 1000)
    qtbot.wait(100)
    screenshot(window, "server-overview")

    # The key was remembered in SambaTune's own known_hosts.
    from sambatune.appdirs import known_hosts_file

    assert sshd.known_hosts_line in known_hosts_file().read_text()


def _connect_to_an_unknown_key(
    window: MainWindow, qtbot: QtBot, sshd: SshServer, user_key: Path
) -> HostKeyDialog:
    """Add the test sshd as a server and connect: its key is unknown, so the prompt opens."""
    from sambatune.profiles import ServerProfile

    profile = ServerProfile(
        name="t", host="127.0.0.1", port=sshd.port, user=current_user(), identity_file=str(user_key)
    )
    window.add_profile(profile)
    window.connect_server(profile.id)
    qtbot.waitUntil(lambda: window.findChild(HostKeyDialog) is not None, timeout=15000)
    host_dialog = window.findChild(HostKeyDialog)
    assert host_dialog is not None
    return host_dialog


def test_rejecting_the_key_shows_an_error(
    window: MainWindow,
    qtbot: QtBot,
    sshd: SshServer,
    user_key: Path,
) -> None:
    host_dialog = _connect_to_an_unknown_key(window, qtbot, sshd, user_key)
    host_dialog.reject_button.click()
    qtbot.waitUntil(lambda: window.message_bar.isVisible(), timeout=15000)
    assert "Unknown host key" in window.message_bar.message
    assert sshd.host_key_fingerprint in window.message_bar.message


@pytest.mark.parametrize(
    "key", [Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space], ids=["return", "enter", "space"]
)
def test_enter_at_the_host_key_prompt_does_not_trust_the_key(
    window: MainWindow, qtbot: QtBot, sshd: SshServer, user_key: Path, key: Qt.Key
) -> None:
    """A key nobody compared is never trusted by a key press: the safe answer is the default."""
    from sambatune.appdirs import known_hosts_file

    host_dialog = _connect_to_an_unknown_key(window, qtbot, sshd, user_key)
    qtbot.waitExposed(host_dialog)
    assert host_dialog.reject_button.isDefault() and not host_dialog.trust_button.isDefault()
    qtbot.waitUntil(lambda: host_dialog.focusWidget() is host_dialog.reject_button, timeout=5000)
    qtbot.keyClick(host_dialog.focusWidget(), key)
    qtbot.waitUntil(lambda: window.message_bar.isVisible(), timeout=15000)
    assert "Unknown host key" in window.message_bar.message
    assert sshd.known_hosts_line not in known_hosts_file().read_text()


def test_cancel_connect_keeps_the_gui_alive(window: MainWindow, qtbot: QtBot) -> None:
    import socket

    from sambatune.profiles import ServerProfile

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(5)
    try:
        profile = ServerProfile(name="silent", host="127.0.0.1", port=silent.getsockname()[1])
        window.add_profile(profile)
        window.connect_server(profile.id)
        session = window.sessions[profile.id]
        panel = window.workspaces[profile.id].connect_panel
        qtbot.waitUntil(lambda: panel.cancel_button.isVisible(), timeout=5000)
        qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: session.state == "disconnected", timeout=5000)
        assert panel.connect_button.isEnabled()
    finally:
        silent.close()


def test_local_overview(window: MainWindow, qtbot: QtBot, smbd: SmbServer, screenshot: Screenshot) -> None:
    session = window.session("local")
    session.profile.config_path = str(smbd.config)
    session.connect_and_survey()
    workspace = window.workspaces["local"]
    qtbot.waitUntil(lambda: workspace.overview.survey is not None, timeout=30000)
    nics = workspace.overview.findChild(QTableWidget, "nicTable")
    assert nics is not None
    assert "lo (loopback)" in [item_at(nics, r, 0).text() for r in range(nics.rowCount())]


def test_profile_dialog_refuses_a_bad_host(qtbot: QtBot) -> None:
    dialog = ProfileDialog(None)
    qtbot.addWidget(dialog)
    dialog.name.setText("x")
    dialog.host.setText("has space")
    buttons = dialog.findChild(QDialogButtonBox)
    assert buttons is not None
    buttons.button(QDialogButtonBox.StandardButton.Save).click()
    assert dialog.result_profile is None
    assert "cannot contain spaces" in dialog.error.text()


def test_a_key_file_that_is_not_there_is_refused_and_dialogs_go_when_closed(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    for _ in range(3):  # each Add opens a dialog of its own; Cancel leaves none behind
        qtbot.mouseClick(window.server_list.add_button, Qt.MouseButton.LeftButton)
        dialog = window.findChild(ProfileDialog)
        assert dialog is not None
        dialog.reject()
        qtbot.waitUntil(lambda: window.findChild(ProfileDialog) is None, timeout=2000)

    qtbot.mouseClick(window.server_list.add_button, Qt.MouseButton.LeftButton)
    dialog = window.findChild(ProfileDialog)
    assert dialog is not None
    dialog.host.setText("files1")
    dialog.identity.setText(str(tmp_path / "id_typo"))
    buttons = dialog.findChild(QDialogButtonBox)
    assert buttons is not None
    buttons.button(QDialogButtonBox.StandardButton.Save).click()
    assert dialog.result_profile is None and dialog.isVisible()
    assert f"There is no key file at {tmp_path / 'id_typo'}" in dialog.error.text()
    (tmp_path / "id_typo").write_text("a key\n")
    buttons.button(QDialogButtonBox.StandardButton.Save).click()
    assert dialog.result_profile is not None
    qtbot.waitUntil(lambda: window.findChild(ProfileDialog) is None, timeout=2000)
    assert [p.host for p in window.profiles if not p.is_local] == ["files1"]


def test_edit_and_remove_a_server(window: MainWindow, qtbot: QtBot) -> None:
    from PySide6.QtWidgets import QMessageBox

    from sambatune.profiles import ServerProfile

    window.add_profile(ServerProfile(name="old name", host="files1", port=2222))
    profile_id = window.server_list.current_id()
    assert profile_id is not None
    window.server_list.edit_button.click()
    dialog = window.findChild(ProfileDialog)
    assert dialog is not None
    assert dialog.host.text() == "files1" and dialog.port.value() == 2222
    dialog.name.setText("new name")
    buttons = dialog.findChild(QDialogButtonBox)
    assert buttons is not None
    buttons.button(QDialogButtonBox.StandardButton.Save).click()
    saved = json.loads(ProfileStore().path.read_text())["servers"]
    assert [(s["id"], s["name"]) for s in saved] == [(profile_id, "new name")]
    assert "new name" in window.server_list.list.currentItem().text()

    window.server_list.remove_button.click()
    box = window.findChild(QMessageBox, "removeServerBox")
    assert box is not None
    box.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: json.loads(ProfileStore().path.read_text())["servers"] == [])
    assert window.server_list.current_id() == "local"
