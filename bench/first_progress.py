"""Time to the first visible progress of every long action, and how fast Cancel stops it.

    .venv/bin/python bench/first_progress.py [--full] [--screenshots]

Drives the real app (offscreen) on this computer against the test bed's smbd with the
classic mistake of fixed small socket buffers (tests/testbed/troubled.py: smbd sends at
about 2 MB/s), where the SMB test and the wizard baseline used to show an empty plot and
an empty progress bar for minutes. Each action starts with its defaults, as a new user
would start it, and is timed from the click on its button to the first moment the page
shows (each figure separately; null: not within the wait):

- ``step``: the status line says which step of how many (a test made of steps);
- ``bar``: the progress bar moves (a fraction above 0);
- ``plot``: the live plot has a point (the Benchmarks page);
- ``run``: the status line says which run of how many;
- ``figure``: the status line shows a live figure (MB/s, ops/s);
- ``time_left``: the status line shows the time left;
- ``first_visible``: the first of these.

Then Cancel is clicked and timed until the page is idle again (``cancel_seconds``).
With ``--full``, the default SMB test on the slow server also runs to its end (its
duration, the size it chose and why). ``--screenshots`` saves each page at its first time
left to artifacts/screenshots/progress-*.png. Prints one JSON object and writes it to
artifacts/first-progress.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "artifacts"
#: How long an action may take to show everything before it is cancelled anyway.
WAIT_SECONDS = 45.0
#: After the time left first shows, the action runs this much longer before Cancel.
RUN_ON_SECONDS = 1.5


def isolate() -> Path:
    home = Path(tempfile.mkdtemp(prefix="sambatune-first-progress-"))
    (home / ".ssh").mkdir()
    os.environ.update(
        HOME=str(home),
        SAMBATUNE_HOME=str(home / "sambatune-home"),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
    )
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.pop("SSH_AUTH_SOCK", None)
    return home


class Watch:
    """Polls a page's widgets while the event loop runs; notes when each sign first shows."""

    SIGNS = ("step", "bar", "plot", "run", "figure", "time_left")

    def __init__(self, app: Any, progress: Any, status: Any, plot: Any = None) -> None:
        self.app = app
        self.progress = progress
        self.status = status
        self.plot = plot
        self.started = 0.0
        self.seen: dict[str, float | None] = {}

    def signs(self) -> set[str]:
        text = self.status.text()
        found = set()
        if self.progress.maximum() > 0 and self.progress.value() > 0:
            found.add("bar")
        if self.plot is not None and self.plot.points > 0:
            found.add("plot")
        if text.startswith("Step ") and " of " in text:
            found.add("step")
        if " of " in text and ("run " in text or "warm-up " in text):
            found.add("run")
        if "/s" in text:
            found.add("figure")
        if " left" in text:
            found.add("time_left")
        return found

    def start(self) -> None:
        self.started = time.monotonic()
        self.seen = dict.fromkeys(self.SIGNS)

    def pump(self, seconds: float, until: Callable[[], bool] | None = None) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.app.processEvents()
            now = time.monotonic() - self.started
            for sign in self.signs():
                if self.seen.get(sign) is None:
                    self.seen[sign] = round(now, 3)
            if until is not None and until():
                return
            time.sleep(0.002)

    def figures(self) -> dict[str, Any]:
        shown = [v for v in self.seen.values() if v is not None]
        return {**self.seen, "first_visible": min(shown) if shown else None}


def run_action(
    name: str,
    watch: Watch,
    start: Callable[[], None],
    running: Callable[[], bool],
    cancel: Callable[[], None],
    window: Any,
    screenshots: bool,
) -> dict[str, Any]:
    watch.start()
    start()
    watch.pump(WAIT_SECONDS, until=lambda: watch.seen["time_left"] is not None or not running())
    if screenshots:
        watch.pump(0.3, until=lambda: not running())  # the layout follows the new text
        (ARTIFACTS / "screenshots").mkdir(parents=True, exist_ok=True)
        window.grab().save(str(ARTIFACTS / "screenshots" / f"progress-{name}.png"))
    watch.pump(RUN_ON_SECONDS, until=lambda: not running())
    figures = watch.figures()
    figures["status_at_cancel"] = watch.status.text()
    if running():
        clicked = time.monotonic()
        cancel()
        watch.pump(30.0, until=lambda: not running())
        figures["cancel_seconds"] = round(time.monotonic() - clicked, 3)
    else:
        figures["cancel_seconds"] = None
        figures["note"] = "finished before it could be cancelled"
    watch.pump(0.3)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--full", action="store_true", help="also run the default SMB test on the slow server to its end"
    )
    parser.add_argument("--screenshots", action="store_true")
    args = parser.parse_args()
    isolate()
    sys.path.insert(0, str(REPO / "tests"))
    from PySide6.QtWidgets import QApplication

    from sambatune.ui.main_window import MainWindow
    from testbed.smbd import SmbServer
    from testbed.troubled import with_problems

    app = QApplication.instance() or QApplication([])
    root = Path(tempfile.mkdtemp(prefix="sambatune-bed-"))
    server = SmbServer(root, "slow-smbd")
    server.start()  # a port first: the troubled config names it
    server.stop()
    server.start(with_problems(server))
    results: dict[str, Any] = {
        "server": "smbd with fixed 8 KiB socket buffers (tests/testbed/troubled.py), on this computer",
        "load_average_1min": os.getloadavg()[0],
        "cpus": os.cpu_count(),
    }
    try:
        window = MainWindow()
        window.resize(1180, 780)
        window.show()
        session = window.session("local")
        session.profile.config_path = str(server.config)
        workspace = window.workspaces["local"]
        workspace.connect_panel.connect_button.click()
        deadline = time.monotonic() + 60
        while session.survey is None and time.monotonic() < deadline:
            app.processEvents()
            time.sleep(0.01)
        page = workspace.benchmarks
        workspace.tabs.setCurrentWidget(page)
        for _ in range(50):
            app.processEvents()
            time.sleep(0.01)
        form = page.form
        watch = Watch(app, page.progress, page.status, page.live)

        def bench(test: str) -> Callable[[], None]:
            def start() -> None:
                form.select_test(test)
                form.share.setCurrentText(server.share)
                if test in ("smb-client", "small-files"):
                    form.server.setText("127.0.0.1")
                    form.port.setValue(server.port)
                page.run_button.click()

            return start

        actions = {
            "disk": "disk",
            "network": "net-download",
            "smb_on_the_server": "smb",
            "smb_from_this_computer": "smb-client",
            "small_files_from_this_computer": "small-files",
            "dirscale": "dirscale",
            "sockbuf": "sockbuf",
        }
        measured: dict[str, Any] = {}
        for name, test in actions.items():
            measured[name] = run_action(
                name,
                watch,
                bench(test),
                lambda: page.running,
                page.cancel_button.click,
                window,
                args.screenshots,
            )
            measured[name]["defaults"] = {
                "test": test,
                "file_size": form.file_size.text(),
                "runs": form.runs.value(),
                "warmup": form.warmup.value(),
            }
            print(name, json.dumps(measured[name]), file=sys.stderr)

        wizard = workspace.wizard
        workspace.tabs.setCurrentWidget(wizard)
        wizard.start_view.share.setCurrentText(server.share)
        wizard.primary.click()  # Start: survey and findings
        wizard_watch = Watch(app, wizard.progress, wizard.status)
        wizard_watch.start()
        wizard_watch.pump(
            120, until=lambda: wizard.task is None and wizard.stack.currentWidget() is wizard.findings_view
        )
        spec = wizard.start_view.spec()
        measured["wizard_baseline"] = run_action(
            "wizard-baseline",
            wizard_watch,
            wizard.primary.click,
            lambda: wizard.task is not None,
            wizard.cancel_button.click,
            window,
            args.screenshots,
        )
        measured["wizard_baseline"]["defaults"] = spec.to_json()
        print("wizard_baseline", json.dumps(measured["wizard_baseline"]), file=sys.stderr)
        results["actions"] = measured

        if args.full:
            workspace.tabs.setCurrentWidget(page)
            started = time.monotonic()
            bench("smb")()
            watch.start()
            watch.pump(1800, until=lambda: not page.running)
            result = page.last_result
            results["full_default_smb_test"] = {
                "seconds": round(time.monotonic() - started, 1),
                "file_size": None if result is None else result.parameters.get("size"),
                "sizing": None if result is None else result.extra.get("sizing"),
                "status": page.status.text(),
            }
            if args.screenshots:
                window.grab().save(str(ARTIFACTS / "screenshots" / "progress-smb-full-done.png"))
        window.close()
        app.processEvents()
    finally:
        server.stop()
    ARTIFACTS.mkdir(exist_ok=True)
    text = json.dumps(results, indent=2)
    (ARTIFACTS / "first-progress.json").write_text(text)
    print(text)
    os._exit(0)


if __name__ == "__main__":
    main()
