"""Server text is data: a hostile fleet's export never runs anything on the admin's
computer, under ansible-playbook (check mode and real) or `sambatune fleet run`
(issue 27, critical).

Ansible evaluates strings as Jinja2 templates on the controller, and
``lookup('pipe', ...)`` runs a shell command there. Each vector below was seen to run
one: a config path of the running smbd, a value in smb.conf that travels through the
restart reason, the testparm path the server reports, and an inventory value marked
``!unsafe`` whose tag an export dropped. Each payload writes a file PWNED*.txt; after
every run, none exists anywhere, and the literal text is what Ansible showed.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from faults import FaultyTransport, Rule
from sambatune.cli.fleet_rollout import print_export
from sambatune.cli.main import main
from sambatune.fleet.ansible_inventory import load_inventory
from sambatune.fleet.ansible_run import ansible_unavailable
from sambatune.fleet.ansible_yaml import UnsafeText, dump
from sambatune.fleet.change import parse_edit
from sambatune.fleet.export import fleet_export
from sambatune.fleet.inventory import FleetHost
from sambatune.fleet.live import _FIND_TOOLS
from sambatune.remote.transport import Transport
from test_fleet_drift import Bed, inventory_hosts, start_bed
from testbed.fleet import own_processes

pytestmark = pytest.mark.skipif(ansible_unavailable() is not None, reason=str(ansible_unavailable()))


def payload(n: int) -> str:
    """Jinja2 that, if Ansible ever templates it, runs ``id`` and leaves PWNED<n>.txt."""
    return "{{ lookup('pipe','id > PWNED" + str(n) + ".txt') }}"


# Jinja2's other block kinds, quotes, and characters YAML gives a meaning to.
BLOCKS = "{% for i in [1] %}{{ lookup('pipe','id > PWNED9.txt') }}{% endfor %} {# gone #}"
SPECIALS = 'it\'s "q": - [x] &a *b !t |> %p #h'
#: A restart-class value (socket options taken away) that carries every payload.
SOCKET_OPTIONS = f"TCP_NODELAY {payload(2).replace(' ', '')} {BLOCKS} {SPECIALS}"
#: A share name and value with the same.
SHARE = f"share {payload(6)} " + SPECIALS.replace("[x]", "(x)")  # a name holds no ]


# Ansible's own loading of a vars file, in a process of its own (Ansible and Qt's
# import hooks do not share one): each string with whether Ansible would template it.
_TRUST = """
import json, sys
from ansible.parsing.dataloader import DataLoader
from ansible.template import is_trusted_as_template
def walk(value):
    if isinstance(value, str):
        return [value, is_trusted_as_template(value)]
    if isinstance(value, dict):
        return {str(k): walk(v) for k, v in value.items()}
    if isinstance(value, list):
        return [walk(v) for v in value]
    return value
data = DataLoader().load_from_file(sys.argv[1], cache="none", unsafe=True, trusted_as_template=True)
print(json.dumps(walk(data)))
"""


def ansible_reads(path: Path) -> Any:
    """``path`` as Ansible loads host_vars and a YAML inventory, each string as
    ``[text, templated]``: a string of the file is a template unless tagged !unsafe."""
    done = subprocess.run(
        [sys.executable, "-c", _TRUST, str(path)], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout)


def pwned(*places: Path) -> list[Path]:
    return sorted({p for place in places for p in place.rglob("PWNED*")})


@pytest.fixture
def hostile(tmp_path: Path, user_key: Path, isolated_home: Path) -> Iterator[Bed]:
    bed = start_bed(
        tmp_path,
        user_key,
        {
            "nas01": None,
            "nas02": f"  socket options = {SOCKET_OPTIONS}\n",
            "nas03": None,
            "nas04": None,
        },
    )
    try:
        fleet = bed.fleet_bed
        # nas01 and nas04: hosts of their own whose smbd runs from a hostile path; the
        # inventory names no samba_conf, so the path comes from the server.
        own_processes(fleet.host("nas01"), tmp_path / "srv" / payload(1) / "smb.conf")
        own_processes(fleet.host("nas04"), tmp_path / "srv" / f"{SPECIALS}\n{BLOCKS}" / "smb.conf")
        document, hosts = inventory_hosts(bed)
        del hosts["nas01"]["samba_conf"], hosts["nas04"]["samba_conf"]
        group: dict[str, str] = document["all"]["children"]["fileservers"]["vars"]  # type: ignore[index]
        # A value the admin marked !unsafe, which Ansible uses (ssh's arguments).
        group["ansible_ssh_common_args"] = UnsafeText(
            group["ansible_ssh_common_args"] + " -o SetEnv=SAMBATUNE_NOTE=" + payload(4).replace(" ", "")
        )
        bed.inventory.write_text(dump(document))
        (isolated_home / ".ssh" / "known_hosts").write_text(bed.known_hosts.read_text())
        yield bed
    finally:
        bed.stop()


def hostile_testparm(tmp_path: Path) -> Path:
    """A testparm at a path a hostile server could report (the real one, linked)."""
    folder = tmp_path / "tools" / f"{payload(3)} {BLOCKS}"
    folder.mkdir(parents=True)
    link = folder / "testparm"
    link.symlink_to(shutil.which("testparm") or "/usr/bin/testparm")
    return link


@pytest.mark.skipif(os.geteuid() != 0, reason="hosts with processes of their own need namespaces (root)")
@pytest.mark.slow
@pytest.mark.timeout(900)  # an export and three ansible-playbook runs over four hosts
def test_a_hostile_fleets_export_is_data_to_ansible(
    hostile: Bed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    testparm = hostile_testparm(tmp_path)
    # nas03 reports that testparm (the wire is tampered; the server's tools are real).
    reported = f"testparm\t{testparm}\nsmbcontrol\t{shutil.which('smbcontrol')}\n"
    base = hostile.connector()

    def connector(host: FleetHost) -> Transport:
        transport = base(host)
        if host.name != "nas03":
            return transport
        rule = Rule(
            lambda argv: _FIND_TOOLS in argv,
            lambda _argv: ("printf", "%s", reported),
            times=99,
        )
        return FaultyTransport(transport, [rule])

    out = tmp_path / "export"
    edits = [
        parse_edit("[global] socket options", unset=True),
        parse_edit("[global] log level = 1"),
        parse_edit(f"[{SHARE}] comment = {BLOCKS} {SPECIALS}"),
    ]
    fleet = load_inventory(hostile.inventory)
    report = fleet_export(fleet.hosts, edits, out, wave=4, connector=connector)
    assert report.ok, report.to_json()
    paths = {c.host.name: c.path for c in report.exported}
    assert paths["nas01"] == str(tmp_path / "srv" / payload(1) / "smb.conf")
    assert "\n" in paths["nas04"]
    assert {c.host.name: c.tools["testparm"] for c in report.exported}["nas03"] == str(testparm)
    # What the command line prints of the export keeps each path on its line.
    capsys.readouterr()
    print_export(report)
    shown = capsys.readouterr().out
    assert "^J{% for i in [1] %}" in shown and not [x for x in shown.splitlines() if x.startswith("{% for")]

    # Every string the playbook reads of a host is data to Ansible's own loader, and
    # the inventory's !unsafe survived.
    for name in ("nas01", "nas02", "nas03", "nas04"):
        values = ansible_reads(out / "host_vars" / f"{name}.yml")
        texts = {k: v for k, v in values.items() if isinstance(v, list)}
        # Jinja2 starts nothing without a "{": text without one ('' or 'yes') is written
        # as a plain quoted string, which Ansible 2.19 would not keep as text if tagged.
        assert texts and not any(templated and "{" in text for text, templated in texts.values()), texts
        assert values["samba_service"] == ["", True] and values["samba_restart_needed"] in (True, False)
    assert ansible_reads(out / "host_vars" / "nas01.yml")["samba_conf"][0] == paths["nas01"]
    inventory = ansible_reads(out / "inventory.yml")
    common, templated = inventory["all"]["hosts"]["nas02"]["ansible_ssh_common_args"]
    assert payload(4).replace(" ", "") in common and not templated

    # Private: the folder and everything in it are the admin's alone.
    for path in [out, *out.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))

    # ansible-playbook --check --diff, as the README says, over all four hosts.
    checked = subprocess.run(
        [str(Path(sys.executable).with_name("ansible-playbook")), "site.yml", "--check", "--diff"],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "ANSIBLE_NOCOLOR": "1"},
    )
    print(checked.stdout[-6000:], checked.stderr[-3000:])
    assert not pwned(tmp_path, Path.cwd()), "a server's text ran as a template in --check"
    # nas02's change needs a restart: refused, its reason shown as the server wrote it.
    assert checked.returncode != 0
    assert "PWNED2" in checked.stdout and "{% for i in [1] %}" in checked.stdout
    live = {name: server.config.read_bytes() for name, server in hostile.servers.items()}
    assert {n: s.config.read_bytes() for n, s in hostile.servers.items()} == live  # check changed nothing

    # A real run through `sambatune fleet run` (ansible-runner) of the other three.
    capsys.readouterr()
    code = main(["fleet", "run", str(out), "--limit", "nas01,nas03,nas04", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert not pwned(tmp_path, Path.cwd()), "a server's text ran as a template in fleet run"
    assert code == 0 and data["failed_hosts"] == [], data
    assert stat.S_IMODE((out / ".ansible-runner").stat().st_mode) == 0o700
    for name in ("nas01", "nas03", "nas04"):
        server = hostile.fleet_bed.host(name).smbd
        assert server.config.read_bytes() == (out / "files" / name / "smb.conf").read_bytes(), name

    # And nas02 for real: refused before anything changes, the text shown as data.
    code = main(["fleet", "run", str(out), "--limit", "nas02", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert not pwned(tmp_path, Path.cwd())
    assert code == 1 and data["failed_hosts"] == ["nas02"]
    refused = next(e for e in data["events"] if e["event"] == "failed" and e["host"] == "nas02")
    assert "lookup('pipe','id>PWNED2.txt')" in refused["message"]
    assert hostile.servers["nas02"].config.read_bytes() == live["nas02"]


def test_unsafe_inventory_values_are_written_unsafe_again(tmp_path: Path) -> None:
    """The reader keeps Ansible's tag on scalars, lists and mappings."""
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(
        "all:\n  hosts:\n    nas1:\n"
        f'      note: !unsafe "{payload(1)}"\n'
        f'      notes: !unsafe ["{payload(2)}", 3]\n'
        f'      plain: "{{{{ inventory_hostname }}}}.lan"\n'
    )
    host = load_inventory(inventory).host("nas1")
    assert isinstance(host.variables["note"], UnsafeText)
    assert isinstance(host.variables["notes"][0], UnsafeText) and host.variables["notes"][1] == 3
    assert not isinstance(host.variables["plain"], UnsafeText)
    text = dump({"v": host.variables})
    assert yaml.safe_load(text.replace("!unsafe", "")) == {"v": dict(host.variables)}
    (tmp_path / "written.yml").write_text(text)
    loaded = ansible_reads(tmp_path / "written.yml")["v"]
    assert loaded["note"] == [payload(1), False] and loaded["notes"] == [[payload(2), False], 3]
    # The admin's own template stays one: Ansible would have evaluated it in their inventory too.
    assert loaded["plain"] == ["{{ inventory_hostname }}.lan", True]


def test_text_plain_yaml_reads_as_another_type_stays_text() -> None:
    """'' and 'yes' tagged !unsafe come back as null and true from ansible-core 2.19."""
    values = ["", "yes", "123", "null", "1.5", "2026-12-03", payload(1)]
    text = dump({f"v{i}": UnsafeText(v) for i, v in enumerate(values)})
    assert text.count("!unsafe") == 1
    assert yaml.safe_load(text.replace("!unsafe", "")) == {f"v{i}": v for i, v in enumerate(values)}


def test_a_refusal_quoting_server_text_stays_one_line_of_the_readme() -> None:
    from sambatune.fleet.export import readme

    why = "[data] is defined in /etc/samba/x\n## Forged heading {{ lookup('pipe','id') }}.conf line 1"
    text = readme([parse_edit("[global] deadtime = 15")], [], {"nas09": why}, wave=1, allow_restart=False)
    left_out = [line for line in text.splitlines() if line.startswith("- **nas09**")]
    assert len(left_out) == 1 and "{{ lookup('pipe','id') }}" in left_out[0]
    assert "## Forged heading" not in text.replace(left_out[0], "")
