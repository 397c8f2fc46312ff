"""Answers a hostile or broken server gives, read with a time and size limit and turned
into one clear line (issue 27 item 4): smbstatus that prints a gigabyte or JSON of the
wrong shape, an smb.conf that includes a FIFO. The programs and files are real; only
smbstatus' answer is tampered with on the wire.
"""

from __future__ import annotations

import json
import os
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from faults import FaultyTransport, Rule
from sambatune.advisor.gather import gather_inputs
from sambatune.errors import CommandFailed
from sambatune.remote.client_audit import audit_clients
from sambatune.remote.connection import ConnectionOptions, open_target
from sambatune.remote.prompts import NoPrompts
from sambatune.remote.smb_sessions import UnreadableAnswer, parse_json
from testbed.processes import processes_mentioning
from testbed.smbd import SmbServer

#: smbstatus --json as Samba prints it, and shapes no Samba prints.
SAMBA_SHAPE = {"sessions": {"1": {"server_id": {"pid": "42"}, "username": "u", "remote_machine": "pc"}}}
MALFORMED = {
    "a-list": [1, 2],
    "sessions-a-list": {"sessions": [{"username": "u"}]},
    "session-a-string": {"sessions": {"1": "u"}},
    "server-id-not-an-object": {"sessions": {"1": {"server_id": "42", "username": ["u"]}}},
    "pid-overflows": {"sessions": {"1": {"server_id": {"pid": 1e999}, "num_channels": float("inf")}}},
    "opens-wrong": {"open_files": {"f": {"opens": ["x"]}, "g": "y", "h": {"opens": {"o": "z"}}}},
    "deep": "[" * 100_000,
}


def test_samba_s_own_shape_reads() -> None:
    clients = parse_json(json.dumps(SAMBA_SHAPE))
    assert [(s.pid, s.user, s.machine) for s in clients.sessions] == [(42, "u", "pc")]


@pytest.mark.parametrize("shape", list(MALFORMED))
def test_a_malformed_answer_is_skipped_or_refused_never_a_crash(shape: str) -> None:
    value = MALFORMED[shape]
    text = value if isinstance(value, str) else json.dumps(value)
    try:
        clients = parse_json(text)
    except UnreadableAnswer:
        return
    for session in clients.sessions:
        assert isinstance(session.pid, int) and isinstance(session.user, str)


@pytest.fixture
def faulty(ssh_options: ConnectionOptions) -> Iterator[FaultyTransport]:
    transport = FaultyTransport(open_target(ssh_options, NoPrompts()))
    yield transport
    transport.close()


def smbstatus_prints(script: str) -> Rule:
    return Rule(lambda argv: "smbstatus" in argv, lambda _argv: ("sh", "-c", script), times=3)


def test_a_gigabyte_from_smbstatus_is_cut_off_with_one_note(
    fresh_smbd: SmbServer, faulty: FaultyTransport
) -> None:
    marker = f"sambatune-flood-{os.getpid()}"
    faulty.rules.append(smbstatus_prints(f"head -c 1073741824 /dev/zero # {marker}"))
    tracemalloc.start()
    started = time.monotonic()
    try:
        audit = audit_clients(faulty, str(fresh_smbd.config), [], sudo=False)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.monotonic() - started < 30
    assert peak < 200 * 2**20, f"{peak / 2**20:.0f} MiB"  # 2.1 GB before
    assert any("printed more than 32 MiB" in note for note in audit.notes), audit.notes
    time.sleep(1)
    assert not processes_mentioning(marker)


@pytest.mark.parametrize("shape", [s for s in MALFORMED if s != "deep"])
def test_a_survey_s_audit_of_a_malformed_smbstatus_says_so(
    fresh_smbd: SmbServer, faulty: FaultyTransport, shape: str
) -> None:
    answer = json.dumps(MALFORMED[shape]).replace("'", "'\\''")
    faulty.rules.append(smbstatus_prints(f"printf '%s' '{answer}'"))
    audit = audit_clients(faulty, str(fresh_smbd.config), [], sudo=False)
    assert all("\n" not in note for note in audit.notes)
    if shape == "sessions-a-list":
        assert any('printed "sessions" as a JSON list' in n for n in audit.notes), audit.notes


def test_advise_refuses_at_once_an_smb_conf_that_includes_a_fifo(
    fresh_smbd: SmbServer, ssh_options: ConnectionOptions, tmp_path: Path
) -> None:
    """testparm would block opening it: advise waited 153 s and left two testparm behind."""
    fifo = tmp_path / "pipe.conf"
    os.mkfifo(fifo)
    config = fresh_smbd.config
    config.write_text(config.read_text().replace("[global]\n", f"[global]\n  include = {fifo}\n", 1))
    target = open_target(ssh_options, NoPrompts())
    started = time.monotonic()
    try:
        with pytest.raises(CommandFailed, match="which is a FIFO, not a file") as caught:
            gather_inputs(target, config_path=str(config))
    finally:
        target.close()
    assert time.monotonic() - started < 30
    assert "\n" not in caught.value.message
    time.sleep(1)
    assert not [p for p in processes_mentioning(str(config)) if "testparm" in p[1]]
