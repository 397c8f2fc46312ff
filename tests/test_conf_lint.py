"""Lint findings: stable codes, the right line, what Samba really does, for the right version."""

from __future__ import annotations

import subprocess
from functools import cache
from pathlib import Path

import pytest

from sambatune.conf.catalog import ParameterCatalog, load_bundled
from sambatune.conf.document import SmbConfDocument
from sambatune.conf.includes import LocalIncludes, TransportIncludes
from sambatune.conf.knowledge import removed_parameters
from sambatune.conf.lint import CODES, Finding, lint
from sambatune.remote.transport import Transport


@cache
def catalog() -> ParameterCatalog:
    return load_bundled("4.17")


def findings(text: str, version: str = "4.17", path: str = "smb.conf") -> list[Finding]:
    return lint(SmbConfDocument(text, path), load_bundled(version))


def codes(found: list[Finding]) -> list[tuple[int, str]]:
    return [(finding.line, finding.code) for finding in found]


CONFIG = """\
workgroup = W
[global]
   Max  XMIT = 65535
   read size = 16384
   socket options = TCP_NODELAY SO_RCVBUF=65536 SO_SNDBUF=65536
   log level = 3 passdb:5
   oplocks = no # off
   oplcks = no
   blocking locks = yes
just words
[data]
   path = /srv/data
   strict sync = yes
   sync always = yes
   read only = yes
   writable = yes
   workgroup = X
   max connections = 12abc
   hide files = /a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/
   veto files = /g/h/i/j/k/
[data]
   x:y = 1
[data]
   path = /srv/data2
"""


def test_each_finding_on_its_line() -> None:
    found = findings(CONFIG)
    assert set(codes(found)) >= {
        (3, "smb1-only-parameter"),
        (4, "removed-parameter"),
        (5, "socket-buffer-fixed"),
        (6, "log-level-high"),
        (7, "inline-comment"),
        (8, "unknown-parameter"),
        (9, "deprecated-parameter"),
        (10, "no-equals"),
        (14, "strict-sync-sync-always"),
        (15, "duplicate-parameter"),
        (17, "global-in-share"),
        (18, "integer-not-clean"),
        (19, "many-hide-veto-patterns"),
        (22, "parametric-dropped"),
        (12, "duplicate-parameter"),
    }
    by_line = {finding.line: finding for finding in found if finding.severity != "error"}
    assert "Did you mean 'oplocks'" in by_line[8].message
    assert "3.0.2" in by_line[4].message
    assert "line 16 (as 'writable')" in by_line[15].message
    assert by_line[7].severity == "warning" and "'no # off'" in by_line[7].message
    assert by_line[17].section == "data" and by_line[17].parameter == "workgroup"
    assert all(finding.code in CODES for finding in found)
    # Samba has no inline comments, so "no # off" is not a boolean: the file is refused.
    assert [(f.line, f.code) for f in found if f.severity == "error"] == [(7, "invalid-boolean")]
    assert [f.line for f in found] == sorted(f.line for f in found)
    assert "SO_RCVBUF and SO_SNDBUF" in by_line[5].message


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("guest ok = maybe", "invalid-boolean"),
        ("writable = sure", "invalid-boolean"),
        ("strict locking = off", "invalid-enum"),
        ("block size = 1kb", "invalid-size"),
        ("create mask = rw", "invalid-octal"),
        ("ntvfs handler = +x, y", "invalid-list"),
        ("copy = nowhere", "copy-missing"),
    ],
)
@pytest.mark.testbed  # runs Samba's own programs
def test_what_samba_refuses_is_an_error(line: str, code: str, tmp_path: Path) -> None:
    text = f"[s]\npath = /tmp\n{line}\n"
    found = findings(text)
    assert (3, code) in codes(found)
    assert [f.severity for f in found if f.code == code] == ["error"]
    config = tmp_path / "smb.conf"
    config.write_text(text)
    result = subprocess.run(["testparm", "-s", str(config)], capture_output=True, text=True)
    assert result.returncode != 0, "testparm accepted what lint calls an error"


@pytest.mark.testbed  # runs Samba's own programs
def test_an_invalid_protocol_names_every_value_samba_takes(tmp_path: Path) -> None:
    """lib/param/param_table.c enum_protocol (4.15 dropped SMB2_22, SMB2_24 and SMB3_10):
    testparm refuses SMB2_24 and loads SMB3_11 and SMB2_10, which it prints as SMB3 and SMB2."""
    [finding] = findings("[global]\nserver max protocol = SMB2_24\n")
    assert finding.code == "invalid-enum"
    assert "SMB3_11 = SMB3, SMB2_10 = SMB2, CORE+ = COREPLUS" in finding.message
    config = tmp_path / "smb.conf"
    for value, printed in (("SMB3_11", "SMB3"), ("SMB2_10", "SMB2")):
        config.write_text(f"[global]\nserver max protocol = {value}\n")
        assert not findings(config.read_text())
        shown = subprocess.run(
            ["testparm", "-s", "--parameter-name", "server max protocol", str(config)],
            capture_output=True,
            text=True,
        )
        assert shown.stdout.strip() == printed


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("[global]\nname resolve order = hosts\n", "invalid-resolve-order"),
        ("[global]\nsmb ports = 445 99999\n", "invalid-port"),
        ("[s\npath = /x\n", "bad-section"),
        ("[]\npath = /x\n", "empty-section"),
        ("[s]\n= x\n", "empty-name"),
        ("[s]\npath = /x\ncopy = s\n", "copy-self"),
        ("[global]\ncopy = s\n", "copy-in-global"),
        ("[s]\npath = /x\ninclude = registry\n", "include-registry-in-share"),
    ],
)
@pytest.mark.testbed  # runs Samba's own programs
def test_structural_and_handler_errors(text: str, code: str, tmp_path: Path) -> None:
    assert code in [f.code for f in findings(text) if f.severity == "error"]
    config = tmp_path / "smb.conf"
    config.write_text(text)
    assert subprocess.run(["testparm", "-s", str(config)], capture_output=True).returncode != 0


def test_smb1_findings_depend_on_version_and_min_protocol() -> None:
    text = "[global]\nread raw = no\nmax xmit = 65535\n"
    assert "smb1-only-parameter" in [f.code for f in findings(text)]
    assert "smb1-only-parameter" not in [f.code for f in findings(text, "4.10")]
    lowered = "[global]\nserver min protocol = NT1\nread raw = no\n"
    assert "smb1-only-parameter" not in [f.code for f in findings(lowered)]


def test_parameters_with_effects_beyond_smb1_are_not_called_smb1_only() -> None:
    """Issue 16. allocation roundup size: source3/smbd/smb2_trans2.c smb_roundup() rounds for
    SMB2/3 clients (tests/test_parameter_facts_smbd.py). smb1 unix extensions: source3/param/
    loadparm.c lp_widelinks() turns wide links off for every protocol while it is on."""
    text = "[global]\nsmb1 unix extensions = no\n[s]\npath = /tmp\nallocation roundup size = 1048576\n"
    assert "smb1-only-parameter" not in [f.code for f in findings(text)]
    assert "smb1-only-parameter" not in [f.code for f in findings("[global]\nunix extensions = yes\n")]


@pytest.mark.parametrize(
    ("global_lines", "ignored"),
    [
        ("", True),
        ("smb1 unix extensions = yes\n", True),
        ("unix extensions = no\n", False),
        ("allow insecure wide links = yes\n", False),
    ],
)
def test_wide_links_that_unix_extensions_switch_off(global_lines: str, ignored: bool) -> None:
    """source3/param/loadparm.c lp_widelinks(): false while smb1 unix extensions (default yes,
    testparm -sv 4.17.12) is on unless allow insecure wide links = yes, for every protocol;
    tests/test_parameter_facts_smbd.py sees a link out of the share fail over SMB3."""
    found = findings(
        f"[global]\n{global_lines}[s]\npath = /tmp\nwide links = yes\n[t]\npath = /tmp\nwide links = no\n"
    )
    hits = [(f.line, f.severity, f.section) for f in found if f.code == "wide-links-ignored"]
    line = 5 if global_lines else 4
    assert hits == ([(line, "warning", "s")] if ignored else [])
    if ignored:
        [message] = [f.message for f in found if f.code == "wide-links-ignored"]
        assert ("(the default)" if not global_lines else "(set on line 2)") in message


def test_smb2_sizes_below_the_default_only_slow_transfers() -> None:
    """source3/smbd/smb2_negprot.c offers MIN(0xFFFF00, smb2 max read/write) to SMB 2.1+
    clients, so a smaller value only splits large transfers (default 8 MiB, testparm -sv)."""
    found = findings("[global]\nsmb2 max read = 1M\nsmb2 max write = 4194304\nsmb2 max trans = 64K\n")
    assert [(f.line, f.parameter, f.severity) for f in found if f.code == "smb2-size-below-default"] == [
        (2, "smb2 max read", "warning"),
        (3, "smb2 max write", "warning"),
    ]
    assert not findings("[global]\nsmb2 max read = 8M\nsmb2 max write = 16M\n")


@pytest.mark.parametrize(
    ("value", "aborts"),
    [("100", True), ("50", True), ("0x10", True), ("-1", True), ("101", False), ("16424", False)],
)
def test_max_open_files_of_100_or_less_is_an_error(value: str, aborts: bool) -> None:
    """smbd asserts room for more than 100 open files at start (files.c file_init_global;
    tests/test_apply_effect.py starts this machine's smbd with 100 and 101)."""
    linted = findings(f"[global]\n  max open files = {value}\n")
    found = [f for f in linted if f.code == "max-open-files-aborts"]
    assert [(f.line, f.severity) for f in found] == ([(2, "error")] if aborts else [])
    if aborts:
        assert f"max open files = {value}: smbd stops at start" in found[0].message


@pytest.mark.parametrize(
    ("lines", "reported"),
    [
        ("server signing = mandatory\n", True),
        ("server signing = required\n", True),
        ("server smb encrypt = required\n", True),
        ("server signing = auto\n", False),
        ("", False),
    ],
)
def test_receivefile_with_signing_or_encryption_required(lines: str, reported: bool) -> None:
    """source3/smbd/smb2_server.c is_smb2_recvfile_write() returns false for signed
    (SMB2_HDR_FLAG_SIGNED) and encrypted (transform header) writes, and smb1_process.c
    receive_smb_raw_talloc() skips receivefile while signing is active."""
    found = findings(f"[global]\nmin receivefile size = 16384\n{lines}")
    assert [(f.line, f.severity) for f in found if f.code == "receivefile-signed"] == (
        [(2, "info")] if reported else []
    )


@pytest.mark.testbed  # runs Samba's own programs
def test_a_suffix_on_max_log_size_multiplies_kibibytes(tmp_path: Path) -> None:
    """lib/util/debug.c checks the log against max log size * 1024; testparm stores '1M' as
    1048576, so the log may grow to 1 GiB."""
    [finding] = findings("[global]\nmax log size = 1M\n")
    assert finding.code == "size-unit-suffix" and finding.severity == "warning"
    assert "'1M' means 1,048,576 KiB, 1.0 GiB" in finding.message
    assert not findings("[global]\nmax log size = 10000\n")
    config = tmp_path / "smb.conf"
    config.write_text("[global]\nmax log size = 1M\n")
    shown = subprocess.run(
        ["testparm", "-s", "--parameter-name", "max log size", str(config)], capture_output=True, text=True
    )
    assert shown.stdout.strip() == "1048576"


def test_removed_depends_on_the_version() -> None:
    text = "[global]\ndirectory name cache size = 100\n"
    assert not [f for f in findings(text, "4.17") if f.code != "smb1-only-parameter"]
    assert "removed-parameter" in [f.code for f in findings(text, "4.19")]


@pytest.mark.testbed  # runs Samba's own programs
def test_every_recorded_removal_is_reported_with_its_release_and_replacement(
    tmp_path: Path,
) -> None:
    """Issue 16: 32 of the 36 parameters removed since Samba 3.6 came out as plain "unknown".

    Sources: the "smb.conf changes" tables in each release's WHATSNEW.txt (e.g. samba-4.8.0:
    "auth methods  Removed"; samba-3.4.0: "use kerberos keytab  Removed" next to the new
    "kerberos method"), as recorded in resources/parameters/removed.json; testparm 4.17
    confirms that it ignores every one of them.
    """
    gone = {name: info for name, info in removed_parameters().items() if info.removed_in <= catalog().version}
    text = "[global]\n" + "".join(f"{name} = 1\n" for name in gone)
    by_line = {f.line: f for f in findings(text)}
    for line, (name, info) in enumerate(gone.items(), start=2):
        finding = by_line[line]
        assert finding.code == "removed-parameter", f"{name}: {finding.code}"
        assert f"removed in Samba {info.removed_in_text}" in finding.message
        if info.replacement:
            assert finding.message.endswith(f"Use '{info.replacement}' instead.")
    config = tmp_path / "smb.conf"
    config.write_text(text)
    stderr = subprocess.run(["testparm", "-s", str(config)], capture_output=True, text=True).stderr
    unknown = {
        line.split('"')[1].lower()
        for line in stderr.splitlines()
        if line.startswith("Unknown parameter encountered")
    }
    assert unknown == set(gone)
    [kerberos] = findings("[global]\nuse kerberos keytab = yes\n")
    assert kerberos.message.startswith("'use kerberos keytab' was removed in Samba 3.4.0")
    assert kerberos.message.endswith("Use 'kerberos method' instead.")


def test_global_after_share_names_the_shares_that_miss_it() -> None:
    found = findings("[a]\npath = /a\n[global]\nread only = no\nworkgroup = W\n[b]\npath = /b\n")
    after = [f for f in found if f.code == "global-after-share"]
    assert [(f.line, f.parameter) for f in after] == [(4, "read only")]
    assert "[a]" in after[0].message and "[b]" not in after[0].message


def test_includes_are_linted_with_their_own_file_and_line(tmp_path: Path) -> None:
    included = tmp_path / "shares.conf"
    included.write_text("[inc]\npath = /x\noplocks = maybe\n")
    main = tmp_path / "smb.conf"
    main.write_text(
        f"[global]\ninclude = {included}\ninclude = {tmp_path}/missing.conf\n"
        f"include = {tmp_path}/%m.conf\ninclude = relative.conf\n"
        f"include = {main}\n"
    )
    document = SmbConfDocument(main.read_bytes(), str(main))
    found = lint(document, catalog(), read_include=LocalIncludes())
    assert [(f.file, f.line, f.code) for f in found if f.file] == [(str(included), 3, "invalid-boolean")]
    assert [(f.line, f.code) for f in found if not f.file] == [
        (3, "include-missing"),
        (4, "include-not-followed"),
        (5, "include-relative"),
        (6, "include-loop"),
    ]


def test_includes_through_a_transport(any_transport: Transport, tmp_path: Path) -> None:
    included = tmp_path / "inc.conf"
    included.write_text("workgroup = FROMINC\n")
    tmp_path.chmod(0o755)
    document = SmbConfDocument(f"[global]\ninclude = {included}\n", "main.conf")
    reader = TransportIncludes(any_transport)
    found = lint(document, catalog(), read_include=reader)
    assert not found
    assert reader(str(included)).__class__ is SmbConfDocument
    missing = reader(str(tmp_path / "nope.conf"))
    assert isinstance(missing, tuple)
    assert reader(str(tmp_path / "nope.conf")) == ("missing", missing[1])


@pytest.mark.testbed  # runs Samba's own programs
def test_a_byte_order_mark_hides_the_first_header(tmp_path: Path) -> None:
    """Samba reads the BOM's bytes as part of the line, so "[data]" is no header to it."""
    text = "\ufeff[data]\npath = /tmp\ncomment = x\n"
    found = findings(text)
    assert [(f.line, f.code) for f in found] == [(1, "no-equals")]
    assert "byte order mark" in found[0].message
    config = tmp_path / "smb.conf"
    config.write_text(text, encoding="utf-8")
    dumped = subprocess.run(["testparm", "-s", str(config)], capture_output=True, text=True).stdout
    assert "[data]" not in dumped and "\tcomment = x" in dumped


def test_a_name_the_older_catalog_lacks_is_not_called_unknown_for_a_newer_samba() -> None:
    """A release adds parameters (4.25 added 'persistent handles'): judged with an older
    release's catalog, a name it lacks must not be called "not a parameter", only "not
    in that catalog". (The name here is one no release has: the test outlives catalogs.)"""
    from sambatune.conf.catalog import bundled_versions

    major, minor = bundled_versions()[-1]
    newer = f"{major}.{minor + 1}"
    text = "[global]\n   smb4 quantum leases = yes\n   sokcet options = TCP_NODELAY\n"
    [first, second] = findings(text, newer)
    assert (first.line, first.code, first.severity) == (2, "not-in-older-catalog", "info")
    assert f"catalog, the newest SambaTune has for Samba {newer}.0" in first.message
    assert "not a parameter" not in first.message
    assert second.code == "not-in-older-catalog" and "Did you mean 'socket options'" in second.message
    # With its own release's catalog, a name the release lacks is unknown, as before.
    assert [f.code for f in findings(text, f"{major}.{minor}")] == ["unknown-parameter"] * 2
