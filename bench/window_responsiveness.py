"""How soon the window paints, and how long it ever stops answering (issue 31, item 4).

    .venv/bin/python bench/window_responsiveness.py [--runs N] [--hosts N]
    xvfb-run -a env QT_QPA_PLATFORM=xcb .venv/bin/python bench/window_responsiveness.py

Three figures, each against its peer in the same run:

- ``first_paint``: from spawning ``python -m sambatune`` to its main window's first
  paint (SAMBATUNE_STARTUP_PROBE), against a bare Qt window (QApplication and an empty
  QMainWindow of the same size) started the same way; starts alternate, one warm-up
  each is dropped. Goal: at most 2x the bare window.
- ``after_first_paint``: in a fresh process, from the window's first paint until the
  modules a connection needs are loaded in the background (ui/import_ahead.py): the
  longest gap (see below). Goal: no gap over 50 ms.
- ``connect``: then (a second after the paint, as a user would click) Connect is
  clicked for this computer against the test bed's smbd; a 1 ms timer on the GUI thread
  notes the longest gap between its ticks until every page is made. Also the time each
  page took. Goal: no gap over 50 ms.
- ``open_inventory``: File > Open Ansible inventory… with an inventory of N hosts: the
  Fleet window, its file dialog, the hosts loaded and shown; the longest gap. The peer:
  Qt's own first file dialog, opened in a bare process the same way (its first
  construction on X11 costs what it costs in any Qt program).

The modules are compiled first (as an installation has them): this shell may set
PYTHONDONTWRITEBYTECODE. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
#: Before Connect, the user reads the window: the modules load meanwhile.
READ_THE_WINDOW_SECONDS = 1.0

BARE_WINDOW = """
import os, sys
from PySide6.QtWidgets import QApplication, QMainWindow
from sambatune.ui.startup_probe import FirstPaintProbe
app = QApplication(sys.argv)
window = QMainWindow()
window.resize(1180, 780)
FirstPaintProbe(os.environ["SAMBATUNE_STARTUP_PROBE"], window)
window.show()
app.exec()
"""


def child_env(home: Path, **extra: str) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "SAMBATUNE_HOME": str(home / "sambatune-home"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen"),
        **extra,
    }
    for name in ("DISPLAY", "XAUTHORITY"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


# -- first paint -------------------------------------------------------------------------
def time_to_first_paint(command: list[str], home: Path) -> float:
    probe = home / "first-paint.json"
    probe.unlink(missing_ok=True)
    started = time.time()
    done = subprocess.run(
        command, env=child_env(home, SAMBATUNE_STARTUP_PROBE=str(probe)), cwd=home, capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip
    if done.returncode != 0 or not probe.exists():
        raise SystemExit(f"{command} did not report a first paint: {done.stderr[-2000:]}")
    return float(json.loads(probe.read_text())["first_paint_at"]) - started


def first_paint(runs: int) -> dict[str, Any]:
    commands = {
        "app": [sys.executable, "-m", "sambatune"],
        "bare_window": [sys.executable, "-c", BARE_WINDOW],
    }
    timings: dict[str, list[float]] = {name: [] for name in commands}
    with tempfile.TemporaryDirectory(prefix="sambatune-paint-") as folder:
        home = Path(folder)
        for command in commands.values():
            time_to_first_paint(command, home)  # warm-up: file cache, font cache
        for _ in range(runs):
            for name, command in commands.items():
                timings[name].append(time_to_first_paint(command, home))
    report: dict[str, Any] = {
        name: {
            "median_s": round(statistics.median(values), 4),
            "min_s": round(min(values), 4),
            "runs_s": [round(v, 4) for v in values],
        }
        for name, values in timings.items()
    }
    report["ratio_app_over_bare"] = round(
        statistics.median(timings["app"]) / statistics.median(timings["bare_window"]), 2
    )
    report["goal"] = "ratio <= 2"
    return report


# -- stalls, measured in a fresh process ---------------------------------------------------
class Heartbeat:
    """A 1 ms timer on the GUI thread; the longest gap between its ticks is the longest
    time the window could not answer."""

    def __init__(self, app: Any) -> None:
        from PySide6.QtCore import QTimer

        self.app = app
        self.gaps: list[tuple[float, float]] = []
        self.last = time.perf_counter()
        self.started = self.last
        self.timer = QTimer()
        self.timer.setInterval(1)
        self.timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now = time.perf_counter()
        self.gaps.append((now - self.last, now - self.started))
        self.last = now

    def start(self) -> None:
        self.started = self.last = time.perf_counter()
        self.gaps = []
        self.timer.start()

    def pump(self, until: Any, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not until() and time.monotonic() < deadline:
            self.app.processEvents()
            time.sleep(0.0005)

    def report(self) -> dict[str, Any]:
        self.timer.stop()
        longest = sorted(self.gaps, reverse=True)[:5]
        return {
            "longest_gap_ms": round(longest[0][0] * 1000, 1) if longest else None,
            "next_longest_ms": [round(gap * 1000, 1) for gap, _ in longest[1:]],
            "at_ms": round(longest[0][1] * 1000) if longest else None,
            "ticks": len(self.gaps),
        }


def measure_stalls(hosts: int) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix="sambatune-stalls-"))
    (home / ".ssh").mkdir()
    os.environ.update(child_env(home))
    sys.path.insert(0, str(REPO / "tests"))
    from PySide6.QtWidgets import QApplication, QFileDialog

    app = QApplication([])
    from sambatune.ui.import_ahead import AfterFirstPaint
    from sambatune.ui.main_window import MainWindow
    from sambatune.ui.workspace import ServerWorkspace
    from testbed.smbd import SmbServer

    server = SmbServer(Path(tempfile.mkdtemp(prefix="sambatune-bed-")), "smbd")
    server.start()
    try:
        window = MainWindow()
        window.resize(1180, 780)
        ahead = AfterFirstPaint(window)
        window.show()
        beat = Heartbeat(app)
        shown = time.monotonic()
        beat.pump(lambda: ahead.worker is not None, 10)  # painted
        beat.start()
        beat.pump(lambda: not ahead.worker.is_alive(), 30)
        import_ahead_s = round(time.monotonic() - shown, 3)
        settle = time.monotonic()
        beat.pump(lambda: time.monotonic() - settle > 0.1, 1)
        loading_ahead = {**beat.report(), "modules_loaded_after_s": import_ahead_s}
        beat.pump(lambda: time.monotonic() - shown > READ_THE_WINDOW_SECONDS, 5)

        pages: list[tuple[str, float]] = []
        make = ServerWorkspace._build_next_page

        def timed(workspace: ServerWorkspace) -> bool:
            started = time.perf_counter()
            made = make(workspace)
            if made:
                pages.append((list(workspace._pages)[-1], round((time.perf_counter() - started) * 1000, 1)))
            return made

        ServerWorkspace._build_next_page = timed
        session = window.session("local")
        session.profile.config_path = str(server.config)
        workspace = window.workspaces["local"]
        beat.start()
        clicked = time.monotonic()
        workspace.connect_panel.connect_button.click()
        beat.pump(lambda: workspace.pages_built and session.survey is not None, 60)
        connected_s = round(time.monotonic() - clicked, 3)
        settle = time.monotonic()
        beat.pump(lambda: time.monotonic() - settle > 0.3, 1)
        connect = {
            **beat.report(),
            "connected_and_pages_made_s": connected_s,
            "page_ms": dict(pages),
            "goal": "longest gap <= 50 ms",
        }

        inventory = home / "hosts.ini"
        lines = (f"fs{i:03d}.example.net ansible_host=127.0.1.{i % 250 + 1}\n" for i in range(hosts))
        inventory.write_text("[samba]\n" + "".join(lines))
        beat.start()
        fleet = window.open_fleet(browse=True)
        dialog: list[Any] = []

        def dialog_shown() -> bool:
            found = fleet.findChild(QFileDialog, "fleetSourceDialog")
            if found is not None and found.isVisible():
                dialog.append(found)
                return True
            return False

        beat.pump(dialog_shown, 10)
        dialog[0].fileSelected.emit(str(inventory))  # as choosing the file does
        dialog[0].close()
        beat.pump(lambda: fleet.loaded is not None, 30)
        settle = time.monotonic()
        beat.pump(lambda: time.monotonic() - settle > 0.3, 1)
        opened = {**beat.report(), "hosts": len(fleet.loaded.hosts) if fleet.loaded else None}
    finally:
        server.stop()
    return {"after_first_paint": loading_ahead, "connect": connect, "open_inventory": opened}


def measure_bare_file_dialog() -> dict[str, Any]:
    from PySide6.QtWidgets import QApplication, QFileDialog, QWidget

    app = QApplication([])
    window = QWidget()
    window.resize(1180, 780)
    window.show()
    beat = Heartbeat(app)
    shown = time.monotonic()
    beat.pump(lambda: time.monotonic() - shown > 0.5, 1)
    beat.start()
    dialog = QFileDialog(window, "Open", str(Path.home()), "All files (*)")
    dialog.open()
    settle = time.monotonic()
    beat.pump(lambda: time.monotonic() - settle > 0.5, 1)
    return beat.report()


def in_child(flag: str, *args: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="sambatune-child-") as folder:
        done = subprocess.run(
            [sys.executable, __file__, flag, *args], env=child_env(Path(folder)), capture_output=True,
            text=True, timeout=300,
        )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{flag} failed: {done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.splitlines()[-1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="counted starts of each (default 9)")
    parser.add_argument("--hosts", type=int, default=40, help="hosts in the inventory (default 40)")
    parser.add_argument("--stalls-in-process", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--bare-file-dialog", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stalls_in_process:
        print(json.dumps(measure_stalls(args.hosts)), flush=True)
        os._exit(0)
    if args.bare_file_dialog:
        print(json.dumps(measure_bare_file_dialog()), flush=True)
        os._exit(0)
    compileall.compile_dir(str(REPO / "app" / "sambatune"), quiet=1)
    stalls = in_child("--stalls-in-process", "--hosts", str(args.hosts))
    peer = in_child("--bare-file-dialog")
    opened = stalls["open_inventory"]
    opened["peer_first_file_dialog_of_a_bare_qt_program"] = peer
    if opened["longest_gap_ms"] and peer["longest_gap_ms"]:
        opened["ratio_over_peer"] = round(opened["longest_gap_ms"] / peer["longest_gap_ms"], 2)
    report = {
        "benchmark": "first paint, and the longest time the window stops answering",
        "platform": os.environ.get("QT_QPA_PLATFORM", "offscreen"),
        "cpus": os.cpu_count(),
        "load_average_before": [round(load, 2) for load in os.getloadavg()],
        "first_paint": first_paint(args.runs),
        **stalls,
        "load_average_after": [round(load, 2) for load in os.getloadavg()],
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
