"""SambaTune as a user installs it: a wheel built from this checkout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def build_wheel(dist: Path) -> Path:
    """Build the wheel into ``dist`` with this venv's setuptools (no isolated build
    environment: nothing is downloaded) and return it. setuptools leaves ``build/`` and
    ``*.egg-info`` in the checkout, both ignored by git. Raises CalledProcessError."""
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(REPO)],
        check=True,
        capture_output=True,
        cwd=dist.parent,
    )
    [wheel] = dist.glob("sambatune-*.whl")
    return wheel
