"""What `log level = 3` costs on a real smbd, against log level 0, measured with smbclient.

The advisor's log-level finding quotes the 1999 book (about 5% at level 3) and our own
figures; this script re-measures them on the machine at hand. It starts the test bed's
smbd on loopback, then alternates blocks at level 0 and level 3 (A B A B, so drift on a
shared machine hits both), each block with warm-up runs and counted runs of:

- a sequential read: smbclient `get` of a FILE_MIB MiB file to /dev/null, MiB/s as
  smbclient reports it;
- a metadata workload: wall time of one smbclient session listing a directory of
  LISTING_FILES files three times.

Prints one JSON object: mean and deviation per level, and level 3 relative to level 0.
Run from the repository: .venv/bin/python bench/log_level_cost.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from testbed.ports import free_port, wait_for_port
from testbed.processes import start_group
from testbed.smbd import SMBD, SmbServer

FILE_MIB = 256
LISTING_FILES = 5000
LEVELS = ("0", "3")
_RATE = re.compile(r"\(average ([\d.]+) KiloBytes/sec\)")


class FileLoggingSmbd(SmbServer):
    """The test bed's smbd, logging to its log files like a production smbd (the test bed
    sends the log to stdout, which would not measure the same thing)."""

    def start(self, config_text: str | None = None) -> FileLoggingSmbd:
        if config_text is not None:
            self.config.write_text(config_text)
        self.process = start_group(
            [SMBD, "--foreground", "--no-process-group", "--configfile", str(self.config)],
            self.console_log,
        )
        wait_for_port(self.port)
        return self


def smbclient(server: SmbServer, command: str) -> subprocess.CompletedProcess[str]:
    result = server.smbclient(command)
    if result.returncode != 0:
        raise RuntimeError(f"smbclient {command!r} failed: {result.stderr or result.stdout}")
    return result


def read_mib_per_s(server: SmbServer) -> float:
    result = smbclient(server, "get big.bin /dev/null")
    found = _RATE.search(result.stdout + result.stderr)
    if not found:
        raise RuntimeError(f"no rate in smbclient's output: {result.stdout}{result.stderr}")
    return float(found.group(1)) / 1024


def listing_seconds(server: SmbServer) -> float:
    started = time.perf_counter()
    smbclient(server, "ls many/*; ls many/*; ls many/*")
    return time.perf_counter() - started


def config_at(server: SmbServer, level: str) -> str:
    return server.default_config().replace("[global]\n", f"[global]\n  log level = {level}\n", 1)


def summary(values: list[float]) -> dict[str, float | int]:
    return {"mean": statistics.fmean(values),
            "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
            "runs": len(values)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="counted runs per block")
    parser.add_argument("--warmup", type=int, default=2, help="warm-up runs per block")
    parser.add_argument("--blocks", type=int, default=2, help="A/B block pairs")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="sambatune-bench-") as scratch:
        server = FileLoggingSmbd(Path(scratch), "smbd", port=free_port())
        with open(server.share_path / "big.bin", "wb") as out:
            for _ in range(FILE_MIB):
                out.write(os.urandom(1 << 20))
        many = server.share_path / "many"
        many.mkdir()
        for index in range(LISTING_FILES):
            (many / f"file{index:05d}.txt").write_bytes(b"x")
        reads: dict[str, list[float]] = {level: [] for level in LEVELS}
        listings: dict[str, list[float]] = {level: [] for level in LEVELS}
        log_bytes: dict[str, int] = dict.fromkeys(LEVELS, 0)
        try:
            for _ in range(args.blocks):
                for level in LEVELS:
                    server.stop()
                    for old in (server.dir / "log").glob("log.*"):
                        old.unlink()
                    server.start(config_at(server, level))
                    for _ in range(args.warmup):
                        read_mib_per_s(server)
                        listing_seconds(server)
                    for _ in range(args.runs):
                        reads[level].append(read_mib_per_s(server))
                        listings[level].append(listing_seconds(server))
                    log_bytes[level] += sum(p.stat().st_size
                                            for p in (server.dir / "log").glob("log.*"))
        finally:
            server.stop()

    version = subprocess.run(["smbd", "-V"], capture_output=True, text=True).stdout.strip()
    read = {level: summary(values) for level, values in reads.items()}
    listing = {level: summary(values) for level, values in listings.items()}
    print(json.dumps({
        "samba": version,
        "method": f"{args.blocks} x (level 0, level 3) blocks, {args.warmup} warm-up and "
                  f"{args.runs} counted runs each; smbclient on loopback",
        "read_mib_per_s": {f"log_level_{k}": v for k, v in read.items()},
        "listing_seconds": {f"log_level_{k}": v for k, v in listing.items()},
        "log_bytes_written": {f"log_level_{k}": v for k, v in log_bytes.items()},
        "level3_vs_level0": {
            "read_throughput_ratio": read["3"]["mean"] / read["0"]["mean"],
            "listing_time_ratio": listing["3"]["mean"] / listing["0"]["mean"],
        },
    }, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
