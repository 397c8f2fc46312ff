"""``sambatune conf ...`` as a user runs it: a real process, real files, real smbd and sshd."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cli_process import sambatune_cli
from sambatune.remote.connection import ConnectionOptions
from testbed.smbd import SmbServer

# Each test runs the CLI as a process of its own: a second or more each.
pytestmark = pytest.mark.slow

SAMPLE = """\
# sample
workgroup = W
[Global]
   Max  XMIT = 64k
   log level = 3
[data]
   path = /srv/data
   writable = yes
   comment = first \\
      and second
   oplocks = no # off
[DATA]
   comment = again
"""


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    path = tmp_path / "smb.conf"
    path.write_text(SAMPLE)
    return path


def assert_clean_error(result: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert fragment in result.stderr


# -- effective ----------------------------------------------------------------------------


def test_effective_json(sample: Path) -> None:
    result = sambatune_cli("conf", "effective", str(sample), "--json", "--samba-version", "4.17")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "global": {"workgroup": "W", "max xmit": "64k", "log level": "3"},
        "data": {"path": "/srv/data", "read only": "No", "comment": "again", "oplocks": "no # off"},
    }


def test_effective_text_and_testparm_values(sample: Path) -> None:
    result = sambatune_cli("conf", "effective", str(sample), "--testparm-values")
    assert result.returncode == 0, result.stderr
    assert "[global]\n\tworkgroup = W\n\tmax xmit = 65536\n" in result.stdout
    assert "\tread only = No\n" in result.stdout


@pytest.mark.testbed  # runs Samba's own programs
def test_effective_uses_this_computers_catalog_by_default(sample: Path) -> None:
    first = sambatune_cli("conf", "effective", str(sample), "--json")
    assert first.returncode == 0, first.stderr
    home = Path(os.environ["SAMBATUNE_HOME"])
    assert list((home / "data" / "catalogs").glob("catalog-4.*.json"))
    again = sambatune_cli("conf", "effective", str(sample), "--json")
    assert json.loads(again.stdout) == json.loads(first.stdout)


def test_effective_bad_input(tmp_path: Path) -> None:
    assert_clean_error(sambatune_cli("conf", "effective", str(tmp_path / "none.conf")), "Cannot read")
    missing = sambatune_cli("conf", "effective", str(tmp_path / "none.conf"), "--json")
    assert json.loads(missing.stdout)["error"]["code"] == "invalid-input"
    assert_clean_error(sambatune_cli("conf", "effective", str(tmp_path)), "is a directory")
    config = tmp_path / "smb.conf"
    config.write_text("[s]\n")
    assert_clean_error(
        sambatune_cli("conf", "effective", str(config), "--samba-version", "banana"), "not a Samba version"
    )


def test_effective_survives_binary_garbage(tmp_path: Path) -> None:
    path = tmp_path / "garbage.conf"
    path.write_bytes(b"[s]\ncomment = caf\xe9\x00\xff\npath = /x\n\xfe\xfe\n")
    result = sambatune_cli("conf", "effective", str(path), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["s"]["comment"] == "caf\ufffd"


# -- lint ----------------------------------------------------------------------------------


def test_lint_json_findings(sample: Path) -> None:
    result = sambatune_cli("conf", "lint", str(sample), "--json", "--samba-version", "4.17")
    findings = json.loads(result.stdout)
    assert result.returncode == 1  # "no # off" is not a boolean: an error
    for finding in findings:
        assert set(finding) == {"line", "section", "parameter", "severity", "code", "message"}
    got = {(f["line"], f["code"]) for f in findings}
    assert {
        (4, "smb1-only-parameter"),
        (5, "log-level-high"),
        (11, "inline-comment"),
        (11, "invalid-boolean"),
        (9, "duplicate-parameter"),
    } <= got


def test_lint_text_and_versions(tmp_path: Path) -> None:
    path = tmp_path / "smb.conf"
    path.write_text("[global]\ndirectory name cache size = 100\n")
    clean = sambatune_cli("conf", "lint", str(path), "--samba-version", "4.17")
    assert clean.returncode == 0
    assert "read as Samba 4.17" in clean.stderr
    later = sambatune_cli("conf", "lint", str(path), "--samba-version", "4.19")
    assert later.returncode == 0
    assert f"{path}:2: warning: [global]" in later.stdout and "(removed-parameter)" in later.stdout


# -- explain --------------------------------------------------------------------------------


def test_explain_json_and_text() -> None:
    result = sambatune_cli("conf", "explain", "Max XMIT", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["name"] == "max xmit" and data["type"] == "bytes" and data["explained"]
    assert data["applies_to"] == "smb1"
    text = sambatune_cli("conf", "explain", "writable", "--man")
    assert text.returncode == 0
    assert "inverse synonym of 'read only'" in text.stdout
    assert "read only (S)" in text.stdout  # the man page entry of the canonical name


def test_explain_names_every_protocol_value_and_what_the_short_ones_mean() -> None:
    """lib/param/param_table.c enum_protocol: SMB2 is PROTOCOL_SMB2_10, SMB3 is
    PROTOCOL_SMB3_11, CORE+ is COREPLUS; testparm prints the short names."""
    text = sambatune_cli("conf", "explain", "server max protocol").stdout
    assert "also accepted: SMB3_11 (= SMB3), SMB2_10 (= SMB2), CORE+ (= COREPLUS)" in text
    gone = " ".join(sambatune_cli("conf", "explain", "use kerberos keytab").stdout.split())
    assert "removed in 3.4.0:" in gone and "Use 'kerberos method' instead." in gone


def test_explain_unknown_name() -> None:
    result = sambatune_cli("conf", "explain", "oplcks", "--json")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["status"] == "unknown" and "oplocks" in data["suggestions"]


# -- set / unset ---------------------------------------------------------------------------


def test_set_and_unset_edit_in_place_keeping_the_mode(sample: Path) -> None:
    sample.chmod(0o640)
    inode = sample.stat().st_ino
    before = sample.read_text().splitlines()
    result = sambatune_cli("conf", "set", str(sample), "data", "oplocks", "yes", "--samba-version", "4.17")
    assert result.returncode == 0, result.stderr
    assert "data" in result.stdout and "oplocks = yes" in result.stdout
    after = sample.read_text().splitlines()
    assert [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == [10]
    assert after[10] == "   oplocks = yes"
    assert stat.S_IMODE(sample.stat().st_mode) == 0o640
    assert sample.stat().st_ino != inode  # written to a temporary file and renamed over
    assert not list(sample.parent.glob(".smb.conf.sambatune.*"))

    result = sambatune_cli("conf", "unset", str(sample), "DATA", "read only", "--json")
    data = json.loads(result.stdout)
    assert data["ok"] and data["changes"] == [{"line": 8, "removed": 1, "inserted": []}]
    assert "writable" not in sample.read_text()
    nothing = sambatune_cli("conf", "unset", str(sample), "data", "read only")
    assert nothing.returncode == 0 and "nothing changed" in nothing.stdout


@pytest.mark.testbed  # runs Samba's own programs
def test_set_result_is_what_testparm_reads(tmp_path: Path) -> None:
    path = tmp_path / "smb.conf"
    path.write_text("[s]\npath = /tmp\n")
    assert sambatune_cli("conf", "set", str(path), "s", "max connections", "7").returncode == 0
    assert sambatune_cli("conf", "set", str(path), "global", "writable", "yes").returncode == 0
    out = subprocess.run(["testparm", "-s", "-v", str(path)], capture_output=True, text=True).stdout
    shares = out.split("\n[s]\n")
    assert "\tmax connections = 7\n" in shares[1]
    assert "\tread only = No\n" in shares[0]


def test_set_bad_input(sample: Path, tmp_path: Path) -> None:
    original = sample.read_bytes()
    assert_clean_error(sambatune_cli("conf", "set", str(sample), "data", "path", "a\nb"), "one line")
    assert_clean_error(
        sambatune_cli("conf", "set", str(sample), "da]ta", "path", "/x"), "cannot be a section name"
    )
    assert_clean_error(
        sambatune_cli("conf", "set", str(sample), "data", "a=b", "x"), "cannot be a parameter name"
    )
    assert sample.read_bytes() == original
    assert_clean_error(sambatune_cli("conf", "set", str(tmp_path / "no.conf"), "s", "a", "b"), "Cannot read")
    readonly_dir = tmp_path / "locked"
    readonly_dir.mkdir()
    locked = readonly_dir / "smb.conf"
    locked.write_text("[s]\n")
    readonly_dir.chmod(0o500)
    try:
        if os.geteuid() != 0:
            assert_clean_error(sambatune_cli("conf", "set", str(locked), "s", "a", "b"), "Cannot write")
    finally:
        readonly_dir.chmod(0o700)


def test_usage_errors_are_argparse_errors() -> None:
    result = sambatune_cli("conf")
    assert result.returncode == 2 and "SUBVERB" in result.stderr
    assert sambatune_cli("conf", "set", "only-a-file").returncode == 2


# -- apply / history / restore against a real smbd -------------------------------------------


def connection_args(request: pytest.FixtureRequest) -> list[str]:
    if request.param == "local":
        return []
    options: ConnectionOptions = request.getfixturevalue("ssh_options")
    return [
        "--host",
        "127.0.0.1",
        "--port",
        str(options.port),
        "--user",
        str(options.user),
        "--identity",
        str(options.identity_file),
        "--known-hosts",
        str(options.known_hosts),
    ]


@pytest.fixture(params=["local", "ssh"])
def target(request: pytest.FixtureRequest) -> list[str]:
    return connection_args(request)


def test_apply_history_restore(fresh_smbd: SmbServer, target: list[str], tmp_path: Path) -> None:
    original = fresh_smbd.config.read_bytes()
    candidate = tmp_path / "new.conf"
    candidate.write_bytes(original)
    edited = sambatune_cli("conf", "set", str(candidate), "fresh", "path", str(fresh_smbd.share_path))
    assert edited.returncode == 0, edited.stderr
    assert sambatune_cli("conf", "set", str(candidate), "fresh", "guest ok", "yes").returncode == 0
    remote = ["--remote-path", str(fresh_smbd.config)]

    applied = sambatune_cli(
        "conf",
        "apply",
        "--file",
        str(candidate),
        *remote,
        *target,
        "--summary",
        "add [fresh]",
        "--yes",
        "--json",
    )
    assert applied.returncode == 0, applied.stdout + applied.stderr
    outcome = json.loads(applied.stdout)
    assert outcome["status"] == "applied" and outcome["live"] == "new"
    assert "+[fresh]" in outcome["diff"]
    assert fresh_smbd.config.read_bytes() == candidate.read_bytes()
    assert "fresh" in fresh_smbd.list_shares()

    history = sambatune_cli("conf", "history", *remote, *target, "--json")
    assert history.returncode == 0, history.stderr
    backups = json.loads(history.stdout)["backups"]
    assert backups and backups[0]["summary"] == "add [fresh]"

    runs = json.loads(history.stdout)["runs_from_this_computer"]
    assert [(r["outcome"], r["live"], r["summary"]) for r in runs] == [("applied", "new", "add [fresh]")]
    assert json.loads(history.stdout)["applied_by_this_computer"] == runs

    text = sambatune_cli("conf", "history", *remote, *target)
    assert backups[0]["id"] in text.stdout
    assert "Runs from this computer (1):" in text.stdout
    assert "applied      now live" in text.stdout

    restored = sambatune_cli("conf", "restore", backups[0]["id"], *remote, *target, "--yes", "--json")
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert json.loads(restored.stdout)["status"] == "applied"
    assert fresh_smbd.config.read_bytes() == original
    assert "fresh" not in fresh_smbd.list_shares()


def test_apply_refuses_what_testparm_refuses(
    fresh_smbd: SmbServer, target: list[str], tmp_path: Path
) -> None:
    original = fresh_smbd.config.read_bytes()
    candidate = tmp_path / "bad.conf"
    candidate.write_bytes(original + b"\n[broken\n")
    result = sambatune_cli(
        "conf",
        "apply",
        "--file",
        str(candidate),
        "--remote-path",
        str(fresh_smbd.config),
        *target,
        "--yes",
        "--json",
    )
    assert result.returncode == 1
    assert json.loads(result.stdout)["status"] == "refused"
    assert fresh_smbd.config.read_bytes() == original
    # A refusal changed nothing: history does not list it as applied.
    history = json.loads(
        sambatune_cli("conf", "history", "--remote-path", str(fresh_smbd.config), *target, "--json").stdout
    )
    assert history["applied_by_this_computer"] == []
    assert all(run["outcome"] != "applied" for run in history["runs_from_this_computer"])


def test_apply_without_yes_off_a_terminal_is_refused(fresh_smbd: SmbServer, tmp_path: Path) -> None:
    candidate = tmp_path / "new.conf"
    candidate.write_bytes(fresh_smbd.config.read_bytes() + b"\n[x]\npath = /tmp\n")
    result = sambatune_cli("conf", "apply", "--file", str(candidate), "--remote-path", str(fresh_smbd.config))
    assert_clean_error(result, "confirm with --yes")


def test_the_read_verbs_stay_light(sample: Path) -> None:
    """No Qt, no SSH stack, no package metadata scan, no logging (4 ms): what keeps
    `conf effective` fast."""
    probe = (
        "import sys, io, contextlib\n"
        "from sambatune.cli.main import main\n"
        "for verb in ('effective', 'lint'):\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        f"        main(['conf', verb, {str(sample)!r}, '--json', '--samba-version', '4.17'])\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    loaded = set(result.stdout.split())
    assert "sambatune.conf.document" in loaded, result.stderr
    heavy = {
        "PySide6",
        "paramiko",
        "importlib.metadata",
        "importlib.resources",
        "logging",
        "zipfile",
        "sambatune.remote.transport",
        "sambatune.remote.ssh",
    }
    if sys.platform.startswith("linux"):
        heavy.add("platformdirs")
    assert not loaded & heavy


def test_catalog_verb_regenerates_the_bundled_snapshot(tmp_path: Path) -> None:
    output = tmp_path / "catalog.json"
    result = sambatune_cli("conf", "catalog", "--refresh", "--output", str(output))
    assert result.returncode == 0, result.stderr
    assert str(output) in result.stdout
    # Read here, now: said the way the editor's status line says it.
    assert "parameters of Samba" in result.stdout and "(this computer, from its testparm)" in result.stdout
    made = json.loads(output.read_text())
    # It runs testparm on the target: the command line's log names the verb and the command.
    from sambatune.logfile import cli_log_path

    log = cli_log_path().read_text()
    assert "sambatune conf catalog started" in log and "testparm" in log and "exit status 0" in log
    series = ".".join(made["samba_version"].split(".")[:2])
    bundled = Path(__file__).parents[1] / "resources" / "parameters" / f"catalog-{series}.json"
    if not bundled.exists():
        pytest.skip(f"no snapshot bundled for {made['samba_version']}")
    shipped = json.loads(bundled.read_text())
    for data in (made, shipped):
        data["parameters"].pop("max open files")  # follows the process's rlimit
    assert made == shipped


SAMBA_SETS_IT = """\
[global]
  workgroup = HOME
  idmap uid = 10000-20000
  max xmit = 64k
  include = registry
[printers]
  path = /var/spool/samba
  printable = no
  browseable = yes
[base]
  path = /srv/base
  read only = no
  vfs objects = catia,fruit
[copied]
  copy = base
  comment = copied share
[nopath]
  comment = no path here
"""


@pytest.mark.testbed  # runs testparm
def test_effective_testparm_values_is_what_testparm_prints(tmp_path: Path) -> None:
    """The command itself, not only the library under it: what Samba sets on its own
    ([printers] printable and not browseable, a share without a path unavailable,
    include = registry, idmap uid's idmap config form, copy = ...) is in the output,
    each value as testparm prints it (lib/param/loadparm.c lpcfg_service_ok,
    source3/param/loadparm.c)."""
    from sambatune.conf.testparm_output import parse_dump

    path = tmp_path / "smb.conf"
    path.write_text(SAMBA_SETS_IT)
    result = sambatune_cli("conf", "effective", str(path), "--json", "--testparm-values")
    assert result.returncode == 0, result.stderr
    ours = json.loads(result.stdout)
    testparm = subprocess.run(["testparm", "-s", str(path)], capture_output=True, text=True, timeout=60)
    theirs = dict(parse_dump(testparm.stdout))
    assert list(ours) == list(theirs)
    for section, values in theirs.items():
        for name, value in values.items():
            if name == "idmap config * : backend":
                continue  # testparm prints Samba's built-in idmap default in every dump
            assert ours[section].get(name) == value, (section, name)
    assert ours["printers"]["printable"] == "Yes" and ours["printers"]["browseable"] == "No"
    assert ours["nopath"]["available"] == "No"
    assert ours["copied"]["read only"] == "No" and ours["copied"]["vfs objects"] == "catia fruit"
    assert ours["global"]["registry shares"] == "Yes"
    assert ours["global"]["idmap config * : range"] == "10000-20000"
    lint = sambatune_cli("conf", "lint", str(path))
    assert f"{path}:6: warning: [printers]" in lint.stdout and "(printers-not-printable)" in lint.stdout
    assert f"{path}:17: warning: [nopath]" in lint.stdout and "(share-without-path)" in lint.stdout
    assert "WARNING: [printers] service MUST be printable!" in testparm.stderr
    assert "WARNING: No path in service nopath - making it unavailable!" in testparm.stderr


def test_the_second_of_two_applies_made_from_one_version_is_refused(
    fresh_smbd: SmbServer, target: list[str], tmp_path: Path
) -> None:
    """Two admins each take the live file and change it; the second apply used to report
    "Applied and verified" and silently undo the first (issue 27 item 7)."""
    remote = ["--remote-path", str(fresh_smbd.config)]
    copies = {name: tmp_path / f"{name}.conf" for name in ("first", "second")}
    for name, copy in copies.items():
        got = sambatune_cli("conf", "get", *remote, *target, "-o", str(copy), "--json")
        assert got.returncode == 0, got.stderr
        assert json.loads(got.stdout)["sha256"] == hashlib.sha256(fresh_smbd.config.read_bytes()).hexdigest()
        assert copy.read_bytes() == fresh_smbd.config.read_bytes()
        edited = sambatune_cli("conf", "set", str(copy), name, "path", str(fresh_smbd.share_path))
        assert edited.returncode == 0, edited.stderr

    def apply(copy: Path, *flags: str) -> tuple[int, dict[str, Any]]:
        done = sambatune_cli(
            "conf", "apply", "--file", str(copy), *remote, *target, "--yes", "--json", *flags
        )
        return done.returncode, json.loads(done.stdout)

    code, first = apply(copies["first"])
    assert code == 0 and first["status"] == "applied", first
    code, second = apply(copies["second"])
    assert code == 1 and second["status"] == "refused", second
    assert "changed since the version this change was made from" in second["message"]
    assert "applied a change" in second["message"] and "first.conf" in second["message"]
    assert "+[first]" in second["live_diff"]
    assert fresh_smbd.config.read_bytes() == copies["first"].read_bytes()  # the first stays
    assert set(fresh_smbd.list_shares()) >= {"first"}

    # Applied over it only when asked: the first change is then gone, and it says so.
    code, forced = apply(copies["second"], "--force")
    assert code == 0 and forced["status"] == "applied", forced
    assert any("--force" in w and "replaced" in w for w in forced["warnings"])
    assert fresh_smbd.config.read_bytes() == copies["second"].read_bytes()

    # The copy applied is now the live version: editing it further just works.
    assert sambatune_cli("conf", "set", str(copies["second"]), "second", "comment", "again").returncode == 0
    code, again = apply(copies["second"])
    assert code == 0 and again["status"] == "applied", again

    # A change by hand on the server, then a file made without 'conf get': refused too,
    # since this computer last applied another version there.
    fresh_smbd.config.write_bytes(fresh_smbd.config.read_bytes() + b"# by hand\n")
    other = tmp_path / "other.conf"
    other.write_bytes(copies["second"].read_bytes() + b"[third]\n  path = /tmp\n")
    code, refused = apply(other)
    assert code == 1 and refused["status"] == "refused" and "+# by hand" in refused["live_diff"]
