"""The net agent across a real 1 Gbit/s link: a veth pair between two network namespaces.

The script (as root) creates two namespaces joined by a veth pair, limits both ends to
1 Gbit/s with tbf, starts a real sshd in the server namespace and runs itself again
inside the client namespace. From there SambaTune connects over SSH, starts the net
agent in the server namespace, and the stream crosses the veth, as it would cross a
cable. iperf3 runs over the same link for comparison. Everything it created is removed
at the end, also on failure. Prints one JSON object.

Goal: the agent's mean throughput >= 0.94 x the line rate. (TCP over Ethernet frames
of 1500 bytes carries 1448 payload bytes per 1514 counted by tbf, so 0.956 is the top.)

    .venv/bin/python bench/net_veth_line_rate.py [--rounds 5] [--seconds 5] [--rate-mbit 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

CLIENT_IP, SERVER_IP = "10.77.31.1", "10.77.31.2"
SSH_PORT = 2222
IPERF_PORT = 5201


def sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, check=check, timeout=120)


def build(tag: str, rate_mbit: int) -> tuple[str, str]:
    client, server = f"{tag}-cli", f"{tag}-srv"
    for ns in (client, server):
        sh("ip", "netns", "add", ns)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
    sh("ip", "link", "add", f"{tag}c", "type", "veth", "peer", "name", f"{tag}s")
    sh("ip", "link", "set", f"{tag}c", "netns", client)
    sh("ip", "link", "set", f"{tag}s", "netns", server)
    for ns, dev, address in ((client, f"{tag}c", CLIENT_IP), (server, f"{tag}s", SERVER_IP)):
        sh("ip", "-n", ns, "addr", "add", f"{address}/24", "dev", dev)
        sh("ip", "-n", ns, "link", "set", dev, "up")
        # The line: tbf on each end's egress, as a 1 Gbit/s NIC would send.
        sh(
            "ip",
            "netns",
            "exec",
            ns,
            "tc",
            "qdisc",
            "add",
            "dev",
            dev,
            "root",
            "tbf",
            "rate",
            f"{rate_mbit}mbit",
            "burst",
            "256kb",
            "latency",
            "20ms",
        )
    return client, server


def teardown(tag: str) -> None:
    for ns in (f"{tag}-cli", f"{tag}-srv"):
        for pid in sh("ip", "netns", "pids", ns, check=False).stdout.split():
            sh("kill", "-KILL", pid, check=False)
        sh("ip", "netns", "del", ns, check=False)


def run_across_link(prefix: str, rate_mbit: int, script: str, arguments: list[str]) -> int:
    """Build the link, run ``script --inside --server-ns NS ARGUMENTS`` in the client
    namespace, pass its output through, and remove both namespaces whatever happens."""
    if os.geteuid() != 0:
        print(json.dumps({"error": "needs root to create network namespaces"}))
        return 1
    tag = f"{prefix}{os.getpid() % 10000}"
    try:
        client, server = build(tag, rate_mbit)
        done = subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                client,
                sys.executable,
                script,
                "--inside",
                "--server-ns",
                server,
                "--rate-mbit",
                str(rate_mbit),
                *arguments,
            ],
            capture_output=True,
            text=True,
            timeout=3600,
        )
        sys.stderr.write(done.stderr)
        sys.stdout.write(done.stdout)
        return done.returncode
    finally:
        teardown(tag)
        left = [n for n in sh("ip", "netns", "list").stdout.split() if n.startswith(tag)]
        if left:
            print(f"namespaces left behind: {left}", file=sys.stderr)


def outside(args: argparse.Namespace) -> int:
    return run_across_link(
        "stv", args.rate_mbit, __file__, ["--rounds", str(args.rounds), "--seconds", str(args.seconds)]
    )


def inside(args: argparse.Namespace) -> int:
    work = Path(tempfile.mkdtemp(prefix="sambatune-veth-bench-"))
    try:
        return measure(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(args: argparse.Namespace, work: Path) -> int:
    from sambatune.bench.context import collect_context
    from sambatune.bench.net import NetBenchmark, NetOptions
    from sambatune.bench.runner import Method
    from sambatune.remote.connection import ConnectionOptions, open_target
    from sambatune.remote.prompts import NoPrompts
    from testbed.iperf3_server import Iperf3Server, iperf3_bits
    from testbed.sshd import SshServer, current_user, keygen

    os.environ.setdefault("SAMBATUNE_HOME", str(work / "home"))
    launcher = ("ip", "netns", "exec", args.server_ns)
    key = keygen(work / "id_ed25519")
    sshd = SshServer(work, "sshd", port=SSH_PORT, listen_address=SERVER_IP, launcher=launcher)
    sshd.authorize(key.with_suffix(".pub"))
    sshd.start()
    iperf = Iperf3Server(work / "iperf3.log", IPERF_PORT, SERVER_IP, launcher).start()
    known = work / "known_hosts"
    known.write_text(sshd.known_hosts_line)
    line_rate = args.rate_mbit * 1_000_000
    figures: dict[str, dict[str, list[float]]] = {}
    try:
        ssh = open_target(
            ConnectionOptions(
                host=SERVER_IP, port=SSH_PORT, user=current_user(), identity_file=str(key), known_hosts=known
            ),
            NoPrompts(),
        )
        context = collect_context(ssh, link_speed_bits=line_rate)
        for direction in ("download", "upload"):
            result = NetBenchmark(
                ssh,
                Method(runs=args.rounds, warmup=1),
                NetOptions(direction=direction, seconds=args.seconds),
                context=context,
            ).run()
            counted = result.series[direction].counted
            agent = [r.bits_per_s or 0.0 for r in counted]
            percent = [r.percent_of_link or 0.0 for r in counted]
            iperf3 = [iperf3_bits(SERVER_IP, IPERF_PORT, args.seconds, direction) for _ in range(args.rounds)]
            figures[direction] = {"agent": agent, "iperf3": iperf3, "percent_of_link": percent}
        ssh.close()
    finally:
        sshd.stop()
        iperf.stop()

    report: dict[str, object] = {
        "benchmark": "net agent across a veth pair between two namespaces, tbf-limited",
        "line_rate_bits_per_s": line_rate,
        "rounds": args.rounds,
        "seconds_per_run": args.seconds,
        "path": f"{CLIENT_IP} (client namespace) -> {SERVER_IP} (server namespace, real sshd)",
        "goal": "agent >= 0.94 x line rate",
    }
    worst = 1.0
    for direction, runs in figures.items():
        agent_mean = statistics.mean(runs["agent"])
        iperf_mean = statistics.mean(runs["iperf3"])
        report[direction] = {
            "agent_mbit_s": [round(v / 1e6, 1) for v in runs["agent"]],
            "agent_percent_of_link": [round(v, 1) for v in runs["percent_of_link"]],
            "iperf3_mbit_s": [round(v / 1e6, 1) for v in runs["iperf3"]],
            "agent_mean_mbit_s": round(agent_mean / 1e6, 1),
            "iperf3_mean_mbit_s": round(iperf_mean / 1e6, 1),
            "ratio_agent_to_line_rate": round(agent_mean / line_rate, 3),
            "ratio_iperf3_to_line_rate": round(iperf_mean / line_rate, 3),
            "ratio_agent_to_iperf3": round(agent_mean / iperf_mean, 3),
        }
        worst = min(worst, agent_mean / line_rate)
    report["ratio_min"] = round(worst, 3)
    report["goal_met"] = worst >= 0.94
    print(json.dumps(report, indent=2))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rate-mbit", type=int, default=1000)
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--server-ns", help=argparse.SUPPRESS)
    args = parser.parse_args()
    return inside(args) if args.inside else outside(args)


if __name__ == "__main__":
    raise SystemExit(main())
