"""The Windows tier: tests/wine/ on a real Windows CPython under Wine, against Wine's
registry, with SambaTune installed from the wheel built from this checkout."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from testbed.windows_python import REPOSITORY, WinePython, build_windows_python, windows_path

pytestmark = [
    pytest.mark.testbed,
    pytest.mark.skipif(shutil.which("wine") is None, reason="wine is not installed"),
]


@pytest.fixture(scope="module")
def windows_python(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WinePython]:
    python = build_windows_python(tmp_path_factory.mktemp("windows-python"))
    yield python
    python.stop()


def test_the_python_is_windows_and_sambatune_comes_from_its_wheel(windows_python: WinePython) -> None:
    result = windows_python.run(
        "-c", "import sys, sambatune; print(sys.platform, sys.version_info[:2], sambatune.__file__)"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    platform, _, rest = result.stdout.strip().partition(" ")
    assert platform == "win32"
    assert "site\\sambatune" in rest and "app" not in rest.split("site")[-1]


@pytest.mark.timeout(900)
@pytest.mark.parametrize(("version", "profile"), [("win7", "windows-7"), ("win10", "windows-10")])
def test_the_windows_backend_passes_on_wines_registry(
    windows_python: WinePython, version: str, profile: str
) -> None:
    """Wine's prefix says Windows 7 until winecfg says otherwise: both generations' plans
    (registry and netsh on 7; registry, netsh and PowerShell on 10) go through the tier."""
    windows_python.winecfg_version(version)
    tests = windows_path(REPOSITORY / "tests" / "wine")
    result = windows_python.run(
        "-m",
        "pytest",
        "-c",
        tests + "\\pytest.ini",
        "--rootdir",
        tests,
        "--confcutdir",
        tests,
        tests,
        "-v",
        extra_env={"SAMBATUNE_TIER_PROFILE": profile},
    )
    report = result.stdout[-8000:] + result.stderr[-3000:]
    assert result.returncode == 0, report
    assert " passed" in result.stdout and " failed" not in result.stdout, report
