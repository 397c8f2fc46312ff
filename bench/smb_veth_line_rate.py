"""SambaTune's SMB read and smbclient's across a real 1 Gbit/s link (veth between namespaces).

As root, the script builds the same link as ``net_veth_line_rate.py`` (two network
namespaces, a veth pair, tbf at the line rate on both ends), starts a real smbd in the
server namespace listening only on the link's address, and runs itself again inside the
client namespace. From there both clients read the same file across the link, rounds
alternating, timed open to close (see ``smb_client_vs_smbclient.py``); the bytes are
checked by SHA-256 first. Everything it created is removed at the end. Prints one JSON
object.

Goals: SambaTune >= 0.9 x smbclient over the link; both near the line rate (TCP over
1500-byte frames carries at most 0.956 of it, less SMB's own headers).

    .venv/bin/python bench/smb_veth_line_rate.py [--rounds 5] [--size-mib 256] [--rate-mbit 1000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from net_veth_line_rate import CLIENT_IP, SERVER_IP, run_across_link
from smb_client_vs_smbclient import add_arguments, compare_reads

SMB_PORT = 4450


def outside(args: argparse.Namespace) -> int:
    return run_across_link(
        "sts",
        args.rate_mbit,
        __file__,
        [
            "--rounds",
            str(args.rounds),
            "--size-mib",
            str(args.size_mib),
            "--outstanding",
            str(args.outstanding),
            "--block-mib",
            str(args.block_mib),
        ],
    )


def inside(args: argparse.Namespace) -> int:
    from testbed.smbd import SmbServer

    work = Path(tempfile.mkdtemp(prefix="sambatune-smb-veth-bench-"))
    server = SmbServer(
        work,
        "smbd",
        port=SMB_PORT,
        listen_address=SERVER_IP,
        launcher=("ip", "netns", "exec", args.server_ns),
    )
    try:
        server.start()
        report = compare_reads(server, args)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    line_rate = args.rate_mbit * 1_000_000
    for tool in ("sambatune", "smbclient"):
        report[f"ratio_{tool}_to_line_rate"] = round(report[f"{tool}_mean_bytes_per_s"] * 8 / line_rate, 3)
    print(
        json.dumps(
            {
                "benchmark": "SMB read across a veth pair between two namespaces, tbf-limited: "
                "SambaTune's client vs smbclient",
                "line_rate_bits_per_s": line_rate,
                "path": f"{CLIENT_IP} (client namespace) -> {SERVER_IP} (server namespace, real smbd)",
                **report,
            },
            indent=2,
        )
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    add_arguments(parser, size_mib=256)
    parser.add_argument("--rate-mbit", type=int, default=1000)
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--server-ns", help=argparse.SUPPRESS)
    args = parser.parse_args()
    return inside(args) if args.inside else outside(args)


if __name__ == "__main__":
    raise SystemExit(main())
