"""SambaTune's SMB read from this computer against smbclient, on the same file of the same share.

Starts a real smbd on loopback (the test bed's), writes one test file into the share,
then alternates round by round: smbclient ``get FILE /dev/null`` and SambaTune's client
(the probe's read path: smbprotocol for the session, READ answers received in place,
several in flight) reading the same file. Prints one JSON object.

Both sides are timed the same way: from opening the file to closing it. For smbclient
that is the rate it prints itself ("getting file ... (N KiloBytes/sec)"), which leaves
out its process start and logon; the wall time of the whole smbclient process is printed
too. Before the rounds, the probe reads the file once into memory and compares its
SHA-256 with the file's, so the figure is for correct bytes.

Goal: SambaTune >= 0.9 x smbclient.

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

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

#: smbclient's own report of a get: "(1565038.3 KiloBytes/sec)", KiB per second.
SMBCLIENT_RATE = re.compile(r"\(([0-9.]+) KiloBytes/sec\)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--size-mib", type=int, default=512)
    parser.add_argument("--outstanding", type=int, default=4)
    parser.add_argument("--block-mib", type=int, default=4)
    args = parser.parse_args()

    from sambatune.bench.smb_wire import SmbProbeConnection
    from sambatune.cancellation import CancelToken
    from testbed.smbd import SmbServer

    size = args.size_mib << 20
    server = SmbServer(Path(tempfile.mkdtemp(prefix="sambatune-smb-bench-")), "smbd").start()
    ours: list[float] = []
    theirs: list[float] = []
    theirs_wall: list[float] = []
    cpu_share: list[float] = []
    try:
        name = "sambatune-bench.bin"
        digest = hashlib.sha256()
        with open(server.share_path / name, "wb") as handle:
            for _ in range(args.size_mib):
                block = os.urandom(1 << 20)
                digest.update(block)
                handle.write(block)
        connection = SmbProbeConnection("127.0.0.1", server.share, server.port).connect()
        try:
            copy = bytearray(size)
            connection.read_file(name, size, args.block_mib << 20, args.outstanding, CancelToken(),
                                 into=memoryview(copy))
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
                transfer = connection.read_file(name, size, args.block_mib << 20, args.outstanding,
                                                CancelToken())
                seconds = time.perf_counter() - started
                assert transfer.bytes == size
                ours.append(transfer.bytes / seconds)
                cpu_share.append(transfer.client_cpu_share or 0.0)
        finally:
            connection.close()
    finally:
        server.stop()
    ratio = statistics.mean(ours) / statistics.mean(theirs)
    print(json.dumps({
        "benchmark": "SMB read of one file from a loopback smbd: SambaTune's client vs smbclient",
        "size_bytes": size, "rounds": args.rounds, "outstanding": args.outstanding,
        "block_bytes": args.block_mib << 20, "load_average": os.getloadavg(),
        "sambatune_mb_s": [round(v / 1e6) for v in ours],
        "smbclient_mb_s": [round(v / 1e6) for v in theirs],
        "smbclient_process_wall_mb_s": [round(v / 1e6) for v in theirs_wall],
        "bytes_verified_sha256": True,
        "sambatune_mean_mb_s": round(statistics.mean(ours) / 1e6),
        "smbclient_mean_mb_s": round(statistics.mean(theirs) / 1e6),
        "sambatune_client_cpu_share": round(statistics.mean(cpu_share), 2),
        "ratio_sambatune_to_smbclient": round(ratio, 3),
        "goal": "sambatune >= 0.9 x smbclient",
        "goal_met": ratio >= 0.9,
    }, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
