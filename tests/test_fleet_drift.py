"""fleet drift against real servers: smbd instances reached over a real sshd, each one
"host" of an inventory with its own smb.conf (issue 20 item 3)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from sambatune.cli.main import main
from sambatune.conf.activation import Activation
from sambatune.fleet.change import Edit, overlay_edits, parse_edit
from sambatune.fleet.drift import DriftReport, ParameterDrift, fleet_drift
from sambatune.fleet.inventory import Fleet, load_inventory
from sambatune.fleet.live import connect
from sambatune.remote.transport import Transport
from testbed.ports import free_port
from testbed.smbd import SmbServer
from testbed.sshd import SshServer, current_user

SO_RCVBUF = "TCP_NODELAY SO_RCVBUF=65536"


@dataclass
class Bed:
    """Hosts fs1..fsN: each an smbd of its own, reached through the test sshd."""

    servers: dict[str, SmbServer]
    inventory: Path
    known_hosts: Path

    def fleet(self) -> Fleet:
        return load_inventory(self.inventory)

    def connector(self) -> object:
        def open_host(host: object) -> Transport:
            return connect(host, known_hosts=self.known_hosts)  # type: ignore[arg-type]

        return open_host


def write_inventory(
    path: Path,
    sshd_port: int,
    key: Path,
    known_hosts: Path,
    configs: dict[str, str],
    extra: dict[str, dict[str, object]] | None = None,
) -> Path:
    hosts: dict[str, dict[str, object]] = {}
    for name, config in configs.items():
        hosts[name] = {
            "ansible_host": "127.0.0.1",
            "ansible_port": sshd_port,
            "ansible_user": current_user(),
            "ansible_ssh_private_key_file": str(key),
            # The test bed's python3: Ansible's discovery would find pyenv's shims first.
            "ansible_python_interpreter": "/usr/bin/python3",
            "ansible_ssh_common_args": f"-o UserKnownHostsFile={known_hosts} -o StrictHostKeyChecking=yes",
            "samba_conf": config,
            **(extra or {}).get(name, {}),
        }
    path.write_text(yaml.safe_dump({"all": {"children": {"fileservers": {"hosts": hosts}}}}))
    return path


def start_servers(root: Path, configs: dict[str, str | None]) -> dict[str, SmbServer]:
    """One smbd per host; a config text may add lines to [global] ("G:...") or a share."""
    servers: dict[str, SmbServer] = {}
    try:
        for name, extra in configs.items():
            server = SmbServer(root, name)
            server.port = free_port()
            text = server.default_config()
            if extra:
                text = text.replace("[global]\n", "[global]\n" + extra, 1)
            servers[name] = server.start(text)
    except BaseException:
        for server in servers.values():
            server.stop()
        raise
    return servers


@pytest.fixture
def drift_bed(tmp_path: Path, sshd: SshServer, user_key: Path, known_hosts: Path) -> Iterator[Bed]:
    servers = start_servers(
        tmp_path,
        {
            "fs1": None,
            "fs2": f"  socket options = {SO_RCVBUF}\n",
            "fs3": "  log level = 2\n",
        },
    )
    with open(servers["fs3"].config, "a") as handle:
        handle.write("\n[projects]\n  path = /tmp\n  read only = yes\n")
    configs = {name: str(server.config) for name, server in servers.items()}
    inventory = write_inventory(tmp_path / "inventory.yml", sshd.port, user_key, known_hosts, configs)
    # A host nobody answers for: reported, never fatal to the others.
    document = yaml.safe_load(inventory.read_text())
    document["all"]["children"]["fileservers"]["hosts"]["fs4"] = {
        "ansible_host": "127.0.0.1",
        "ansible_port": free_port(),
        "ansible_user": current_user(),
    }
    inventory.write_text(yaml.safe_dump(document))
    yield Bed(servers, inventory, known_hosts)
    for server in servers.values():
        server.stop()


def find(report: DriftReport, section: str, name: str) -> ParameterDrift:
    for drift in report.parameters:
        if drift.section == section and drift.parameter == name:
            return drift
    raise AssertionError(f"no drift reported for [{section}] {name}")


def test_drift_finds_the_planted_differences_and_how_to_fix_each(drift_bed: Bed) -> None:
    seen: list[str] = []
    report = fleet_drift(
        drift_bed.fleet().hosts,
        connector=drift_bed.connector(),  # type: ignore[arg-type]
        on_host=lambda status: seen.append(status.host),
    )
    assert sorted(seen) == ["fs1", "fs2", "fs3", "fs4"]
    by_host = {h.host: h for h in report.hosts}
    assert not by_host["fs4"].reachable and "unreachable" in (by_host["fs4"].error or "")
    assert all(by_host[h].reachable for h in ("fs1", "fs2", "fs3")), report.to_json()["hosts"]

    sockets = find(report, "global", "socket options")
    assert sockets.reference == "TCP_NODELAY"
    assert [(d.host, d.value, d.activation) for d in sockets.differing] == [
        ("fs2", SO_RCVBUF, Activation.RESTART)
    ]
    assert "SO_RCVBUF" in sockets.differing[0].why

    # testparm prints its own log level; the file's is what smbd uses.
    log_level = find(report, "global", "log level")
    assert log_level.values == {"fs1": "0", "fs2": "0", "fs3": "2"}
    assert [(d.host, d.expected, d.activation) for d in log_level.differing] == [
        ("fs3", "0", Activation.RELOAD)
    ]

    projects = next(s for s in report.shares if s.share == "projects")
    assert projects.present_on == ["fs3"] and projects.missing_on == ["fs1", "fs2"]
    # Each host's own port and directories: no majority, nobody "in the wrong".
    ports = find(report, "global", "smb ports")
    assert ports.reference is None and not ports.differing and len(set(ports.values.values())) == 3
    # The same value everywhere is no drift.
    assert all(d.parameter != "workgroup" for d in report.parameters)


def test_drift_against_a_golden_file_with_overlays(drift_bed: Bed, tmp_path: Path) -> None:
    golden = tmp_path / "golden.conf"
    golden.write_text(
        "[global]\n  workgroup = TESTGRP\n  log level = 1\n  socket options = TCP_NODELAY\n"
        "[bench]\n  read only = no\n  guest ok = yes\n[archive]\n  path = /srv/archive\n"
    )
    overlay_file = tmp_path / "fs1-overlay.conf"
    overlay_file.write_text("[global]\n  log level = 0\n")
    document = yaml.safe_load(drift_bed.inventory.read_text())
    hosts = document["all"]["children"]["fileservers"]["hosts"]
    del hosts["fs4"]
    hosts["fs1"]["samba_overlay"] = overlay_file.name  # a fragment beside the inventory
    hosts["fs2"]["samba_overlay"] = {"global": {"socket options": SO_RCVBUF, "log level": 0}}  # a mapping
    hosts["fs3"]["samba_overlay"] = ["[global] log level = 2"]  # lines
    drift_bed.inventory.write_text(yaml.safe_dump(document))

    report = fleet_drift(
        drift_bed.fleet().hosts,
        golden=golden.read_bytes(),
        golden_name=str(golden),
        base_dir=drift_bed.inventory.parent,
        connector=drift_bed.connector(),  # type: ignore[arg-type]
    )
    assert all(h.reachable for h in report.hosts), report.to_json()["hosts"]
    # Every overlay says what the host has: none of them differs from its golden.
    for name in ("log level", "socket options"):
        assert not any(d.section == "global" and d.parameter == name for d in report.parameters), name
    archive = next(s for s in report.shares if s.share == "archive")
    assert archive.missing_on == ["fs1", "fs2", "fs3"] and archive.present_on == []
    projects = next(s for s in report.shares if s.share == "projects")
    assert projects.not_in_golden_on == ["fs3"]
    # The golden file does not bind to an interface: every host differs, and bringing
    # "bind interfaces only" in line means a restart.
    binds = find(report, "global", "bind interfaces only")
    assert {d.host for d in binds.differing} == {"fs1", "fs2", "fs3"}
    assert all(d.activation is Activation.RESTART for d in binds.differing)

    # Without fs2's overlay its SO_RCVBUF is drift that only a restart removes.
    hosts["fs2"].pop("samba_overlay")
    drift_bed.inventory.write_text(yaml.safe_dump(document))
    report = fleet_drift(
        drift_bed.fleet().select("fs2").hosts,
        golden=golden.read_bytes(),
        connector=drift_bed.connector(),  # type: ignore[arg-type]
    )
    sockets = find(report, "global", "socket options")
    assert [(d.host, d.expected, d.activation) for d in sockets.differing] == [
        ("fs2", "TCP_NODELAY", Activation.RESTART)
    ]
    log_level = find(report, "global", "log level")
    assert [(d.host, d.value, d.expected, d.activation) for d in log_level.differing] == [
        ("fs2", "0", "1", Activation.RELOAD)
    ]


def test_drift_verb_prints_json_and_a_table(
    drift_bed: Bed, capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    # The CLI connects with the user's known_hosts, as ssh does.
    (isolated_home / ".ssh" / "known_hosts").write_text(drift_bed.known_hosts.read_text())
    code = main(["fleet", "drift", "--inventory", str(drift_bed.inventory), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [h["host"] for h in data["hosts"] if not h["reachable"]] == ["fs4"]
    sockets = next(p for p in data["parameters"] if p["parameter"] == "socket options")
    assert sockets["differing"][0]["host"] == "fs2" and sockets["differing"][0]["needs"] == "restart"

    code = main(["fleet", "drift", "--inventory", str(drift_bed.inventory), "--limit", "fs1:fs2:fs3"])
    out = capsys.readouterr().out
    assert code == 0
    line = next(line for line in out.splitlines() if "socket options" in line)
    assert "fs2" in line and "restart" in line
    assert "projects" in out


def test_edits_and_overlays_are_read_as_written(tmp_path: Path) -> None:
    assert parse_edit("[global] log level = 2") == Edit("global", "log level", "2")
    assert parse_edit("[My Share]  read   only=no") == Edit("My Share", "read only", "no")
    assert parse_edit("log level = 1") == Edit("global", "log level", "1")
    assert parse_edit("[global] socket options", unset=True) == Edit("global", "socket options", None)
    assert parse_edit("[global] comment =") == Edit("global", "comment", "")
    with pytest.raises(Exception, match="no value"):
        parse_edit("[global] log level")
    fragment = tmp_path / "o.conf"
    fragment.write_text("; host overlay\n[global]\n netbios name = FS1\n[data]\n path = /srv/d\n")
    assert overlay_edits("o.conf", tmp_path) == [
        Edit("global", "netbios name", "FS1"),
        Edit("data", "path", "/srv/d"),
    ]
    assert overlay_edits({"global": {"oplocks": False, "comment": None}}, None) == [
        Edit("global", "oplocks", "no"),
        Edit("global", "comment", None),
    ]
