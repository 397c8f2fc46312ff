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
from sambatune.fleet.ansible_inventory import load_inventory
from sambatune.fleet.change import Edit, overlay_edits, parse_edit
from sambatune.fleet.drift import DriftReport, ParameterDrift, fleet_drift
from sambatune.fleet.inventory import Fleet
from sambatune.fleet.live import Connector, connect
from testbed.fleet import FleetBed
from testbed.smbd import SmbServer
from testbed.sshd import current_user

SO_RCVBUF = "TCP_NODELAY SO_RCVBUF=65536"


@dataclass
class Bed:
    """Hosts nas01..nasNN of a fleet bed of this test's own (127.0.0.2 and up, each its
    own sshd and host key, and its own smbd), in an inventory."""

    fleet_bed: FleetBed
    inventory: Path
    known_hosts: Path

    @property
    def servers(self) -> dict[str, SmbServer]:
        return {host.name: host.smbd for host in self.fleet_bed.hosts}

    def fleet(self) -> Fleet:
        return load_inventory(self.inventory)

    def connector(self) -> Connector:
        return lambda host: connect(host, known_hosts=self.known_hosts)

    def stop(self) -> None:
        self.fleet_bed.stop()


def start_bed(
    root: Path,
    user_key: Path,
    plants: dict[str, str | None],
    extra: dict[str, object] | None = None,
) -> Bed:
    """A bed of len(plants) hosts; a plant is text added to that host's [global]."""
    bed = FleetBed(root / "fleet", user_key, count=len(plants)).start()
    try:
        assert [host.name for host in bed.hosts] == list(plants)
        for host in bed.hosts:
            plant = plants[host.name]
            if plant:
                host.smbd.stop()
                host.smbd.start(host.smbd.config.read_text().replace("[global]\n", "[global]\n" + plant, 1))
        known_hosts = bed.write_known_hosts(root / "fleet_known_hosts")
        hosts: dict[str, dict[str, object]] = {}
        for host in bed.hosts:
            hosts[host.name] = {
                "ansible_host": host.address,
                "ansible_port": host.sshd.port,
                "samba_conf": str(host.smbd.config),
            }
        variables = {
            "ansible_user": current_user(),
            "ansible_ssh_private_key_file": str(user_key),
            # The test bed's python3: Ansible's discovery would find pyenv's shims first.
            "ansible_python_interpreter": "/usr/bin/python3",
            "ansible_ssh_common_args": f"-o UserKnownHostsFile={known_hosts} -o StrictHostKeyChecking=yes",
            # No ssh master left running after the test (ControlPersist would keep one).
            "ansible_ssh_args": "-o ControlMaster=no",
            **(extra or {}),
        }
        inventory = root / "inventory.yml"
        inventory.write_text(
            yaml.safe_dump({"all": {"children": {"fileservers": {"hosts": hosts, "vars": variables}}}})
        )
    except BaseException:
        bed.stop()
        raise
    return Bed(bed, inventory, known_hosts)


def inventory_hosts(bed: Bed) -> tuple[dict[str, object], dict[str, dict[str, object]]]:
    """The inventory as data, and its hosts, to change and write back."""
    document = yaml.safe_load(bed.inventory.read_text())
    return document, document["all"]["children"]["fileservers"]["hosts"]


@pytest.fixture
def drift_bed(tmp_path: Path, user_key: Path) -> Iterator[Bed]:
    bed = start_bed(
        tmp_path,
        user_key,
        {
            "nas01": None,
            "nas02": f"  socket options = {SO_RCVBUF}\n",
            "nas03": "  log level = 2\n",
            "nas04": None,
        },
    )
    with open(bed.servers["nas03"].config, "a") as handle:
        handle.write("\n[projects]\n  path = /tmp\n  read only = yes\n")
    # A host that is down: reported, never fatal to the others.
    bed.fleet_bed.take_down("nas04")
    yield bed
    bed.stop()


def find(report: DriftReport, section: str, name: str) -> ParameterDrift:
    for drift in report.parameters:
        if drift.section == section and drift.parameter == name:
            return drift
    raise AssertionError(f"no drift reported for [{section}] {name}")


def test_drift_finds_the_planted_differences_and_how_to_fix_each(drift_bed: Bed) -> None:
    seen: list[str] = []
    report = fleet_drift(
        drift_bed.fleet().hosts,
        connector=drift_bed.connector(),
        on_host=lambda status: seen.append(status.host),
    )
    assert sorted(seen) == ["nas01", "nas02", "nas03", "nas04"]
    by_host = {h.host: h for h in report.hosts}
    assert not by_host["nas04"].reachable and "unreachable" in (by_host["nas04"].error or "")
    assert all(by_host[h].reachable for h in ("nas01", "nas02", "nas03")), report.to_json()["hosts"]

    sockets = find(report, "global", "socket options")
    assert sockets.reference == "TCP_NODELAY"
    assert [(d.host, d.value, d.activation) for d in sockets.differing] == [
        ("nas02", SO_RCVBUF, Activation.RESTART)
    ]
    assert "SO_RCVBUF" in sockets.differing[0].why

    # testparm prints its own log level; the file's is what smbd uses.
    log_level = find(report, "global", "log level")
    assert log_level.values == {"nas01": "0", "nas02": "0", "nas03": "2"}
    assert [(d.host, d.expected, d.activation) for d in log_level.differing] == [
        ("nas03", "0", Activation.RELOAD)
    ]

    projects = next(s for s in report.shares if s.share == "projects")
    assert projects.present_on == ["nas03"] and projects.missing_on == ["nas01", "nas02"]
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
    overlay_file = tmp_path / "nas01-overlay.conf"
    overlay_file.write_text("[global]\n  log level = 0\n")
    document, hosts = inventory_hosts(drift_bed)
    del hosts["nas04"]
    hosts["nas01"]["samba_overlay"] = overlay_file.name  # a fragment beside the inventory
    hosts["nas02"]["samba_overlay"] = {"global": {"socket options": SO_RCVBUF, "log level": 0}}  # a mapping
    hosts["nas03"]["samba_overlay"] = ["[global] log level = 2"]  # lines
    drift_bed.inventory.write_text(yaml.safe_dump(document))

    report = fleet_drift(
        drift_bed.fleet().hosts,
        golden=golden.read_bytes(),
        golden_name=str(golden),
        base_dir=drift_bed.inventory.parent,
        connector=drift_bed.connector(),
    )
    assert all(h.reachable for h in report.hosts), report.to_json()["hosts"]
    # Every overlay says what the host has: none of them differs from its golden.
    for name in ("log level", "socket options"):
        assert not any(d.section == "global" and d.parameter == name for d in report.parameters), name
    archive = next(s for s in report.shares if s.share == "archive")
    assert archive.missing_on == ["nas01", "nas02", "nas03"] and archive.present_on == []
    projects = next(s for s in report.shares if s.share == "projects")
    assert projects.not_in_golden_on == ["nas03"]
    # The golden file does not bind to an interface: every host differs, and bringing
    # "bind interfaces only" in line means a restart.
    binds = find(report, "global", "bind interfaces only")
    assert {d.host for d in binds.differing} == {"nas01", "nas02", "nas03"}
    assert all(d.activation is Activation.RESTART for d in binds.differing)

    # Without nas02's overlay its SO_RCVBUF is drift that only a restart removes.
    hosts["nas02"].pop("samba_overlay")
    drift_bed.inventory.write_text(yaml.safe_dump(document))
    report = fleet_drift(
        drift_bed.fleet().select("nas02").hosts,
        golden=golden.read_bytes(),
        connector=drift_bed.connector(),
    )
    sockets = find(report, "global", "socket options")
    assert [(d.host, d.expected, d.activation) for d in sockets.differing] == [
        ("nas02", "TCP_NODELAY", Activation.RESTART)
    ]
    log_level = find(report, "global", "log level")
    assert [(d.host, d.value, d.expected, d.activation) for d in log_level.differing] == [
        ("nas02", "0", "1", Activation.RELOAD)
    ]


def test_drift_verb_prints_json_and_a_table(
    drift_bed: Bed, capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    # The CLI trusts ~/.ssh/known_hosts, as ssh does.
    (isolated_home / ".ssh" / "known_hosts").write_text(drift_bed.known_hosts.read_text())
    code = main(["fleet", "drift", "--inventory", str(drift_bed.inventory), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 4 | 1 and data["drifts"]  # drift found, and a host not read
    assert [h["host"] for h in data["hosts"] if not h["reachable"]] == ["nas04"]
    sockets = next(p for p in data["parameters"] if p["parameter"] == "socket options")
    assert sockets["differing"][0]["host"] == "nas02" and sockets["differing"][0]["needs"] == "restart"

    code = main(["fleet", "drift", "--inventory", str(drift_bed.inventory), "--limit", "nas01:nas02:nas03"])
    out = capsys.readouterr().out
    assert code == 4  # every host read, drift found
    line = next(line for line in out.splitlines() if "socket options" in line)
    assert "nas02" in line and "restart" in line
    assert "projects" in out

    code = main(["fleet", "drift", "--inventory", str(drift_bed.inventory), "--limit", "nas01", "--json"])
    assert code == 0 and not json.loads(capsys.readouterr().out)["drifts"]  # read, nothing differs


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
