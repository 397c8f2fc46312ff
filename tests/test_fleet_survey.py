"""``fleet survey`` against a fleet of real servers on this machine (tests/testbed/fleet.py):
five sshd on 127.0.0.2-6, five smbd, one host taken down, keys unknown or changed."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from catalog_homes import copy_into_home, sambatune_home
from cli_process import sambatune_cli
from sambatune.cancellation import CancelToken
from sambatune.fleet.ansible_inventory import load_inventory
from sambatune.fleet.inventory import Fleet, fleet_by_hand
from sambatune.fleet.survey import FleetPrompts, HostStatus, HostSurvey, survey_fleet
from testbed.fleet import FleetBed
from testbed.impostor import plant_fake_smbd


@pytest.fixture
def inventory(fleet_bed: FleetBed, tmp_path: Path) -> Path:
    return fleet_bed.write_inventory(tmp_path / "hosts.ini")


@pytest.fixture
def fleet_known_hosts(fleet_bed: FleetBed, tmp_path: Path) -> Path:
    return fleet_bed.write_known_hosts(tmp_path / "known_hosts")


@pytest.fixture(scope="module")
def built_catalogs(fleet_bed: FleetBed, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The parameter catalog of the bed's Samba, built once (8 s or more under load) for
    the tests that are not about its first build."""
    from sambatune.conf.catalog import cache_dir
    from sambatune.conf.catalog_build import live_catalog
    from sambatune.remote.connection import open_target

    with sambatune_home(tmp_path_factory.mktemp("catalog-home")) as home:
        known = fleet_bed.write_known_hosts(home / "known_hosts", names=["nas01"])
        options = load_inventory(fleet_bed.write_inventory(home / "hosts.ini")).host("nas01")
        transport = open_target(options.connection_options(known_hosts=known), FleetPrompts())
        try:
            live_catalog(transport)
        finally:
            transport.close()
        return sorted(Path(cache_dir()).glob("catalog-*.json"))


@pytest.fixture
def warm_catalogs(built_catalogs: list[Path], isolated_home: Path) -> None:
    copy_into_home(built_catalogs)


@pytest.fixture
def tarpits() -> Iterator[list[int]]:
    """Nine ports that accept TCP and never say a word: an SSH connect to them waits
    for a banner that never comes, like a host that hangs."""
    sockets = []
    for _ in range(9):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        sockets.append(listener)
    yield [s.getsockname()[1] for s in sockets]
    for listener in sockets:
        listener.close()


def test_parallel_survey_with_one_host_down(
    fleet_bed: FleetBed, inventory: Path, fleet_known_hosts: Path
) -> None:
    # No catalog on record: one host builds it from testparm while the other three wait
    # and then read it from the cache (fleet.survey._CatalogWarmUp).
    fleet = load_inventory(inventory)
    arrived: list[HostSurvey] = []
    fleet_bed.take_down("nas03")
    try:
        survey = survey_fleet(
            fleet, concurrency=5, timeout=60, known_hosts=fleet_known_hosts, on_result=arrived.append
        )
    finally:
        fleet_bed.bring_up("nas03")
    by_name = {r.host.name: r for r in survey.results}
    assert [r.host.name for r in survey.results] == list(fleet.names)  # fleet order
    assert len(arrived) == 5
    assert arrived[0].host.name == "nas03"  # refused at once: shown before the others finish
    down = by_name["nas03"]
    assert (down.status, down.reachable) == (HostStatus.UNREACHABLE, False)
    assert down.error is not None and "refused" in down.error.message
    assert not survey.all_reachable
    assert [r.host.name for r in survey.unreachable] == ["nas03"]
    for name in ("nas01", "nas02", "nas04", "nas05"):
        result = by_name[name]
        bed_host = fleet_bed.host(name)
        assert result.status == HostStatus.OK, (name, result.error, result.advice_error)
        assert result.samba_version and result.smbd_running
        assert result.config_path == str(bed_host.smbd.config)
        assert result.config_sha256 == hashlib.sha256(bed_host.smbd.config.read_bytes()).hexdigest()
        assert len(result.instances) >= 5  # the bed's smbd all run on this one machine
        managed = result.managed_instance
        assert managed is not None and managed["config"] == str(bed_host.smbd.config)
        assert bed_host.smbd.port in managed["ports"]
        assert any(nic["name"] == "lo" for nic in result.nics)
        assert result.advice_error is None, (name, result.advice_error.to_json())
        assert result.findings is not None and set(result.findings) == {
            "problem",
            "warning",
            "suggestion",
            "info",
        }
    data = json.loads(json.dumps(survey.to_json()))
    assert data["hosts"] == 5 and data["reachable"] == 4
    assert data["statuses"] == {"ok": 4, "unreachable": 1}


def test_unknown_host_key_is_refused_unless_accepted(
    fleet_bed: FleetBed, inventory: Path, tmp_path: Path, warm_catalogs: None
) -> None:
    fleet = load_inventory(inventory).select("nas01:nas02")
    known = fleet_bed.write_known_hosts(tmp_path / "known_hosts", names=["nas01"])
    before = known.read_text()
    prompts = FleetPrompts()
    survey = survey_fleet(fleet, known_hosts=known, prompts=prompts, timeout=60)
    stranger = survey.results[1]
    assert stranger.status == HostStatus.HOST_KEY_UNKNOWN and not stranger.reachable
    assert stranger.error is not None
    assert fleet_bed.host("nas02").sshd.host_key_fingerprint in stranger.error.message
    assert survey.results[0].status == HostStatus.OK
    assert known.read_text() == before  # refused means not remembered either
    assert [q.fingerprint for q in prompts.questions] == [fleet_bed.host("nas02").sshd.host_key_fingerprint]

    accepting = survey_fleet(
        fleet.select("nas02"), known_hosts=known, prompts=FleetPrompts(accept_new_host_key=True), timeout=60
    )
    assert accepting.results[0].status == HostStatus.OK
    assert "127.0.0.3" in known.read_text()


def test_a_changed_host_key_is_refused_even_when_new_keys_are_accepted(
    fleet_bed: FleetBed, inventory: Path, tmp_path: Path, warm_catalogs: None
) -> None:
    nas01, nas02 = fleet_bed.host("nas01"), fleet_bed.host("nas02")
    # nas01's address with nas02's key: what a reinstalled or impersonated nas01 looks like
    wrong = nas02.sshd.known_hosts_line.replace(
        f"[{nas02.address}]:{nas02.sshd.port}", f"[{nas01.address}]:{nas01.sshd.port}"
    )
    known = tmp_path / "known_hosts"
    known.write_text(wrong)
    fleet = load_inventory(inventory).select("nas01")
    survey = survey_fleet(
        fleet, known_hosts=known, prompts=FleetPrompts(accept_new_host_key=True), timeout=60
    )
    assert survey.results[0].status == HostStatus.HOST_KEY_CHANGED
    assert known.read_text() == wrong


def _hung_fleet(ports: list[int]) -> Fleet:
    return fleet_by_hand([f"root@127.0.0.1:{port}" for port in ports])


def test_cancel_stops_every_host_promptly(tarpits: list[int]) -> None:
    cancel = CancelToken()
    threading.Timer(0.5, cancel.cancel).start()
    began = time.monotonic()
    survey = survey_fleet(_hung_fleet(tarpits), concurrency=4, timeout=120, cancel=cancel)
    took = time.monotonic() - began
    assert took < 3, took
    assert survey.cancelled
    assert {r.status for r in survey.results} == {HostStatus.CANCELLED}
    assert len(survey.results) == 9


def test_cancel_during_real_surveys_closes_them(
    fleet_bed: FleetBed,
    inventory: Path,
    fleet_known_hosts: Path,
    warm_catalogs: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from sambatune.remote import survey as remote_survey

    cancel = CancelToken()
    cancelled_at: list[float] = []
    real_run_survey = remote_survey.run_survey

    def cancel_now(_event: Any) -> None:
        cancelled_at.append(time.monotonic())
        cancel.cancel()

    def run_survey(*args: Any, **kwargs: Any) -> Any:
        # The first word an agent sends cancels the fleet: its agent is running then,
        # whatever the machine's speed (a timer could fire before or after every host).
        return real_run_survey(*args, **kwargs, on_event=cancel_now)

    monkeypatch.setattr(remote_survey, "run_survey", run_survey)
    survey = survey_fleet(
        load_inventory(inventory), concurrency=5, timeout=120, cancel=cancel, known_hosts=fleet_known_hosts
    )
    took = time.monotonic() - cancelled_at[0]
    assert took < 2, took
    assert {r.status for r in survey.results} == {HostStatus.CANCELLED}


def test_a_host_that_never_answers_times_out_alone(tarpits: list[int]) -> None:
    began = time.monotonic()
    survey = survey_fleet(_hung_fleet(tarpits[:2]), timeout=1.0)
    took = time.monotonic() - began
    assert 0.9 < took < 4, took
    assert [r.status for r in survey.results] == [HostStatus.TIMED_OUT] * 2
    assert not survey.cancelled


def test_cli_fleet_survey_json(
    fleet_bed: FleetBed, inventory: Path, fleet_known_hosts: Path, warm_catalogs: None
) -> None:
    base = [
        "fleet",
        "survey",
        "--inventory",
        str(inventory),
        "--known-hosts",
        str(fleet_known_hosts),
        "--json",
    ]
    done = sambatune_cli(*base, "--limit", "nas01:nas04")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["all_reachable"] is True
    assert report["statuses"] == {"ok": 2}
    assert [r["name"] for r in report["results"]] == ["nas01", "nas04"]
    first = report["results"][0]
    assert first["status"] == "ok" and first["destination"].endswith(
        f"@127.0.0.2:{fleet_bed.host('nas01').sshd.port}"
    )
    assert (
        first["config_sha256"] == hashlib.sha256(fleet_bed.host("nas01").smbd.config.read_bytes()).hexdigest()
    )
    assert first["instances"]["managed"]["config"] == str(fleet_bed.host("nas01").smbd.config)
    assert set(first["findings"]) == {"problem", "warning", "suggestion", "info"}
    assert {"samba_version", "nics", "seconds", "error", "groups"} <= set(first)

    fleet_bed.take_down("nas05")
    try:
        partly = sambatune_cli(*base, "--limit", "nas05")
    finally:
        fleet_bed.bring_up("nas05")
    assert partly.returncode == 1
    report = json.loads(partly.stdout)
    assert report["results"][0]["status"] == "unreachable"
    assert report["results"][0]["error"]["code"] == "connection-failed"


def test_cli_fleet_survey_text_shows_each_host_then_a_summary(
    fleet_bed: FleetBed, inventory: Path, fleet_known_hosts: Path, warm_catalogs: None
) -> None:
    fleet_bed.take_down("nas02")
    try:
        done = sambatune_cli(
            "fleet",
            "survey",
            "-i",
            str(inventory),
            "--known-hosts",
            str(fleet_known_hosts),
            "-l",
            "nas01:nas02",
        )
    finally:
        fleet_bed.bring_up("nas02")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0].startswith("[1/2] nas02: unreachable")
    assert lines[1].startswith("[2/2] nas01: ok, Samba ")
    assert any(line.startswith("HOST") and "SMB.CONF SHA-256" in line for line in lines)
    assert "1 of 2 hosts reachable; 1 not: nas02 (unreachable)" in done.stdout


def test_cli_fleet_hosts_json(inventory: Path, fleet_bed: FleetBed) -> None:
    done = sambatune_cli(
        "fleet", "hosts", "--inventory", str(inventory), "--limit", "fileservers:!nas01", "--json"
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [h["name"] for h in report["hosts"]] == ["nas02", "nas03", "nas04", "nas05"]
    second = report["hosts"][0]
    assert second["address"] == "127.0.0.3" and second["samba_conf"] == str(
        fleet_bed.host("nas02").smbd.config
    )
    assert second["variables"]["ansible_port"] == fleet_bed.host("nas02").sshd.port
    unknown = sambatune_cli("fleet", "hosts", "--inventory", str(inventory), "--limit", "nas99", "--json")
    assert unknown.returncode == 1
    assert "'nas99'" in json.loads(unknown.stdout)["error"]["message"]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a process as another user")
def test_a_fake_smbd_planted_on_one_host_is_reported_and_never_run(
    fleet_bed: FleetBed,
    inventory: Path,
    fleet_known_hosts: Path,
    warm_catalogs: None,
    plain_user: object,
) -> None:
    """A user on nas02 starts a program named smbd that claims nas02's smb.conf. The
    fleet survey manages the real smbd there, names the impostor as untrusted on that
    host only, and never runs it (the trap file stays absent)."""
    target = fleet_bed.host("nas02").smbd
    impostor = plant_fake_smbd(plain_user.name, target.config, "fleet-fake")  # type: ignore[attr-defined]
    try:
        fleet = load_inventory(inventory)
        survey = survey_fleet(fleet, concurrency=5, timeout=90, known_hosts=fleet_known_hosts)
    finally:
        impostor.stop()
    by_name = {r.host.name: r for r in survey.results}
    nas02 = by_name["nas02"]
    assert nas02.status == HostStatus.OK, (nas02.error, nas02.advice_error)
    managed = nas02.managed_instance
    assert managed is not None and managed["pid"] != impostor.pid
    assert managed["config"] == str(target.config) and target.port in managed["ports"]
    assert impostor.pid not in [i["pid"] for i in nas02.instances]
    # Every host sees every process of this one machine; each names the impostor (and
    # whatever else untrusted this shared machine runs, e.g. an smbd under /var/tmp).
    for result in survey.results:
        [planted] = [u for u in result.untrusted if u["pid"] == impostor.pid]
        assert "not run by root" in planted["reason"], result.host.name
    notes = [n.message for n in nas02.survey.notes() if n.subject == "smbd"]
    assert any(f"pid {impostor.pid}" in text and "ignores it" in text for text in notes), notes
    data = json.loads(json.dumps(survey.to_json()))
    host_json = next(h for h in data["results"] if h["name"] == "nas02")
    assert host_json["instances"]["untrusted"][0]["pid"] == impostor.pid
    assert not impostor.ran, "the planted program ran"
    impostor.remove()


def test_a_host_that_resets_the_handshake_is_one_line_without_paramikos_log(tmp_path: Path) -> None:
    """A reset during the handshake (sshd's MaxStartups, fail2ban) printed paramiko's own
    'Socket exception: Connection reset by peer (104)' beside SambaTune's line, and the
    line blamed algorithms. The log file keeps paramiko's words; the terminal gets ours."""
    import struct

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)

    def reset_after_the_greeting() -> None:
        with contextlib.suppress(OSError):
            while True:
                peer, _ = listener.accept()
                peer.sendall(b"SSH-2.0-OpenSSH_9.2\r\n")
                peer.recv(100)
                time.sleep(0.1)  # paramiko sends its key exchange, then waits
                peer.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                peer.close()

    threading.Thread(target=reset_after_the_greeting, daemon=True).start()
    try:
        port = listener.getsockname()[1]
        result = sambatune_cli(
            "fleet", "survey", "--hosts", f"127.0.0.1:{port}", "--known-hosts", str(tmp_path / "kh")
        )
    finally:
        listener.close()
    assert result.returncode == 1
    assert "reset the connection during the SSH handshake" in result.stdout + result.stderr
    assert "Socket exception" not in result.stderr and "Traceback" not in result.stderr


def test_a_host_is_failed_for_silence_not_for_a_long_survey() -> None:
    """Twenty hosts on a busy machine took longer than 20 s in all, and the clock failed
    14 of 19 healthy ones: the time now runs from the host's last answer."""
    from sambatune.fleet.survey import _HostClock

    cancel = CancelToken()
    clock = _HostClock(0.6, cancel)
    try:
        began = time.monotonic()
        while time.monotonic() - began < 1.4:  # answering all along: longer than the limit
            clock.touch()
            time.sleep(0.02)
        assert not clock.expired and not cancel.cancelled
        silent = time.monotonic()
        assert cancel.wait(10)
        assert clock.expired and time.monotonic() - silent >= 0.55
        # Suspended (waiting for another host's catalog build), silence does not count.
        other = CancelToken()
        waiting = _HostClock(0.3, other)
        waiting.suspend()
        time.sleep(0.7)
        assert not other.cancelled
        waiting.resume()
        assert _waited(lambda: other.cancelled, 10)
    finally:
        clock.stop()


def _waited(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)
    return condition()


def test_a_host_with_a_known_smb_conf_is_surveyed_in_one_command(
    fleet_bed: FleetBed,
    inventory: Path,
    fleet_known_hosts: Path,
    warm_catalogs: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each command over SSH starts the account's shell on the server (0.1 s of CPU with
    this machine's .bashrc): the survey agent runs the host's next commands itself and
    answers them in its one round trip. Same findings and digest as command by command."""
    from sambatune.fleet import survey as fleet_survey
    from sambatune.remote.transport import Transport

    host = load_inventory(inventory).host("nas01")
    assert host.samba_conf
    sent: list[str] = []
    original = Transport._log_command

    def counted(self: Transport, argv: Any, outcome: str, started: float, *, ended: bool = False) -> None:
        if "answered ahead" not in outcome:
            sent.append(str(argv[0]))
        original(self, argv, outcome, started, ended=ended)

    monkeypatch.setattr(Transport, "_log_command", counted)
    ahead = fleet_survey.survey_host(host, known_hosts=fleet_known_hosts, timeout=120)
    assert sent == ["python3"], sent  # the agent, and nothing after it
    monkeypatch.setattr(fleet_survey, "_commands_ahead", lambda path: [])
    one_by_one = fleet_survey.survey_host(host, known_hosts=fleet_known_hosts, timeout=120)
    assert len(sent) >= 5, sent
    assert ahead.status is HostStatus.OK and ahead.findings is not None
    live = hashlib.sha256(fleet_bed.host("nas01").smbd.config.read_bytes()).hexdigest()
    assert ahead.config_sha256 == one_by_one.config_sha256 == live
    assert ahead.findings == one_by_one.findings and ahead.finding_ids == one_by_one.finding_ids


def test_the_inventory_s_python_runs_the_agent(
    fleet_bed: FleetBed, inventory: Path, fleet_known_hosts: Path, warm_catalogs: None
) -> None:
    """ansible_python_interpreter (from host_vars, as Ansible reads it) is the Python the
    survey's agent runs on: a wrong one fails that host saying so, a right one works."""
    host_vars = inventory.parent / "host_vars"
    host_vars.mkdir()
    (host_vars / "nas01.yml").write_text("ansible_python_interpreter: /usr/bin/env python3\n")
    (host_vars / "nas02.yml").write_text("ansible_python_interpreter: /nonexistent/python3\n")
    survey = survey_fleet(
        load_inventory(inventory).select("nas01:nas02"), timeout=120, known_hosts=fleet_known_hosts
    )
    right, wrong = survey.results
    assert right.status is HostStatus.OK and right.findings is not None
    assert wrong.status is HostStatus.FAILED
    assert "/nonexistent/python3" in str(wrong.error)


def test_answers_ahead_stay_within_the_agent_s_one_line() -> None:
    """The agent's result is one line the caller reads up to 16 MiB of: a command with
    more output than the answers' budget is left unanswered and goes over SSH as usual,
    as does an answer in a form the caller does not read (the server is not trusted)."""
    from sambatune.fleet.survey import _answers
    from sambatune.remote.agents import run_agent
    from sambatune.remote.local import LocalTransport

    commands = [["head", "-c", str(7 << 20), "/dev/zero"], ["echo", "hi"], ["echo", "there"]]
    result = run_agent(LocalTransport(), "sysinfo", {"also_run": commands}, timeout=120)
    big, small, other = result.data["also_run"]
    assert big is None and small["exit"] == 0
    answers = _answers(commands, [big, small, {**other, "stdout": "not base64!"}])
    assert list(answers) == [("echo", "hi")] and answers[("echo", "hi")].stdout == b"hi\n"
