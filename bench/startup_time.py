"""Time from starting SambaTune to the first paint of its main window: the PyInstaller
bundle against ``python -m sambatune`` from the venv, in the same run.

    installer/build-linux.sh                       # once: makes dist/sambatune-*/
    .venv/bin/python bench/startup_time.py [--bundle PROGRAM] [--runs N]

PROGRAM defaults to the newest dist/sambatune-*-linux-*/sambatune/sambatune. Each
start is timed from just before the process is spawned to the moment the app
reports its window's first paint (SAMBATUNE_STARTUP_PROBE, see ui/startup_probe.py),
drawn offscreen. One warm-up start of each is dropped, then the two alternate.
Prints one JSON object with every run, the medians and their ratio.
"""

from __future__ import annotations

import argparse
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


def default_bundle() -> Path | None:
    programs = sorted(
        REPO.glob("dist/sambatune-*-linux-*/sambatune/sambatune"), key=lambda path: path.stat().st_mtime
    )
    return programs[-1] if programs else None


def time_to_first_paint(command: list[str], home: Path) -> float:
    probe = home / "first-paint.json"
    probe.unlink(missing_ok=True)
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "SAMBATUNE_HOME": str(home / "sambatune-home"),
        "QT_QPA_PLATFORM": "offscreen",
        "SAMBATUNE_STARTUP_PROBE": str(probe),
    }
    started = time.time()
    result = subprocess.run(command, env=env, cwd=home, capture_output=True, text=True, timeout=120)
    if result.returncode != 0 or not probe.exists():
        raise SystemExit(
            f"{command[0]} did not report a first paint (exit {result.returncode}): {result.stderr[-2000:]}"
        )
    return float(json.loads(probe.read_text())["first_paint_at"]) - started


def folder_bytes(folder: Path) -> int:
    return sum(path.lstat().st_size for path in folder.rglob("*") if not path.is_dir())


def summary(seconds: list[float]) -> dict[str, Any]:
    return {
        "median_s": round(statistics.median(seconds), 4),
        # The fastest start is the least disturbed by other work on the machine.
        "min_s": round(min(seconds), 4),
        "mean_s": round(statistics.fmean(seconds), 4),
        "stdev_s": round(statistics.stdev(seconds), 4) if len(seconds) > 1 else 0.0,
        "runs_s": [round(s, 4) for s in seconds],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--bundle", type=Path, default=default_bundle(), help="the bundled program (default: newest in dist/)"
    )
    parser.add_argument("--runs", type=int, default=9, help="counted starts of each (default 9)")
    args = parser.parse_args()
    if args.bundle is None or not args.bundle.is_file():
        raise SystemExit("No bundle: run installer/build-linux.sh first, or pass --bundle.")
    commands = {
        "bundle": [str(args.bundle.resolve())],
        "venv": [sys.executable, "-m", "sambatune"],
    }
    timings: dict[str, list[float]] = {name: [] for name in commands}
    with tempfile.TemporaryDirectory(prefix="sambatune-startup-") as folder:
        home = Path(folder)
        for command in commands.values():
            time_to_first_paint(command, home)  # warm-up: file cache, font cache
        for _ in range(args.runs):
            for name, command in commands.items():
                timings[name].append(time_to_first_paint(command, home))
    bundle_dir = args.bundle.resolve().parent
    report = {
        "benchmark": "startup to first paint of the main window (offscreen)",
        "runs": args.runs,
        "cpus": os.cpu_count(),
        "bundle": {
            "program": str(args.bundle.resolve()),
            "folder_bytes": folder_bytes(bundle_dir),
            **summary(timings["bundle"]),
        },
        "venv": {"command": " ".join(commands["venv"]), **summary(timings["venv"])},
        "ratio_bundle_over_venv": round(
            statistics.median(timings["bundle"]) / statistics.median(timings["venv"]), 3
        ),
        "ratio_of_fastest": round(min(timings["bundle"]) / min(timings["venv"]), 3),
        "load_average": [round(load, 2) for load in os.getloadavg()],
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
