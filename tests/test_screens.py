"""Every page of the real app, connected to the test bed, at the default and a large size.

Writes artifacts/screens/<width>x<height>/<page>.png for people to look at (and
docs/render_screenshots.py copies the README's from there). What it asserts is what
an admin would notice at once: no form that scrolls sideways, no label cut to a few
letters at the default window size.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from sambatune.profiles import ServerProfile
from sambatune.ui.main_window import MainWindow
from screen_checks import problems_of, workspace_pages, write_profile
from testbed.smbd import SmbServer
from testbed.sshd import SshServer, current_user

SCREENS = Path(__file__).resolve().parents[1] / "artifacts" / "screens"
SIZES = ((1180, 780), (1920, 1080))


@pytest.fixture
def window(
    qtbot: QtBot,
    sshd: SshServer,
    user_key: Path,
    fresh_smbd: SmbServer,
    isolated_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[MainWindow]:
    (isolated_home / ".ssh" / "known_hosts").write_text(sshd.known_hosts_line)
    # A cifs mount in this computer's fstab: its plan has 14 rows and the before-and-after box.
    etc = tmp_path / "etc"
    etc.mkdir()
    share = tmp_path / "mnt" / "data"
    share.mkdir(parents=True)
    (etc / "fstab").write_text(f"//nas.example/data {share} cifs credentials=/etc/nas.cred,rsize=65536 0 0\n")
    monkeypatch.setenv("SAMBATUNE_ETC_DIR", str(etc))
    main = MainWindow()
    qtbot.addWidget(main)
    main.show()
    profile = ServerProfile(
        name="files1",
        host="127.0.0.1",
        port=sshd.port,
        user=current_user(),
        identity_file=str(user_key),
        config_path=str(fresh_smbd.config),
    )
    main.add_profile(profile)
    main.connect_server(profile.id)
    qtbot.waitUntil(lambda: main.sessions[profile.id].survey is not None, timeout=30000)
    yield main
    main.runner.shutdown(5000)


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_every_page_reads_well(window: MainWindow, qtbot: QtBot, width: int, height: int) -> None:
    window.resize(width, height)
    workspace = window.workspaces[window.server_list.current_id() or ""]
    qtbot.waitUntil(lambda: workspace.pages_built, timeout=30000)
    folder = SCREENS / f"{width}x{height}"
    folder.mkdir(parents=True, exist_ok=True)
    problems: dict[str, list[str]] = {}
    for name, page in workspace_pages(workspace):
        workspace.tabs.setCurrentWidget(page)
        if page is workspace.editor:
            qtbot.waitUntil(lambda: workspace.editor.loaded, timeout=30000)
        qtbot.wait(300)
        assert window.grab().save(str(folder / f"{name}.png"))
        found = problems_of(page)
        if found:
            problems[name] = found
        if page is workspace.editor:
            workspace.editor.show_view(1)
            qtbot.wait(300)
            assert window.grab().save(str(folder / "editor-form.png"))
            if problems_of(page):
                problems["editor-form"] = problems_of(page)
            workspace.editor.show_view(0)
        if page is workspace.client_tuning:
            problems.update(_plan_with_a_mistake_first(qtbot, window, folder, width, height))
        # A page never makes the window resize itself.
        if (window.width(), window.height()) != (width, height):
            problems[f"{name}: window"] = [f"{window.width()}x{window.height()}"]
    assert not problems, problems


def _plan_with_a_mistake_first(
    qtbot: QtBot, window: MainWindow, folder: Path, width: int, height: int
) -> dict[str, list[str]]:
    """Tune this computer as an admin would: Make plan with the bandwidth left out (marked
    at its field), then with it; the plan's rows are the page's main content."""
    page = window.workspaces[window.server_list.current_id() or ""].client_tuning
    qtbot.waitUntil(lambda: page.snapshot is not None and not page.busy, timeout=30000)
    problems: dict[str, list[str]] = {}
    page.inputs.bandwidth.edit.setText("")
    page.inputs.rtt.edit.setText("1ms")
    page.inputs.plan_button.click()
    qtbot.waitUntil(lambda: not page.busy and window.message_bar.isVisible(), timeout=30000)
    qtbot.wait(200)
    if (window.width(), window.height()) != (width, height):
        problems["client-tuning with an error: window"] = [f"{window.width()}x{window.height()}"]
    page.inputs.bandwidth.edit.setText("1gbit")
    with qtbot.waitSignal(page.plan_shown, timeout=60000):
        page.inputs.plan_button.click()
    qtbot.waitUntil(lambda: not page.busy, timeout=30000)
    qtbot.wait(300)
    assert window.grab().save(str(folder / "client-tuning-plan.png"))
    table = page.plan_view.table
    assert table.rowCount() == 14 and page.check_box.isVisible()
    shown = table.viewport().height() // table.verticalHeader().defaultSectionSize()
    if shown < 9:
        problems["client-tuning plan rows"] = [f"{shown} of {table.rowCount()} rows in sight"]
    # The failed attempt's error went with the plan that answered it.
    if window.message_bar.isVisible():
        problems["client-tuning message bar"] = [window.message_bar.message]
    found = problems_of(page)
    if found:
        problems["client-tuning-plan"] = found
    return problems


#: Laptop screens of 1920x1080 scaled to 125% and 150%: the room left for windows in
#: Qt's device-independent pixels, and the scale. (Qt 6 turns X11's larger font DPI into
#: the same scale, so this covers Linux desktops too.)
SCALED = {"125%": (1536, 864, 1.25), "150%": (1280, 720, 1.5)}


@pytest.mark.parametrize("scale", SCALED)
def test_every_page_reads_well_on_a_scaled_screen(
    scale: str, sshd: SshServer, user_key: Path, fresh_smbd: SmbServer, isolated_home: Path, tmp_path: Path
) -> None:
    """The real app in a process of its own on a scaled screen (Qt fixes the scale at
    start-up): the window fits the screen, and no page scrolls sideways or cuts a label."""
    width, height, ratio = SCALED[scale]
    (isolated_home / ".ssh" / "known_hosts").write_text(sshd.known_hosts_line)
    screen = tmp_path / "screen.json"
    screen.write_text(
        json.dumps(
            {
                "screens": [
                    {
                        "name": f"laptop-{scale}",
                        "x": 0,
                        "y": 0,
                        "width": width,
                        "height": height,
                        "logicalDpi": 96,
                        "logicalBaseDpi": 96,
                        "dpr": ratio,
                    }
                ]
            }
        )
    )
    profile = write_profile(
        tmp_path / "profile.json", sshd.port, current_user(), str(user_key), str(fresh_smbd.config)
    )
    folder = SCREENS / f"scaled-{scale.rstrip('%')}"
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={screen}")
    result = subprocess.run(
        [sys.executable, str(Path(__file__).parent / "scaled_screens.py"), str(profile), str(folder)],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["screen"] == [width, height]
    assert report["device_pixel_ratio"] == ratio
    assert report["window"][0] <= width and report["window"][1] <= height, report
    assert report["problems"] == {}
