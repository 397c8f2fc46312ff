"""The cost of signing and encryption, measured: plain, signed and encrypted sessions of
SambaTune's client on one real smbd, each named by what the server's smbstatus saw."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from cli_process import sambatune_cli
from sambatune.bench.runner import Method
from sambatune.bench.smb_client import SmbClientBenchmark, SmbClientOptions
from sambatune.bench.smb_security import cost_notes, server_sessions, session_on_port
from sambatune.bench.smb_wire import PROBE_PREFIX, SmbLogin
from sambatune.errors import InvalidInput
from sambatune.remote.connection import ConnectionOptions
from sambatune.remote.local import LocalTransport
from sambatune.remote.smb_sessions import SmbSession
from testbed.smbd import SmbServer

PASSWORD = "Security-pass-1"
MODES = ("plain", "signed", "encrypted")

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="adds root to the test smbd's passdb")


@pytest.fixture
def smb_root(fresh_smbd: SmbServer) -> SmbServer:
    """root as a Samba user of this test's own smbd (its own passdb)."""
    return fresh_smbd.add_user("root", PASSWORD)


def _options(server: SmbServer, **changes: Any) -> SmbClientOptions:
    values: dict[str, Any] = {
        "server": "127.0.0.1",
        "share": server.share,
        "port": server.port,
        "login": SmbLogin(user="root", password=PASSWORD),
        "size": 4 << 20,
        "block_size": 1 << 20,
        "security": MODES,
    }
    values.update(changes)
    return SmbClientOptions(**values)


def _digits(text: object) -> str:
    return "".join(c for c in str(text) if c.isdigit())


def _check_negotiated(security: dict[str, dict[str, object]]) -> None:
    """Each session got what it asked for, as the server saw it, and the client agrees."""
    plain, signed, encrypted = (security[m]["server"] for m in MODES)
    assert isinstance(plain, dict) and isinstance(signed, dict) and isinstance(encrypted, dict)
    # The test smbd leaves signing to the client: a plain session signs its logon only.
    assert plain["signing_degree"] in ("none", "partial") and not plain["encryption"]
    assert signed["signing"] and signed["signing_degree"] == "full" and not signed["encryption"]
    assert encrypted["encryption"] and encrypted["encryption_degree"] in ("full", "partial")
    for mode, entry in security.items():
        client = entry["client"]
        server = entry["server"]
        assert isinstance(client, dict) and isinstance(server, dict)
        # The server says SMB3_11 where the client says 3.1.1.
        assert _digits(server["dialect"]) == _digits(client["dialect"]), mode
    assert security["signed"]["client"]["signing_algorithm"] == signed["signing"]  # type: ignore[index]
    assert security["encrypted"]["client"]["cipher"] == encrypted["encryption"]  # type: ignore[index]


@needs_root
def test_plain_signed_encrypted_each_named_from_the_server(smb_root: SmbServer) -> None:
    result = SmbClientBenchmark(
        None,
        Method(runs=2, warmup=0),
        _options(smb_root),
        server_sessions=server_sessions(LocalTransport(), str(smb_root.config), sudo=False),
    ).run()
    series = result.series
    assert set(series) == {f"{op}-{mode}" for op in ("write", "read") for mode in MODES}
    assert all(len(s.counted) == 2 and all(r.bytes == 4 << 20 for r in s.counted) for s in series.values())
    _check_negotiated(result.extra["security"])
    costs = result.extra["security_cost"]
    assert {(c["operation"], c["mode"]) for c in costs} == {
        (op, mode) for op in ("write", "read") for mode in ("signed", "encrypted")
    }
    assert all(c["baseline"] == "plain" and c["text"] in result.notes for c in costs)
    assert any("as the server's smbstatus reports it" in n for n in result.notes)
    # Every session removed its test file.
    assert not [p for p in smb_root.share_path.iterdir() if p.name.startswith(PROBE_PREFIX)]


def _compare_over_ssh(server: SmbServer, ssh_options: ConnectionOptions, security: str) -> list[str]:
    """bench smb-client comparing ``security`` kinds of session, reading the server over SSH."""
    return [
        "bench",
        "smb-client",
        "--server",
        "127.0.0.1",
        "--port",
        str(server.port),
        "--share",
        server.share,
        "--user",
        "root",
        "--password-stdin",
        "--size",
        "2MiB",
        "--runs",
        "2",
        "--warmup",
        "0",
        "--security",
        security,
        "--ssh",
        f"{ssh_options.user}@{ssh_options.host}:{ssh_options.port}",
        "--ssh-identity",
        str(ssh_options.identity_file),
        "--ssh-known-hosts",
        str(ssh_options.known_hosts),
    ]


@needs_root
def test_cli_security_comparison_reads_the_server_over_ssh(
    smb_root: SmbServer, ssh_options: ConnectionOptions
) -> None:
    done = sambatune_cli(
        *_compare_over_ssh(smb_root, ssh_options, "plain,signed,encrypted"),
        "--smb-conf",
        str(smb_root.config),
        "--json",
        stdin=PASSWORD + "\n",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["parameters"]["security"] == list(MODES)
    _check_negotiated(result["security"])
    assert len(result["security_cost"]) == 4
    assert PASSWORD not in done.stdout + done.stderr


@needs_root
def test_without_the_server_the_client_side_is_named_and_says_so(smb_root: SmbServer) -> None:
    result = SmbClientBenchmark(
        None, Method(runs=2, warmup=0), _options(smb_root, security=("signed",), operations=("read",))
    ).run()
    entry = result.extra["security"]["signed"]
    assert entry["server"] is None and "no connection to the server" in entry["server_not_read"]
    assert entry["client"]["signing"] is True and entry["client"]["signing_algorithm"]
    assert any("as this computer negotiated it" in n for n in result.notes)


def test_nonsense_is_refused_clearly(smbd: SmbServer) -> None:
    with pytest.raises(InvalidInput, match="need a user"):
        _options(smbd, login=SmbLogin(), security=("plain", "signed"))
    with pytest.raises(InvalidInput, match="once"):
        _options(smbd, security=("plain", "plain"))
    with pytest.raises(InvalidInput, match="once"):
        _options(smbd, security=("sealed",))
    with pytest.raises(InvalidInput, match="mounted path"):
        SmbClientOptions(path="/tmp", security=("plain",))
    done = sambatune_cli(
        "bench", "smb-client", "--server", "127.0.0.1", "--share", "x", "--security", "signed", "--json"
    )
    assert done.returncode != 0 and "need a user" in done.stderr


def test_sessions_are_matched_by_the_clients_port_only_when_unique() -> None:
    one = SmbSession(pid=1, user="a", machine="m", address="ipv4:192.0.2.7:50986")
    other = SmbSession(pid=2, user="b", machine="m", address="ipv6:[2001:db8::1]:40000")
    assert session_on_port([one, other], 50986) is one
    assert session_on_port([one, other], 40000) is other
    assert session_on_port([one, other], 986) is None
    assert session_on_port([one, one], 50986) is None
    assert session_on_port([one], None) is None


def test_cost_notes_say_slower_only_when_significant() -> None:
    rows = cost_notes(
        {"plain": [100e6, 101e6, 99e6], "signed": [80e6, 81e6, 79e6], "encrypted": [99e6, 102e6, 100e6]},
        "read",
        "plain",
    )
    signed, encrypted = rows
    assert signed["significant"] and "20% slower than plain" in signed["text"]
    assert not encrypted["significant"] and "no significant difference" in encrypted["text"]


@needs_root
def test_with_several_smbd_and_none_named_the_comparison_refuses_naming_each(
    smb_root: SmbServer, second_smbd: SmbServer, ssh_options: ConnectionOptions
) -> None:
    """Reading the sessions of 'the' smbd over SSH needs to know which one serves the share:
    with two running and no --smb-conf it refuses, names both files, and measures nothing."""
    from sambatune.bench.results_db import ResultsDatabase

    before = len(ResultsDatabase().sessions())
    refused = sambatune_cli(*_compare_over_ssh(smb_root, ssh_options, "plain,signed"), stdin=PASSWORD + "\n")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "Several smbd run" in refused.stderr and "--smb-conf" in refused.stderr
    assert str(smb_root.config) in refused.stderr and str(second_smbd.config) in refused.stderr
    assert len(ResultsDatabase().sessions()) == before
    assert not [p for p in smb_root.share_path.iterdir() if p.name.startswith(PROBE_PREFIX)]
