"""A Windows CPython for the Windows tier, run under Wine.

installer/windows_python.py puts it together (the Windows build stands on the same
code); this one carries pytest's Windows wheels and SambaTune's own wheel built from
this checkout, without its dependencies: the backend under test needs none, and the
tier tests the package as it installs, not the source tree.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "installer"))

from windows_python import WinePython, install_wheels, pip, unpack_embeddable, windows_path, windows_wheels  # noqa: E402

#: What the tier itself needs on the Windows side, pinned: pytest brings its own.
TEST_WHEELS = ("pytest==9.2.0",)

__all__ = ["REPOSITORY", "WinePython", "build_windows_python", "windows_path"]


def build_windows_python(root: Path) -> WinePython:
    """Download, unpack and wire up the Windows Python in ``root``; a fresh Wine prefix beside it."""
    folder = unpack_embeddable(root)
    wheels = root / "wheels"
    pip("wheel", "--no-deps", "-w", str(wheels), str(REPOSITORY))
    install_wheels(folder, root / "site", windows_wheels(wheels, TEST_WHEELS))
    python = WinePython(folder, root / "prefix")
    python.boot()
    return python
