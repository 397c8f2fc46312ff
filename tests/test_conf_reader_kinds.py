"""Kinds of smb.conf a second collection of real files found, read as testparm reads them:
a share with its own ``printing =``, shares above a late [global], and includes whose
path has macros or names the registry. Real testparm is the judge of every case."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sambatune.conf.document import SmbConfDocument
from sambatune.conf.effective import PRINT_COMMANDS, effective_view
from sambatune.conf.includes import LocalIncludes
from sambatune.conf.testparm_output import parse_dump
from test_conf_corpus import disagreements
from test_conf_oracle import installed_catalog

pytestmark = pytest.mark.testbed  # runs Samba's own testparm


def read(path: Path) -> dict[str, dict[str, str]]:
    """What SambaTune says testparm prints (``conf effective --testparm-values``)."""
    view = effective_view(SmbConfDocument.read(str(path)), installed_catalog(), read_include=LocalIncludes())
    return view.samba_reading()


def printed_by_testparm(path: Path) -> dict[str, dict[str, str]]:
    result = subprocess.run(["testparm", "-s", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return dict(parse_dump(result.stdout))


def written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "smb.conf"
    path.write_text(text)
    return path


def test_every_printing_style_a_share_sets_gives_samba_s_commands(tmp_path: Path) -> None:
    assert set(PRINT_COMMANDS) == set(installed_catalog().get("printing").enum_values)  # type: ignore[union-attr]
    shares = "".join(
        f"[p_{style}]\n\tpath = /tmp\n\tprintable = yes\n\tprinting = {style.upper()}\n"
        for style in PRINT_COMMANDS
    )
    path = written(tmp_path, "[global]\n\tprinting = lprng\n\tload printers = no\n" + shares)
    assert not disagreements(path), disagreements(path)
    theirs, ours = printed_by_testparm(path), read(path)
    for style, commands in PRINT_COMMANDS.items():
        for name, value in commands.items():
            assert ours[f"p_{style}"][name] == value
            assert theirs[f"p_{style}"].get(name, value) == value


def test_the_printing_line_writes_over_commands_above_it_and_not_below(tmp_path: Path) -> None:
    path = written(
        tmp_path,
        "[global]\n"
        "[above]\n\tpath = /tmp\n\tprint command = mine %s\n\tprinting = sysv\n"
        "[below]\n\tpath = /tmp\n\tprinting = sysv\n\tprint command = mine %s\n"
        "[copied]\n\tcopy = below\n\tprinting = qnx\n"
        "[inherits]\n\tpath = /tmp\n",
    )
    assert not disagreements(path), disagreements(path)
    view = effective_view(SmbConfDocument.read(str(path)), installed_catalog())
    assert view.resolve("above", "print command").value == "lp -c -d%p %s; rm %s"
    assert view.resolve("below", "print command").value == "mine %s"
    assert view.resolve("copied", "print command").value == "lp -r -P%p %s"
    assert view.resolve("copied", "queuepause command").value == "disable %p"  # from [below]
    # [global]'s printing sets no commands, for itself or for the shares that inherit it.
    assert view.resolve("inherits", "print command").source == "default"


def test_shares_above_a_late_global_keep_the_values_of_their_time(tmp_path: Path) -> None:
    path = written(
        tmp_path,
        "[early]\n\tpath = /tmp\n"
        "[global]\n\tread only = no\n\tvfs objects = catia fruit streams_xattr\n\tbrowseable = no\n"
        "\tcomment = same for all\n"
        "[late]\n\tpath = /tmp\n",
    )
    assert not disagreements(path), disagreements(path)
    ours, theirs = read(path), printed_by_testparm(path)
    assert ours["early"] == theirs["early"] | {"comment": ""}  # testparm omits an equal-ignoring-case string
    assert ours["early"]["read only"] == "Yes" and ours["early"]["vfs objects"] == ""
    assert ours["late"] == theirs["late"] == {"path": "/tmp"}


@pytest.mark.parametrize(
    "include",
    [
        "/etc/samba/smb.conf.%m",
        "/etc/samba/%U/%D.conf",
        "/etc/samba/by-ip/%I-%i",
        "/etc/samba/%a-%R.conf",
        "/etc/samba/%L-%N%w%j",
        "/etc/samba/%G-%u-%S-%P-%%.conf",
    ],
)
def test_an_include_with_macros_shows_as_testparm_shows_it(tmp_path: Path, include: str) -> None:
    path = written(
        tmp_path,
        f"[global]\n\tnetbios name = nas1\n\tinclude = {include}\n"
        f"[data]\n\tpath = /tmp\n\tinclude = {include}\n",
    )
    ours, theirs = read(path), printed_by_testparm(path)
    assert ours["global"]["include"] == theirs["global"]["include"]
    # The share's equals [global]'s (a share default): testparm prints it once.
    assert "include" not in ours["data"] and "include" not in theirs["data"]
    other = written(tmp_path, f"[global]\n\tnetbios name = nas1\n[data]\n\tinclude = {include}/x\n")
    assert read(other)["data"]["include"] == printed_by_testparm(other)["data"]["include"]


def test_include_registry_shows_as_registry_shares(tmp_path: Path) -> None:
    path = written(tmp_path, "[global]\n\tworkgroup = W\n\tinclude = registry\n[data]\n\tpath = /tmp\n")
    ours, theirs = read(path), printed_by_testparm(path)
    assert "include" not in ours["global"] and "include" not in theirs["global"]
    assert ours["global"]["registry shares"] == theirs["global"]["registry shares"] == "Yes"
