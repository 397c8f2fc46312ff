"""The Windows build under Wine: the installer `make windows` writes, the app's pages on
the Windows Python it was built with, and the installed program, used and uninstalled.

installer/build_windows_wine.py runs once for the module, as `make windows` runs it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from screen_checks import write_profile
from testbed.smbd import SmbServer
from testbed.sshd import SshServer, current_user
from testbed.windows_python import REPOSITORY, WinePython, windows_path

sys.path.insert(0, str(REPOSITORY / "installer"))
from build_windows_wine import self_check_failures

#: Where Wine's 32-bit Windows libraries live (Debian, upstream and Fedora, Arch):
#: Inno Setup's compiler and the setup it writes are 32-bit programs.
WINE32_FOLDERS = (
    "/usr/lib/i386-linux-gnu/wine/i386-windows",
    "/usr/lib/wine/i386-windows",
    "/usr/lib32/wine",
)
pytestmark = [
    pytest.mark.testbed,
    pytest.mark.bundle,
    pytest.mark.skipif(shutil.which("wine") is None, reason="wine is not installed"),
    pytest.mark.skipif(
        shutil.which("npm") is None, reason="npm is not installed (Inno Setup comes from its registry)"
    ),
    pytest.mark.skipif(
        not any(Path(folder).is_dir() for folder in WINE32_FOLDERS),
        reason="Wine cannot run 32-bit programs (no wine32)",
    ),
]

WINE_FONTS = Path("/usr/share/wine/fonts")
SCREENS = REPOSITORY / "artifacts" / "screens" / "windows-1180x780"
APP_ID = "{056C8980-F897-4BF3-BAE0-506B16EDFF8B}_is1"  # installer/sambatune.iss AppId, as Inno Setup keys it
UNINSTALL_KEY = f"HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\{APP_ID}"


@dataclass(frozen=True)
class WindowsBuild:
    setup: Path
    bundle: Path
    python: WinePython  # the Windows Python and prefix the bundle was built with


@pytest.fixture(scope="module")
def windows_build(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WindowsBuild]:
    root = tmp_path_factory.mktemp("windows-build")
    out, work = root / "dist", root / "work"
    build = [
        sys.executable,
        str(REPOSITORY / "installer" / "build_windows_wine.py"),
        "--out",
        str(out),
        "--work",
        str(work),
    ]
    result = subprocess.run(
        build, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=2400, check=False
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    [folder] = [p.parent for p in (work / "python").glob("*/python.exe")]
    python = WinePython(folder, work / "prefix")
    yield WindowsBuild(Path(result.stdout.strip().splitlines()[-1]), out / "SambaTune", python)
    python.stop()


@pytest.mark.timeout(2700)
def test_make_windows_writes_the_installer_for_this_version(windows_build: WindowsBuild) -> None:
    version = windows_build.python.run("-c", "import importlib.metadata as m; print(m.version('sambatune'))")
    assert windows_build.setup.name == f"SambaTune-{version.stdout.strip()}-windows-x64-setup.exe"
    assert windows_build.setup.read_bytes()[:2] == b"MZ"
    # One program for the Start menu, one for the command line, built by PyInstaller for Windows.
    for program in ("SambaTune.exe", "sambatune-cli.exe"):
        assert (windows_build.bundle / program).read_bytes()[:2] == b"MZ"


@pytest.mark.timeout(600)
def test_every_page_reads_well_on_windows(
    windows_build: WindowsBuild, sshd: SshServer, user_key: Path, fresh_smbd: SmbServer, tmp_path: Path
) -> None:
    """The app on the Windows Python, connected over real SSH to the test bed's smbd: every
    page at the default size, saved for people to look at and checked like Linux's."""
    python = windows_build.python
    ssh = python.user_folder() / ".ssh"
    ssh.mkdir(exist_ok=True)
    (ssh / "known_hosts").write_text(sshd.known_hosts_line)
    profile = write_profile(
        tmp_path / "profile.json", sshd.port, current_user(), windows_path(user_key), str(fresh_smbd.config)
    )
    if SCREENS.exists():
        shutil.rmtree(SCREENS)
    result = python.run(
        windows_path(REPOSITORY / "tests" / "scaled_screens.py"),
        windows_path(profile),
        windows_path(SCREENS),
        "-platform",
        "offscreen",
        "--size",
        "1180x780",
        # Offscreen Qt on Windows finds no system fonts: Wine's own, and the font its
        # dialogs use (Windows 10's is Segoe UI 9, a little narrower).
        "--font-dir",
        windows_path(WINE_FONTS),
        "--font",
        "Tahoma 9",
        timeout=300,
        extra_env={"SAMBATUNE_HOME": windows_path(tmp_path / "sambatune-home")},
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["platform"] == "offscreen"
    assert report["window"] == [1180, 780]
    assert report["problems"] == {}
    pages = sorted(path.stem for path in SCREENS.glob("*.png"))
    assert pages == sorted(
        ["overview", "editor", "editor-form", "wizard", "benchmarks", "history", "client-tuning"]
    )


def _cli_json(python: WinePython, program: Path, *args: str) -> Any:
    result = python.wine(str(program), *args, "--json", timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return json.loads(result.stdout)


def _dword(text: str) -> tuple[str, int]:
    """("REG_DWORD", 32768) from reg.exe's "REG_DWORD 0x8000" or SambaTune's
    "REG_DWORD 0x00008000 (32768)"."""
    kind, data = text.split()[:2]
    assert kind == "REG_DWORD", text  # what these plans write
    return kind, int(data, 16)


def _reg_query(python: WinePython, setting: str) -> tuple[str, int] | None:
    """A DWORD as Wine's reg.exe reads it, or None when the value is absent."""
    key, _, name = setting.rpartition("\\")
    result = python.wine("reg", "query", key, "/v", name, timeout=120)
    if result.returncode != 0:
        return None
    [line] = [line for line in result.stdout.splitlines() if line.strip().startswith(name + " ")]
    return _dword(line.strip()[len(name) :])


def _current_values(show: dict[str, Any]) -> dict[str, Any]:
    """Each setting's current value, by catalog entry and the place it is kept."""
    return {json.dumps([s["catalog_id"], s["setting"]]): s["current"] for s in show["settings"]}


@pytest.mark.timeout(900)
def test_the_installer_installs_per_user_runs_and_uninstalls_without_a_trace(
    windows_build: WindowsBuild, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The program keeps its data where it does on a PC (%LOCALAPPDATA%), not in the
    # folder the test suite points SAMBATUNE_HOME at (Wine passes the variable on).
    monkeypatch.delenv("SAMBATUNE_HOME", raising=False)
    # A fresh prefix that says Windows 10, like a new user's PC; the build's own stays apart.
    pc = WinePython(windows_build.python.folder, tmp_path / "prefix")
    pc.boot()
    pc.winecfg_version("win10")
    setup = pc.wine(
        str(windows_build.setup),
        "/VERYSILENT",
        "/SUPPRESSMSGBOXES",
        "/NORESTART",
        "/CURRENTUSER",
        timeout=600,
        display=True,
    )
    assert setup.returncode == 0, setup.stdout[-2000:] + setup.stderr[-2000:]

    user = pc.user_folder()
    installed = user / "AppData" / "Local" / "Programs" / "SambaTune"
    start_menu = (
        user / "AppData" / "Roaming" / "Microsoft" / "Windows" / "Start Menu" / "Programs" / "SambaTune.lnk"
    )
    for program in ("SambaTune.exe", "sambatune-cli.exe", "unins000.exe"):
        assert (installed / program).is_file(), sorted(p.name for p in installed.iterdir())
    assert start_menu.is_file()
    key = pc.wine("reg", "query", UNINSTALL_KEY, "/v", "DisplayName")
    assert key.returncode == 0 and "SambaTune" in key.stdout, key.stdout + key.stderr

    cli = installed / "sambatune-cli.exe"
    assert self_check_failures(pc, cli) == []

    # Client tuning through the installed program, on this prefix's registry.
    before = _current_values(_cli_json(pc, cli, "client", "show"))
    plan_file = tmp_path / "plan.json"
    _cli_json(pc, cli, "client", "plan", "--bandwidth", "1gbit", "--rtt", "20ms", "--no-mtu-probe",
              "-o", windows_path(plan_file))  # fmt: skip
    applied = _cli_json(pc, cli, "client", "apply", windows_path(plan_file))
    assert applied["ok"], applied
    changed = [step for step in applied["steps"] if step["status"] == "changed"]
    assert changed, applied
    # What Wine's netsh cannot tell is left as it is, with the reason, not guessed at.
    for step in applied["steps"]:
        assert step["status"] == "changed" or "cannot be read here" in step["message"], step
    # Wine's own reg.exe, not SambaTune, reads what the installed program wrote ...
    for step in changed:
        assert _reg_query(pc, step["setting"]) == _dword(step["wanted"]), step
    assert _current_values(_cli_json(pc, cli, "client", "show")) != before
    restored = _cli_json(pc, cli, "client", "restore", "latest")
    assert restored["ok"], restored
    # ... and what the restore put back: values that were absent are absent again.
    for step in changed:
        expected = None if step["before"]["display"] == "(absent)" else _dword(step["before"]["display"])
        assert _reg_query(pc, step["setting"]) == expected, step
    assert _current_values(_cli_json(pc, cli, "client", "show")) == before

    data = user / "AppData" / "Local" / "SambaTune"
    uninstall = pc.wine(
        str(installed / "unins000.exe"), "/VERYSILENT", "/SUPPRESSMSGBOXES", "/NORESTART", display=True
    )
    assert uninstall.returncode == 0, uninstall.stderr[-2000:]
    assert not installed.exists(), sorted(str(p) for p in installed.rglob("*"))[:20]
    assert not start_menu.exists()
    assert pc.wine("reg", "query", UNINSTALL_KEY).returncode != 0
    # What the app wrote is the user's, not the installer's: the backup that restores
    # this PC's settings outlives the program, as on Linux and macOS.
    assert any((data / "client-backups").iterdir()), "the client backups are gone"
    pc.stop()
