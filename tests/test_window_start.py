"""The window paints with only what it shows first; what a connection needs loads after.

Issue 31: the window's first paint took 0.87 s (a bare Qt window 0.14 s), and the first
Connect froze it for 0.6 s while the pages' modules loaded. Timings are measured by
bench/window_responsiveness.py; these tests check the order of things, which is what
makes the timings.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEventLoop
from pytestqt.qtbot import QtBot

from sambatune.ui.import_ahead import MODULES, THREAD_NAME
from sambatune.ui.main_window import MainWindow
from sambatune.ui.session import SessionState
from testbed.smbd import SmbServer

#: Loaded by a connection (SSH, the editor, the benchmark and wizard pages with pyqtgraph
#: and numpy) or by the command line's verbs: none of them before the first paint.
LATER = (
    "paramiko",
    "pyqtgraph",
    "numpy",
    "sambatune.cli.fleet",
    "sambatune.fleet.survey",
    "sambatune.ui.editor.page",
    "sambatune.ui.bench.page",
    "sambatune.ui.wizard.page",
    "sambatune.ui.client.tuning_page",
    "sambatune.ui.overview_page",
    "importlib.metadata",
)


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "SAMBATUNE_HOME": str(home / "sambatune-home"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "QT_QPA_PLATFORM": "offscreen",
        **extra,
    }


def test_the_app_paints_before_loading_what_a_connection_needs(tmp_path: Path) -> None:
    probe = tmp_path / "first-paint.json"
    done = subprocess.run(
        [sys.executable, "-m", "sambatune"],
        env=clean_env(tmp_path, SAMBATUNE_STARTUP_PROBE=str(probe)),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(probe.read_text())["modules"])
    assert "sambatune.ui.main_window" in loaded
    assert sorted(loaded & set(LATER)) == []
    # Without a verb, no verb's module is loaded to build a parser.
    assert sorted(m for m in loaded if m.startswith("sambatune.cli.") and m != "sambatune.cli.main") == []


def test_after_the_first_paint_a_thread_loads_them(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import json, sys, threading, time
        from PySide6.QtWidgets import QApplication
        app = QApplication([])
        from sambatune.ui.import_ahead import AfterFirstPaint
        from sambatune.ui.main_window import MainWindow
        window = MainWindow()
        ahead = AfterFirstPaint(window, first=lambda: names.append(threading.current_thread().name))
        names = []
        before = sorted(sys.modules)
        window.show()
        deadline = time.monotonic() + 60
        while (ahead.worker is None or ahead.worker.is_alive()) and time.monotonic() < deadline:
            app.processEvents()
            time.sleep(0.01)
        workspace = window.workspaces["local"]
        print(json.dumps({
            "before": before, "after": sorted(sys.modules), "first_ran_in": names,
            "pages_made": len(workspace._pages), "tabs": workspace.tabs.count(),
        }))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=clean_env(tmp_path), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert sorted(set(report["before"]) & set(MODULES)) == []
    assert sorted(set(MODULES) - set(report["after"])) == []
    assert {"paramiko", "pyqtgraph", "numpy"} <= set(report["after"])
    assert report["first_ran_in"] == [THREAD_NAME]
    # Loading is all it does: no page is made before a connection.
    assert report["pages_made"] == 0 and report["tabs"] == 0


def test_a_connection_makes_its_pages_one_per_turn_in_tab_order(qtbot: QtBot, smbd: SmbServer) -> None:
    """Each page in its own turn of the event loop, so the window answers in between;
    a page asked for before its turn is made at once."""
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    session = window.session("local")
    session.profile.config_path = str(smbd.config)
    workspace = window.workspaces["local"]
    made_per_turn: list[int] = []
    session.state_changed.connect(
        lambda state: made_per_turn.append(len(workspace._pages)) if state == SessionState.CONNECTED else None
    )
    workspace.connect_panel.connect_button.click()
    deadline = time.monotonic() + 30
    while not workspace.pages_built and time.monotonic() < deadline:
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 0)
        made_per_turn.append(len(workspace._pages))
        time.sleep(0.001)
    # On the connection itself the Overview only (its survey arrives next), then one page
    # a turn: no count is skipped.
    assert list(dict.fromkeys(made_per_turn)) == list(range(len(workspace.PAGE_STEPS) + 1))
    titles = [workspace.tabs.tabText(i) for i in range(workspace.tabs.count())]
    assert titles == [
        "Overview", "smb.conf", "Tuning wizard", "Benchmarks", "smb.conf history", "Tune this computer"
    ]  # fmt: skip
    # The survey reached the pages made before it came and those made after.
    assert workspace.overview.survey is session.survey
    assert workspace.benchmarks.form.port.value() == smbd.port


def test_a_page_asked_for_early_is_made_at_once(qtbot: QtBot, smbd: SmbServer) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    session = window.session("local")
    session.profile.config_path = str(smbd.config)
    workspace = window.workspaces["local"]
    workspace.connect_panel.connect_button.click()
    qtbot.waitUntil(lambda: session.state == SessionState.CONNECTED, timeout=30000)
    assert not workspace.pages_built
    # The wizard is opened (Server > Tuning wizard) before its turn came.
    workspace.open_wizard()
    assert workspace.pages_built and workspace.tabs.currentWidget() is workspace.wizard
    assert workspace.tabs.count() == len(workspace.PAGE_STEPS)
    qtbot.waitUntil(lambda: workspace.wizard.start_view.share.count() > 0, timeout=30000)
