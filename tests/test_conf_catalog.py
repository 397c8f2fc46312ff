"""The parameter catalog is what the installed Samba says, built live or bundled.

Both the catalog built through a Transport (here and over real SSH) and the
snapshot shipped under resources/ must agree with `testparm --show-all-parameters`
and `testparm -sv` of the installed Samba for every parameter.
"""

from __future__ import annotations

import json
import re
import subprocess
from functools import cache
from pathlib import Path

import pytest

from sambatune.conf.catalog import (
    ParameterCatalog,
    bundled_versions,
    cached_catalog_for,
    cached_local_catalog,
    load_bundled,
    load_cached,
)
from sambatune.conf.catalog_build import build_catalog, live_catalog
from sambatune.conf.testparm_output import TYPE_NAMES, parse_dump
from sambatune.errors import CommandFailed
from sambatune.remote.connection import ConnectionOptions, open_target
from sambatune.remote.local import LocalTransport
from sambatune.remote.prompts import NoPrompts
from sambatune.remote.transport import Transport
from testbed.sshd import SshServer
from testbed.sudo_user import SudoUser

LINE = re.compile(r"^(?P<name>[^=]+)=(?P<type>P_[A-Z]+),(?P<rest>.*)$")


@cache
def show_all() -> dict[str, dict[str, object]]:
    """testparm --show-all-parameters, parsed independently of the code under test."""
    out = subprocess.run(
        ["testparm", "--show-all-parameters"], capture_output=True, text=True, check=True
    ).stdout
    found: dict[str, dict[str, object]] = {}
    scope = ""
    for line in out.splitlines():
        if line in ("[local]", "[global]"):
            scope = "share" if line == "[local]" else "global"
            continue
        match = LINE.match(line)
        assert match, line
        rest = match["rest"]
        alias = re.search(r"\((inverse )?synonym of (.+)\)$", rest)
        enum = rest.split(",")[0].split("|") if match["type"] == "P_ENUM" else []
        found[match["name"]] = {
            "type": TYPE_NAMES[match["type"]],
            "scope": scope,
            "enum": enum,
            "deprecated": "FLAG_DEPRECATED" in rest,
            "alias_of": alias.group(2) if alias else None,
            "inverse": bool(alias and alias.group(1)),
        }
    return found


@cache
def defaults() -> dict[str, str]:
    out = subprocess.run(
        ["testparm", "-s", "-v", "-d", "0", "/dev/null"], capture_output=True, text=True, check=True
    ).stdout
    return parse_dump(out)[0][1]


def assert_matches_installed_samba(catalog: ParameterCatalog) -> None:
    listed = show_all()
    canonical = {name for name, entry in listed.items() if entry["alias_of"] is None}
    assert set(catalog.parameters) == canonical
    for name, entry in listed.items():
        lookup = catalog.lookup(name)
        assert lookup is not None, name
        target = entry["alias_of"] or name
        assert lookup.parameter.name == target, name
        assert lookup.inverse == entry["inverse"], name
        if entry["alias_of"] is None:
            parameter = lookup.parameter
            assert parameter.type == entry["type"], name
            assert parameter.scope == entry["scope"], name
            assert parameter.deprecated == entry["deprecated"], name
            assert list(parameter.enum_values) == entry["enum"], name
            if name in defaults():
                expected = defaults()[name]
                if name == "max open files":  # follows the process's rlimit
                    assert parameter.default is not None
                else:
                    assert parameter.default == expected, name
        else:
            assert (lookup.synonym or "").lower() == name.lower()


@pytest.fixture(scope="module")
def built_here(local_catalog_files: list[Path]) -> ParameterCatalog:
    """What the builder makes of this computer's testparm (built once per test run)."""
    built = [path for path in local_catalog_files if path.name.startswith("catalog-")]
    if not built:
        pytest.skip("no testparm on this computer")
    return ParameterCatalog.from_json(json.loads(built[0].read_bytes()), origin="live")


@pytest.mark.testbed  # runs Samba's own programs
def test_catalog_built_here_matches_testparm(built_here: ParameterCatalog) -> None:
    assert_matches_installed_samba(built_here)
    assert built_here.origin == "live"


def test_catalog_over_ssh_matches_testparm(any_transport: Transport) -> None:
    catalog = live_catalog(any_transport, refresh=True)
    assert_matches_installed_samba(catalog)
    assert load_cached(catalog.version_text) is not None


def test_catalog_read_by_an_account_that_is_not_root(
    sshd_password: SshServer,
    sudo_user: SudoUser,
    tmp_path: Path,
    built_here: ParameterCatalog,
) -> None:
    """Most admins connect as themselves; testparm cannot open Samba's registry then."""
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(sshd_password.known_hosts_line)
    target = open_target(
        ConnectionOptions(
            host="127.0.0.1",
            port=sshd_password.port,
            user=sudo_user.name,
            password=sudo_user.password,
            known_hosts=known_hosts,
        ),
        NoPrompts(),
    )
    try:
        catalog = build_catalog(target)
    finally:
        target.close()
    assert_matches_installed_samba(catalog)
    ours = built_here.to_json()["parameters"]
    theirs = catalog.to_json()["parameters"]
    # Only the registry spelling of `config backend` cannot be probed without root.
    assert {name for name in ours if ours[name] != theirs[name]} <= {"config backend"}


@pytest.mark.testbed  # runs Samba's own programs
def test_bundled_snapshot_matches_the_installed_samba() -> None:
    version = subprocess.run(["testparm", "-V"], capture_output=True, text=True).stdout
    series = tuple(int(part) for part in re.findall(r"\d+", version)[:2])
    if series not in bundled_versions():
        pytest.skip(f"no snapshot bundled for Samba {version.strip()}")
    assert_matches_installed_samba(load_bundled(version.split()[-1]))


def test_bundled_snapshot_is_what_the_builder_makes(built_here: ParameterCatalog) -> None:
    """The shipped file is regenerated by `sambatune conf catalog --output`, not edited."""
    bundled = load_bundled(built_here.version_text.split("-")[0])
    if not bundled.exact:
        pytest.skip("no snapshot of the installed series")
    ours = built_here.to_json()["parameters"]
    theirs = bundled.to_json()["parameters"]
    ours.pop("max open files")
    theirs.pop("max open files")
    assert ours == theirs


def test_enum_spellings_print_as_testparm_prints_them(built_here: ParameterCatalog) -> None:
    signing = built_here.parameters["server signing"]
    assert signing.enum_print["mandatory"] == "required"
    assert signing.enum_print["yes"] == "if_required"
    assert built_here.parameters["strict locking"].enum_print["true"] == "Yes"
    protocol = built_here.parameters["server max protocol"]
    assert protocol.enum_print["smb3_11"] == "SMB3" and protocol.enum_print["core+"] == "COREPLUS"


def test_names_are_found_the_way_samba_finds_them(built_here: ParameterCatalog) -> None:
    for written, canonical in [
        ("Max XMIT", "max xmit"),
        ("maxxmit", "max xmit"),
        ("dead time", "deadtime"),
        ("DEBUG LEVEL", "log level"),
        ("writable", "read only"),
        ("smb encrypt", "server smb encrypt"),
    ]:
        lookup = built_here.lookup(written)
        assert lookup is not None and lookup.parameter.name == canonical, written
    write_ok = built_here.lookup("write ok")
    assert write_ok is not None and write_ok.inverse
    assert built_here.lookup("vfs_fruit:model") is None
    assert "max xmit" in built_here.suggest("max xmt")


def test_removed_parameters_know_their_release(built_here: ParameterCatalog) -> None:
    # read size: samba-3.0.2 WHATSNEW; read prediction: gone at cvs2svn tag release-2-2-0.
    for name, release in [
        ("read size", "3.0.2"),
        ("share modes", "4.0.0"),
        ("password level", "4.1.0"),
        ("read prediction", "2.2.0"),
        ("write cache size", "4.12.0"),
    ]:
        removed = built_here.removed(name)
        assert removed is not None and removed.removed_in_text == release
        assert built_here.status(name) == "removed"
        assert built_here.lookup(name) is None
    assert built_here.status("getwd cache") == "current"  # goes in 4.25
    assert built_here.for_version((4, 25, 0)).status("getwd cache") == "removed"
    assert built_here.for_version((4, 19, 0)).lookup("directory name cache size") is None


def test_a_stand_in_catalog_says_so() -> None:
    stand_in = load_bundled("4.20.1")
    assert stand_in.version == (4, 20, 1) and not stand_in.exact
    assert "4.20.1" in stand_in.version_label and "4.17" in stand_in.version_label
    assert stand_in.status("directory name cache size") == "removed"
    oldest = load_bundled("3.6")
    assert oldest.status("share modes") == "current" or oldest.removed("share modes") is None


@pytest.mark.testbed  # runs Samba's own programs
def test_the_cli_finds_this_computers_catalog_without_running_testparm(
    built_here: ParameterCatalog,
) -> None:
    assert cached_local_catalog() is None  # nothing cached in this test's home yet
    live_catalog(LocalTransport())
    cached = cached_local_catalog()
    assert cached is not None and cached.version_text == built_here.version_text
    assert cached_catalog_for(built_here.version) is not None


def test_no_testparm_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    from sambatune.conf import catalog_build

    monkeypatch.setattr(catalog_build, "TESTPARM_CANDIDATES", ("testparm",))
    with pytest.raises(CommandFailed) as error:
        build_catalog(LocalTransport())
    assert "testparm is not installed" in error.value.message


def test_catalog_json_round_trips(built_here: ParameterCatalog) -> None:
    again = ParameterCatalog.from_json(json.loads(json.dumps(built_here.to_json())), origin="cache")
    assert again.to_json() == built_here.to_json()
