"""fleet export and the exported playbook, run by real ansible-playbook (through
ansible-runner) against smbd instances reached over a real sshd (issue 20 item 5)."""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from sambatune.cli.main import main
from sambatune.fleet.ansible_run import RunEvent, ansible_unavailable, run_project
from sambatune.fleet.change import parse_edit
from sambatune.fleet.export import fleet_export
from sambatune.fleet.inventory import load_inventory
from sambatune.fleet.live import connect
from sambatune.packaged import read_resource
from test_fleet_drift import SO_RCVBUF, start_servers, write_inventory
from testbed.smbd import SmbServer
from testbed.sshd import SshServer

needs_ansible = pytest.mark.skipif(ansible_unavailable() is not None, reason=str(ansible_unavailable()))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Rollout:
    """Hosts fs1..fsN, their inventory, and what each live file was before."""

    def __init__(
        self, root: Path, sshd: SshServer, key: Path, known_hosts: Path, configs: dict[str, str | None]
    ) -> None:
        self.root = root
        self.known_hosts = known_hosts
        self.servers: dict[str, SmbServer] = start_servers(root, configs)
        self.inventory = write_inventory(
            root / "inventory.yml",
            sshd.port,
            key,
            known_hosts,
            {name: str(server.config) for name, server in self.servers.items()},
            # No ssh master left running after the test (ControlPersist would keep one).
            extra={name: {"ansible_ssh_args": "-o ControlMaster=no"} for name in self.servers},
        )
        self.before = {name: server.config.read_bytes() for name, server in self.servers.items()}
        self.out = root / "export"

    def connector(self) -> object:
        return lambda host: connect(host, known_hosts=self.known_hosts)

    def export(self, *edits: str, wave: int = 1) -> object:
        fleet = load_inventory(self.inventory)
        return fleet_export(
            fleet.hosts,
            [
                parse_edit(e[len("unset ") :], unset=True) if e.startswith("unset ") else parse_edit(e)
                for e in edits
            ],
            self.out,
            wave=wave,
            connector=self.connector(),  # type: ignore[arg-type]
        )

    def backups(self, name: str) -> list[Path]:
        return sorted(self.servers[name].config.parent.glob("smb.conf.*~"))

    def stop(self) -> None:
        for server in self.servers.values():
            server.stop()


@pytest.fixture
def rollout_factory(
    tmp_path: Path, sshd: SshServer, user_key: Path, known_hosts: Path, isolated_home: Path
) -> Iterator[object]:
    made: list[Rollout] = []
    # The CLI trusts what ~/.ssh/known_hosts trusts, as ssh does.
    (isolated_home / ".ssh" / "known_hosts").write_text(known_hosts.read_text())

    def make(configs: dict[str, str | None]) -> Rollout:
        rollout = Rollout(tmp_path, sshd, user_key, known_hosts, configs)
        made.append(rollout)
        return rollout

    yield make
    for rollout in made:
        rollout.stop()


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


def test_export_writes_each_hosts_minimal_candidate_and_the_project(rollout_factory: object) -> None:
    rollout: Rollout = rollout_factory({"fs1": None, "fs2": f"  socket options = {SO_RCVBUF}\n"})  # type: ignore[operator]
    report = rollout.export("[global] log level = 2", "unset [global] socket options", wave=2)
    assert report.ok, report.to_json()  # type: ignore[attr-defined]
    out = rollout.out
    for name in ("fs1", "fs2"):
        live = rollout.before[name]
        candidate = (out / "files" / name / "smb.conf").read_bytes()
        changed = [
            line
            for line in difflib.unified_diff(live.decode().splitlines(), candidate.decode().splitlines(), n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))
        ]
        # The file's own indentation, one line per edit, nothing else touched.
        expected = ["+  log level = 2"] + ([f"-  socket options = {SO_RCVBUF}"] if name == "fs2" else [])
        assert sorted(changed) == sorted(expected), changed
        assert (out / "files" / name / "live.sha256").read_text() == (
            f"{hashlib.sha256(live).hexdigest()}  {rollout.servers[name].config}\n"
        )
        assert "+  log level = 2" in (out / "files" / name / "change.diff").read_text()
    fs1 = yaml.safe_load((out / "host_vars" / "fs1.yml").read_text())
    fs2 = yaml.safe_load((out / "host_vars" / "fs2.yml").read_text())
    assert fs1["samba_conf"] == str(rollout.servers["fs1"].config)
    assert fs1["samba_live_sha256"] == hashlib.sha256(rollout.before["fs1"]).hexdigest()
    assert fs1["samba_restart_needed"] is False
    # Taking SO_RCVBUF away leaves it on the listening socket until smbd restarts.
    assert fs2["samba_restart_needed"] is True and "SO_RCVBUF" in fs2["samba_restart_reason"]
    assert fs2["samba_service"] == ""  # the test bed's smbd runs under no systemd unit
    for tool in ("samba_testparm", "samba_smbcontrol"):
        assert fs1[tool].startswith("/") and Path(fs1[tool]).is_file()
    inventory = yaml.safe_load((out / "inventory.yml").read_text())
    assert set(inventory["all"]["hosts"]) == {"fs1", "fs2"}
    assert (
        inventory["all"]["hosts"]["fs1"]["ansible_port"] == load_inventory(rollout.inventory).host("fs1").port
    )
    assert inventory["all"]["children"]["fileservers"]["hosts"] == {"fs1": None, "fs2": None}
    assert (out / "site.yml").read_bytes() == read_resource("fleet", "site.yml")
    assert yaml.safe_load((out / "rollout.yml").read_text())["samba_wave_size"] == 2
    readme = (out / "README.md").read_text()
    assert "ansible-playbook site.yml" in readme and "AWX" in readme and "Semaphore" in readme
    # Nothing on the hosts changed.
    assert all(s.config.read_bytes() == rollout.before[n] for n, s in rollout.servers.items())


@needs_ansible
@pytest.mark.slow
def test_playbook_applies_reloads_and_halts_on_the_host_testparm_rejects(rollout_factory: object) -> None:
    rollout: Rollout = rollout_factory(  # type: ignore[operator]
        {"fs1": None, "fs2": "  include = {overlay}\n", "fs3": None}
    )
    # fs2 reads an overlay file that is fine now; it breaks after the export.
    fs2 = rollout.servers["fs2"]
    overlay = fs2.config.parent / "overlay.conf"
    overlay.write_text("  server string = branch office\n")
    text = fs2.config.read_text().replace("{overlay}", str(overlay))
    fs2.stop()
    fs2.start(text)
    rollout.before["fs2"] = fs2.config.read_bytes()
    pids = {name: server.process.pid for name, server in rollout.servers.items() if server.process}
    assert "all:0" in debug_level(rollout.servers["fs1"])

    report = rollout.export("[global] log level = 2", wave=1)
    assert report.ok, report.to_json()  # type: ignore[attr-defined]
    overlay.write_text("  read only = maybe\n")  # testparm: "value is not boolean"

    started = time.monotonic()
    timeline: list[tuple[float, RunEvent]] = []
    result = run_project(rollout.out, on_event=lambda e: timeline.append((time.monotonic() - started, e)))
    print("\n".join(f"{t:6.2f}s {e.line()}" for t, e in timeline))

    assert not result.ok and result.failed_hosts == ["fs2"], result.to_json()
    kinds = [(e.kind, e.host, e.task) for _, e in timeline]
    assert ("changed", "fs1", "Reload smbd") in kinds
    assert ("failed", "fs2", "Validate the candidate in place of the live file") in kinds
    assert not any(host == "fs3" for _, host, _ in kinds)  # the rollout halted before it
    failure = next(
        e for _, e in timeline if e.kind == "failed" and e.host == "fs2" and "Validate" in (e.task or "")
    )
    assert "not boolean" in failure.message

    # fs1: the candidate is live, the old file kept as Ansible's backup, and the same
    # smbd (a reload, not a restart) now logs at level 2.
    fs1 = rollout.servers["fs1"]
    assert fs1.config.read_bytes() == (rollout.out / "files" / "fs1" / "smb.conf").read_bytes()
    assert [b.read_bytes() for b in rollout.backups("fs1")] == [rollout.before["fs1"]]
    assert fs1.process is not None and fs1.process.pid == pids["fs1"] and fs1.process.poll() is None
    assert "all:2" in wait_for_debug_level(fs1, "2")
    # fs2: refused before anything was installed; its live file byte for byte as it was.
    assert fs2.config.read_bytes() == rollout.before["fs2"]
    assert not rollout.backups("fs2")
    assert not list(fs2.config.parent.glob(".smb.conf.sambatune-candidate"))
    # (smbcontrol cannot read the broken include either; the smbd runs on.)
    assert fs2.process is not None and fs2.process.poll() is None
    # fs3: never reached.
    fs3 = rollout.servers["fs3"]
    assert fs3.config.read_bytes() == rollout.before["fs3"] and not rollout.backups("fs3")
    assert "all:0" in debug_level(fs3)
    assert result.stats["fs2"].get("rescued") == 1


@needs_ansible
@pytest.mark.slow
def test_playbook_refuses_a_changed_live_file_and_rescue_restores_a_failed_reload(
    rollout_factory: object, capsys: pytest.CaptureFixture[str]
) -> None:
    rollout: Rollout = rollout_factory({"fs1": None, "fs2": None})  # type: ignore[operator]
    inventory, out = str(rollout.inventory), str(rollout.out)
    code = main(
        ["fleet", "export", "-i", inventory, "--set", "[global] log level = 3", "--out", out, "--wave", "2"]
    )
    assert code == 0, capsys.readouterr()
    capsys.readouterr()
    fs1, fs2 = rollout.servers["fs1"], rollout.servers["fs2"]
    # After the export: someone edits fs1's smb.conf, and fs2's smbd stops.
    edited = rollout.before["fs1"] + b"# edited by hand\n"
    fs1.config.write_bytes(edited)
    fs2.stop()

    code = main(["fleet", "run", str(rollout.out), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    # fs1 is refused before anything changes, and that stops the rollout: fs2, in the
    # same wave, is not touched either.
    assert data["failed_hosts"] == ["fs1"], data
    refused = next(e for e in data["events"] if e["event"] == "failed" and e["host"] == "fs1")
    assert "not the file this change was made from" in refused["message"]
    assert fs1.config.read_bytes() == edited and not rollout.backups("fs1")
    assert fs2.config.read_bytes() == rollout.before["fs2"] and not rollout.backups("fs2")

    # fs2 alone: installed, the reload fails (no smbd), and the rescue puts the old file back.
    code = main(["fleet", "run", str(rollout.out), "--limit", "fs2", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    assert data["failed_hosts"] == ["fs2"], data
    assert any(
        e["event"] == "failed" and e["host"] == "fs2" and e["task"] == "Reload smbd" for e in data["events"]
    )
    assert fs2.config.read_bytes() == rollout.before["fs2"]
    assert [b.read_bytes() for b in rollout.backups("fs2")] == [rollout.before["fs2"]]
    assert data["stats"]["fs2"]["rescued"] == 1
    assert re.search(r"put back from .*smb\.conf\..*~", json.dumps(data["events"]))
