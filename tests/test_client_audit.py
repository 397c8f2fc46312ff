"""Who is connected and how, read from the server's side: real smbd, real smbclient
sessions held open (signed, encrypted, unsigned, an SMB 2.1 guest), real smbstatus,
ss and testparm; then the survey's JSON, the advisor's client rules and the Overview."""

from __future__ import annotations

import getpass
import json
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from cli_process import sambatune_cli
from sambatune.advisor.rules import rule_by_id
from sambatune.remote.client_audit import ClientAudit, advertised_interfaces, audit_clients
from sambatune.remote.local import LocalTransport
from sambatune.remote.smb_sessions import SmbSession, connected_clients, parse_sessions_text
from sambatune.remote.survey import Survey
from test_advisor_rules import make_inputs
from testbed.smbd import SmbServer

PASSWORD = "Audit-pass-1"


@dataclass
class HeldClients:
    """smbclient processes that each keep one session open, waiting for a command."""

    processes: dict[str, subprocess.Popen[str]]

    def close(self) -> None:
        for process in self.processes.values():
            if process.poll() is None and process.stdin is not None:
                process.stdin.write("quit\n")
                process.stdin.close()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _hold(server: SmbServer, *options: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        ["smbclient", f"//127.0.0.1/{server.share}", "-p", str(server.port), *options],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )


@pytest.fixture
def held(fresh_smbd: SmbServer) -> Iterator[HeldClients]:
    if os.geteuid() != 0:
        pytest.skip("needs root: smbstatus sees other processes' sessions, and smbd runs as root")
    # Signing needs a session key, so a password: an account of this smbd's own passdb
    # (a tdb in its temporary directory) for the Unix user running the tests.
    user = getpass.getuser()
    subprocess.run(
        ["smbpasswd", "-c", str(fresh_smbd.config), "-a", "-s", user],
        input=f"{PASSWORD}\n{PASSWORD}\n",
        text=True,
        check=True,
        capture_output=True,
    )
    login = ("-U", f"{user}%{PASSWORD}")
    clients = HeldClients(
        {
            "signed": _hold(fresh_smbd, *login, "-m", "SMB3", "--client-protection=sign"),
            "encrypted": _hold(fresh_smbd, *login, "-m", "SMB3", "--client-protection=encrypt"),
            "unsigned": _hold(fresh_smbd, *login, "-m", "SMB3", "--client-protection=off"),
            "guest-smb21": _hold(fresh_smbd, "-N", "-m", "SMB2", "--client-protection=off"),
        }
    )
    deadline = time.monotonic() + 30
    while len(connected_clients(LocalTransport(), str(fresh_smbd.config)).sessions) < 4:
        assert time.monotonic() < deadline, "the four sessions did not appear"
        time.sleep(0.2)
    yield clients
    clients.close()


def _by_kind(sessions: list[SmbSession], held: HeldClients) -> dict[str, SmbSession]:
    """Each held client's session, found by its process id on the server: the smbd child
    that serves it holds the TCP connection whose peer port is the client's."""
    found = {}
    for name, process in held.processes.items():
        ports = subprocess.run(
            ["ss", "-Htnp", "state", "established"], capture_output=True, text=True, check=True
        ).stdout
        mine = [line.split()[2] for line in ports.splitlines() if f"pid={process.pid}," in line]
        assert mine, f"{name}: no connection of smbclient {process.pid}"
        found[name] = next(s for s in sessions if s.address.endswith(":" + mine[0].rsplit(":", 1)[1]))
    return found


def test_the_audit_sees_signing_encryption_and_channels_from_the_server(
    fresh_smbd: SmbServer, held: HeldClients
) -> None:
    audit = audit_clients(LocalTransport(), str(fresh_smbd.config), [], sudo=True)
    assert audit.source == "smbstatus --json" and audit.complete and audit.notes == []
    assert audit.multichannel is True  # Samba 4.15 and later: on by default
    assert audit.server_signing == "default"
    sessions = _by_kind(audit.sessions, held)

    signed = sessions["signed"]
    assert signed.dialect == "SMB3_11"
    assert (signed.signing, signed.signing_degree) == ("AES-128-GMAC", "full")
    assert signed.encryption == "" and signed.flags == []

    encrypted = sessions["encrypted"]
    assert encrypted.encryption == "AES-128-GCM" and encrypted.encryption_degree in ("partial", "full")
    assert encrypted.flags == []

    assert sessions["unsigned"].flags == ["unsigned"]
    guest = sessions["guest-smb21"]
    assert guest.dialect == "SMB2_10" and guest.flags == ["SMB 2.x", "unsigned"]
    # smbclient opens one connection per session: one channel each, counted by ss.
    assert {s.channels for s in audit.sessions} == {1}


def test_the_text_of_older_samba_gives_the_same_sessions_but_no_channels(
    fresh_smbd: SmbServer, held: HeldClients
) -> None:
    """Samba before 4.16 has no --json: `smbstatus -b` has dialect, encryption and
    signing too (4.12 and later), and the channel count neither way."""
    as_json = connected_clients(LocalTransport(), str(fresh_smbd.config))
    text = subprocess.run(
        ["smbstatus", f"--configfile={fresh_smbd.config}", "-b"], capture_output=True, text=True, check=True
    ).stdout
    by_pid = {s.pid: s for s in parse_sessions_text(text)}
    assert by_pid == {s.pid: s for s in as_json.sessions}
    assert {s.encryption for s in by_pid.values()} == {"", "AES-128-GCM"}


def test_survey_json_has_the_audit(fresh_smbd: SmbServer, held: HeldClients) -> None:
    done = sambatune_cli("survey", "--config-path", str(fresh_smbd.config), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    audit = json.loads(done.stdout)["client_audit"]
    assert audit["multichannel"] is True and audit["source"] == "smbstatus --json"
    assert len(audit["sessions"]) == 4
    flagged = sorted(tuple(s["flags"]) for s in audit["sessions"])
    assert flagged == [(), (), ("SMB 2.x", "unsigned"), ("unsigned",)]
    assert all(s["channels"] == 1 for s in audit["sessions"])

    text = sambatune_cli("survey", "--config-path", str(fresh_smbd.config))
    assert text.returncode == 0, text.stderr
    assert "  Clients  multichannel on" in text.stdout
    assert "SMB2_10, signing none, encryption none, 1 channel(s)  [SMB 2.x, unsigned]" in text.stdout


def test_the_advisor_judges_the_real_sessions(fresh_smbd: SmbServer, held: HeldClients) -> None:
    audit = audit_clients(LocalTransport(), str(fresh_smbd.config), [], sudo=True)
    inputs = make_inputs(clients=audit)
    unsigned = rule_by_id("clients-unsigned")(inputs)
    assert len(unsigned) == 1 and unsigned[0].title.startswith("1 signed-in session(s)")
    assert unsigned[0].change is None  # never "turn signing off" nor "on" blindly: measure
    assert len(rule_by_id("clients-smb2")(inputs)) == 1
    assert rule_by_id("clients-smb1")(inputs) == []
    # Multichannel is on but the test bed offers only loopback: nothing to spread over.
    assert rule_by_id("clients-single-channel")(inputs) == []


def test_advise_reports_the_connected_clients(fresh_smbd: SmbServer, held: HeldClients) -> None:
    """End to end: `sambatune advise` surveys, audits and judges in one run."""
    done = sambatune_cli("advise", "--config-path", str(fresh_smbd.config), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    findings = {f["id"]: f for f in json.loads(done.stdout)["findings"]}
    assert {"clients-smb2", "clients-unsigned"} <= set(findings)
    assert "clients-smb1" not in findings and "clients-single-channel" not in findings
    unsigned = findings["clients-unsigned"]
    assert unsigned["change"] is None and unsigned["sources"]
    assert any("partial" in e["text"] or "signing none" in e["text"] for e in unsigned["evidence"])


def test_the_overview_shows_who_is_connected(qtbot: QtBot, fresh_smbd: SmbServer, held: HeldClients) -> None:
    from PySide6.QtWidgets import QLabel, QTableWidget

    from sambatune.ui.overview_page import OverviewPage

    audit = audit_clients(LocalTransport(), str(fresh_smbd.config), [], sudo=True)
    survey = Survey("test", {"client_audit": audit.to_json()})
    page = OverviewPage()
    qtbot.addWidget(page)
    page.show_survey(survey)
    table = page.body.findChild(QTableWidget, "clientTable")
    assert table is not None and table.rowCount() == 4
    headers = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]  # type: ignore[union-attr]
    assert headers == ["Client", "User", "Dialect", "Signing", "Encryption", "Channels", "Flagged"]
    rows = [[table.item(r, c).text() for c in range(table.columnCount())] for r in range(4)]  # type: ignore[union-attr]
    assert sorted(r[6] for r in rows) == ["SMB 2.x, unsigned", "unsigned", "—", "—"]
    assert any(r[4] in ("AES-128-GCM (partial)", "AES-128-GCM") for r in rows)
    unsigned = next(r for r in rows if r[6] == "unsigned")
    assert unsigned[3] == "AES-128-GMAC (setup only)"
    summary = page.body.findChild(QLabel, "clientSummary")
    assert summary is not None and "Multichannel on" in summary.text()


def test_advertised_interfaces_follow_the_interfaces_line() -> None:
    nics: list[dict[str, Any]] = [
        {"name": "eth0", "state": "up", "speed_mbit": 10000, "addresses": ["10.0.0.5/24"]},
        {"name": "eth1", "state": "up", "speed_mbit": 1000, "addresses": ["10.0.1.5/24"]},
        {"name": "lo", "state": "unknown", "loopback": True, "addresses": ["127.0.0.1/8"]},
        {"name": "eth2", "state": "down", "addresses": []},
    ]
    assert [i.name for i in advertised_interfaces("", nics)] == ["eth0", "eth1"]
    named = advertised_interfaces('10.0.1.5 "eth0;speed=25000000000,capability=RSS"', nics)
    assert [(i.name, i.speed_mbit, i.capability) for i in named] == [
        ("eth1", 1000, ""),
        ("eth0", 25000, "RSS"),
    ]
    assert ClientAudit(interfaces=named[1:]).several_interfaces


def test_a_benchmarks_survey_skips_the_audit_and_the_overviews_does_not(fresh_smbd: SmbServer) -> None:
    # The audit is four more commands on the server; a benchmark's context does not use it.
    from sambatune.bench.context import collect_context
    from sambatune.remote.survey import run_survey

    context = collect_context(LocalTransport(), config_path=str(fresh_smbd.config))
    assert context.survey is not None and context.survey.client_audit is None
    assert context.smb_conf == fresh_smbd.config.read_bytes()
    survey = run_survey(LocalTransport(), config_path=str(fresh_smbd.config))
    assert survey.client_audit is not None
