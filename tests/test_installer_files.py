"""The Windows and macOS recipes agree with the spec and with each other.

They cannot run here (no Windows, no macOS, no Inno Setup): these checks catch the
drift that would only show on the release machines, such as a renamed executable
or an icon that moved.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
INSTALLER = REPO / "installer"
sys.path.insert(0, str(INSTALLER))
import bundle_layout  # noqa: E402

ISS = (INSTALLER / "sambatune.iss").read_text(encoding="utf-8")
WORKFLOW = (REPO / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")


def iss_setting(name: str) -> str:
    match = re.search(rf"^{name}=(.*)$", ISS, re.MULTILINE)
    assert match, f"{name} is not set in sambatune.iss"
    return match.group(1).strip()


def iss_define(name: str) -> str:
    match = re.search(rf'^\s*#define {name} "(.*)"$', ISS, re.MULTILINE)
    assert match, f"#define {name} is missing from sambatune.iss"
    return match.group(1)


def test_inno_setup_installs_per_user_without_elevation() -> None:
    assert iss_setting("PrivilegesRequired") == "lowest"
    assert "dialog" in iss_setting("PrivilegesRequiredOverridesAllowed")
    assert iss_setting("DefaultDirName") == "{code:ProgramsFolder}\\{#AppName}"
    assert "ExpandConstant('{localappdata}\\Programs')" in ISS
    assert re.search(
        r'^Name: "\{autoprograms\}\\\{#AppName\}"; Filename: "\{app\}\\\{#AppExe\}"', ISS, re.MULTILINE
    ), "no Start menu entry"


def test_inno_setup_names_the_programs_the_spec_builds() -> None:
    assert iss_define("AppExe") == f"{bundle_layout.GUI_NAME}.exe"
    assert iss_define("CliExe") == f"{bundle_layout.WINDOWS_CLI_NAME}.exe"
    assert iss_define("AppName") == bundle_layout.APP_NAME
    assert iss_define("BundleDir").endswith(f"\\{bundle_layout.APP_NAME}")


def test_inno_setup_icon_and_output_name() -> None:
    icon = INSTALLER / iss_setting("SetupIconFile").replace("\\", "/")
    assert icon.resolve() == (REPO / "resources" / "icons" / "sambatune.ico").resolve()
    assert iss_setting("OutputBaseFilename").endswith("-windows-x64-setup")
    assert re.fullmatch(r"\{\{[0-9A-F-]{36}\}", iss_setting("AppId"))


@pytest.mark.parametrize("script", ["build-linux.sh", "build-macos.sh", "linux/install.sh"])
def test_shell_scripts_are_executable(script: str) -> None:
    assert os.access(INSTALLER / script, os.X_OK)


def test_workflow_runs_the_committed_scripts_and_pins_its_actions() -> None:
    for script in ("installer/build-linux.sh", "installer/build-macos.sh", "installer\\build-windows.ps1"):
        assert script in WORKFLOW
        assert (REPO / script.replace("\\", "/")).is_file()
    uses = re.findall(r"uses: (\S+)", WORKFLOW)
    assert uses
    for action in uses:
        ref = action.split("@", 1)[1]
        assert re.fullmatch(r"v\d+\.\d+\.\d+|[0-9a-f]{40}", ref), action
    assert 'python-version: "3.11"' in WORKFLOW
    assert "cache: pip" in WORKFLOW
    assert "contents: write" in WORKFLOW


def test_version_helpers_for_windows_and_macos() -> None:
    assert bundle_layout.windows_version_tuple("1.2") == (1, 2, 0, 0)
    assert bundle_layout.windows_version_tuple("0.1.0") == (0, 1, 0, 0)
    assert bundle_layout.windows_version_tuple("2.0.1rc1") == (2, 0, 1, 0)
    assert bundle_layout.macos_version("2.0.1.dev3") == "2.0.1"
    with pytest.raises(ValueError):
        bundle_layout.release_numbers("next")


def test_the_release_runs_the_serverless_tests_on_windows_and_macos() -> None:
    """The registry, netsh and macOS code meets the real systems before a release."""
    tests_job = WORKFLOW.split("\n  tests:\n", 1)[1].split("\n  build:\n", 1)[0]
    assert "os: [windows-2022, macos-15]" in tests_job
    assert '-m "not testbed and not slow and not bundle"' in tests_job
    assert "python -m mypy" in tests_job and "ruff check" in tests_job
    assert "needs: [tests, build]" in WORKFLOW
