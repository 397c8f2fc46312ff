"""``fleet apply``: staged rollouts over the real multi-host test bed (issue 20 item 4).

Five servers on 127.0.0.2-6 (tests/testbed/fleet.py), each its own sshd and smbd. Every
test checks the three things that must agree after a fault: what the CLI said, what the
rollout's record says, and what is live on each server (its smb.conf's SHA-256).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sambatune.applied_versions import AppliedVersions
from sambatune.cancellation import CancelToken
from sambatune.cli import fleet_apply
from sambatune.cli.main import main
from sambatune.fleet.ansible_inventory import load_inventory
from sambatune.fleet.change import parse_edit
from sambatune.fleet.inventory import FleetHost
from sambatune.fleet.live import connect
from sambatune.fleet.rollout import (
    MeasureLevel,
    RolloutEvent,
    RolloutOptions,
    plan_rollout,
    start_rollout,
)
from sambatune.fleet.rollout_store import (
    HostRecord,
    HostState,
    Live,
    RolloutRecord,
    RolloutStatus,
    RolloutStore,
)
from sambatune.remote.transport import Transport
from testbed.fleet import FleetBed
from testbed.impostor import plant_fake_smbd
from testbed.processes import processes_mentioning

FOUR = "nas01:nas02:nas03:nas04"
LOG_LEVEL = "[global] log level = 1"
SLOW_SOCKETS = "[global] socket options = SO_RCVBUF=8192 SO_SNDBUF=8192"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def live_sha(bed: FleetBed, name: str) -> str:
    return sha(bed.host(name).smbd.config.read_bytes())


def main_smbd_pid(bed: FleetBed, name: str) -> int:
    """The parent smbd serving this host's file (its per-client children share the
    command line; the parent is the one whose parent is no such smbd)."""
    config = str(bed.host(name).smbd.config)
    pids = {pid for pid, cmd in processes_mentioning(config) if "smbd" in cmd.split()[0]}
    parents = [
        p for p in pids if int(Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[1]) not in pids
    ]
    assert len(parents) == 1, (name, pids)
    return parents[0]


def backups(bed: FleetBed, name: str) -> set[str]:
    folder = bed.host(name).smbd.config.parent / "sambatune-backups"
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


@pytest.fixture
def bed(fleet_bed: FleetBed) -> Iterator[FleetBed]:
    """The session's bed, every host's smb.conf (and any include a test adds) put back
    afterwards, whatever the test did."""
    saved = {h.name: h.smbd.config.read_bytes() for h in fleet_bed.hosts}
    yield fleet_bed
    for host in fleet_bed.hosts:
        if host.smbd.config.read_bytes() != saved[host.name]:
            host.smbd.config.write_bytes(saved[host.name])


@pytest.fixture
def inventory(bed: FleetBed, tmp_path: Path) -> Path:
    path = bed.write_inventory(tmp_path / "hosts.ini")
    # The canary is measured through each host's own test share.
    path.write_text(path.read_text() + "samba_measure_share=bench\n")
    return path


@pytest.fixture
def known_hosts(bed: FleetBed, tmp_path: Path) -> Path:
    return bed.write_known_hosts(tmp_path / "known_hosts")


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = main(list(argv))
    out = capsys.readouterr().out
    return code, json.loads(out) if "--json" in argv else out


def apply_argv(inventory: Path, known_hosts: Path, *extra: str) -> list[str]:
    return [
        "fleet",
        "apply",
        "--inventory",
        str(inventory),
        "--known-hosts",
        str(known_hosts),
        *extra,
    ]


def connector(known_hosts: Path) -> Callable[[FleetHost], Transport]:
    return lambda host: connect(host, known_hosts=known_hosts)


def add_include(bed: FleetBed, name: str, text: str) -> Path:
    """Give a host's smb.conf an included file, as many real servers have."""
    config = bed.host(name).smbd.config
    extra = config.parent / "site.conf"
    extra.write_text(text)
    config.write_text(config.read_text().replace("[global]\n", f"[global]\n  include = {extra}\n", 1))
    return extra


def test_reload_change_goes_canary_first_then_waves_of_two(
    bed: FleetBed, inventory: Path, known_hosts: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    before = {h.name: live_sha(bed, h.name) for h in bed.hosts}
    pids = {name: main_smbd_pid(bed, name) for name in FOUR.split(":")}

    # Without --yes: the plan, and nothing changed.
    code, plan = run_cli(
        capsys, *apply_argv(inventory, known_hosts, "--limit", FOUR, "--set", LOG_LEVEL, "--json")
    )
    assert code == 0 and plan["status"] == "planned" and plan["refusals"] == {}
    roles = {h["name"]: h["role"] for h in plan["hosts"]}
    assert roles == {"nas01": "canary", "nas02": "wave 1", "nas03": "wave 1", "nas04": "wave 2"}
    assert all(h["activation"] == "reload" and not h["restart_reasons"] for h in plan["hosts"])
    assert {h.name: live_sha(bed, h.name) for h in bed.hosts} == before

    code, done = run_cli(
        capsys,
        *apply_argv(
            inventory,
            known_hosts,
            "--limit",
            FOUR,
            "--set",
            LOG_LEVEL,
            "--wave",
            "2",
            "--measure",
            "none",
            "--yes",
            "--json",
        ),
    )
    assert code == 0, done
    assert done["status"] == "done" and done["exit_status"] == 0
    record = RolloutStore().load(done["rollout_id"])
    assert record.status is RolloutStatus.DONE
    for host in record.hosts:
        # CLI, record and server agree.
        cli_host = next(h for h in done["hosts"] if h["name"] == host.name)
        assert cli_host["state"] == host.state == HostState.APPLIED
        assert live_sha(bed, host.name) == host.after_sha256 == cli_host["after_sha256"]
        assert host.before_sha256 == before[host.name]
        assert b"log level = 1" in bed.host(host.name).smbd.config.read_bytes()
        assert host.activation == "reload" and host.applied_at
        assert main_smbd_pid(bed, host.name) == pids[host.name]  # reloaded, never restarted
    assert live_sha(bed, "nas05") == before["nas05"]  # outside --limit
    # The canary went first, each wave after the one before it finished.
    applied = {h.name: h.applied_at or "" for h in record.hosts}
    assert applied["nas01"] <= min(applied["nas02"], applied["nas03"])
    assert max(applied["nas02"], applied["nas03"]) <= applied["nas04"]
    whats = [(e.host, e.what) for e in record.timeline]
    assert whats.index(("nas01", "applied")) < whats.index((None, "wave 1")) < whats.index((None, "wave 2"))
    assert whats[1] == (None, "started")

    code, listed = run_cli(capsys, "fleet", "rollouts", "--json")
    assert code == 0
    assert listed["rollouts"][0]["rollout_id"] == record.id and listed["rollouts"][0]["status"] == "done"
    code, text = run_cli(capsys, "fleet", "report", str(record.id))
    assert code == 0 and "canary" in text and "wave 2" in text and "Timeline" in text
    report = tmp_path / "rollout.html"
    code, _ = run_cli(capsys, "fleet", "report", str(record.id), "-o", str(report))
    assert code == 0 and "nas04" in report.read_text()


def test_testparm_failure_mid_rollout_halts_and_restores_every_touched_host(
    bed: FleetBed,
    inventory: Path,
    known_hosts: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """nas03 includes site.conf. The plan passes; while the canary is being changed
    someone breaks site.conf, so at nas03's turn the pipeline's testparm refuses it:
    the rollout halts, the canary and nas02 (same wave) are put back byte for byte,
    nas04 is never touched."""
    include = add_include(bed, "nas03", "# site settings\n")
    before = {h.name: live_sha(bed, h.name) for h in bed.hosts}
    untouched_backups = backups(bed, "nas04")
    printer = fleet_apply._progress

    def progress_that_breaks_nas03(args: Any) -> Callable[[RolloutEvent], None]:
        show = printer(args)

        def on_event(event: RolloutEvent) -> None:
            if (event.host, event.what) == ("nas01", "applied"):
                include.write_text("[global]\n  security = no-such-security\n")
            if show is not None:
                show(event)

        return on_event

    monkeypatch.setattr(fleet_apply, "_progress", progress_that_breaks_nas03)
    code, out = run_cli(
        capsys,
        *apply_argv(
            inventory,
            known_hosts,
            "--limit",
            FOUR,
            "--set",
            LOG_LEVEL,
            "--measure",
            "none",
            "--yes",
            "--json",
        ),
    )
    assert code == 1 and out["status"] == "halted" and out["exit_status"] == 1
    assert "nas03" in out["reason"] and "testparm" in out["reason"]
    record = RolloutStore().load(out["rollout_id"])
    assert record.status is RolloutStatus.HALTED and record.reason == out["reason"]
    states = {h.name: h.state for h in record.hosts}
    assert states == {
        "nas01": HostState.RESTORED,
        "nas02": HostState.RESTORED,
        "nas03": HostState.FAILED,
        "nas04": HostState.PENDING,
    }
    assert {h["name"]: h["state"] for h in out["hosts"]} == {k: v.value for k, v in states.items()}
    for host in record.hosts:
        assert live_sha(bed, host.name) == before[host.name] == host.before_sha256
        assert host.live is Live.BEFORE
    for name in ("nas01", "nas02"):
        host = record.host(name)
        assert host.applied_at and host.restored_at and host.applied_at <= host.restored_at
    assert "testparm rejects" in record.host("nas03").message
    assert record.host("nas04").applied_at is None
    assert backups(bed, "nas04") == untouched_backups  # no backup: the pipeline never ran there
    whats = [(e.host, e.what) for e in record.timeline]
    assert (None, "halted") in whats and ("nas04", "applying") not in whats


def test_a_host_that_fails_testparm_at_planning_refuses_the_whole_rollout(
    bed: FleetBed, inventory: Path, known_hosts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add_include(bed, "nas02", "[global]\n  security = no-such-security\n")
    before = {h.name: live_sha(bed, h.name) for h in bed.hosts}
    code, out = run_cli(
        capsys,
        *apply_argv(
            inventory,
            known_hosts,
            "--limit",
            FOUR,
            "--set",
            LOG_LEVEL,
            "--measure",
            "none",
            "--yes",
            "--json",
        ),
    )
    assert code == 1 and out["status"] == "refused"
    assert "nas02" in out["reason"]
    assert {h.name: live_sha(bed, h.name) for h in bed.hosts} == before
    assert all(h["applied_at"] is None for h in out["hosts"])


def test_an_unreachable_host_refuses_the_rollout_unless_left_out_as_ansible_would(
    bed: FleetBed, inventory: Path, known_hosts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bed.take_down("nas03")
    try:
        before = live_sha(bed, "nas03")
        argv = apply_argv(inventory, known_hosts, "--limit", FOUR, "--set", LOG_LEVEL, "--measure", "none")
        code, refused = run_cli(capsys, *argv, "--yes", "--json")
        assert code == 1 and refused["status"] == "refused" and "nas03" in refused["reason"]
        assert all(h["applied_at"] is None for h in refused["hosts"])

        code, plan = run_cli(capsys, *argv, "--skip-unreachable", "--json")
        assert code == 0 and plan["left_out"] == ["nas03"] and not plan["refusals"], plan
        code, text = run_cli(capsys, *argv, "--skip-unreachable")
        assert code == 0 and "left out (unreachable)" in text

        code, done = run_cli(capsys, *argv, "--skip-unreachable", "--yes", "--json")
        assert code == 4 and done["status"] == "done", done
        states = {h["name"]: h["state"] for h in done["hosts"]}
        assert states == {
            "nas01": "applied",
            "nas02": "applied",
            "nas03": "left out (unreachable)",
            "nas04": "applied",
        }
        assert live_sha(bed, "nas03") == before
    finally:
        bed.bring_up("nas03")


def test_the_plan_measures_a_canary_where_its_smbd_listens_or_refuses(
    bed: FleetBed, inventory: Path, known_hosts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """nas01's smbd serves its own address only (bind interfaces only, no loopback): the
    canary's measurement was hard-wired to //127.0.0.1 and failed after the change. The
    plan copies a file through the share at an address smbd serves, before anything
    changes, and refuses a canary it cannot measure."""
    host = bed.host("nas01")
    saved = host.smbd.config.read_text()
    host.smbd.stop()
    host.smbd.listen_address = host.address
    # Samba finds the interface by an address with its netmask (lo holds 127.0.0.0/8).
    host.smbd.start(host.smbd.default_config().replace(f"= {host.address}\n", f"= {host.address}/8\n"))
    try:
        text = host.smbd.config.read_text()
        assert f"interfaces = {host.address}/8" in text and "bind interfaces only = yes" in text
        before = {h.name: live_sha(bed, h.name) for h in bed.hosts}
        argv = apply_argv(
            inventory,
            known_hosts,
            "--limit",
            "nas01:nas02",
            "--canary",
            "nas01",
            "--set",
            LOG_LEVEL,
            "--json",
        )
        code, plan = run_cli(capsys, *argv, "--measure", "quick")
        assert code == 0 and not plan["refusals"], plan

        code, refused = run_cli(capsys, *argv, "--measure", "quick", "--share", "nosuchshare", "--yes")
        assert code == 1 and refused["status"] == "refused", refused
        why = refused["reason"]
        assert "nas01" in why and "cannot be measured" in why and host.address in why, why
        assert {h.name: live_sha(bed, h.name) for h in bed.hosts} == before
    finally:
        host.smbd.stop()
        host.smbd.listen_address = "127.0.0.1"
        host.smbd.start(saved)


@pytest.mark.slow
def test_a_canary_that_gets_slower_halts_the_rollout_and_is_put_back(
    bed: FleetBed, inventory: Path, known_hosts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Fixed 8 KiB socket buffers make smbclient copies on the bed crawl (README:
    327 MB/s -> 2.9 MB/s reading). Taking TCP_NODELAY away needs a restart."""
    before = {h.name: live_sha(bed, h.name) for h in bed.hosts}
    argv = apply_argv(
        inventory, known_hosts, "--limit", "nas04:nas05", "--canary", "nas05", "--set", SLOW_SOCKETS
    )

    code, refused = run_cli(capsys, *argv, "--yes", "--json")
    assert code == 1 and refused["status"] == "refused" and "--allow-restart" in refused["reason"]
    assert {h.name: live_sha(bed, h.name) for h in bed.hosts} == before

    code, out = run_cli(capsys, *argv, "--allow-restart", "--measure", "quick", "--yes", "--json")
    assert code == 1 and out["status"] == "halted", out
    assert "nas05" in out["reason"] and "slower" in out["reason"]
    record = RolloutStore().load(out["rollout_id"])
    canary = record.host("nas05")
    assert canary.wave == 0 and canary.activation == "restart"
    assert canary.verdict is not None and canary.verdict["overall"] in ("worse", "mixed")
    assert canary.state is HostState.RESTORED and canary.live is Live.BEFORE
    assert live_sha(bed, "nas05") == before["nas05"] == canary.before_sha256
    other = record.host("nas04")
    assert other.state is HostState.PENDING and other.applied_at is None
    assert live_sha(bed, "nas04") == before["nas04"]
    assert record.status is RolloutStatus.HALTED


def test_an_interrupted_rollout_resumes_where_it_stopped(
    bed: FleetBed, inventory: Path, known_hosts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet = load_inventory(inventory).select(FOUR)
    edits = [parse_edit(LOG_LEVEL)]
    options = RolloutOptions(wave=2, measure=MeasureLevel.NONE)
    cancel = CancelToken()

    def stop_after_the_canary(event: RolloutEvent) -> None:
        if (event.host, event.what) == ("nas01", "applied"):
            cancel.cancel()  # as the app's Stop button or Ctrl-C: between host steps

    plan = plan_rollout(fleet.hosts, edits, options, connector=connector(known_hosts))
    source = {"inventory": str(inventory), "limit": FOUR, "known_hosts": str(known_hosts)}
    record = start_rollout(
        plan,
        edits,
        options,
        source,
        {h.name: h for h in fleet},
        connector(known_hosts),
        RolloutStore(),
        on_event=stop_after_the_canary,
        cancel=cancel,
    )
    assert record.status is RolloutStatus.INTERRUPTED
    stored = RolloutStore().load(record.id)
    assert stored.status is RolloutStatus.INTERRUPTED
    assert [h.state for h in stored.hosts] == [HostState.APPLIED] + [HostState.PENDING] * 3
    assert live_sha(bed, "nas01") == stored.host("nas01").after_sha256
    assert live_sha(bed, "nas02") == stored.host("nas02").before_sha256

    # The program died while nas02's new file had just gone live: the record says
    # 'applying', the server has the new bytes. The resume recognises them.
    nas02 = stored.host("nas02")
    assert nas02.after is not None
    bed.host("nas02").smbd.config.write_bytes(nas02.after)
    nas02.state = HostState.APPLYING
    store = RolloutStore()
    store.save(stored)
    nas02_backups = backups(bed, "nas02")

    code, out = run_cli(capsys, "fleet", "apply", "--resume", str(record.id), "--yes", "--json")
    assert code == 0 and out["status"] == "done", out
    resumed = RolloutStore().load(record.id)
    for host in resumed.hosts:
        assert host.state is HostState.APPLIED
        assert live_sha(bed, host.name) == host.after_sha256
    assert backups(bed, "nas02") == nas02_backups  # settled by its bytes, not applied twice
    whats = [(e.host, e.what) for e in resumed.timeline]
    assert ("nas02", "settled") in whats and (None, "interrupted") in whats and (None, "resumed") in whats

    code, _ = run_cli(capsys, "fleet", "apply", "--resume", str(record.id), "--yes")
    assert code != 0  # an ended rollout is not resumed again


def test_the_record_keeps_the_exact_bytes(tmp_path: Path) -> None:
    store = RolloutStore(tmp_path / "rollouts")
    record = store.create(
        RolloutRecord(
            id=0,
            edits=["[global] log level = 1"],
            source={"inventory": "/x"},
            options=RolloutOptions().to_json(),
            hosts=[HostRecord("a", wave=0, path="/etc/samba/smb.conf", before=b"\xff\x00 x\r\n", after=b"y")],
        )
    )
    again = store.load(record.id)
    assert again.host("a").before == b"\xff\x00 x\r\n" and again.host("a").after == b"y"
    assert again.to_json() == record.to_json()
    assert store.create(RolloutRecord(0, [], {}, {})).id == record.id + 1
    assert [s.id for s in store.summaries()] == [record.id + 1, record.id]
    assert (tmp_path / "rollouts" / f"{record.id}.json").stat().st_mode & 0o077 == 0


HOLDER = """
import sys, time
from pathlib import Path
from sambatune.fleet.rollout_store import RolloutStore
holding = RolloutStore(Path(sys.argv[1])).hold(int(sys.argv[2]))
holding.__enter__()
print("held", flush=True)
time.sleep(120)
"""


def test_a_rollout_whose_program_was_killed_shows_as_interrupted_and_resumes_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """SIGKILL leaves the record "running" for ever; the lock it held tells the truth
    (issue 27 item 10), and while a process runs it, nobody resumes it twice."""
    store = RolloutStore()
    record = store.create(
        RolloutRecord(0, ["[global] log level = 1"], {"hosts": "nas1"}, RolloutOptions().to_json())
    )
    assert store.load(record.id).status is RolloutStatus.RUNNING  # as written
    assert store.load_shown(record.id).status is RolloutStatus.INTERRUPTED  # nobody runs it
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(store.folder), str(record.id)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        [summary] = store.summaries()
        assert summary.status == RolloutStatus.RUNNING and summary.running_now
        code, refused = run_cli(capsys, "fleet", "apply", "--resume", str(record.id), "--yes", "--json")
        assert code == 1 and "is running in another SambaTune" in refused["error"]["message"], refused
        assert f"pid {holder.pid}" in refused["error"]["message"]
    finally:
        holder.kill()
        holder.wait()
    code, listed = run_cli(capsys, "fleet", "rollouts", "--json")
    [shown] = listed["rollouts"]
    assert shown["status"] == "interrupted" and shown["recorded_status"] == "running"
    assert not shown["running_now"] and "killed or crashed" in shown["reason"]
    with store.hold(record.id):  # free again: a resume may run it
        pass


def test_a_host_lost_mid_rollout_halts_and_the_others_are_put_back(
    bed: FleetBed, inventory: Path, known_hosts: Path
) -> None:
    """nas03's sshd stops once the canary is changed: at its turn it cannot be reached."""
    fleet = load_inventory(inventory).select(FOUR)
    edits = [parse_edit(LOG_LEVEL)]
    options = RolloutOptions(wave=2, measure=MeasureLevel.NONE)
    before = {h.name: live_sha(bed, h.name) for h in bed.hosts}

    def lose_nas03(event: RolloutEvent) -> None:
        if (event.host, event.what) == ("nas01", "applied"):
            bed.take_down("nas03")

    plan = plan_rollout(fleet.hosts, edits, options, connector=connector(known_hosts))
    try:
        record = start_rollout(
            plan,
            edits,
            options,
            {"inventory": str(inventory), "limit": FOUR},
            {h.name: h for h in fleet},
            connector(known_hosts),
            RolloutStore(),
            on_event=lose_nas03,
        )
    finally:
        bed.bring_up("nas03")
    assert record.status is RolloutStatus.HALTED and "nas03" in record.reason
    assert "unreachable" in record.reason
    states = {h.name: h.state for h in RolloutStore().load(record.id).hosts}
    assert states == {
        "nas01": HostState.RESTORED,
        "nas02": HostState.RESTORED,
        "nas03": HostState.FAILED,
        "nas04": HostState.PENDING,
    }
    assert {h.name: live_sha(bed, h.name) for h in bed.hosts} == before


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a process as another user")
def test_a_restart_rollout_restarts_the_real_smbd_beside_a_planted_fake(
    bed: FleetBed,
    inventory: Path,
    known_hosts: Path,
    capsys: pytest.CaptureFixture[str],
    plain_user: object,
) -> None:
    """A user on nas02 runs a program named smbd that claims nas02's smb.conf. A rollout
    whose change needs a restart restarts the real smbd (new pid) and never runs the fake;
    what the CLI said, the rollout record, the apply history and the live file agree."""
    host = bed.host("nas02")
    config = host.smbd.config
    original = config.read_bytes()
    assert b"interfaces = lo" in original  # bound addresses change only with a restart
    before_pid = main_smbd_pid(bed, "nas02")
    impostor = plant_fake_smbd(plain_user.name, config, "rollout-fake")  # type: ignore[attr-defined]
    try:
        code, done = run_cli(
            capsys,
            *apply_argv(
                inventory,
                known_hosts,
                "--limit",
                "nas02",
                "--set",
                "[global] interfaces = 127.0.0.1/8",
                "--allow-restart",
                "--measure",
                "none",
                "--yes",
                "--json",
            ),
        )
        alive = impostor.process.poll() is None
    finally:
        impostor.stop()
    assert code == 0 and done["status"] == "done", done
    record = RolloutStore().load(done["rollout_id"])
    [host_record] = record.hosts
    assert host_record.state is HostState.APPLIED and host_record.live is Live.AFTER
    assert host_record.activation == "restart"
    cli_host = done["hosts"][0]
    assert cli_host["state"] == "applied" and cli_host["after_sha256"] == host_record.after_sha256
    transport = connector(known_hosts)(load_inventory(inventory).host("nas02"))
    label = transport.label
    transport.close()
    [latest, *_] = AppliedVersions().for_server(label, str(config))
    assert latest.outcome == "applied" and latest.live == "new"
    assert latest.sha256 == host_record.after_sha256
    assert not impostor.ran, "the planted program ran"
    assert alive, "the fake smbd was stopped or restarted by the rollout"
    after_pid = main_smbd_pid(bed, "nas02")
    assert after_pid not in (before_pid, impostor.pid), "the real smbd did not restart"
    impostor.remove()
    # Leave nas02's smbd as the bed started it: its own process, the file's sockets.
    config.write_bytes(original)
    host.smbd.stop()
    host.smbd.start()
