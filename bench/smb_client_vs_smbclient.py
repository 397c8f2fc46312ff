"""SambaTune's SMB read and write from this computer against smbclient, same file, same share.

Starts a real smbd on loopback (the test bed's), writes one test file into the share,
then alternates round by round: smbclient ``get FILE /dev/null`` and SambaTune's client
(the probe's read path: smbprotocol for the session, READ answers received in place,
several in flight) reading the same file. Then writes, alternating the same way:
smbclient ``put LOCAL NAME`` of a local file of that size (in this computer's page
cache after the first round) and SambaTune's write path (WRITE requests packed by the
probe, the data sent from one buffer, several in flight) writing a file of the same
size. Neither side asks the server to flush: ``put`` does not, so the probe's writes
here skip the FLUSH its benchmark sends. Prints one JSON object.

Both sides are timed the same way: from opening the file to closing it. For smbclient
that is the rate it prints itself ("getting file ... (N KiloBytes/sec)"), which leaves
out its process start and logon; the wall time of the whole smbclient process is printed
too. Before the rounds, the probe reads the file once into memory and compares its
SHA-256 with the file's, so the figure is for correct bytes.

Goal: SambaTune >= 0.9 x smbclient, for reads and for writes.

    .venv/bin/python bench/smb_client_vs_smbclient.py [--rounds 5] [--size-mib 512]
        [--outstanding 4] [--block-mib 4]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

#: smbclient's own report of a get: "(1565038.3 KiloBytes/sec)", KiB per second.
SMBCLIENT_RATE = re.compile(r"\(([0-9.]+) KiloBytes/sec\)")
#: ... and of a put: "(840204.9 kb/s)", also KiB per second.
SMBCLIENT_PUT_RATE = re.compile(r"\(([0-9.]+) k[bB]/s\)")  # "kB/s" from Samba 4.23


def add_arguments(parser: argparse.ArgumentParser, size_mib: int) -> None:
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--size-mib", type=int, default=size_mib)
    parser.add_argument("--outstanding", type=int, default=4)
    parser.add_argument("--block-mib", type=int, default=4)


def compare_reads(server: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Both clients read one file of the (started) test bed ``server``, rounds alternating."""
    from sambatune.bench.smb_wire import SmbProbeConnection
    from sambatune.cancellation import CancelToken

    size = args.size_mib << 20
    block = args.block_mib << 20
    ours: list[float] = []
    theirs: list[float] = []
    theirs_wall: list[float] = []
    cpu_share: list[float] = []
    name = "sambatune-bench.bin"
    digest = hashlib.sha256()
    with open(server.share_path / name, "wb") as handle:
        for _ in range(args.size_mib):
            chunk = os.urandom(1 << 20)
            digest.update(chunk)
            handle.write(chunk)
    connection = SmbProbeConnection(server.listen_address, server.share, server.port).connect()
    try:
        copy = bytearray(size)
        connection.read_file(name, size, block, args.outstanding, CancelToken(), into=memoryview(copy))
        if hashlib.sha256(copy).digest() != digest.digest():
            raise RuntimeError("the bytes read differ from the file")
        del copy
        for _ in range(args.rounds):
            started = time.perf_counter()
            done = server.smbclient(f"get {name} /dev/null")
            seconds = time.perf_counter() - started
            reported = SMBCLIENT_RATE.search(done.stdout + done.stderr)
            if done.returncode != 0 or reported is None:
                raise RuntimeError(done.stdout + done.stderr)
            theirs.append(float(reported.group(1)) * 1024)
            theirs_wall.append(size / seconds)
            started = time.perf_counter()
            transfer = connection.read_file(name, size, block, args.outstanding, CancelToken())
            seconds = time.perf_counter() - started
            assert transfer.bytes == size
            ours.append(transfer.bytes / seconds)
            cpu_share.append(transfer.client_cpu_share or 0.0)
        facts = connection.facts()
    finally:
        connection.close()
    ratio = statistics.mean(ours) / statistics.mean(theirs)
    return {
        "size_bytes": size,
        "rounds": args.rounds,
        "outstanding": args.outstanding,
        "block_bytes": block,
        "dialect": facts["dialect"],
        "load_average": os.getloadavg(),
        "bytes_verified_sha256": True,
        "sambatune_mb_s": [round(v / 1e6) for v in ours],
        "smbclient_mb_s": [round(v / 1e6) for v in theirs],
        "smbclient_process_wall_mb_s": [round(v / 1e6) for v in theirs_wall],
        "sambatune_mean_bytes_per_s": round(statistics.mean(ours)),
        "smbclient_mean_bytes_per_s": round(statistics.mean(theirs)),
        "sambatune_mean_mb_s": round(statistics.mean(ours) / 1e6),
        "smbclient_mean_mb_s": round(statistics.mean(theirs) / 1e6),
        "sambatune_client_cpu_share": round(statistics.mean(cpu_share), 2),
        "ratio_sambatune_to_smbclient": round(ratio, 3),
        "goal": "sambatune >= 0.9 x smbclient",
        "goal_met": ratio >= 0.9,
    }


def compare_writes(server: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Both clients write a file of the same size into the (started) test bed ``server``."""
    from sambatune.bench.smb_wire import SmbProbeConnection
    from sambatune.cancellation import CancelToken

    size = args.size_mib << 20
    block = args.block_mib << 20
    local = Path(tempfile.mkdtemp(prefix="sambatune-put-")) / "source.bin"
    with open(local, "wb") as handle:
        for _ in range(args.size_mib):
            handle.write(os.urandom(1 << 20))
    ours: list[float] = []
    theirs: list[float] = []
    cpu_share: list[float] = []
    connection = SmbProbeConnection(server.listen_address, server.share, server.port).connect()

    def smbclient_put() -> None:
        done = server.smbclient(f"put {local} smbclient-put.bin")
        reported = SMBCLIENT_PUT_RATE.search(done.stdout + done.stderr)
        if done.returncode != 0 or reported is None:
            raise RuntimeError(done.stdout + done.stderr)
        theirs.append(float(reported.group(1)) * 1024)
        (server.share_path / "smbclient-put.bin").unlink()

    def sambatune_write() -> None:
        name = connection.new_name()
        started = time.perf_counter()
        transfer = connection.write_file(name, size, block, args.outstanding, CancelToken(), flush=False)
        seconds = time.perf_counter() - started
        if transfer.bytes != size or (server.share_path / name).stat().st_size != size:
            raise RuntimeError("the probe's file on the share has the wrong size")
        ours.append(transfer.bytes / seconds)
        cpu_share.append(transfer.client_cpu_share or 0.0)
        connection.remove(name)

    try:
        # Each client writes a new file every round, removed before the next one starts
        # (its dirty pages go with it, so no write-back is left for the other client),
        # and the two take turns going first.
        for round_number in range(args.rounds):
            first, second = (smbclient_put, sambatune_write)[:: 1 if round_number % 2 == 0 else -1]
            first()
            second()
    finally:
        connection.close()
        local.unlink()
        (server.share_path / "smbclient-put.bin").unlink(missing_ok=True)
    ratio = statistics.mean(ours) / statistics.mean(theirs)
    return {
        "sambatune_mb_s": [round(v / 1e6) for v in ours],
        "smbclient_mb_s": [round(v / 1e6) for v in theirs],
        "sambatune_mean_mb_s": round(statistics.mean(ours) / 1e6),
        "smbclient_mean_mb_s": round(statistics.mean(theirs) / 1e6),
        "sambatune_client_cpu_share": round(statistics.mean(cpu_share), 2),
        "ratio_sambatune_to_smbclient": round(ratio, 3),
        # Writes into a loopback smbd swing with its page cache (2x between rounds of one
        # client here): the medians' ratio is the steadier figure.
        "median_ratio_sambatune_to_smbclient": round(statistics.median(ours) / statistics.median(theirs), 3),
        "goal": "sambatune >= 0.9 x smbclient put",
        "goal_met": ratio >= 0.9,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    add_arguments(parser, size_mib=512)
    args = parser.parse_args()

    from testbed.smbd import SmbServer

    server = SmbServer(Path(tempfile.mkdtemp(prefix="sambatune-smb-bench-")), "smbd").start()
    try:
        report = compare_reads(server, args)
        report["write"] = compare_writes(server, args)
    finally:
        server.stop()
    print(
        json.dumps(
            {
                "benchmark": "SMB read and write of one file, loopback smbd: SambaTune vs smbclient",
                **report,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
