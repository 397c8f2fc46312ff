"""The small-file test's list step on Samba 4.25 with and without directory leases, and
smbclient listing the same directory, in the same run.

Starts the test bed's Samba 4.25 server (a Debian unstable root file system of its own,
tests/testbed/samba_release.py: needs root and debootstrap) and, round by round so
background load hits each alike:

- SambaTune's ``bench files`` with the server's default (``smb3 directory leases`` auto,
  on): its client takes a directory lease and answers repeated listings from the kept
  listing until a change breaks the lease, as current Windows does;
- the same with ``smb3 directory leases = no`` (reloaded): every listing asks the server;
- smbclient (which asks for no lease) listing a directory of the same size ten times in
  one session, its start and logon measured alone and taken off.

Prints one JSON object: listings per second each way and the ratios.

    sudo .venv/bin/python bench/directory_leases.py [--count 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

LISTINGS = 10


def smbclient(server: Any, command: str) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        ["smbclient", "-N", "-p", str(server.smb_port), f"//{server.address}/bench", "-c", command],
        capture_output=True,
        text=True,
        timeout=600,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0 or "NT_STATUS_" in done.stdout + done.stderr:
        raise RuntimeError(f"smbclient -c {command!r} failed:\n{done.stdout}{done.stderr}")
    return seconds


def sambatune_list_rate(server: Any, count: int) -> tuple[float, dict[str, Any]]:
    from sambatune.bench.runner import Method
    from sambatune.bench.small_files import SmallFilesBenchmark, SmallFilesOptions

    options = SmallFilesOptions(server=server.address, share="bench", port=server.smb_port, count=count)
    result = SmallFilesBenchmark(None, Method(runs=1, warmup=0), options).run()
    rows = {row["operation"]: row for row in result.extra["operations"]}
    return rows["list"]["operations_per_s"], result.extra.get("listings") or {}


def smbclient_list_rate(server: Any, count: int, overhead: float) -> float:
    directory = server.bed / "smbd" / "share" / f"smbclient-{os.getpid()}"
    directory.mkdir()
    try:
        for i in range(count):
            (directory / f"file-{i:06d}.bin").write_bytes(b"x")
        seconds = smbclient(server, "; ".join([f"ls {directory.name}\\*"] * LISTINGS))
    finally:
        for path in directory.iterdir():
            path.unlink()
        directory.rmdir()
    return LISTINGS / max(seconds - overhead, 1e-9)


def set_leases(server: Any, key: Path, original: bytes, on: bool) -> None:
    path = server.root / server.config_path.lstrip("/")
    text = original if on else original.replace(b"[global]\n", b"[global]\n  smb3 directory leases = no\n", 1)
    path.write_bytes(text)
    known_hosts = key.parent / "known_hosts"
    known_hosts.write_text(server.known_hosts_line)
    # Asked on the server itself: its smbd's pids mean nothing in this pid namespace.
    reload = ["smbcontrol", "--configfile", server.config_path, "smbd", "reload-config"]
    subprocess.run(
        ["ssh", "-i", str(key), "-o", f"UserKnownHostsFile={known_hosts}", "-o", "BatchMode=yes",
         "-p", str(server.ssh_port), f"root@{server.address}", *reload],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from testbed.samba_release import ReleaseServer
    from testbed.sshd import keygen

    scratch = Path(tempfile.mkdtemp(prefix="sambatune-leases-bench-"))
    key = keygen(scratch / "id_ed25519", comment="bench")
    server = ReleaseServer("4.25", "127.0.0.125", scratch).start(key.with_suffix(".pub"))
    config = server.root / server.config_path.lstrip("/")
    original = config.read_bytes()
    leased: list[float] = []
    plain: list[float] = []
    theirs: list[float] = []
    counts: list[dict[str, Any]] = []
    try:
        overhead = statistics.median(smbclient(server, "cd \\") for _ in range(3))
        for _ in range(args.rounds):
            set_leases(server, key, original, on=True)
            rate, listings = sambatune_list_rate(server, args.count)
            leased.append(rate)
            counts.append(listings)
            set_leases(server, key, original, on=False)
            plain.append(sambatune_list_rate(server, args.count)[0])
            theirs.append(smbclient_list_rate(server, args.count, overhead))
    finally:
        config.write_bytes(original)
        server.stop()
    print(
        json.dumps(
            {
                "benchmark": "listing a directory of N files ten times on Samba 4.25.1: SambaTune "
                "with and without directory leases, and smbclient ls",
                "count": args.count,
                "rounds": args.rounds,
                "load_average": os.getloadavg(),
                "sambatune_leased_listings_per_s": [round(r, 1) for r in leased],
                "sambatune_unleased_listings_per_s": [round(r, 1) for r in plain],
                "smbclient_ls_listings_per_s": [round(r, 1) for r in theirs],
                "sambatune_leased_listing_counts": counts,
                "ratio_leased_to_unleased": round(statistics.median(leased) / statistics.median(plain), 2),
                "ratio_unleased_to_smbclient": round(statistics.median(plain) / statistics.median(theirs), 2),
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
