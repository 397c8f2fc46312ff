"""Tuning "this computer" for real, inside network namespaces the tests create.

Topology: client --veth-- router --veth-- server, each its own namespace. SambaTune
runs *inside* the client namespace (``ip netns exec``), so its sysctl writes and
``ip link`` changes land there and never on the host. Only per-namespace sysctls are
touched: a net.* sysctl that exists in a brand-new namespace is a per-namespace copy
(the kernel registers the global-only ones, like net.core.netdev_max_backlog, in the
initial namespace alone), and the tests check that first. The persistence file goes to
a temp dir, never /etc/sysctl.d. Namespaces and processes are removed even on failure.

The namespaces are built by ``testbed.netlab`` (black hole and fragmentation-needed
variants).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from testbed.netlab import (
    NAMESPACED,
    SERVER_IP,
    SYSCTLS,
    NetLab,
    host_values,
    lab,
    sh,
    writable_in,
)

pytestmark = [
    pytest.mark.needs_root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root to create network namespaces"),
    pytest.mark.skipif(shutil.which("ip") is None, reason="needs iproute2"),
]


@pytest.fixture
def blackhole_lab(tmp_path: Path) -> Iterator[NetLab]:
    yield from lab(tmp_path, blackhole=True)


@pytest.fixture
def pmtud_lab(tmp_path: Path) -> Iterator[NetLab]:
    yield from lab(tmp_path, blackhole=False)


def test_the_sysctls_written_are_per_namespace(blackhole_lab: NetLab) -> None:
    for name in NAMESPACED:
        assert writable_in(blackhole_lab.client, name), f"{name} is not per-namespace here"
    # A global-only sysctl is not visible in a new namespace at all ...
    missing = sh(
        "ip",
        "netns",
        "exec",
        blackhole_lab.client,
        "test",
        "-e",
        "/proc/sys/net/core/netdev_max_backlog",
        check=False,
    )
    assert missing.returncode != 0
    # ... and on recent kernels net.core.rmem_max is visible but read-only (the host's).


def test_plan_apply_and_restore_mtu_and_sysctls_inside_a_namespace(blackhole_lab: NetLab) -> None:
    lab = blackhole_lab
    host_before = host_values()
    original = {name: lab.sysctl(name) for name in SYSCTLS}
    assert lab.mtu() == 1500
    own_file = lab.sysctl_dir / "90-sambatune.conf"
    real_file_existed = Path("/etc/sysctl.d/90-sambatune.conf").exists()

    plan_path = lab.home / "plan.json"
    lab.home.mkdir(parents=True, exist_ok=True)
    plan = lab.cli(
        "plan",
        "--bandwidth",
        "10gbit",
        "--rtt",
        "20ms",
        "--server",
        SERVER_IP,
        "--sysctl-dir",
        str(lab.sysctl_dir),
        "-o",
        str(plan_path),
        "--json",
    )
    probe = plan["mtu"]["probe"]
    assert probe["method"] == "udp-dont-fragment"
    assert probe["path_mtu"] == 1400 and probe["black_hole"], probe
    changes = {c["catalog_id"]: c for c in plan["changes"]}
    assert changes["linux-interface-mtu"]["recommended"] == 1400
    assert changes["linux-tcp-mtu-probing"]["recommended"] == "1"
    assert changes["linux-tcp-rmem"]["action"] == "set"
    assert changes["linux-sysctl-file"]["setting"]["path"] == str(own_file)
    if writable_in(lab.client, "net.core.rmem_max"):
        assert changes["linux-rmem-max"]["action"] == "set"
    else:
        # Read-only inside a namespace: SambaTune says so instead of failing on apply.
        assert changes["linux-rmem-max"]["action"] == "none"
        assert any("net.core.rmem_max is read-only" in w for w in plan["warnings"])

    dry = lab.cli("apply", str(plan_path), "--dry-run", "--sysctl-dir", str(lab.sysctl_dir), "--json")
    assert dry["ok"] and dry["dry_run"]
    operations = [op for step in dry["steps"] for op in step["operations"]]
    assert f"ip link set dev {lab.client_dev} mtu 1400" in operations
    assert "sysctl -w net.ipv4.tcp_mtu_probing=1" in operations
    assert lab.mtu() == 1500 and not own_file.exists()

    applied = lab.cli("apply", str(plan_path), "--sysctl-dir", str(lab.sysctl_dir), "--json")
    assert applied["ok"], applied
    assert lab.mtu() == 1400
    assert "mtu 1400" in sh("ip", "-n", lab.client, "link", "show", "dev", lab.client_dev).stdout
    assert lab.sysctl("net.ipv4.tcp_mtu_probing") == "1"
    wanted_rmem = changes["linux-tcp-rmem"]["recommended"]
    assert lab.sysctl("net.ipv4.tcp_rmem") == wanted_rmem
    if changes["linux-rmem-max"]["action"] == "set":
        assert lab.sysctl("net.core.rmem_max") == changes["linux-rmem-max"]["recommended"]
    assert f"net.ipv4.tcp_rmem = {wanted_rmem}" in own_file.read_text()
    assert host_values() == host_before, "the host's own settings must not change"
    assert Path("/etc/sysctl.d/90-sambatune.conf").exists() == real_file_existed

    backup_id = applied["backup"]["id"]
    restore_script = Path(applied["backup"]["folder"]) / "restore.sh"
    assert f"ip link set dev {lab.client_dev} mtu 1500" in restore_script.read_text()

    restored = lab.cli("restore", backup_id, "--sysctl-dir", str(lab.sysctl_dir), "--json")
    assert restored["ok"], restored
    assert lab.mtu() == 1500
    assert {name: lab.sysctl(name) for name in SYSCTLS} == original
    assert not own_file.exists(), "a file that was absent is absent again"
    assert host_values() == host_before

    listed = lab.cli("backups", "--json")["backups"]
    assert [b["kind"] for b in listed] == ["before-apply", "before-restore"]
    assert listed[0]["restored_at"]


def test_fragmentation_needed_means_the_mtu_is_left_alone(pmtud_lab: NetLab) -> None:
    lab = pmtud_lab
    plan = lab.cli(
        "plan",
        "--bandwidth",
        "1gbit",
        "--rtt",
        "1ms",
        "--server",
        SERVER_IP,
        "--sysctl-dir",
        str(lab.sysctl_dir),
        "--json",
    )
    probe = plan["mtu"]["probe"]
    assert probe["path_mtu"] == 1400 and probe["icmp_feedback"] and not probe["black_hole"]
    assert plan["mtu"]["decision"]["target"] is None
    assert "linux-interface-mtu" not in {c["catalog_id"] for c in plan["changes"]}


@pytest.mark.skipif(shutil.which("ping") is None, reason="needs ping (iputils-ping)")
def test_ping_finds_the_same_black_hole(blackhole_lab: NetLab) -> None:
    code = (
        "from sambatune.client.pmtu import PingProber, probe_path_mtu; import json; "
        f"r = probe_path_mtu({SERVER_IP!r}, 1500, [PingProber({SERVER_IP!r}, 'linux')]); "
        "print(json.dumps(r.to_json()))"
    )
    done = sh("ip", "netns", "exec", blackhole_lab.client, sys.executable, "-c", code)
    result = json.loads(done.stdout)
    assert result["path_mtu"] == 1400 and result["black_hole"], result


def test_rtt_is_measured_with_tcp_connects(blackhole_lab: NetLab) -> None:
    lab = blackhole_lab
    lab.serve_tcp(4450)
    plan = lab.cli(
        "plan",
        "--server",
        SERVER_IP,
        "--port",
        "4450",
        "--bandwidth",
        "1gbit",
        "--no-mtu-probe",
        "--samples",
        "3",
        "--sysctl-dir",
        str(lab.sysctl_dir),
        "--json",
    )
    rtt = plan["measurements"]["rtt_measurement"]
    assert rtt["port"] == 4450 and rtt["answer"] == "connected"
    assert len(rtt["samples_seconds"]) == 3
    assert 0 < rtt["median_seconds"] < 0.5
    assert plan["window"]["rtt_seconds"] == rtt["median_seconds"]
    # A closed port answers with a reset: that round trip counts too.
    refused = lab.cli(
        "plan",
        "--server",
        SERVER_IP,
        "--port",
        "4451",
        "--bandwidth",
        "1gbit",
        "--no-mtu-probe",
        "--samples",
        "2",
        "--sysctl-dir",
        str(lab.sysctl_dir),
        "--json",
    )
    assert refused["measurements"]["rtt_measurement"]["answer"] == "refused"


def test_the_elevated_helper_applies_and_restores_from_request_files(
    blackhole_lab: NetLab, tmp_path: Path
) -> None:
    lab = blackhole_lab
    lab.home.mkdir(parents=True, exist_ok=True)
    plan = lab.cli(
        "plan",
        "--bandwidth",
        "1gbit",
        "--rtt",
        "10ms",
        "--mtu",
        "1280",
        "--interface",
        lab.client_dev,
        "--sysctl-dir",
        str(lab.sysctl_dir),
        "--json",
    )
    backups = tmp_path / "elevated-backups"
    request = tmp_path / "request.json"
    result = tmp_path / "result.json"
    request.write_text(
        json.dumps(
            {
                "kind": "sambatune-elevated-request",
                "version": 1,
                "action": "apply",
                "backup_root": str(backups),
                "plan": plan,
                "sysctl_dir": str(lab.sysctl_dir),
            }
        )
    )
    lab.cli("apply-elevated", str(request), str(result))
    data = json.loads(result.read_text())
    assert data["result"]["ok"], data
    assert lab.mtu() == 1280
    backup_id = data["result"]["backup"]["id"]
    assert (backups / backup_id / "backup.json").is_file()

    request.write_text(
        json.dumps(
            {
                "kind": "sambatune-elevated-request",
                "version": 1,
                "action": "restore",
                "backup_root": str(backups),
                "backup": backup_id,
                "sysctl_dir": str(lab.sysctl_dir),
            }
        )
    )
    lab.cli("apply-elevated", str(request), str(result))
    assert json.loads(result.read_text())["result"]["ok"]
    assert lab.mtu() == 1500

    # A broken request still produces a result file, with the error in it.
    request.write_text("{}")
    lab.cli("apply-elevated", str(request), str(result), check=False)
    assert json.loads(result.read_text())["error"]["message"]


def test_namespaces_are_gone_after_a_failing_test(tmp_path: Path) -> None:
    generator = lab(tmp_path, blackhole=True)
    made = next(generator)
    with pytest.raises(RuntimeError):
        generator.throw(RuntimeError("the test failed"))
    listing = sh("ip", "netns", "list").stdout
    assert made.client not in listing and made.server not in listing


def test_a_value_the_kernel_refuses_rolls_everything_back(blackhole_lab: NetLab) -> None:
    """Hand-edit a plan to write the read-only net.core.rmem_max: the write is refused
    (procps sysctl even exits 0), the read-back catches it, and the tcp_rmem change made
    just before is put back."""
    lab = blackhole_lab
    if writable_in(lab.client, "net.core.rmem_max"):
        pytest.skip("net.core.rmem_max is writable in a namespace on this kernel")
    lab.home.mkdir(parents=True, exist_ok=True)
    original = {name: lab.sysctl(name) for name in SYSCTLS}
    plan = lab.cli(
        "plan",
        "--bandwidth",
        "10gbit",
        "--rtt",
        "20ms",
        "--no-mtu-probe",
        "--sysctl-dir",
        str(lab.sysctl_dir),
        "--json",
    )
    for change in plan["changes"]:
        if change["catalog_id"] == "linux-rmem-max":
            change["action"] = "set"
            change["recommended"] = "50000000"
    edited = lab.home / "edited.json"
    edited.write_text(json.dumps(plan))
    env = {**os.environ, "SAMBATUNE_HOME": str(lab.home)}
    done = subprocess.run(
        [
            "ip",
            "netns",
            "exec",
            lab.client,
            sys.executable,
            "-m",
            "sambatune",
            "client",
            "apply",
            str(edited),
            "--sysctl-dir",
            str(lab.sysctl_dir),
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    result = json.loads(done.stdout)
    assert done.returncode == 1 and not result["ok"] and result["rolled_back"]
    assert "net.core.rmem_max" in result["message"]
    statuses = {s["setting"]: s["status"] for s in result["steps"]}
    assert statuses["net.ipv4.tcp_rmem"] == "rolled-back"
    assert statuses["net.core.rmem_max"] == "failed"
    assert {name: lab.sysctl(name) for name in SYSCTLS} == original
    assert not (lab.sysctl_dir / "90-sambatune.conf").exists()


def test_a_profile_plan_applied_in_a_namespace_never_lowers_a_value(blackhole_lab: NetLab) -> None:
    """A plan made for a Linux profile (1 Gbit/s x 10 ms: 2,500,000-byte ceilings) applied
    to a namespace whose values are partly higher: only the lower ones rise, only those
    are persisted, and the restore puts back exactly what was there."""
    from sambatune.client.linux_system import parse_sysctl_file
    from sambatune.client.osinfo import forced_profile
    from sambatune.client.planner import Measurements, build_plan
    from sambatune.client.system import ProfileSystem

    lab = blackhole_lab
    lab.home.mkdir(parents=True, exist_ok=True)
    sh(
        "ip",
        "netns",
        "exec",
        lab.client,
        "sysctl",
        "-qw",
        "net.ipv4.tcp_rmem=4096 131072 33554432",
        "net.ipv4.tcp_wmem=8192 32768 1000000",
    )
    for name in ("net.core.rmem_max", "net.core.wmem_max"):
        if not writable_in(lab.client, name) and int(lab.sysctl(name)) < 2_500_000:
            pytest.skip(
                f"{name} is the host's here and lower than the plan: the kernel would refuse the raise"
            )
    host_before = host_values()
    original = {name: lab.sysctl(name) for name in SYSCTLS}
    own_file = lab.sysctl_dir / "90-sambatune.conf"
    real_file_existed = Path("/etc/sysctl.d/90-sambatune.conf").exists()

    plan = build_plan(
        ProfileSystem(forced_profile("linux")), Measurements(1e9, "entered", 0.010, "entered")
    ).to_json()
    changes = {c["catalog_id"]: c for c in plan["changes"]}
    assert changes["linux-rmem-max"]["recommended"] == "2500000"
    assert changes["linux-tcp-rmem"]["at_least"] and changes["linux-rmem-max"]["at_least"]
    # The profile's file is /etc/sysctl.d's: the host's. Point it at the lab's.
    changes["linux-sysctl-file"]["setting"]["path"] = str(own_file)
    plan_path = lab.home / "profile-plan.json"
    plan_path.write_text(json.dumps(plan))

    dry = lab.cli("apply", str(plan_path), "--dry-run", "--sysctl-dir", str(lab.sysctl_dir), "--json")
    steps = {s["setting"]: s for s in dry["steps"]}
    assert steps["net.ipv4.tcp_rmem"]["status"] == "left-as-is"
    assert steps["net.ipv4.tcp_rmem"]["message"].startswith(
        "already 33554432, higher than the 2500000 this plan needs; left as is"
    )
    assert steps["net.core.rmem_max"]["status"] == "left-as-is"
    assert steps["net.ipv4.tcp_wmem"]["operations"] == ["sysctl -w 'net.ipv4.tcp_wmem=8192 32768 2500000'"]
    assert "rmem" not in steps[str(own_file)]["operations"][0]
    assert {name: lab.sysctl(name) for name in SYSCTLS} == original and not own_file.exists()

    applied = lab.cli("apply", str(plan_path), "--sysctl-dir", str(lab.sysctl_dir), "--json")
    assert applied["ok"], applied
    now = {name: lab.sysctl(name) for name in SYSCTLS}
    assert now["net.ipv4.tcp_rmem"] == "4096 131072 33554432"
    assert now["net.ipv4.tcp_wmem"] == "8192 32768 2500000", "min and default kept"
    for name in SYSCTLS:
        for old, new in zip(original[name].split(), now[name].split(), strict=True):
            assert int(new) >= int(old), f"{name} went down: {original[name]} -> {now[name]}"
    # Only what was raised is persisted: never a value lower than the kernel held.
    raised = {
        name: "2500000"
        for name in ("net.core.rmem_max", "net.core.wmem_max")
        if int(original[name]) < 2_500_000
    }
    assert parse_sysctl_file(own_file.read_text()) == {"net.ipv4.tcp_wmem": "8192 32768 2500000", **raised}
    assert host_values() == host_before, "the host's own settings must not change"
    assert Path("/etc/sysctl.d/90-sambatune.conf").exists() == real_file_existed

    restored = lab.cli("restore", applied["backup"]["id"], "--sysctl-dir", str(lab.sysctl_dir), "--json")
    assert restored["ok"], restored
    assert {name: lab.sysctl(name) for name in SYSCTLS} == original
    assert not own_file.exists()
    assert host_values() == host_before
