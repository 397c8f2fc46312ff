"""What `log level = 3` costs on a real smbd, against log level 0, measured with smbclient.

The advisor's log-level finding quotes the 1999 book (about 5% at level 3) and our own
figures; this script re-measures them on the machine at hand. It starts the test bed's
smbd on loopback (logging to files, as in production) and alternates the two levels run
by run (restarting smbd in between), so drift on a shared machine hits both alike:

- a sequential read: smbclient `get` of a FILE_MIB MiB file to /dev/null, MiB/s as
  smbclient reports it;
- a metadata workload: one smbclient session listing a directory of LISTING_FILES
  files three times, as wall time.

For both it also records the CPU time smbd spent serving the session (the serving
child's user+system time, which the parent collects when it reaps it): on a busy machine
that shows the logging cost more steadily than wall time does.

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


def children_cpu_seconds(server: SmbServer) -> float:
    """User+system time of smbd's reaped children (fields 16 and 17 of /proc/PID/stat)."""
    assert server.process is not None
    stat = Path(f"/proc/{server.process.pid}/stat").read_text()
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def served(server: SmbServer, command: str) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """Run one smbclient session: its result, wall seconds and smbd CPU seconds."""
    before = children_cpu_seconds(server)
    started = time.perf_counter()
    result = smbclient(server, command)
    wall = time.perf_counter() - started
    deadline = time.monotonic() + 2.0
    cpu = children_cpu_seconds(server) - before
    while cpu == 0 and time.monotonic() < deadline:  # the parent reaps its child soon after
        time.sleep(0.05)
        cpu = children_cpu_seconds(server) - before
    return result, wall, cpu


def read_run(server: SmbServer) -> tuple[float, float]:
    result, _, cpu = served(server, "get big.bin /dev/null")
    found = _RATE.search(result.stdout + result.stderr)
    if not found:
        raise RuntimeError(f"no rate in smbclient's output: {result.stdout}{result.stderr}")
    return float(found.group(1)) / 1024, cpu


def listing_run(server: SmbServer) -> tuple[float, float]:
    _, wall, cpu = served(server, "ls many/*; ls many/*; ls many/*")
    return wall, cpu


def config_at(server: SmbServer, level: str) -> str:
    return server.default_config().replace("[global]\n", f"[global]\n  log level = {level}\n", 1)


def summary(values: list[float]) -> dict[str, float | int]:
    return {
        "mean": statistics.fmean(values),
        "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
        "runs": len(values),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8, help="counted runs per level")
    parser.add_argument("--warmup", type=int, default=2, help="warm-up runs per level")
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
        figures: dict[str, dict[str, list[float]]] = {
            level: {"read_mib_per_s": [], "read_smbd_cpu_s": [], "listing_s": [], "listing_smbd_cpu_s": []}
            for level in LEVELS
        }
        log_bytes: dict[str, int] = dict.fromkeys(LEVELS, 0)
        try:
            for run in range(args.warmup + args.runs):
                for level in LEVELS:
                    server.stop()
                    for old in (server.dir / "log").glob("log.*"):
                        old.unlink()
                    server.start(config_at(server, level))
                    rate, read_cpu = read_run(server)
                    wall, listing_cpu = listing_run(server)
                    if run < args.warmup:
                        continue
                    own = figures[level]
                    own["read_mib_per_s"].append(rate)
                    own["read_smbd_cpu_s"].append(read_cpu)
                    own["listing_s"].append(wall)
                    own["listing_smbd_cpu_s"].append(listing_cpu)
                    log_bytes[level] += sum(p.stat().st_size for p in (server.dir / "log").glob("log.*"))
        finally:
            server.stop()

    version = subprocess.run(["smbd", "-V"], capture_output=True, text=True).stdout.strip()
    results = {
        f"log_level_{level}": {name: summary(values) for name, values in measured.items()}
        for level, measured in figures.items()
    }

    def ratio(name: str) -> float:
        return float(results["log_level_3"][name]["mean"] / results["log_level_0"][name]["mean"])

    print(
        json.dumps(
            {
                "samba": version,
                "method": f"levels 0 and 3 alternated run by run, smbd restarted each time; "
                f"{args.warmup} warm-up and {args.runs} counted runs per level; "
                f"smbclient on loopback; {FILE_MIB} MiB read, {LISTING_FILES}-file listing x3",
                "results": results,
                "log_bytes_written": {f"log_level_{k}": v for k, v in log_bytes.items()},
                "level3_vs_level0": {name: ratio(name) for name in figures["0"]},
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
