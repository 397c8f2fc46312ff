"""Render every page of the real app against the test bed and refresh the README's pictures.

    .venv/bin/python tests/render_screenshots.py

Runs the GUI tests that drive each workflow (they save what they show under
artifacts/screenshots/ and artifacts/screens/<size>/), then copies the pictures the
README uses into docs/screenshots/. Needs what `make test` needs (root for the test
bed's smbd and sshd). Look at every picture before committing it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"
DOCS = ROOT / "docs" / "screenshots"

#: The tests that draw the pictures.
TESTS = (
    "tests/test_screens.py",
    "tests/test_gui_instances.py",
    "tests/test_gui_apply.py",
    "tests/test_gui_conf_editor_server.py",
    "tests/test_gui_wizard.py",
    "tests/test_gui_benchmarks.py",
    "tests/test_gui_bench_files.py",
    "tests/test_gui_bench_security.py",
    "tests/test_gui_client_tuning.py",
    "tests/test_gui_main_window.py",
    "tests/test_gui_fleet.py",
    "tests/test_bottleneck_measured.py",
)

#: README picture -> where the tests left it.
PICTURES = {
    "page-overview.png": "screens/1180x780/overview.png",
    "page-editor.png": "screens/1180x780/editor.png",
    "page-editor-form.png": "screens/1180x780/editor-form.png",
    "page-wizard.png": "screens/1180x780/wizard.png",
    "page-benchmarks.png": "screens/1180x780/benchmarks.png",
    "page-history.png": "screens/1180x780/history.png",
    "page-client-tuning.png": "screens/1180x780/client-tuning-plan.png",
    "page-overview-large.png": "screens/1920x1080/overview.png",
    "overview-choose-instance.png": "screenshots/overview-choose-instance.png",
    "apply-restart-warning.png": "screenshots/apply-restart-warning.png",
    "bench-small-files.png": "screenshots/bench-small-files-result.png",
    "bench-security.png": "screenshots/bench-security-result.png",
    "bench-bottleneck.png": "screenshots/bench-bottleneck-buffers.png",
    "fleet-hosts.png": "screenshots/fleet-hosts.png",
    "fleet-drift.png": "screenshots/fleet-drift.png",
    "fleet-rollout.png": "screenshots/fleet-rollout.png",
}


def main() -> int:
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", *TESTS], cwd=ROOT)
    if run.returncode != 0:
        print("Some tests failed: the pictures were not copied.", file=sys.stderr)
        return run.returncode
    DOCS.mkdir(parents=True, exist_ok=True)
    for name, source in PICTURES.items():
        shutil.copyfile(ARTIFACTS / source, DOCS / name)
        print(f"docs/screenshots/{name}  <-  artifacts/{source}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
