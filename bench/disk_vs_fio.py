"""The disk agent against fio: same file size, same directory, same direct/buffered mode.

Rounds alternate between the two tools so background load hits both alike. Both write a
new file sequentially in 1 MiB blocks and fsync at the end (fio: --end_fsync=1), then
read that file back sequentially; "direct" uses O_DIRECT for both, "buffered" neither
(and neither drops the page cache before reading: fio --invalidate=0). Prints one JSON
object; the goal is agreement within 10% (ratios 0.9 to 1.1). GNU dd runs the same passes
as a second peer: its ratio to fio shows how far two established tools already disagree
on the disk at hand (on a virtual disk, often by more than 10%).

    .venv/bin/python bench/disk_vs_fio.py [--directory /var/tmp] [--size 1GiB] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from sambatune.bench.disk import DiskBenchmark, DiskOptions
from sambatune.bench.runner import Method
from sambatune.quantities import parse_size
from sambatune.remote.local import LocalTransport

BLOCK = 1 << 20


def fio_job(path: Path, size: int, rw: str, direct: bool) -> float:
    """fio's bytes/s for one sequential pass over ``path``."""
    argv = [
        "fio",
        "--name=sambatune-compare",
        f"--filename={path}",
        f"--rw={rw}",
        f"--bs={BLOCK}",
        f"--size={size}",
        f"--direct={int(direct)}",
        "--ioengine=psync",
        "--numjobs=1",
        "--output-format=json",
        # The agent's buffer is an anonymous mmap (page-aligned, as O_DIRECT needs); fio's
        # default malloc'ed buffer copies from the page cache at half the speed here.
        "--mem=mmap",
        # fio preallocates its file by default; the agent (like a client's upload)
        # extends a new file as it writes.
        "--fallocate=none",
        # fsync at the end of the write, as the agent does; and no dropping of the page
        # cache before the read, which fio does by default and the agent does not.
        "--end_fsync=1" if rw == "write" else "--invalidate=0",
    ]
    done = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=3600)
    return float(json.loads(done.stdout)["jobs"][0][rw]["bw_bytes"])


def fio(directory: Path, size: int, direct: bool) -> dict[str, float]:
    """Write a new file, read it back, remove it: what one agent run does."""
    path = directory / "fio.file"
    path.unlink(missing_ok=True)
    try:
        return {"write": fio_job(path, size, "write", direct), "read": fio_job(path, size, "read", direct)}
    finally:
        path.unlink(missing_ok=True)


def dd(directory: Path, size: int, direct: bool) -> dict[str, float]:
    """The same write and read with GNU dd: a second peer, so the script shows how far two
    established tools already disagree on this disk."""
    path = directory / "dd.file"
    count = str(-(-size // BLOCK))
    flag = ["oflag=direct"] if direct else []
    try:
        started = time.perf_counter()
        subprocess.run(
            ["dd", "if=/dev/zero", f"of={path}", "bs=1M", f"count={count}", "conv=fsync", *flag],
            capture_output=True,
            check=True,
            timeout=3600,
        )
        write = time.perf_counter() - started
        started = time.perf_counter()
        subprocess.run(
            ["dd", f"if={path}", "of=/dev/null", "bs=1M", *(["iflag=direct"] if direct else [])],
            capture_output=True,
            check=True,
            timeout=3600,
        )
        read = time.perf_counter() - started
        return {"write": size / write, "read": size / read}
    finally:
        path.unlink(missing_ok=True)


def agent(directory: Path, size: int, direct: bool) -> dict[str, float]:
    options = DiskOptions(
        directory=str(directory),
        size=size,
        block_size=BLOCK,
        cache="bypass" if direct else "buffered",
        operations=("write", "read"),
    )
    result = DiskBenchmark(LocalTransport(), Method(runs=1, warmup=0), options).run()
    expected = "o_direct" if direct else "buffered"
    assert result.extra["cache"]["method"] == expected, result.extra["cache"]
    return {op: result.series[op].counted[0].bytes_per_s or 0.0 for op in ("write", "read")}


def settle(seconds: float) -> None:
    os.sync()
    time.sleep(seconds)


TOOLS = ("agent", "fio", "dd")
TOOLS_RUN = {"agent": agent, "fio": fio, "dd": dd}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--directory", default="/var/tmp")
    parser.add_argument("--size", default="1GiB")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--modes", default="direct,buffered", help="direct, buffered or both")
    parser.add_argument(
        "--settle", type=float, default=3.0, help="seconds of quiet before each tool's turn (default 3)"
    )
    args = parser.parse_args()
    size = parse_size(args.size)
    work = Path(tempfile.mkdtemp(prefix="sambatune-disk-bench-", dir=args.directory))
    os.environ.setdefault("SAMBATUNE_HOME", str(work / "home"))
    report: dict[str, object] = {
        "benchmark": "disk agent vs fio, sequential 1 MiB blocks, write (fsync at end) then read",
        "directory": str(work),
        "size_bytes": size,
        "rounds": args.rounds,
        "order": "rotating (agent, fio, dd), each tool after a sync and a pause",
        "settle_seconds": args.settle,
        "load_average_at_start": os.getloadavg()[0],
        "goal": "agent within 10% of fio (ratio 0.9 to 1.1)",
    }
    ratios = []
    try:
        modes = [m.strip() for m in args.modes.split(",") if m.strip()]
        for mode, direct in (("direct", True), ("buffered", False)):
            if mode not in modes:
                continue
            runs: dict[str, list[float]] = {f"{tool}_{op}": [] for tool in TOOLS for op in ("write", "read")}
            for round_number in range(args.rounds):
                # Who goes first rotates, and each starts on a settled disk: on a
                # virtual disk the host is still flushing the previous tool's gigabytes.
                shift = round_number % len(TOOLS)
                for tool in TOOLS[shift:] + TOOLS[:shift]:
                    settle(args.settle)
                    figures = TOOLS_RUN[tool](work, size, direct)
                    runs[f"{tool}_write"].append(figures["write"])
                    runs[f"{tool}_read"].append(figures["read"])
            entry: dict[str, object] = {
                f"{key}_mb_s": [round(v / 1e6, 1) for v in values] for key, values in runs.items()
            }
            for op in ("write", "read"):
                mean_agent = statistics.mean(runs[f"agent_{op}"])
                mean_fio = statistics.mean(runs[f"fio_{op}"])
                entry[f"agent_{op}_mean_mb_s"] = round(mean_agent / 1e6, 1)
                entry[f"fio_{op}_mean_mb_s"] = round(mean_fio / 1e6, 1)
                entry[f"ratio_{op}"] = round(mean_agent / mean_fio, 3)
                entry[f"ratio_{op}_of_medians"] = round(
                    statistics.median(runs[f"agent_{op}"]) / statistics.median(runs[f"fio_{op}"]), 3
                )
                ratios.append(mean_agent / mean_fio)
                entry[f"dd_{op}_mean_mb_s"] = round(statistics.mean(runs[f"dd_{op}"]) / 1e6, 1)
                entry[f"ratio_dd_to_fio_{op}"] = round(statistics.mean(runs[f"dd_{op}"]) / mean_fio, 3)
            report[mode] = entry
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report["load_average_at_end"] = os.getloadavg()[0]
    report["ratio_min"] = round(min(ratios), 3)
    report["ratio_max"] = round(max(ratios), 3)
    report["goal_met"] = all(0.9 <= r <= 1.1 for r in ratios)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
