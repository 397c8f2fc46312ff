"""fleet export and the exported playbook, run by real ansible-playbook (through
ansible-runner) against smbd instances reached over a real sshd (issue 20 item 5)."""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from sambatune.cli.main import main
from sambatune.fleet.ansible_inventory import load_inventory
from sambatune.fleet.ansible_run import RunEvent, ansible_unavailable, run_project
from sambatune.fleet.ansible_yaml import UNSAFE_TAG, construct_unsafe
from sambatune.fleet.change import parse_edit
from sambatune.fleet.export import ExportReport, fleet_export
from sambatune.packaged import read_resource
from test_fleet_drift import SO_RCVBUF, start_bed
from testbed.smbd import SmbServer


class AnsibleYaml(yaml.SafeLoader):
    """PyYAML's safe loader, knowing Ansible's !unsafe (the export's host_vars use it)."""


AnsibleYaml.add_constructor(UNSAFE_TAG, construct_unsafe)


def read_yaml(path: Path) -> Any:
    return yaml.load(path.read_text(), Loader=AnsibleYaml)


needs_ansible = pytest.mark.skipif(ansible_unavailable() is not None, reason=str(ansible_unavailable()))


STOP_TASK = "Stop the rollout here"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Rollout:
    """A bed of this test's own, and what each host's live file was before."""

    def __init__(self, root: Path, user_key: Path, plants: dict[str, str | None]) -> None:
        self.bed = start_bed(root, user_key, plants)
        self.inventory = self.bed.inventory
        self.servers: dict[str, SmbServer] = self.bed.servers
        self.before = {name: server.config.read_bytes() for name, server in self.servers.items()}
        self.out = root / "export"

    def export(self, *edits: str, wave: int = 1) -> ExportReport:
        fleet = load_inventory(self.inventory)
        return fleet_export(
            fleet.hosts,
            [
                parse_edit(e[len("unset ") :], unset=True) if e.startswith("unset ") else parse_edit(e)
                for e in edits
            ],
            self.out,
            wave=wave,
            connector=self.bed.connector(),
        )

    def backups(self, name: str) -> list[Path]:
        return sorted(self.servers[name].config.parent.glob("smb.conf.*~"))


RolloutFactory = Callable[[dict[str, "str | None"]], Rollout]


@pytest.fixture
def rollout_factory(tmp_path: Path, user_key: Path, isolated_home: Path) -> Iterator[RolloutFactory]:
    made: list[Rollout] = []

    def make(plants: dict[str, str | None]) -> Rollout:
        rollout = Rollout(tmp_path, user_key, plants)
        made.append(rollout)
        # The CLI trusts ~/.ssh/known_hosts, as ssh does.
        (isolated_home / ".ssh" / "known_hosts").write_text(rollout.bed.known_hosts.read_text())
        return rollout

    yield make
    for rollout in made:
        rollout.bed.stop()


def debug_level(server: SmbServer) -> str:
    result = subprocess.run(
        ["smbcontrol", f"--configfile={server.config}", "smbd", "debuglevel"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    return result.stdout


def wait_for_debug_level(server: SmbServer, level: str, timeout: float = 15.0) -> str:
    deadline = time.monotonic() + timeout
    shown = debug_level(server)
    while time.monotonic() < deadline and f"all:{level}" not in shown:
        time.sleep(0.2)
        shown = debug_level(server)
    return shown


def test_export_writes_each_hosts_minimal_candidate_and_the_project(rollout_factory: RolloutFactory) -> None:
    rollout: Rollout = rollout_factory({"nas01": None, "nas02": f"  socket options = {SO_RCVBUF}\n"})
    report = rollout.export("[global] log level = 2", "unset [global] socket options", wave=2)
    assert report.ok, report.to_json()
    out = rollout.out
    for name in ("nas01", "nas02"):
        live = rollout.before[name]
        candidate = (out / "files" / name / "smb.conf").read_bytes()
        changed = [
            line
            for line in difflib.unified_diff(live.decode().splitlines(), candidate.decode().splitlines(), n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))
        ]
        # The file's own indentation, one line per edit, nothing else touched.
        expected = ["+  log level = 2"] + ([f"-  socket options = {SO_RCVBUF}"] if name == "nas02" else [])
        assert sorted(changed) == sorted(expected), changed
        assert (out / "files" / name / "live.sha256").read_text() == (
            f"{hashlib.sha256(live).hexdigest()}  {rollout.servers[name].config}\n"
        )
        assert "+  log level = 2" in (out / "files" / name / "change.diff").read_text()
    nas01 = read_yaml(out / "host_vars" / "nas01.yml")
    nas02 = read_yaml(out / "host_vars" / "nas02.yml")
    assert nas01["samba_conf"] == str(rollout.servers["nas01"].config)
    assert nas01["samba_live_sha256"] == hashlib.sha256(rollout.before["nas01"]).hexdigest()
    assert nas01["samba_restart_needed"] is False
    # Taking SO_RCVBUF away leaves it on the listening socket until smbd restarts.
    assert nas02["samba_restart_needed"] is True and "SO_RCVBUF" in nas02["samba_restart_reason"]
    assert nas02["samba_service"] == ""  # the test bed's smbd runs under no systemd unit
    for tool in ("samba_testparm", "samba_smbcontrol"):
        assert nas01[tool].startswith("/") and Path(nas01[tool]).is_file()
    inventory = read_yaml(out / "inventory.yml")
    assert set(inventory["all"]["hosts"]) == {"nas01", "nas02"}
    assert (
        inventory["all"]["hosts"]["nas01"]["ansible_port"]
        == load_inventory(rollout.inventory).host("nas01").port
    )
    assert inventory["all"]["children"]["fileservers"]["hosts"] == {"nas01": None, "nas02": None}
    assert (out / "site.yml").read_bytes() == read_resource("fleet", "site.yml")
    assert yaml.safe_load((out / "rollout.yml").read_text())["samba_wave_size"] == 2
    readme = (out / "README.md").read_text()
    assert "ansible-playbook site.yml" in readme and "AWX" in readme and "Semaphore" in readme
    # Nothing on the hosts changed.
    assert all(s.config.read_bytes() == rollout.before[n] for n, s in rollout.servers.items())
    # The report names exactly what it wrote: the folder's own files are not its to list.
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert report.files == written


def test_the_report_lists_only_what_the_export_wrote(rollout_factory: RolloutFactory) -> None:
    rollout: Rollout = rollout_factory({"nas01": None})
    rollout.out.mkdir(parents=True)
    (rollout.out / "notes.txt").write_text("the admin's own file\n")
    report = rollout.export("[global] log level = 2")
    assert report.ok and "notes.txt" not in report.files
    assert "site.yml" in report.files and "files/nas01/smb.conf" in report.files
    assert (rollout.out / "notes.txt").read_text() == "the admin's own file\n"


@needs_ansible
@pytest.mark.slow
@pytest.mark.timeout(900)  # two ansible-playbook runs over three hosts; slow when the machine is busy
def test_playbook_applies_reloads_and_halts_on_the_host_testparm_rejects(
    rollout_factory: RolloutFactory,
) -> None:
    rollout: Rollout = rollout_factory({"nas01": None, "nas02": "  include = {overlay}\n", "nas03": None})
    # nas02 reads an overlay file that is fine now; it breaks after the export.
    nas02 = rollout.servers["nas02"]
    overlay = nas02.config.parent / "overlay.conf"
    overlay.write_text("  server string = branch office\n")
    text = nas02.config.read_text().replace("{overlay}", str(overlay))
    nas02.stop()
    nas02.start(text)
    rollout.before["nas02"] = nas02.config.read_bytes()
    pids = {name: server.process.pid for name, server in rollout.servers.items() if server.process}
    assert "all:0" in debug_level(rollout.servers["nas01"])

    report = rollout.export("[global] log level = 2", wave=1)
    assert report.ok, report.to_json()
    # --check --diff first: every host would change, none does.
    checked: list[RunEvent] = []
    assert run_project(rollout.out, on_event=checked.append, check=True).ok
    assert {e.host for e in checked if e.kind == "changed" and e.task and "Install" in e.task} == {
        "nas01",
        "nas02",
        "nas03",
    }
    assert all(s.config.read_bytes() == rollout.before[n] for n, s in rollout.servers.items())
    assert not any(rollout.backups(n) for n in rollout.servers)
    overlay.write_text("  read only = maybe\n")  # testparm: "value is not boolean"

    # --check validates as the run does: nas02's candidate now fails testparm, so the
    # check fails there and stops, with nothing changed and nothing left behind.
    checked = []
    result = run_project(rollout.out, on_event=checked.append, check=True)
    assert not result.ok and result.failed_hosts == ["nas02"], result.to_json()
    assert ("failed", "nas02", "Validate the candidate in place of the live file") in [
        (e.kind, e.host, e.task) for e in checked
    ]
    assert "nas03" not in result.stats
    assert all(s.config.read_bytes() == rollout.before[n] for n, s in rollout.servers.items())
    assert not any(rollout.backups(n) for n in rollout.servers)
    assert not [
        p for s in rollout.servers.values() for p in s.config.parent.glob(".smb.conf.sambatune-candidate")
    ]

    # nas01 has backups from earlier runs; two are kept (rollout.yml, 30 by default).
    nas01 = rollout.servers["nas01"]
    for day in (1, 2, 3):
        old = nas01.config.parent / f"smb.conf.{100 + day}.2020-01-0{day}@00:00:00~"
        old.write_bytes(f"old {day}\n".encode())
        os.utime(old, (1577836800 + day * 86400,) * 2)
    settings = yaml.safe_load((rollout.out / "rollout.yml").read_text())
    assert settings["samba_backups_kept"] == 30
    (rollout.out / "rollout.yml").write_text(yaml.safe_dump({**settings, "samba_backups_kept": 2}))

    started = time.monotonic()
    timeline: list[tuple[float, RunEvent]] = []
    result = run_project(rollout.out, on_event=lambda e: timeline.append((time.monotonic() - started, e)))
    print("\n".join(f"{t:6.2f}s {e.line()}" for t, e in timeline))

    assert not result.ok and result.failed_hosts == ["nas02"], result.to_json()
    kinds = [(e.kind, e.host, e.task) for _, e in timeline]
    assert ("changed", "nas01", "Reload smbd") in kinds
    assert ("failed", "nas02", "Validate the candidate in place of the live file") in kinds
    assert not any(host == "nas03" for _, host, _ in kinds)  # the rollout halted before it
    failure = next(
        e for _, e in timeline if e.kind == "failed" and e.host == "nas02" and "Validate" in (e.task or "")
    )
    assert "not boolean" in failure.message
    stop = next(
        e for _, e in timeline if e.kind == "failed" and e.host == "nas02" and "Stop" in (e.task or "")
    )
    assert "Hosts that run the change: nas01." in stop.message

    # nas01: the candidate is live, the old file kept as Ansible's backup beside the
    # newest earlier one (the two oldest pruned), and the same smbd (a reload, not a
    # restart) now logs at level 2.
    assert nas01.config.read_bytes() == (rollout.out / "files" / "nas01" / "smb.conf").read_bytes()
    assert sorted(b.read_bytes() for b in rollout.backups("nas01")) == sorted(
        [b"old 3\n", rollout.before["nas01"]]
    )
    assert nas01.process is not None and nas01.process.pid == pids["nas01"] and nas01.process.poll() is None
    assert "all:2" in wait_for_debug_level(nas01, "2")
    # nas02: refused before anything was installed; its live file byte for byte as it was.
    assert nas02.config.read_bytes() == rollout.before["nas02"]
    assert not rollout.backups("nas02")
    assert not list(nas02.config.parent.glob(".smb.conf.sambatune-candidate"))
    # (smbcontrol cannot read the broken include either; the smbd runs on.)
    assert nas02.process is not None and nas02.process.poll() is None
    # nas03: never reached.
    nas03 = rollout.servers["nas03"]
    assert nas03.config.read_bytes() == rollout.before["nas03"] and not rollout.backups("nas03")
    assert "all:0" in debug_level(nas03)
    assert result.stats["nas02"].get("rescued") == 1

    # Run again where it is done: nothing to change, changed=0, as a good role reports.
    again = run_project(rollout.out, limit="nas01")
    assert again.ok and again.stats["nas01"].get("changed", 0) == 0, again.to_json()
    assert len(rollout.backups("nas01")) == 2


@needs_ansible
@pytest.mark.slow
def test_playbook_refuses_a_changed_live_file_and_rescue_restores_a_failed_reload(
    rollout_factory: RolloutFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    rollout: Rollout = rollout_factory({"nas01": None, "nas02": None})
    inventory, out = str(rollout.inventory), str(rollout.out)
    code = main(
        ["fleet", "export", "-i", inventory, "--set", "[global] log level = 3", "--out", out, "--wave", "2"]
    )
    assert code == 0, capsys.readouterr()
    capsys.readouterr()
    nas01, nas02 = rollout.servers["nas01"], rollout.servers["nas02"]
    # After the export: someone edits nas01's smb.conf, and nas02's smbd stops.
    edited = rollout.before["nas01"] + b"# edited by hand\n"
    nas01.config.write_bytes(edited)
    nas02.stop()

    code = main(["fleet", "run", str(rollout.out), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    # nas01 is refused before anything changes, and that stops the rollout: nas02, in the
    # same wave, is not touched either.
    assert data["failed_hosts"] == ["nas01"], data
    refused = next(e for e in data["events"] if e["event"] == "failed" and e["host"] == "nas01")
    assert "not the file this change was made from" in refused["message"]
    assert nas01.config.read_bytes() == edited and not rollout.backups("nas01")
    assert nas02.config.read_bytes() == rollout.before["nas02"] and not rollout.backups("nas02")

    # nas02 alone: installed, the reload fails (no smbd), and the rescue puts the old file back.
    code = main(["fleet", "run", str(rollout.out), "--limit", "nas02", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    assert data["failed_hosts"] == ["nas02"], data
    assert any(
        e["event"] == "failed" and e["host"] == "nas02" and e["task"] == "Reload smbd" for e in data["events"]
    )
    assert nas02.config.read_bytes() == rollout.before["nas02"]
    assert [b.read_bytes() for b in rollout.backups("nas02")] == [rollout.before["nas02"]]
    assert data["stats"]["nas02"]["rescued"] == 1
    assert re.search(r"put back from .*smb\.conf\..*~", json.dumps(data["events"]))


@needs_ansible
@pytest.mark.timeout(600)
def test_ansible_trusts_the_keys_sambatune_verified_and_nothing_else(
    rollout_factory: RolloutFactory, isolated_home: Path
) -> None:
    """The hosts' keys are in SambaTune's store only (not ~/.ssh/known_hosts, nor in the
    inventory's ssh arguments): the export carries the keys it verified, so Ansible's
    strict host key checking passes; a key that is not the host's is refused."""
    rollout = rollout_factory({"nas01": None})
    (isolated_home / ".ssh" / "known_hosts").unlink()
    document = yaml.safe_load(rollout.inventory.read_text())
    variables = document["all"]["children"]["fileservers"]["vars"]
    del variables["ansible_ssh_common_args"]  # the bed's own known_hosts, no more
    rollout.inventory.write_text(yaml.safe_dump(document))

    assert rollout.export("[global] log level = 2").ok
    host = rollout.bed.fleet_bed.hosts[0]
    line = (rollout.out / "known_hosts").read_text()
    assert line.startswith(f"[{host.address}]:{host.sshd.port} ssh-") and line.count("\n") == 1
    assert line.split()[1:] == host.sshd.known_hosts_line.split()[1:3]
    inventory = read_yaml(rollout.out / "inventory.yml")
    assert "{{ inventory_dir }}/known_hosts" in inventory["all"]["hosts"]["nas01"]["ansible_ssh_extra_args"]
    events: list[RunEvent] = []
    assert run_project(rollout.out, on_event=events.append, check=True).ok, [e.line() for e in events]

    # A key that is not the server's: Ansible refuses the host, as SambaTune would.
    kind, blob = line.split()[1:3]
    wrong = blob[:-8] + ("A" if blob[-8] != "A" else "B") + blob[-7:]
    (rollout.out / "known_hosts").write_text(f"{line.split()[0]} {kind} {wrong}\n")
    refused: list[RunEvent] = []
    assert not run_project(rollout.out, on_event=refused.append, check=True).ok
    assert rollout.servers["nas01"].config.read_bytes() == rollout.before["nas01"]
