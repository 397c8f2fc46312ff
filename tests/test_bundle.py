"""The Linux tarball as an admin gets it: built with PyInstaller, unpacked, installed.

installer/build-linux.sh builds it once per session; the tests run the installed
program in a clean environment (no venv on the PATH, no checkout in reach) and
check what must be inside: agents, resources, Qt's platform plugins, the version.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from sambatune.advisor.rules import RULES
from testbed.smbd import SmbServer
from testbed.sshd import SshServer, current_user

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "installer"))
import make_icons  # noqa: E402

pytestmark = [
    pytest.mark.bundle,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux tarball is built on Linux"),
]

# Read as text: tomllib is not in Python 3.10.
VERSION_LINE = re.search(r'^version = "([^"]+)"$', (REPO / "pyproject.toml").read_text(), re.MULTILINE)
assert VERSION_LINE is not None, "pyproject.toml has no version line"
PYPROJECT_VERSION = VERSION_LINE.group(1)
HICOLOR_SIZES = [size for size in make_icons.PNG_SIZES if size <= 512]
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass
class Installed:
    tarball: Path
    unpacked: Path  # the tarball's top folder
    prefix: Path
    home: Path

    @property
    def appdir(self) -> Path:
        return self.prefix / "lib" / "sambatune"

    @property
    def command(self) -> Path:
        return self.prefix / "bin" / "sambatune"

    @property
    def qt_plugins(self) -> Path:
        return self.appdir / "sambatune" / "_internal" / "PySide6" / "Qt" / "plugins"

    def env(self, **extra: str) -> dict[str, str]:
        return {
            "PATH": SYSTEM_PATH,
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "SAMBATUNE_HOME": str(self.home / "sambatune-home"),
            "QT_QPA_PLATFORM": "offscreen",
            **extra,
        }

    def run(
        self, *args: str, timeout: float = 120, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.command), *args],
            capture_output=True,
            text=True,
            cwd=self.home,
            env=env or self.env(),
            timeout=timeout,
        )


def build_tarball(out: Path) -> Path:
    result = subprocess.run(
        [str(REPO / "installer" / "build-linux.sh"), str(out / "dist")],
        env={**os.environ, "PYTHON": sys.executable, "BUILD_DIR": str(out / "work")},
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return Path(result.stdout.strip().splitlines()[-1])


def unpack(tarball: Path, into: Path) -> Path:
    into.mkdir(parents=True)
    subprocess.run(["tar", "-xzf", str(tarball), "-C", str(into)], check=True)
    [top] = into.iterdir()
    return top


def install(unpacked: Path, prefix: Path, home: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(unpacked / "install.sh"), "--prefix", str(prefix), *extra],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": SYSTEM_PATH, "HOME": str(home)},
    )


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    root = tmp_path_factory.mktemp("bundle")
    tarball = build_tarball(root)
    unpacked = unpack(tarball, root / "unpacked")
    home = root / "home"
    home.mkdir()
    result = install(unpacked, root / "prefix", home)
    assert result.returncode == 0, result.stdout + result.stderr
    yield Installed(tarball, unpacked, root / "prefix", home)
    shutil.rmtree(root)  # some 600 MB: not worth keeping with pytest's last runs


def test_tarball_is_named_and_laid_out_for_an_admin(installed: Installed) -> None:
    top = installed.unpacked
    assert top.name == f"sambatune-{PYPROJECT_VERSION}-linux-{os.uname().machine}"
    assert installed.tarball.name == f"{top.name}.tar.gz"
    assert os.access(top / "install.sh", os.X_OK)
    assert os.access(top / "sambatune" / "sambatune", os.X_OK)
    assert (top / "README.txt").is_file()
    hicolor = top / "share" / "icons" / "hicolor"
    assert sorted(p.relative_to(hicolor).as_posix() for p in hicolor.rglob("*.*")) == sorted(
        [f"{n}x{n}/apps/sambatune.png" for n in HICOLOR_SIZES] + ["scalable/apps/sambatune.svg"]
    )
    for size in HICOLOR_SIZES:
        assert (hicolor / f"{size}x{size}" / "apps" / "sambatune.png").read_bytes() == (
            REPO / "resources" / "icons" / make_icons.png_name(size)
        ).read_bytes()


def test_menu_entry_is_valid_and_starts_the_installed_program(installed: Installed) -> None:
    for desktop in (
        installed.unpacked / "share" / "applications" / "sambatune.desktop",
        installed.prefix / "share" / "applications" / "sambatune.desktop",
    ):
        result = subprocess.run(["desktop-file-validate", str(desktop)], capture_output=True, text=True)
        assert result.returncode == 0 and not result.stdout.strip(), result.stdout
    entry = (installed.prefix / "share" / "applications" / "sambatune.desktop").read_text()
    program = installed.appdir / "sambatune" / "sambatune"
    assert f'Exec="{program}"' in entry.splitlines()
    assert f"TryExec={program}" in entry.splitlines()
    assert "Icon=sambatune" in entry.splitlines()
    icons = installed.prefix / "share" / "icons" / "hicolor"
    assert (icons / "48x48" / "apps" / "sambatune.png").is_file()
    assert (icons / "scalable" / "apps" / "sambatune.svg").is_file()
    assert installed.command.resolve() == program


def test_version_is_the_one_in_pyproject(installed: Installed) -> None:
    result = installed.run("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"sambatune {PYPROJECT_VERSION}"


def test_self_check_finds_everything_inside_the_bundle(installed: Installed) -> None:
    result = installed.run("--self-check", "--gui", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] is True
    assert report["frozen"] is True
    assert report["version"] == PYPROJECT_VERSION
    checks = {c["name"]: c for c in report["checks"]}
    inside = str(installed.appdir / "sambatune" / "_internal" / "sambatune")
    assert f"{inside}/ssh_agents:" in checks["agents"]["detail"]
    assert "sysinfo" in checks["agents"]["detail"]
    assert f"{inside}/resources" in checks["resources"]["detail"]
    assert "offscreen platform plugin" in checks["gui"]["detail"]
    # The Benchmarks page and the SMB probe, frozen: pyqtgraph and numpy drew the live
    # plot, smbprotocol made an NTLM token and signed with all three algorithms.
    assert checks["numpy"]["ok"] and checks["smb client"]["ok"], checks
    assert "AES-GMAC" in checks["smb client"]["detail"]
    # The advisor lists its rules package: the bundle carries every rule module.
    assert checks["advisor rules"]["detail"].startswith(f"{len(RULES)} rules"), checks["advisor rules"]
    assert checks["plot"]["ok"] and "drew 20 points" in checks["plot"]["detail"], checks["plot"]
    # The editor's check: the program started itself as a child and linted a line there.
    lint_check = checks["lint process"]
    assert lint_check["ok"] and "socket-buffer-fixed" in lint_check["detail"], lint_check
    assert str(installed.appdir) in lint_check["detail"]
    assert str(REPO) not in result.stdout + result.stderr


def test_main_window_opens_on_an_x_server(installed: Installed) -> None:
    """What a Linux desktop does: the xcb plugin and its libraries, under Xvfb."""
    result = subprocess.run(
        ["xvfb-run", "-a", str(installed.command), "--self-check", "--gui", "--json"],
        capture_output=True,
        text=True,
        cwd=installed.home,
        timeout=120,
        env=installed.env(QT_QPA_PLATFORM="xcb"),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    checks = {c["name"]: c for c in json.loads(result.stdout)["checks"]}
    assert "xcb platform plugin" in checks["gui"]["detail"]


def test_bundle_carries_the_qt_plugins_a_desktop_needs_and_not_more(installed: Installed) -> None:
    plugins = installed.qt_plugins
    for needed in (
        "platforms/libqxcb.so",
        "platforms/libqwayland.so",
        "platforms/libqoffscreen.so",
        "imageformats/libqsvg.so",
        "iconengines/libqsvgicon.so",
    ):
        assert (plugins / needed).is_file(), needed
    assert not (plugins / "platformthemes" / "libqgtk3.so").exists()
    assert not (plugins / "platforms" / "libqeglfs.so").exists()
    internal = installed.appdir / "sambatune" / "_internal"
    names = {path.name for path in internal.rglob("*") if path.is_file() or path.is_symlink()}
    for unwanted in (
        "libQt6WebEngineCore.so.6",
        "libQt6Quick.so.6",
        "libQt6Qml.so.6",
        "libcairo.so.2",
        "libpango-1.0.so.0",
        "libgtk-3.so.0",
    ):
        assert unwanted not in names, unwanted


def test_survey_over_ssh_from_the_bundle(
    installed: Installed, sshd: SshServer, user_key: Path, known_hosts: Path, smbd: SmbServer
) -> None:
    result = installed.run(
        "survey",
        "--host",
        "127.0.0.1",
        "--port",
        str(sshd.port),
        "--user",
        current_user(),
        "--identity",
        str(user_key),
        "--known-hosts",
        str(known_hosts),
        "--config-path",
        str(smbd.config),
        "--json",
    )
    assert result.returncode == 0, result.stderr
    survey = json.loads(result.stdout)
    assert survey["samba"]["version_text"].startswith("Version ")
    assert smbd.share in [share["name"] for share in survey["samba"]["shares"]]


def test_survey_of_this_computer_runs_the_agent_with_the_bundle(
    installed: Installed, smbd: SmbServer
) -> None:
    """On this computer the bundled program itself is the agent's Python."""
    result = installed.run("survey", "--config-path", str(smbd.config), "--json")
    assert result.returncode == 0, result.stderr
    survey = json.loads(result.stdout)
    assert survey["agent"]["python"] == "{}.{}.{}".format(*sys.version_info[:3])
    assert smbd.share in [share["name"] for share in survey["samba"]["shares"]]


def test_startup_probe_reports_the_first_paint(installed: Installed) -> None:
    probe = installed.home / "first-paint.json"
    started = time.time()
    result = subprocess.run(
        [str(installed.command)],
        capture_output=True,
        text=True,
        cwd=installed.home,
        timeout=60,
        env=installed.env(SAMBATUNE_STARTUP_PROBE=str(probe)),
    )
    assert result.returncode == 0, result.stderr
    painted = json.loads(probe.read_text())["first_paint_at"]
    assert started < painted < time.time()


def test_uninstall_removes_what_install_added(installed: Installed, tmp_path: Path) -> None:
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "other-tool").write_text("#!/bin/sh\n")
    before = sorted(p.relative_to(prefix) for p in prefix.rglob("*") if not p.is_dir())
    assert install(installed.unpacked, prefix, installed.home).returncode == 0
    assert (prefix / "bin" / "sambatune").is_symlink()
    # The installed copy of install.sh removes it all, itself included.
    result = subprocess.run(
        [str(prefix / "lib" / "sambatune" / "install.sh"), "--prefix", str(prefix), "--uninstall"],
        capture_output=True,
        text=True,
        env={"PATH": SYSTEM_PATH, "HOME": str(installed.home)},
    )
    assert result.returncode == 0, result.stderr
    after = sorted(p.relative_to(prefix) for p in prefix.rglob("*") if not p.is_dir())
    assert after == before


def test_install_leaves_another_sambatune_command_alone(installed: Installed, tmp_path: Path) -> None:
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    theirs = prefix / "bin" / "sambatune"
    theirs.write_text("#!/bin/sh\necho pip's sambatune\n")
    result = install(installed.unpacked, prefix, installed.home)
    assert result.returncode == 0, result.stderr
    assert "left as it is" in result.stdout
    assert theirs.read_text() == "#!/bin/sh\necho pip's sambatune\n"
    assert shutil.which("sambatune", path=str(prefix / "lib" / "sambatune" / "sambatune"))
    assert install(installed.unpacked, prefix, installed.home, "--uninstall").returncode == 0
    assert theirs.read_text() == "#!/bin/sh\necho pip's sambatune\n"
    assert not (prefix / "lib" / "sambatune").exists()
