"""SambaTune's small-file test against smbclient's ``mput``/``mget`` of the same files.

Starts a real smbd on loopback (the test bed's) and, round by round so background load
hits both, copies N files of S bytes to the share and back with smbclient
(``prompt; mput *`` from a local directory, then ``mget *`` into another) and runs
SambaTune's ``bench files`` (create+write ... delete, its own SMB client) with the same
N and S. Prints one JSON object with both rates and their ratio.

What is compared: smbclient's mput is create+write+close per file, one file after the
other, each request waiting for the one before; SambaTune's "create" with one operation
in flight does the same work as one related compound (one round trip, as Windows sends
it; bench/smb_compounds.py). mget is a listing and then open+read+close per file;
SambaTune's "read" is open+read+close, compounded too. smbclient is
timed as a whole process, so its start and logon are measured alone (``-c 'cd \\'``, the
median of three) and taken off; the ``*_process_*`` figures keep them in.

    .venv/bin/python bench/small_files_vs_smbclient.py [--count 2000] [--size 4096]
        [--rounds 3] [--outstanding 1] [--connections 1]

``--connections N`` spreads SambaTune's operations over N SMB sessions, each served by
an smbd process of its own (as N clients); smbclient stays one client.
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


def smbclient(server: Any, command: str, timeout: float = 600) -> float:
    """Run one smbclient session with ``command``; its wall time. Fails loudly on errors."""
    started = time.perf_counter()
    done = subprocess.run(
        [
            "smbclient",
            "-p",
            str(server.port),
            "-N",
            f"//{server.listen_address}/{server.share}",
            "-c",
            command,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    seconds = time.perf_counter() - started
    output = done.stdout + done.stderr
    if done.returncode != 0 or "NT_STATUS_" in output:
        raise RuntimeError(f"smbclient -c {command!r} failed:\n{output}")
    return seconds


def smbclient_round(server: Any, local: Path, count: int, overhead: float) -> dict[str, float]:
    """mput the files into a new directory, mget them back, remove the directory."""
    remote = f"smbclient-{os.getpid()}-{time.monotonic_ns()}"
    back = local.parent / "back"
    back.mkdir(exist_ok=True)
    put = smbclient(server, f"mkdir {remote}; cd {remote}; lcd {local}; prompt; mput *")
    copied = len(list((server.share_path / remote).iterdir()))
    if copied != count:
        raise RuntimeError(f"smbclient mput made {copied} files, not {count}")
    get = smbclient(server, f"cd {remote}; lcd {back}; prompt; mget *")
    fetched = len(list(back.iterdir()))
    if fetched != count:
        raise RuntimeError(f"smbclient mget fetched {fetched} files, not {count}")
    smbclient(server, f"deltree {remote}")
    for path in back.iterdir():
        path.unlink()
    return {
        "put_files_per_s": count / max(put - overhead, 1e-9),
        "get_files_per_s": count / max(get - overhead, 1e-9),
        "put_process_files_per_s": count / put,
        "get_process_files_per_s": count / get,
    }


def sambatune_round(server: Any, count: int, size: int, outstanding: int, connections: int) -> dict[str, Any]:
    from sambatune.bench.runner import Method
    from sambatune.bench.small_files import SmallFilesBenchmark, SmallFilesOptions

    options = SmallFilesOptions(
        server=server.listen_address,
        share=server.share,
        port=server.port,
        count=count,
        size=size,
        outstanding=outstanding,
        connections=connections,
    )
    result = SmallFilesBenchmark(None, Method(runs=1, warmup=0), options).run()
    return {row["operation"]: row for row in result.extra["operations"]}


def compare(server: Any, args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="sambatune-small-files-"))
    local = work / "files"
    local.mkdir()
    for i in range(args.count):
        (local / f"file-{i:06d}.bin").write_bytes(os.urandom(args.size))
    overhead = statistics.median(smbclient(server, "cd \\") for _ in range(3))
    theirs: list[dict[str, float]] = []
    ours: list[dict[str, Any]] = []
    for _ in range(args.rounds):
        theirs.append(smbclient_round(server, local, args.count, overhead))
        ours.append(sambatune_round(server, args.count, args.size, args.outstanding, args.connections))
    leftovers = [p.name for p in server.share_path.iterdir()]
    if leftovers:
        raise RuntimeError(f"left on the share: {leftovers}")

    def mean(rows: list[dict[str, Any]], key: str, field: str | None = None) -> float:
        return statistics.mean(row[key][field] if field else row[key] for row in rows)

    ours_put = mean(ours, "create", "operations_per_s")
    ours_get = mean(ours, "read", "operations_per_s")
    theirs_put = mean(theirs, "put_files_per_s")
    theirs_get = mean(theirs, "get_files_per_s")
    return {
        "count": args.count,
        "size_bytes": args.size,
        "rounds": args.rounds,
        "sambatune_outstanding": args.outstanding,
        "sambatune_connections": args.connections,
        "load_average": os.getloadavg(),
        "smbclient_start_and_logon_seconds": round(overhead, 4),
        "sambatune_create_files_per_s": [round(r["create"]["operations_per_s"]) for r in ours],
        "smbclient_mput_files_per_s": [round(r["put_files_per_s"]) for r in theirs],
        "sambatune_read_files_per_s": [round(r["read"]["operations_per_s"]) for r in ours],
        "smbclient_mget_files_per_s": [round(r["get_files_per_s"]) for r in theirs],
        "smbclient_process_mput_files_per_s": [round(r["put_process_files_per_s"]) for r in theirs],
        "smbclient_process_mget_files_per_s": [round(r["get_process_files_per_s"]) for r in theirs],
        "sambatune_latency_ms": {
            name: {
                "p50": round(mean(ours, name, "p50_seconds") * 1000, 3),
                "p99": round(mean(ours, name, "p99_seconds") * 1000, 3),
                "ops_per_s": round(mean(ours, name, "operations_per_s")),
            }
            for name in ours[0]
        },
        "sambatune_mean_create_files_per_s": round(ours_put),
        "smbclient_mean_mput_files_per_s": round(theirs_put),
        "sambatune_mean_read_files_per_s": round(ours_get),
        "smbclient_mean_mget_files_per_s": round(theirs_get),
        "ratio_create_to_mput": round(ours_put / theirs_put, 3),
        "ratio_read_to_mget": round(ours_get / theirs_get, 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--outstanding", type=int, default=1)
    parser.add_argument("--connections", type=int, default=1)
    args = parser.parse_args()

    from testbed.smbd import SmbServer

    server = SmbServer(Path(tempfile.mkdtemp(prefix="sambatune-smb-bench-")), "smbd").start()
    try:
        report = compare(server, args)
    finally:
        server.stop()
    print(
        json.dumps(
            {
                "benchmark": "N small files to and from a loopback smbd: SambaTune's "
                "bench files vs smbclient mput/mget",
                **report,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
