"""Several smbd on one host, and changes that must not drop the users of the right one.

Real smbd instances on loopback, each with its own smb.conf, port and databases; real
SSH; a real SMB client holding a session and an open file across an apply.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from smbprotocol.connection import Connection
from smbprotocol.session import Session
from smbprotocol.tree import TreeConnect

from cli_process import sambatune_cli
from faults import FaultyTransport, Rule
from sambatune.applied_versions import AppliedVersions
from sambatune.conf.apply import APPLIED, PLANNED, REFUSED, ApplyRequest, apply_config
from sambatune.remote.config_location import detect_config_path
from sambatune.remote.connection import ConnectionOptions, open_target
from sambatune.remote.prompts import NoPrompts
from sambatune.remote.samba_ops import find_instance
from sambatune.remote.smb_sessions import connected_clients, parse_locks_text, parse_sessions_text
from sambatune.remote.survey import run_survey
from sambatune.remote.transport import Transport
from test_activation import open_file
from testbed.ports import free_port
from testbed.smbd import SmbServer

NEW_SHARE = "\n[extra]\n  path = {path}\n  guest ok = yes\n"


class HeldSession:
    """An SMB client that stays connected with a file open, as a user at work would."""

    def __init__(self, port: int) -> None:
        self.connection = Connection(uuid.uuid4(), "127.0.0.1", port, require_signing=False)
        self.connection.connect(timeout=10)
        session = Session(self.connection, "guest", "", require_encryption=False, auth_protocol="ntlm")
        session.connect()
        self.tree = TreeConnect(session, r"\\127.0.0.1\bench")
        self.tree.connect(require_secure_negotiate=False)
        self.file = open_file(self.tree, "working-on.txt", create=True)
        self.file.write(b"before", 0)

    def still_works(self) -> bool:
        self.file.write(b"after the apply", 0)
        return bytes(self.file.read(0, 15)) == b"after the apply"

    def close(self) -> None:
        self.connection.disconnect()


@pytest.fixture
def held(fresh_smbd: SmbServer) -> Iterator[HeldSession]:
    session = HeldSession(fresh_smbd.port)
    yield session
    session.close()


# -- which smbd, which smb.conf ---------------------------------------------------------------


def test_the_survey_lists_every_instance_and_chooses_none(
    fresh_smbd: SmbServer, second_smbd: SmbServer, ssh: Transport
) -> None:
    survey = run_survey(ssh)
    ours = {str(fresh_smbd.config), str(second_smbd.config)}
    found = {i["config"]: i for i in survey.instances if i["config"] in ours}
    assert set(found) == ours
    first = found[str(fresh_smbd.config)]
    assert fresh_smbd.process is not None and first["pid"] == fresh_smbd.process.pid
    assert {p["port"] for p in first["listening"]} == {fresh_smbd.port}
    assert first["dirs"]["lock directory"] == str(fresh_smbd.dir / "lock")
    assert first["dirs"]["pid directory"] == str(fresh_smbd.dir / "state")
    # Several files and none chosen: no default, no other instance's facts.
    assert survey.ambiguous and survey.config_path is None
    assert ours <= set(survey.config_candidates)
    assert survey.smb_port() is None and not survey.samba["running"]
    assert any("Several smbd run" in n.message for n in survey.notes())

    chosen = run_survey(ssh, config_path=str(second_smbd.config))
    assert chosen.managed_instance is not None
    assert second_smbd.process is not None
    assert chosen.managed_instance["pid"] == second_smbd.process.pid
    assert chosen.smb_port() == second_smbd.port
    assert chosen.samba["running"] and not chosen.ambiguous


def test_apply_without_a_path_refuses_and_names_every_candidate(
    fresh_smbd: SmbServer, second_smbd: SmbServer, tmp_path: Path
) -> None:
    from sambatune.remote.local import LocalTransport

    with pytest.raises(Exception) as refused:
        detect_config_path(LocalTransport())
    assert str(fresh_smbd.config) in str(refused.value)
    assert str(second_smbd.config) in str(refused.value)

    candidate = tmp_path / "new.conf"
    before = {s.config: s.config.read_bytes() for s in (fresh_smbd, second_smbd)}
    candidate.write_bytes(before[fresh_smbd.config] + b"# changed\n")
    result = sambatune_cli("conf", "apply", "--file", str(candidate), "--yes", "--json")
    assert result.returncode == 1
    assert "Several smbd run" in result.stderr
    assert str(fresh_smbd.config) in result.stderr and str(second_smbd.config) in result.stderr
    assert "Traceback" not in result.stderr
    assert {s.config: s.config.read_bytes() for s in (fresh_smbd, second_smbd)} == before


#: Verbs that work on one smbd: with several running and none chosen, each must refuse.
ONE_SMBD_VERBS = {
    "advise": ["advise"],
    "bench-smb": ["bench", "smb", "--share", "bench", "--size", "1MiB", "--runs", "2", "--warmup", "0"],
    "wizard-start": ["wizard", "start", "--share", "bench", "--test", "copy", "--size", "4MiB"],
}


@pytest.mark.parametrize("verb", ONE_SMBD_VERBS)
def test_verbs_for_one_smbd_refuse_to_guess_among_several(
    verb: str, fresh_smbd: SmbServer, second_smbd: SmbServer
) -> None:
    from sambatune.bench.results_db import ResultsDatabase
    from sambatune.wizard.store import WizardStore

    servers = (fresh_smbd, second_smbd)
    before = {s.config: s.config.read_bytes() for s in servers}
    result = sambatune_cli(*ONE_SMBD_VERBS[verb])  # no traceback: sambatune_cli checks
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr.startswith("sambatune: Several smbd run on this "), result.stderr
    assert str(fresh_smbd.config) in result.stderr and str(second_smbd.config) in result.stderr
    assert "--config-path" in result.stderr  # and says how to choose
    assert result.stdout == ""
    # Nothing measured, started or changed on either smbd.
    assert {s.config: s.config.read_bytes() for s in servers} == before
    assert [p.name for s in servers for p in s.share_path.iterdir()] == []
    assert [p.name for s in servers for p in s.dir.iterdir() if "sambatune" in p.name] == []
    assert ResultsDatabase().sessions() == []
    assert WizardStore().summaries() == []


def test_survey_json_has_one_entry_per_instance(fresh_smbd: SmbServer, second_smbd: SmbServer) -> None:
    result = sambatune_cli("survey", "--json")
    assert result.returncode == 0, result.stderr
    samba = json.loads(result.stdout)["samba"]
    configs = [i["config"] for i in samba["instances"]]
    assert configs.count(str(fresh_smbd.config)) == 1
    assert configs.count(str(second_smbd.config)) == 1
    assert samba["config_source"] == "ambiguous" and samba["config_path"] is None


# -- reload or restart, and who it drops ------------------------------------------------------


def test_a_reload_keeps_a_working_session_and_its_open_file(
    fresh_smbd: SmbServer, held: HeldSession, ssh: Transport
) -> None:
    pid = find_instance(ssh, str(fresh_smbd.config))
    assert pid is not None
    original = fresh_smbd.config.read_bytes()
    candidate = original + NEW_SHARE.format(path=fresh_smbd.share_path).encode()
    outcome = apply_config(ssh, ApplyRequest(str(fresh_smbd.config), original, candidate))
    assert outcome.status == APPLIED, outcome.message
    assert outcome.activation == "reload"
    assert held.still_works(), "the user's open file stopped working"
    after = find_instance(ssh, str(fresh_smbd.config))
    assert after is not None and after.pid == pid.pid, "smbd was restarted"
    assert "extra" in fresh_smbd.list_shares()


def test_a_restart_is_refused_without_consent_and_names_who_it_drops(
    fresh_smbd: SmbServer, held: HeldSession, ssh: Transport
) -> None:
    path = str(fresh_smbd.config)
    original = fresh_smbd.config.read_bytes()
    candidate = original.replace(b"bind interfaces only = yes", b"bind interfaces only = no")
    journal = AppliedVersions().journal(ssh.label, path)

    planned = apply_config(ssh, ApplyRequest(path, original, candidate, dry_run=True), journal=journal)
    assert planned.status == PLANNED and planned.live == "old"
    assert planned.activation == "restart"
    assert planned.clients is not None and len(planned.clients.sessions) == 1
    assert [f.name for f in planned.clients.open_files] == ["working-on.txt"]
    assert "1 session(s) from 1 machine(s)" in planned.message

    refused = apply_config(ssh, ApplyRequest(path, original, candidate), journal=journal)
    assert refused.status == REFUSED and refused.live == "old"
    assert "bind interfaces only" in refused.message and "1 session(s)" in refused.message
    # The three agree: the report, the history (nothing recorded) and the server.
    assert fresh_smbd.config.read_bytes() == original
    assert AppliedVersions().for_server(ssh.label, path) == []
    assert held.still_works()
    assert not [p for p in fresh_smbd.config.parent.iterdir() if p.name.endswith(".new")]


def test_cli_dry_run_and_allow_restart(fresh_smbd: SmbServer, held: HeldSession, tmp_path: Path) -> None:
    path = str(fresh_smbd.config)
    original = fresh_smbd.config.read_bytes()
    new_port = free_port()
    candidate = tmp_path / "new.conf"
    candidate.write_bytes(
        original.replace(f"smb ports = {fresh_smbd.port}".encode(), f"smb ports = {new_port}".encode())
    )
    common = ["conf", "apply", "--file", str(candidate), "--remote-path", path, "--json"]

    dry = sambatune_cli(*common, "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    plan = json.loads(dry.stdout)
    assert plan["status"] == "planned" and plan["activation"] == "restart"
    assert plan["changes"] == [
        {
            "section": "global",
            "parameter": "smb ports",
            "old": str(fresh_smbd.port),
            "new": str(new_port),
            "activation": "restart",
            "why": plan["changes"][0]["why"],
        }
    ]
    assert len(plan["clients"]["sessions"]) == 1 and plan["diff"]
    assert plan["plan"][-2:] == ["Restart smbd", "Check smbd answers and lists the shares"]
    assert fresh_smbd.config.read_bytes() == original

    refused = sambatune_cli(*common, "--yes")
    assert refused.returncode == 1
    assert json.loads(refused.stdout)["status"] == "refused"
    assert fresh_smbd.config.read_bytes() == original and held.still_works()

    applied = sambatune_cli(*common, "--yes", "--allow-restart")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert json.loads(applied.stdout)["activation"] == "restart"
    fresh_smbd.port = new_port
    assert "bench" in fresh_smbd.list_shares()


def test_connected_clients_from_the_text_of_older_samba(fresh_smbd: SmbServer, held: HeldSession) -> None:
    """Samba before 4.16 has no --json: the plain tables give the same answer."""
    from sambatune.remote.local import LocalTransport

    as_json = connected_clients(LocalTransport(), str(fresh_smbd.config))
    base = ["smbstatus", f"--configfile={fresh_smbd.config}"]
    text_sessions = subprocess.run([*base, "-b"], capture_output=True, text=True).stdout
    text_locks = subprocess.run([*base, "-L"], capture_output=True, text=True).stdout
    assert parse_sessions_text(text_sessions) == as_json.sessions
    assert [(f.pid, f.share_path, f.name) for f in parse_locks_text(text_locks)] == [
        (f.pid, f.share_path, f.name) for f in as_json.open_files
    ]
    assert as_json.open_files[0].share_path == str(fresh_smbd.share_path)


#: What Samba before 4.16 answers to ``smbstatus --json`` (popt's message for an option it
#: does not know, as smbstatus prints it, then its usage without -j), with exit status 1.
OLDER_SMBSTATUS_ANSWER = (
    "\nInvalid option --json: unknown option\n\n"
    "Usage: [-?pvLSNbPRBnfV] [-?|--help] [--usage] [-p|--processes]\n"
    "        [-v|--verbose] [-L|--locks] [-S|--shares] [-N|--notify]\n"
    "        [-u|--user=STRING] [-b|--brief] [-P|--profile] [-R|--profile-rates]\n"
    "        [-B|--byterange] [-n|--numeric] [-f|--fast] [--resolve-uids]\n"
)


def _smbstatus_json(argv: tuple[str, ...]) -> bool:
    return "--json" in argv and any(a.endswith("smbstatus") for a in argv)


def _as_older_samba(_argv: tuple[str, ...]) -> tuple[str, ...]:
    return ("sh", "-c", 'printf %s "$1" >&2; exit 1', "smbstatus", OLDER_SMBSTATUS_ANSWER)


def test_a_samba_without_json_shows_the_same_clients_end_to_end(
    fresh_smbd: SmbServer, held: HeldSession, ssh: Transport
) -> None:
    """Only ``smbstatus --json`` fails, as Samba 4.15 and older fail it; every other
    command, smbstatus -b and -L included, runs on the real server over SSH."""
    path = str(fresh_smbd.config)
    as_json = connected_clients(ssh, path)
    assert as_json.source == "smbstatus --json"
    assert len(as_json.sessions) == 1 and [f.name for f in as_json.open_files] == ["working-on.txt"]

    older = Rule(_smbstatus_json, _as_older_samba, times=1000)
    old_samba = FaultyTransport(ssh, [older])
    as_text = connected_clients(old_samba, path)
    assert older.fired == 1
    assert as_text.source == "smbstatus -b / -L"
    assert as_text.sessions == as_json.sessions
    assert as_text.machines == as_json.machines == ["127.0.0.1"]
    assert as_text.open_files == as_json.open_files

    # What the admin is told before a restart, and what the client audit lists.
    original = fresh_smbd.config.read_bytes()
    candidate = original.replace(b"bind interfaces only = yes", b"bind interfaces only = no")
    planned = apply_config(old_samba, ApplyRequest(path, original, candidate, dry_run=True))
    assert planned.status == PLANNED and planned.activation == "restart"
    assert planned.clients is not None and planned.clients.source == "smbstatus -b / -L"
    assert planned.clients.sessions == as_json.sessions
    assert planned.clients.open_files == as_json.open_files
    assert "1 session(s) from 1 machine(s) (127.0.0.1), 1 open file(s)" in planned.message
    audited = run_survey(old_samba, config_path=path).client_audit
    assert audited is not None and audited.source == "smbstatus -b / -L"
    reference = run_survey(ssh, config_path=path).client_audit
    assert reference is not None and reference.source == "smbstatus --json"
    assert audited.sessions == reference.sessions and len(audited.sessions) == 1
    assert older.fired == 3
    assert fresh_smbd.config.read_bytes() == original and held.still_works()


def test_an_smbd_started_without_a_config_file_serves_the_one_smbd_b_names() -> None:
    """smbd started without -s reads the file compiled in (smbd -b's CONFIGFILE). Starting
    such an smbd here would take over the system's own config and port 445, so this reads
    the real smbd -b and hands a process without -s to the agent's and the app's logic."""
    import sys

    from sambatune.remote.local import LocalTransport
    from sambatune.remote.samba_ops import SmbdProcesses, default_config_path

    build = subprocess.run(["smbd", "-b"], capture_output=True, text=True, check=True).stdout
    configfile = next(
        line.split(":", 1)[1].strip() for line in build.splitlines() if line.strip().startswith("CONFIGFILE:")
    )
    transport = LocalTransport()
    assert default_config_path(transport) == configfile
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ssh_agents"))
    import sysinfo

    without_s = {
        "pid": 4242,
        "ppid": 1,
        "uid": 0,
        "argv": ["/usr/sbin/smbd", "--foreground", "--no-process-group"],
        "exe": "/usr/sbin/smbd",
        "config": None,
        "trusted": True,
        "verified": True,
        "untrusted_reason": None,
    }
    [instance], untrusted = sysinfo.smbd_instances([without_s], configfile)
    assert instance["config"] == configfile and untrusted == []
    seen = SmbdProcesses(instances=[{**instance, "config": None}], untrusted=[], trusted_binary=None)
    found = find_instance(transport, configfile, seen=seen)
    assert found is not None and found.pid == 4242 and found.config == configfile
    assert find_instance(transport, "/srv/other/smb.conf", seen=seen) is None


def test_a_profile_saved_in_the_app_takes_the_cli_to_its_chosen_smbd(
    fresh_smbd: SmbServer, second_smbd: SmbServer, ssh_options: ConnectionOptions
) -> None:
    """The app remembers which smbd a server means (the Overview's choice, saved in its
    profile); `--profile NAME` takes a terminal to the same one while two run, without
    naming the file again. A name that is not saved is one clear error."""
    from sambatune.profiles import ProfileStore, ServerProfile

    ProfileStore().save(
        [
            ServerProfile(
                name="nas",
                host=str(ssh_options.host),
                port=ssh_options.port,
                user=str(ssh_options.user),
                identity_file=str(ssh_options.identity_file),
                config_path=str(second_smbd.config),
            )
        ]
    )
    known = ["--known-hosts", str(ssh_options.known_hosts)]
    result = sambatune_cli("survey", "--profile", "nas", *known, "--json")
    assert result.returncode == 0, result.stderr
    samba = json.loads(result.stdout)["samba"]
    assert samba["config_path"] == str(second_smbd.config)
    [managed] = [i for i in samba["instances"] if i.get("managed")]
    assert managed["config"] == str(second_smbd.config)
    assert second_smbd.port in [p["port"] for p in managed["listening"]]
    # A flag on the command line wins over the profile.
    result = sambatune_cli(
        "survey", "--profile", "nas", *known, "--config-path", str(fresh_smbd.config), "--json"
    )
    assert json.loads(result.stdout)["samba"]["config_path"] == str(fresh_smbd.config)
    missing = sambatune_cli("survey", "--profile", "nope", *known)
    assert missing.returncode == 1
    assert "No saved server is called 'nope'" in missing.stderr and "nas" in missing.stderr


@pytest.mark.needs_root
def test_root_s_smbd_from_a_path_others_can_write_is_named_not_hidden(
    tmp_path: Path, ssh_options: ConnectionOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It used to read as "smbd is not running", with no word on why (issue 27 item 8)."""
    import shutil
    import tempfile

    import testbed.smbd
    from sambatune.cli.survey import format_survey

    folder = Path(tempfile.mkdtemp(prefix="sambatune-unsafe-smbd-", dir="/tmp"))  # /tmp: anyone writes
    try:
        binary = folder / "smbd"
        shutil.copy2(testbed.smbd.SMBD, binary)
        monkeypatch.setattr(testbed.smbd, "SMBD", str(binary))
        server = SmbServer(tmp_path, "unsafe-smbd").start()
        try:
            target = open_target(ssh_options, NoPrompts())
            try:
                survey = run_survey(target, config_path=str(server.config), audit_clients=False)
                data = survey.to_json()
                samba = data["samba"]
                assert not samba["running"]
                assert server.process is not None and samba["untrusted_serving"]
                [process] = [
                    p for p in samba["untrusted_processes"] if p["pid"] in samba["untrusted_serving"]
                ]
                assert process["kind"] == "unsafe-binary" and process["config"] == str(server.config)
                problems = [n["message"] for n in data["notes"] if n["subject"] == "smbd"]
                assert any("does not trust" in m and "/tmp can be written" in m for m in problems), problems
                assert not any("is not running" in m for m in problems)
                text = format_survey(data)
                assert "served by an UNTRUSTED smbd" in text and "(UNTRUSTED, uid 0)" in text

                original = server.config.read_bytes()
                candidate = original + b"# a change\n"
                pid = process["pid"]
                outcome = apply_config(target, ApplyRequest(str(server.config), original, candidate))
            finally:
                target.close()
            assert outcome.status == APPLIED, outcome.message
            assert "not trusted" in outcome.message and any("does not trust" in w for w in outcome.warnings)
            assert server.config.read_bytes() == candidate
            assert Path(f"/proc/{pid}").exists()  # neither restarted nor stopped
        finally:
            server.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
