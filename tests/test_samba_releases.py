"""SambaTune against real servers of Samba 4.22 and 4.25 (Debian's own builds), each a
host of its own (tests/testbed/samba_release.py): the survey, the parameter catalog read
live and the snapshot bundled for that release, a change through the whole apply
pipeline with a parameter only the newer releases have, the advisor, one wizard loop, a
benchmark from each side, the client audit from that release's smbstatus, and a fleet
that mixes both with this machine's Samba 4.17.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from cli_process import sambatune_cli
from parameter_text_overlap import man_page_text, runs, shared_runs, words
from sambatune.bench.smb_file_ops import file_operations
from sambatune.bench.smb_wire import SmbProbeConnection
from sambatune.conf.catalog import load_bundled
from sambatune.packaged import read_resource
from testbed.ports import free_port
from testbed.samba_release import RELEASES, ReleaseServer, root_file_system
from testbed.smbd import SmbServer
from testbed.sshd import SshServer, current_user

pytestmark = [
    pytest.mark.testbed,
    pytest.mark.skipif(os.geteuid() != 0, reason="a server of its own needs root (namespaces, chroot)"),
    pytest.mark.skipif(shutil.which("debootstrap") is None, reason="debootstrap is not installed"),
]

#: A loopback address per release: each server is a host of its own.
ADDRESSES = {"4.22": "127.0.0.122", "4.25": "127.0.0.125"}
#: Defaults that name the machine they are read on, not the release.
MACHINE_DEFAULTS = {"netbios name"}


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory, user_key: Path) -> Iterator[dict[str, ReleaseServer]]:
    """Both servers at once (the mixed fleet needs them together), started once."""
    started: dict[str, ReleaseServer] = {}
    # A fresh machine builds both root file systems at once (about 1.5 minutes each).
    with ThreadPoolExecutor(len(RELEASES)) as pool:
        list(pool.map(root_file_system, sorted(RELEASES)))
    try:
        for series in sorted(RELEASES):
            server = ReleaseServer(series, ADDRESSES[series], tmp_path_factory.mktemp(f"samba-{series}"))
            started[series] = server.start(user_key.with_suffix(".pub"))
        yield started
    finally:
        for server in started.values():
            server.stop()


@pytest.fixture(params=sorted(RELEASES))
def release(request: pytest.FixtureRequest, releases: dict[str, ReleaseServer]) -> ReleaseServer:
    return releases[request.param]


def _ssh(release: ReleaseServer, user_key: Path, tmp_path: Path) -> list[str]:
    known = tmp_path / "known_hosts"
    known.write_text(release.known_hosts_line)
    return [
        "--host", release.address, "--port", str(release.ssh_port), "--user", "root",
        "--identity", str(user_key), "--known-hosts", str(known),
    ]  # fmt: skip


def test_the_survey_sees_that_release_and_only_its_own_smbd(
    release: ReleaseServer, user_key: Path, tmp_path: Path
) -> None:
    result = sambatune_cli(
        "survey", *_ssh(release, user_key, tmp_path), "--config-path", release.config_path, "--json"
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    survey = json.loads(result.stdout)
    samba = survey["samba"]
    assert samba["version"][:2] == [int(part) for part in release.series.split(".")], samba["version_text"]
    assert survey["os"]["distribution_id"] == "debian" and survey["hostname"] == release.hostname
    # Its own smbd, where it listens, and none of this machine's.
    [instance] = samba["instances"]
    assert instance["config"] == release.config_path and samba["other_instances"] == 0
    assert instance["listening"] == [{"address": release.address, "port": release.smb_port}]


def test_the_bundled_catalog_is_that_releases_testparm(
    release: ReleaseServer, user_key: Path, tmp_path: Path
) -> None:
    """The snapshot shipped for the release equals its real testparm, read over SSH."""
    out = tmp_path / "live.json"
    result = sambatune_cli(
        "conf", "catalog", "--refresh", *_ssh(release, user_key, tmp_path), "--output", str(out),
        env={**os.environ, "SAMBATUNE_HOME": str(tmp_path / "home")},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    live = json.loads(out.read_text())
    bundled = load_bundled(f"{release.series}.0").to_json()
    assert live["samba_version"] == bundled["samba_version"]
    assert sorted(live["parameters"]) == sorted(bundled["parameters"])
    for name, entry in bundled["parameters"].items():
        read = dict(live["parameters"][name])
        if name in MACHINE_DEFAULTS:
            read["default"] = entry["default"]
        assert read == entry, name


def test_a_parameter_only_newer_releases_have_goes_through_the_apply(
    release: ReleaseServer, user_key: Path, tmp_path: Path
) -> None:
    """'smb3 directory leases' came with 4.22: set on the server, testparm there reads it,
    smbd reloads, and the history has the backup."""
    ssh = _ssh(release, user_key, tmp_path)
    home = {**os.environ, "SAMBATUNE_HOME": str(tmp_path / "home")}
    local = tmp_path / "smb.conf"
    got = sambatune_cli(
        "conf", "get", *ssh, "--remote-path", release.config_path, "--output", str(local), env=home
    )
    assert got.returncode == 0, got.stdout[-2000:] + got.stderr[-2000:]
    before = local.read_text()
    version = f"{release.series}.0"
    edited = sambatune_cli(
        "conf", "set", str(local), "global", "smb3 directory leases", "no", "--samba-version", version
    )
    assert edited.returncode == 0, edited.stdout + edited.stderr
    lint = sambatune_cli("conf", "lint", str(local), "--samba-version", version, "--json")
    assert "smb3 directory leases" not in lint.stdout, lint.stdout
    # A client connected before the change, with the lease capability agreed.
    held = SmbProbeConnection(release.address, "bench", release.smb_port).connect()
    try:
        assert held.directory_leases_offered
        applied = sambatune_cli(
            "conf", "apply", *ssh, "--file", str(local), "--remote-path", release.config_path,
            "--summary", "directory leases off", "--yes", "--json", env=home,
        )  # fmt: skip
        assert applied.returncode == 0, applied.stdout[-3000:] + applied.stderr[-2000:]
        live = (release.root / release.config_path.lstrip("/")).read_text()
        assert "smb3 directory leases = no" in live and live != before
        [change] = json.loads(applied.stdout)["changes"]
        assert (change["parameter"], change["activation"]) == ("smb3 directory leases", "new connections")
        # As the class says: new connections are no longer offered leases; the held one
        # keeps what it agreed, but the server grants it no lease any more either.
        with SmbProbeConnection(release.address, "bench", release.smb_port) as later:
            assert not later.directory_leases_offered
        ops = file_operations(held)
        assert ops.listings is not None
        ops.list_directory("")
        assert (ops.listings.counts.from_server, ops.listings.counts.granted) == (1, 0)
    finally:
        held.close()
    history = sambatune_cli("conf", "history", *ssh, "--remote-path", release.config_path, "--json", env=home)
    assert history.returncode == 0, history.stderr
    assert "directory leases off" in history.stdout
    # Back as it was, through the same pipeline: the tests after this one expect leases.
    (tmp_path / "before.conf").write_text(before)
    restored = sambatune_cli(
        "conf", "apply", *ssh, "--file", str(tmp_path / "before.conf"), "--remote-path", release.config_path,
        "--summary", "directory leases back", "--yes", "--json", env=home,
    )  # fmt: skip
    assert restored.returncode == 0, restored.stdout[-3000:] + restored.stderr[-2000:]
    assert (release.root / release.config_path.lstrip("/")).read_text() == before


def _plant(release: ReleaseServer, line: str) -> bytes:
    """Add ``line`` to the server's [global] as its admin would; the file before."""
    path = release.root / release.config_path.lstrip("/")
    before = path.read_bytes()
    path.write_bytes(before.replace(b"[global]\n", b"[global]\n  " + line.encode() + b"\n", 1))
    return before


def test_the_advisor_reads_that_releases_smb_conf_and_sessions(
    release: ReleaseServer, user_key: Path, tmp_path: Path
) -> None:
    """The advisor judges with that release's knowledge; the client audit reads that
    release's smbstatus (JSON since 4.16) about a session held open from here."""
    held = subprocess.Popen(
        ["smbclient", f"//{release.address}/bench", "-p", str(release.smb_port), "-N", "-m", "SMB3"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        ssh = _ssh(release, user_key, tmp_path)
        _wait_for_session(release, user_key, tmp_path / "known_hosts")
        surveyed = sambatune_cli("survey", *ssh, "--config-path", release.config_path, "--json")
        done = sambatune_cli("advise", *ssh, "--config-path", release.config_path, "--json")
    finally:
        assert held.stdin is not None
        held.stdin.write("quit\n")
        held.stdin.close()
        held.wait(timeout=10)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    advice = json.loads(done.stdout)
    findings = {f["id"]: f for f in advice["findings"]}
    leases = findings["directory-leases"]  # a rule for 4.22 and later only
    assert leases["title"].startswith("Directory leases are"), leases["title"]
    assert f"Samba {release.series}" in leases["applies_to_version"]
    # Nothing the release has is called unknown or removed.
    assert not {"unknown-parameter", "removed-parameter"} & set(findings), sorted(findings)
    assert surveyed.returncode == 0, surveyed.stdout[-2000:] + surveyed.stderr[-2000:]
    audit = json.loads(surveyed.stdout)["client_audit"]
    assert audit["source"] == "smbstatus --json" and audit["complete"], audit
    [session] = audit["sessions"]
    assert session["dialect"] == "SMB3_11" and session["channels"] == 1, session
    assert session["encryption"] == "" and session["address"].startswith("ipv4:127.0.0."), session


def _wait_for_session(release: ReleaseServer, user_key: Path, known_hosts: Path) -> None:
    """Until that server's smbstatus lists an SMB3 session (asked there: from this
    machine's pid namespace its smbd's pids name other processes)."""
    ssh = ["ssh", "-i", str(user_key), "-o", f"UserKnownHostsFile={known_hosts}", "-o", "BatchMode=yes"]
    shown = None
    for _ in range(50):
        shown = subprocess.run(
            [*ssh, "-p", str(release.ssh_port), f"root@{release.address}", "smbstatus", "-b",
             "--configfile", release.config_path],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if "SMB3" in shown.stdout:
            return
        time.sleep(0.1)
    raise AssertionError(f"no session on the Samba {release.series} server:\n{shown}")


def test_a_wizard_loop_on_that_release(release: ReleaseServer, user_key: Path, tmp_path: Path) -> None:
    """Start, baseline, one change, measure, verdict, revert, finish: measured through the
    release's own smbclient against the address its smbd serves on (bind interfaces
    only, no loopback), and smb.conf byte for byte as before at the end."""
    ssh = _ssh(release, user_key, tmp_path)
    home = {**os.environ, "SAMBATUNE_HOME": str(tmp_path / "home")}
    original = _plant(release, "log level = 3")
    live = release.root / release.config_path.lstrip("/")
    planted = live.read_bytes()
    try:

        def step(*args: str) -> dict[str, Any]:
            done = sambatune_cli("wizard", *args, "--json", env=home)
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
            data: dict[str, Any] = json.loads(done.stdout)
            return data

        started = step(
            "start", *ssh, "--config-path", release.config_path, "--share", "bench",
            "--test", "copy", "--size", "1MiB", "--runs", "3", "--warmup", "1",
        )  # fmt: skip
        wizard = str(started["wizard_id"])
        number = next(f["number"] for f in started["findings"] if f["id"] == "log-level-high")
        assert step("next", wizard, *ssh)["stage"] == "choose"
        assert step("next", wizard, *ssh, "--finding", str(number))["stage"] == "apply"
        applied = step("next", wizard, *ssh)
        assert applied["stage"] == "measure", applied
        assert b"log level = 1" in live.read_bytes()
        assert step("next", wizard, *ssh)["stage"] == "verdict"
        verdict = step("next", wizard, *ssh)["verdict"]
        assert {s["series"] for s in verdict["series"]} == {"put", "get"}
        step("revert", wizard, *ssh)
        assert live.read_bytes() == planted
        finished = step("finish", wizard, *ssh)
        assert finished["stage"] == "done" and finished["done"][0]["data"]["identical_to_original"]
    finally:
        live.write_bytes(original)


def _small_files(release: ReleaseServer, tmp_path: Path) -> dict[str, Any]:
    home = {**os.environ, "SAMBATUNE_HOME": str(tmp_path / "home")}
    done = sambatune_cli(
        "bench", "files", "--server", release.address, "--port", str(release.smb_port), "--share", "bench",
        "--count", "200", "--size", "4KiB", "--outstanding", "4", "--runs", "2", "--json", env=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout)
    assert {"create", "stat", "read", "list", "delete"} <= set(result["series"]), sorted(result["series"])
    share = release.bed / "smbd" / "share"
    assert not [p for p in share.rglob("*") if "sambatune" in p.name], list(share.rglob("*"))
    return result


def _reload(release: ReleaseServer, user_key: Path, known_hosts: Path) -> None:
    """smbcontrol on that server (its smbd's pid file is where its smb.conf says)."""
    done = subprocess.run(
        ["ssh", "-i", str(user_key), "-o", f"UserKnownHostsFile={known_hosts}", "-o", "BatchMode=yes",
         "-p", str(release.ssh_port), f"root@{release.address}",
         "smbcontrol", "--configfile", release.config_path, "smbd", "reload-config"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_small_files_from_here_with_and_without_directory_leases(
    release: ReleaseServer, user_key: Path, tmp_path: Path
) -> None:
    """SambaTune's own client takes the directory leases 4.22 and later offer: the list
    step's later listings come from the kept listing until a change breaks the lease.
    With 'smb3 directory leases = no' every listing asks the server. Both leave nothing
    in the share."""
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(release.known_hosts_line)
    leased = _small_files(release, tmp_path)
    assert leased["client"]["directory_leases"] is True
    listings = leased["listings"]
    # Two runs of ten listings each: one from the server per run, nine kept; the
    # deletes that follow each list step break the lease.
    assert listings["from_server"] + listings["from_cache"] == 20, listings
    assert listings["from_cache"] >= 16 and listings["granted"] == listings["from_server"], listings
    assert listings["breaks"] >= 2, listings

    original = _plant(release, "smb3 directory leases = no")
    try:
        _reload(release, user_key, known_hosts)
        plain = _small_files(release, tmp_path)
    finally:
        (release.root / release.config_path.lstrip("/")).write_bytes(original)
        _reload(release, user_key, known_hosts)
    assert plain["client"]["directory_leases"] is False and "listings" not in plain
    rates = {row["operation"]: row["operations_per_s"] for row in leased["operations"]}
    rates_plain = {row["operation"]: row["operations_per_s"] for row in plain["operations"]}
    assert rates["list"] > 0 and rates_plain["list"] > 0


def test_a_kept_listing_ends_when_another_client_changes_the_directory(release: ReleaseServer) -> None:
    """The lease break reaches the client: a file another connection creates is in the
    next listing, which the server answers again; then the directory is removed with
    the kept handle closed first."""
    first = SmbProbeConnection(release.address, "bench", release.smb_port).connect()
    second = SmbProbeConnection(release.address, "bench", release.smb_port, directory_leases=False).connect()
    directory = f".sambatune-probe-leases-{os.getpid()}"
    try:
        ops, other = file_operations(first), file_operations(second)
        assert ops.listings is not None and other.listings is None
        ops.make_directory(directory)
        other.create_and_write(f"{directory}\\one.bin", b"1")
        assert ops.list_directory(directory) == ["one.bin"]
        assert ops.list_directory(directory) == ["one.bin"]
        assert (ops.listings.counts.from_server, ops.listings.counts.from_cache) == (1, 1)

        other.create_and_write(f"{directory}\\two.bin", b"2")
        deadline = time.monotonic() + 10
        while ops.listings.counts.breaks == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert ops.listings.counts.breaks == 1
        assert sorted(ops.list_directory(directory)) == ["one.bin", "two.bin"]
        assert ops.listings.counts.from_server == 2
        for name in ("one.bin", "two.bin"):
            other.delete(f"{directory}\\{name}")
        ops.remove_directory(directory)  # our kept handle is closed first, or this fails
        assert not other.exists(directory)
    finally:
        first.close()
        second.close()
        shutil.rmtree(release.bed / "smbd" / "share" / directory, ignore_errors=True)


def test_a_fleet_of_three_releases_is_surveyed_and_compared(
    releases: dict[str, ReleaseServer], sshd: SshServer, smbd: SmbServer, user_key: Path, tmp_path: Path
) -> None:
    """This machine's Samba 4.17 and the 4.22 and 4.25 servers in one inventory: the survey
    tells each release apart, and drift calls a default that differs by release no
    drift, while a value an admin set against the others is."""
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(sshd.known_hosts_line + "".join(r.known_hosts_line for r in releases.values()))
    hosts: dict[str, dict[str, object]] = {
        "samba417": {"ansible_host": "127.0.0.1", "ansible_port": sshd.port,
                     "ansible_user": current_user(), "samba_conf": str(smbd.config)},
    }  # fmt: skip
    for server in releases.values():
        hosts[server.hostname] = {
            "ansible_host": server.address,
            "ansible_port": server.ssh_port,
            "ansible_user": "root",
            "samba_conf": server.config_path,
        }
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(
        yaml.safe_dump({"all": {"hosts": hosts, "vars": {"ansible_ssh_private_key_file": str(user_key)}}})
    )
    fleet = ["-i", str(inventory), "--known-hosts", str(known_hosts), "--json"]
    home = {**os.environ, "SAMBATUNE_HOME": str(tmp_path / "home")}

    surveyed = sambatune_cli("fleet", "survey", *fleet, env=home)
    assert surveyed.returncode == 0, surveyed.stdout[-3000:] + surveyed.stderr[-2000:]
    versions = {r["name"]: r["samba_version"].split()[1][:4] for r in json.loads(surveyed.stdout)["results"]}
    assert versions == {"samba417": "4.17", "samba422": "4.22", "samba425": "4.25"}

    # An admin set on the 4.22 server what 4.25 has by default.
    original = _plant(releases["4.22"], "usershare max shares = 0")
    try:
        compared = sambatune_cli("fleet", "drift", *fleet, env=home)
    finally:
        (releases["4.22"].root / releases["4.22"].config_path.lstrip("/")).write_bytes(original)
    assert compared.returncode == 4, compared.stdout[-3000:] + compared.stderr[-2000:]  # drift found
    report = json.loads(compared.stdout)
    assert all(h["reachable"] for h in report["hosts"]), report["hosts"]
    drift = {p["parameter"]: p for p in report["parameters"] if p["section"] == "global"}
    # Each host has its own release's default: 4.22 logs trace ids, 4.25 names itself.
    for name in ("winbind debug traceid", "server string"):
        assert drift[name]["version_defaults"] and not drift[name]["differing"], drift[name]
    # 100 on 4.17 by default, 0 on 4.22 by hand and on 4.25 by default: the 4.17 host
    # runs what the others do not.
    shares = drift["usershare max shares"]
    assert not shares["version_defaults"] and shares["reference"] == "0", shares
    assert [(d["host"], d["value"]) for d in shares["differing"]] == [("samba417", "100")]
    # Only the newer releases know directory leases; they agree, so no drift.
    assert "smb3 directory leases" not in drift or not drift["smb3 directory leases"]["differing"]

    text = sambatune_cli("fleet", "drift", *fleet[:-1], env=home)
    assert text.returncode == 4, text.stderr
    assert "Not drift, each host has its Samba release's default:" in text.stdout
    assert "[global] server string" in text.stdout


def test_a_new_port_waits_for_a_restart_in_either_releases_spelling(
    release: ReleaseServer, user_key: Path, tmp_path: Path
) -> None:
    """4.22 names the port 'smb ports', 4.25 'server smb transports' (tcp:PORT): either way
    the apply pipeline calls the change restart-class, refuses it without consent, and
    with consent smbd restarts and listens on the new port; then the old file goes back."""
    ssh = _ssh(release, user_key, tmp_path)
    home = {**os.environ, "SAMBATUNE_HOME": str(tmp_path / "home")}
    local = tmp_path / "smb.conf"
    got = sambatune_cli(
        "conf", "get", *ssh, "--remote-path", release.config_path, "--output", str(local), env=home
    )
    assert got.returncode == 0, got.stderr
    original = local.read_bytes()
    new_port = free_port()
    name, value = (
        ("server smb transports", f"tcp:{new_port}")
        if release.series >= "4.23"
        else ("smb ports", str(new_port))
    )
    edited = sambatune_cli(
        "conf", "set", str(local), "global", name, value, "--samba-version", f"{release.series}.0"
    )
    assert edited.returncode == 0, edited.stdout + edited.stderr

    def apply(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
        return sambatune_cli(
            "conf", "apply", *ssh, "--file", str(path), "--remote-path", release.config_path,
            "--summary", "port", "--yes", "--json", *extra, env=home,
        )  # fmt: skip

    def listening() -> list[int]:
        done = sambatune_cli("survey", *ssh, "--config-path", release.config_path, "--json", env=home)
        assert done.returncode == 0, done.stderr
        [instance] = json.loads(done.stdout)["samba"]["instances"]
        return sorted(p["port"] for p in instance["listening"])

    refused = apply(local)
    assert refused.returncode != 0, refused.stdout[-2000:]
    assert name in refused.stdout + refused.stderr and "restart" in refused.stdout + refused.stderr
    assert (release.root / release.config_path.lstrip("/")).read_bytes() == original
    try:
        done = apply(local, "--allow-restart")
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
        changes = {c["parameter"]: c for c in json.loads(done.stdout)["changes"]}
        assert changes[name]["activation"] == "restart", changes
        assert listening() == [new_port]
    finally:
        back = tmp_path / "original.conf"
        back.write_bytes(original)
        restored = apply(back, "--allow-restart")
        assert restored.returncode == 0, restored.stdout[-3000:] + restored.stderr[-2000:]
    assert listening() == [release.smb_port]


def test_our_explanations_share_no_run_of_words_with_that_releases_man_page(release: ReleaseServer) -> None:
    """Explained in our own words: no 10-word run of any explanation (those of the
    parameters this release added included) comes from its smb.conf(5)."""
    man_page = release.root / "usr/share/man/man5/smb.conf.5.gz"
    man_words = words(man_page_text(man_page))
    assert len(man_words) > 50_000, "the man page was not read properly"
    theirs = set(runs(man_words))
    ours = json.loads(read_resource("parameters", "explanations.json"))["parameters"]
    copied = [
        (name, run)
        for name, entry in ours.items()
        for field in ("summary", "performance", "when_to_change")
        for run in shared_runs(entry[field], theirs)
    ]
    assert not copied, copied
