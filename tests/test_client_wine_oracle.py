"""An independent oracle for the .reg files: Wine's regedit and reg.exe (optional).

Wine's regedit is its own implementation of the format Windows' regedit reads and
writes. If it is installed (Debian: ``apt-get install --no-install-recommends wine``,
about 100 MB to download), these tests check that it imports SambaTune's files, that
a backup's ``"Name"=-`` really deletes, and that Wine's own export of the same values
is byte-identical to SambaTune's. Skipped when wine is not installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from reg_reader import parse_reg
from sambatune.client.regfile import RegFile, RegKeyBlock
from sambatune.client.regvalue import REG_BINARY, REG_EXPAND_SZ, REG_MULTI_SZ, REG_QWORD, RegValue

pytestmark = [
    pytest.mark.testbed,  # starts Wine: about a minute, left to make test
    pytest.mark.skipif(shutil.which("wine") is None, reason="wine is not installed"),
]

DATA = Path(__file__).parent / "data" / "client"
TCPIP = "HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Services\\Tcpip\\Parameters"


@pytest.fixture(scope="module")
def wine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    prefix = tmp_path_factory.mktemp("wineprefix")
    env = {**os.environ, "WINEPREFIX": str(prefix), "WINEDEBUG": "-all", "DISPLAY": ""}
    # Create the prefix and wait until wineboot has written its registry: an import made
    # while it still runs can be overwritten when it saves (one run in four failed so).
    subprocess.run(["wineboot", "--init"], env=env, capture_output=True, timeout=300, check=False)
    subprocess.run(["wineserver", "--wait"], env=env, capture_output=True, timeout=300, check=False)
    yield env
    subprocess.run(["wineserver", "-k"], env=env, capture_output=True, timeout=60, check=False)


def regedit(env: dict[str, str], *args: str) -> None:
    subprocess.run(["wine", "regedit", *args], env=env, capture_output=True, timeout=300, check=True)


def query(env: dict[str, str], key: str, name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["wine", "reg", "query", key, "/v", name],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_wine_imports_a_backup_and_deletes_what_was_absent(wine: dict[str, str], tmp_path: Path) -> None:
    setup = RegFile(
        5,
        [
            RegKeyBlock(
                TCPIP,
                values=[
                    ("TcpWindowSize", RegValue.dword(1_251_200)),
                    ("Tcp1323Opts", RegValue.dword(1)),
                    ("GlobalMaxTcpWindowSize", RegValue.dword(1_251_200)),
                ],
            )
        ],
    )
    (tmp_path / "setup.reg").write_bytes(setup.encode())
    regedit(wine, "/s", str(tmp_path / "setup.reg"))
    assert query(wine, TCPIP, "Tcp1323Opts").returncode == 0

    regedit(wine, "/s", str(DATA / "xp-backup-v5.reg"))

    assert query(wine, TCPIP, "Tcp1323Opts").returncode != 0, "absent again"
    assert "0xfaf0" in query(wine, TCPIP, "TcpWindowSize").stdout
    assert "0xffff" in query(wine, TCPIP, "GlobalMaxTcpWindowSize").stdout


def test_wines_export_is_byte_identical_to_sambatunes(wine: dict[str, str], tmp_path: Path) -> None:
    key = "HKEY_LOCAL_MACHINE\\SOFTWARE\\SambaTune\\Oracle"
    # Wine lists values sorted by name, so they are given in that order here.
    values: list[tuple[str, RegValue | None]] = [
        ("", RegValue.string("default")),
        ("Big", RegValue(REG_QWORD, 0x0123456789ABCDEF)),
        ("Blob", RegValue(REG_BINARY, bytes(range(40)))),
        ("Count", RegValue.dword(0xFAF0)),
        ("Empty", RegValue(REG_BINARY, b"")),
        ("Expand", RegValue(REG_EXPAND_SZ, "%SystemRoot%\\system32")),
        ("Multi", RegValue(REG_MULTI_SZ, ("a", "bb", "ccc"))),
        ("Path", RegValue.string('C:\\Share "x"')),
    ]
    ours = RegFile(5, [RegKeyBlock(key, values=values)]).encode()
    (tmp_path / "ours.reg").write_bytes(ours)
    regedit(wine, "/s", str(tmp_path / "ours.reg"))
    regedit(wine, "/e", "Z:" + str(tmp_path / "wine.reg").replace("/", "\\"), key)
    theirs = (tmp_path / "wine.reg").read_bytes()
    assert theirs == ours
    assert parse_reg(theirs).blocks[0].values == values


def test_wine_reads_regedit4_files_as_windows_9x_would_be_given_them(
    wine: dict[str, str], tmp_path: Path
) -> None:
    mstcp = "HKEY_LOCAL_MACHINE\\System\\CurrentControlSet\\Services\\VxD\\MSTCP"
    setup = RegFile(
        4,
        [
            RegKeyBlock(mstcp, values=[("Tcp1323Opts", RegValue.string("3"))]),
            RegKeyBlock(mstcp + "\\Parameters", values=[("GlobalMaxTcpWindoSize", RegValue.dword(250_000))]),
        ],
    )
    (tmp_path / "setup.reg").write_bytes(setup.encode())
    regedit(wine, "/s", str(tmp_path / "setup.reg"))
    assert query(wine, mstcp, "Tcp1323Opts").returncode == 0

    regedit(wine, "/s", str(DATA / "all-types-v4.reg"))

    assert "8192" in query(wine, mstcp, "DefaultRcvWindow").stdout
    expand = query(wine, mstcp, "Expand").stdout
    assert "REG_EXPAND_SZ" in expand and "%SystemRoot%" in expand
    assert query(wine, mstcp, "Tcp1323Opts").returncode != 0
    gone = subprocess.run(
        ["wine", "reg", "query", mstcp + "\\Parameters"],
        env=wine,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert gone.returncode != 0, "[-KEY] removed the key"
