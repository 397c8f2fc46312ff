"""explain(): the catalog's facts for this version, our own words, and a verdict on old advice."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from sambatune.conf.activation import Activation, classify_parameter
from sambatune.conf.catalog import load_bundled
from sambatune.conf.explain import explain
from sambatune.conf.knowledge import explanations
from sambatune.conf.manpage import MAN_PAGE_PATHS, parameter_entry
from sambatune.remote.transport import Transport

# Issue 3 asks for an explanation of each of these (names as testparm prints them).
REQUIRED = [
    "log level",
    "socket options",
    "read raw",
    "write raw",
    "oplocks",
    "level2 oplocks",
    "fake oplocks",
    "kernel oplocks",
    "veto oplock files",
    "max xmit",
    "read size",
    "read prediction",
    "getwd cache",
    "wide links",
    "follow symlinks",
    "hide files",
    "lpq cache time",
    "strict locking",
    "strict sync",
    "sync always",
    "deadtime",
    "share modes",
    "password level",
    "aio read size",
    "aio write size",
    "use sendfile",
    "min receivefile size",
    "server multi channel support",
    "smb2 max read",
    "smb2 max write",
    "smb2 max trans",
    "server min protocol",
    "server max protocol",
    "strict allocate",
    "case sensitive",
    "default case",
    "preserve case",
    "short preserve case",
    "directory name cache size",
    "store dos attributes",
    "ea support",
    "server signing",
    "server smb encrypt",
    "vfs objects",
    "kernel share modes",
    "posix locking",
    "max connections",
    "keepalive",
]


@pytest.mark.parametrize("name", REQUIRED)
def test_every_required_parameter_is_explained(name: str) -> None:
    result = explain(name, load_bundled("4.17"))
    assert result.explained, f"{name} has no explanation of ours"
    assert result.status in ("current", "deprecated", "removed")
    assert result.advice_on_this_version
    json.dumps(result.to_json())


def test_synonyms_and_spellings_reach_the_canonical_entry() -> None:
    catalog = load_bundled("4.17")
    writable = explain("Writable", catalog)
    assert writable.name == "read only" and writable.synonym_of == "read only"
    assert writable.inverse and writable.type == "boolean" and writable.default == "Yes"
    assert explain("smb encrypt", catalog).summary == (explanations()["server smb encrypt"]["summary"])
    dead = explain("dead time", catalog)
    assert dead.name == "deadtime" and dead.default == "10080"
    signing = explain("server signing", catalog)
    assert signing.values[:3] == ["default", "No", "if_required"]


@pytest.mark.testbed  # runs Samba's own programs
def test_enum_values_include_every_spelling_testparm_accepts() -> None:
    """testparm --show-all-parameters lists every spelling of the protocol enums; those it
    prints differently (lib/param/param_table.c enum_protocol: SMB3_11 as SMB3, SMB2_10 as
    SMB2, CORE+ as COREPLUS) come back as aliases with their meaning."""
    out = subprocess.run(
        ["testparm", "--show-all-parameters"], capture_output=True, text=True, check=True
    ).stdout
    catalog = load_bundled("4.17")
    for name in ("server max protocol", "server min protocol", "client max protocol"):
        [line] = [line for line in out.splitlines() if line.startswith(f"{name}=")]
        accepted = {value.lower() for value in line.split(",")[1].split("|")}
        result = explain(name, catalog)
        assert result.aliases == {"SMB3_11": "SMB3", "SMB2_10": "SMB2", "CORE+": "COREPLUS"}
        assert {v.lower() for v in [*result.values, *result.aliases]} == accepted
        assert result.to_json()["aliases"] == result.aliases


def test_the_verdict_depends_on_the_version() -> None:
    modern = explain("max xmit", load_bundled("4.17"))
    assert "refuses" in modern.advice_on_this_version and modern.applies_to == "smb1"
    old = explain("max xmit", load_bundled("4.10"))
    assert "still accepts" in old.advice_on_this_version
    before = explain("strict sync", load_bundled("4.6"))
    assert [item["version"] for item in before.later_history] == ["4.7.0"]
    assert "4.7.0" in before.advice_on_this_version
    gone = explain("share modes", load_bundled("4.17"))
    assert gone.status == "removed" and gone.removed_in == "4.0.0"
    assert "obsolete" in gone.advice_on_this_version


@pytest.mark.parametrize(
    ("name", "added", "activation"),
    [
        ("smb3 directory leases", "4.22.0", Activation.NEW_CONNECTIONS),
        ("server smb transports", "4.23.0", Activation.RESTART),
        ("persistent handles", "4.25.0", Activation.RESTART),
        ("smbd profiling share", "4.23.0", Activation.NEW_CONNECTIONS),
        ("vfs mkdir use tmp name", "4.22.0", Activation.RELOAD),
    ],
)
def test_what_newer_releases_added_is_explained_on_each_version(
    name: str, added: str, activation: str
) -> None:
    """On 4.25 it is a current parameter with our words and how a change takes effect; on
    4.17 the same words, and that the server's release predates it."""
    newest = explain(name, load_bundled("4.25"))
    assert newest.status == "current" and newest.explained, name
    assert newest.history[0]["version"] == added and not newest.later_history
    assert classify_parameter("global", name, None, "yes", False)[0] is activation
    said = {Activation.RESTART: "restart", Activation.NEW_CONNECTIONS: "connect", Activation.RELOAD: "reload"}
    assert newest.when_to_change and said[activation] in newest.when_to_change, newest.when_to_change
    older = explain(name, load_bundled("4.17"))
    assert older.status == "unknown" and older.explained
    assert f"does not know '{name}' yet: it came with Samba {added}" in older.advice_on_this_version


def test_removed_names_say_when_and_what_replaced_them() -> None:
    """Samba 3.4.0 WHATSNEW: "use kerberos keytab  Removed", "kerberos method  New"; Samba
    3.0.0 WHATSNEW lists "client code page" as removed, its job went to "dos charset"."""
    catalog = load_bundled("4.17")
    result = explain("Use Kerberos Keytab", catalog)
    assert (result.status, result.removed_in, result.replacement) == ("removed", "3.4.0", "kerberos method")
    assert "'kerberos method' does its job today" in result.advice_on_this_version
    assert explain("auth methods", catalog).removed_in == "4.8.0"
    # 4.4 still had it; the 4.17 stand-in catalog cannot describe it but knows when it went.
    older = explain("username", load_bundled("4.4"))
    assert (older.status, older.removed_in, older.replacement) == ("unknown", "4.5.0", "valid users")
    gone = explain("client code page", catalog)
    assert gone.status == "removed" and gone.replacement == "dos charset"


def test_unknown_names_get_suggestions() -> None:
    result = explain("oplcks", load_bundled("4.17"))
    assert result.status == "unknown" and "oplocks" in result.suggestions
    assert not result.explained


def test_man_page_entry_through_a_transport(any_transport: Transport) -> None:
    if not Path(MAN_PAGE_PATHS[0]).exists():
        pytest.skip("smb.conf(5) is not installed here")
    text = parameter_entry("read raw", any_transport)
    assert text is not None
    assert text.startswith("read raw (G)")
    assert "\\f" not in text and "\\m[" not in text and ".RS" not in text
    assert "Default: read raw = yes" in text
    assert parameter_entry("no such parameter", any_transport) is None


def test_missing_man_page_is_none(tmp_path: Path) -> None:
    assert parameter_entry("read raw", paths=(str(tmp_path / "smb.conf.5.gz"),)) is None
    broken = tmp_path / "broken.5.gz"
    broken.write_bytes(b"not gzip")
    assert parameter_entry("read raw", paths=(str(broken),)) is None
