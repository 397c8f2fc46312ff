"""The net agent against iperf3 on loopback, in the same run: is our TCP stream as fast?

Rounds alternate between the two tools so machine noise hits both alike. The agent runs
twice over: started on this computer, and started through a real sshd on loopback (the
data then still streams over its own TCP connection, never through SSH, which would cap
it near 350 MB/s). Prints one JSON object; the goal is a ratio of at least 1.0 (issue 33).

    .venv/bin/python bench/net_vs_iperf3.py [--rounds 5] [--seconds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from sambatune.bench.net import NetBenchmark, NetOptions
from sambatune.bench.runner import Method
from sambatune.remote.connection import open_target
from sambatune.remote.local import LocalTransport
from sambatune.remote.prompts import NoPrompts
from sambatune.remote.transport import Transport
from testbed.iperf3_server import Iperf3Server, iperf3_bits
from testbed.ports import free_port
from testbed.sshd import SshServer, keygen


def agent_bits(transport: Transport, seconds: float, direction: str) -> float:
    result = NetBenchmark(
        transport, Method(runs=1, warmup=0), NetOptions(direction=direction, seconds=seconds)
    ).run()
    run = result.series[direction].counted[0]
    assert run.bits_per_s is not None
    return run.bits_per_s


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument(
        "--iperf3-length",
        metavar="BYTES",
        help="iperf3 -l (default: its own, 128K); the agent moves 1 MiB per call",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sambatune-net-bench-"))
    try:
        return measure(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(args: argparse.Namespace, work: Path) -> int:
    os.environ.setdefault("SAMBATUNE_HOME", str(work / "home"))
    iperf_port = free_port()
    iperf = Iperf3Server(work / "iperf3.log", iperf_port).start()
    key = keygen(work / "id_ed25519")
    sshd = SshServer(work, "sshd")
    sshd.authorize(key.with_suffix(".pub"))
    sshd.start()
    known = work / "known_hosts"
    known.write_text(sshd.known_hosts_line)
    ssh = open_target(
        sshd.key_options(key, known),
        NoPrompts(),
    )
    local = LocalTransport()
    load_at_start = os.getloadavg()[0]
    figures: dict[str, dict[str, list[float]]] = {}
    try:
        for direction in ("download", "upload"):
            runs = figures[direction] = {"iperf3": [], "agent_local": [], "agent_over_ssh": []}
            iperf3_bits("127.0.0.1", iperf_port, 1, direction)  # warm-up, not counted
            agent_bits(local, 1, direction)
            for _ in range(args.rounds):
                runs["iperf3"].append(
                    iperf3_bits("127.0.0.1", iperf_port, args.seconds, direction, args.iperf3_length)
                )
                runs["agent_local"].append(agent_bits(local, args.seconds, direction))
                runs["agent_over_ssh"].append(agent_bits(ssh, args.seconds, direction))
                time.sleep(0.2)
    finally:
        ssh.close()
        sshd.stop()
        iperf.stop()

    report: dict[str, object] = {
        "benchmark": "net agent vs iperf3, one TCP stream on loopback",
        "rounds": args.rounds,
        "seconds_per_run": args.seconds,
        "iperf3_length": args.iperf3_length or "default (128K)",
        "load_average_at_start": load_at_start,
        "load_average_at_end": os.getloadavg()[0],
        "goal": "agent >= 1.0 x iperf3",
    }
    ratios = []
    for direction, runs in figures.items():
        means = {tool: statistics.mean(values) for tool, values in runs.items()}
        medians = {tool: statistics.median(values) for tool, values in runs.items()}
        entry: dict[str, object] = {
            f"{tool}_gbit_s": [round(v / 1e9, 2) for v in values] for tool, values in runs.items()
        }
        entry.update({f"{tool}_mean_gbit_s": round(m / 1e9, 2) for tool, m in means.items()})
        for tool in ("agent_local", "agent_over_ssh"):
            ratio = means[tool] / means["iperf3"]
            entry[f"ratio_{tool}"] = round(ratio, 3)
            entry[f"ratio_{tool}_of_medians"] = round(medians[tool] / medians["iperf3"], 3)
            ratios.append(ratio)
        report[direction] = entry
    report["ratio_min"] = round(min(ratios), 3)
    report["goal_met"] = min(ratios) >= 1.0
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
