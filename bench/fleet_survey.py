"""Wall time of ``sambatune fleet survey`` over 20 servers, against Ansible's fact gathering.

    .venv/bin/python bench/fleet_survey.py [--hosts 20] [--concurrency 20] [--runs 3]

Builds the fleet test bed (tests/testbed/fleet.py: one sshd on 127.0.0.N and one smbd
per host), writes its Ansible inventory and known_hosts, then times the CLI as an admin
runs it (a process of its own, ``--json``): first with no parameter catalog on record
(one host builds it from testparm, the rest wait and read it), then ``--runs`` times
with it cached, as every later survey is. The peers, where Ansible is installed, with as
many forks over the same sshd's, rounds alternating: ``ansible all -m setup`` (the facts
an Ansible admin gathers first; issue 32's goal is a survey in at most half its time)
and the cheapest Ansible look at Samba, ``ansible all -m command -a 'testparm -s FILE'``.
Prints one JSON object.

Each host is made a server of its own, as in a real fleet (as root: ``own_processes``,
its sshd and smbd in pid and mount namespaces of their own): otherwise every host's
survey sees all 20 smbd of this machine and looks into each, 20 times the work a real
server asks. The inventory names ``ansible_python_interpreter=/usr/bin/python3``, which
both tools then use: PATH's python3 may be a pyenv shim (0.1 s of CPU a start).

Every command over SSH runs through the account's shell, and bash run by sshd reads
~/.bashrc: on a machine whose root .bashrc runs ``pyenv init`` that is about 0.1 s of
CPU per command. So the output also gives ``ssh_command_cpu_seconds``, the machine's
CPU for one ``true`` over SSH to a bed host: compare runs only when it is alike (about
0.01 s with a plain .bashrc).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from testbed.fleet import FleetBed, own_processes  # noqa: E402
from testbed.sshd import keygen  # noqa: E402

GOAL_SECONDS = 10.0
#: fleet survey / ansible -m setup, same hosts, same forks (issue 32 item 6).
GOAL_RATIO_TO_SETUP = 0.5


def time_fleet_survey(
    inventory: Path, known_hosts: Path, concurrency: int, env: dict[str, str]
) -> dict[str, Any]:
    command = [
        sys.executable,
        "-m",
        "sambatune",
        "fleet",
        "survey",
        "--inventory",
        str(inventory),
        "--known-hosts",
        str(known_hosts),
        "--concurrency",
        str(concurrency),
        "--json",
    ]
    began = time.monotonic()
    cpu_before = _children_cpu()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    seconds = time.monotonic() - began
    report = json.loads(done.stdout)
    return {
        "seconds": round(seconds, 2),
        # This computer's side alone (the CLI process): the rest of the machine's CPU went
        # to the servers' sshd, shells and commands.
        "client_cpu_seconds": round(_children_cpu() - cpu_before, 2),
        "exit_status": done.returncode,
        "statuses": report.get("statuses"),
        "slowest_host_seconds": max((r["seconds"] for r in report.get("results", [])), default=None),
    }


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def ssh_command_cpu(bed: Any, inventory: Path, known_hosts: Path) -> float:
    """The whole machine's CPU seconds for one command over SSH (the shell's start included)."""
    from sambatune.fleet.ansible_inventory import load_inventory
    from sambatune.fleet.survey import FleetPrompts
    from sambatune.remote.connection import open_target

    def busy() -> float:
        with open("/proc/stat") as stat:
            ticks = [int(v) for v in stat.readline().split()[1:]]
        return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")

    host = load_inventory(inventory).hosts[0]
    transport = open_target(host.connection_options(known_hosts=known_hosts), FleetPrompts())
    try:
        transport.run(["true"])
        before = busy()
        for _ in range(10):
            transport.run(["true"])
        return round((busy() - before) / 10, 3)
    finally:
        transport.close()


def time_ansible(
    inventory: Path, known_hosts: Path, forks: int, env: dict[str, str], module: tuple[str, ...]
) -> dict[str, Any] | None:
    ansible = shutil.which("ansible", path=str(Path(sys.executable).parent)) or shutil.which("ansible")
    if ansible is None:
        return None
    command = [
        ansible,
        "all",
        "-i",
        str(inventory),
        "-f",
        str(forks),
        *module,
        # '=' form: argparse would take a value starting with '-o' for an option
        f"--ssh-common-args=-o UserKnownHostsFile={known_hosts} -o StrictHostKeyChecking=yes",
    ]
    began = time.monotonic()
    done = subprocess.run(
        command,
        # No ControlPersist masters: one command per host gains nothing from them, and
        # they would outlive the bed's sshd's.
        env={**env, "ANSIBLE_HOST_KEY_CHECKING": "True", "ANSIBLE_SSH_ARGS": "-o ControlMaster=no"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    seconds = round(time.monotonic() - began, 2)
    if done.returncode != 0:  # a failed peer is no figure: say why instead
        return {
            "seconds": seconds,
            "exit_status": done.returncode,
            "error": done.stdout[-300:] + done.stderr[-300:],
        }
    return {"seconds": seconds, "exit_status": done.returncode}


SETUP = ("-m", "ansible.builtin.setup")
TESTPARM = ("-m", "ansible.builtin.command", "-a", "testparm -s --suppress-prompt {{ samba_conf }}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    load_before = os.getloadavg()
    root = Path(tempfile.mkdtemp(prefix="sambatune-fleet-bench-"))
    key = keygen(root / "id_ed25519", comment="sambatune-fleet-bench")
    began = time.monotonic()
    bed = FleetBed(root / "bed", key, count=args.hosts).start()
    try:
        own = os.geteuid() == 0
        if own:
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(own_processes, bed.hosts))
        started_in = time.monotonic() - began
        inventory = bed.write_inventory(root / "hosts.ini", python="/usr/bin/python3")
        known_hosts = bed.write_known_hosts(root / "known_hosts")
        env = {
            **os.environ,
            "HOME": str(root),
            "SAMBATUNE_HOME": str(root / "sambatune-home"),
            "ANSIBLE_LOCAL_TEMP": str(root / "ansible-tmp"),
        }
        env.pop("SSH_AUTH_SOCK", None)
        per_command = ssh_command_cpu(bed, inventory, known_hosts)
        cold = time_fleet_survey(inventory, known_hosts, args.concurrency, env)
        warm: list[dict[str, Any]] = []
        ansible: list[dict[str, Any]] = []
        setup: list[dict[str, Any]] = []
        for _ in range(args.runs):
            warm.append(time_fleet_survey(inventory, known_hosts, args.concurrency, env))
            facts = time_ansible(inventory, known_hosts, args.concurrency, env, SETUP)
            if facts is not None:
                setup.append(facts)
            peer = time_ansible(inventory, known_hosts, args.concurrency, env, TESTPARM)
            if peer is not None:
                ansible.append(peer)
        median = statistics.median(run["seconds"] for run in warm)
        setup_median = statistics.median(r["seconds"] for r in setup) if setup else None
        result = {
            "hosts": args.hosts,
            "concurrency": args.concurrency,
            "bed_start_seconds": round(started_in, 2),
            "bed_parts_seconds": {k: round(v, 2) for k, v in bed.start_seconds.items()},
            "hosts_with_own_processes": own,
            "load_average_before": load_before,
            "ssh_command_cpu_seconds": per_command,
            "fleet_survey_first_seconds": cold,
            "fleet_survey_cached_runs": warm,
            "fleet_survey_cached_median_seconds": median,
            "ansible_setup_runs": setup or "ansible not installed",
            "ansible_setup_median_seconds": setup_median,
            "ratio_to_ansible_setup": round(median / setup_median, 2) if setup_median else None,
            "goal_ratio_to_setup": GOAL_RATIO_TO_SETUP,
            "ansible_testparm_runs": ansible or "ansible not installed",
            "ansible_testparm_median_seconds": statistics.median(r["seconds"] for r in ansible)
            if ansible
            else None,
            "goal_seconds": GOAL_SECONDS,
            "goal_met": median < GOAL_SECONDS,
            "load_average_after": os.getloadavg(),
        }
    finally:
        bed.stop()
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
