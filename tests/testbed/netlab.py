"""Network namespaces for client-tuning tests: client --veth-- router --veth-- server.

SambaTune runs *inside* the client namespace (``ip netns exec``), so its sysctl writes
and ``ip link`` changes land there and never on the host. Two path variants:

- black hole: the server end of the router-server link has a smaller MTU than the
  router end, so big packets are dropped silently (veth accepts up to MTU + 4 bytes,
  hence 1396 for a 1400-byte limit);
- fragmentation needed: both ends of that link are 1400, and the router says so.

``lab()`` removes the namespaces and the processes it started even when a test fails.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path

#: Per-namespace sysctls a plan writes here.
NAMESPACED = ("net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_mtu_probing")
#: Everything compared before and after (net.core.* may belong to the host).
SYSCTLS = (*NAMESPACED, "net.core.rmem_max", "net.core.wmem_max")
CLIENT_IP, ROUTER_A, ROUTER_B, SERVER_IP = "10.91.1.2", "10.91.1.1", "10.91.2.1", "10.91.2.2"
_counter = itertools.count()


def sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, check=check, timeout=120)


@dataclass
class NetLab:
    client: str
    router: str
    server: str
    client_dev: str
    home: Path
    sysctl_dir: Path
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def sysctl(self, name: str) -> str:
        return " ".join(sh("ip", "netns", "exec", self.client, "sysctl", "-n", name).stdout.split())

    def mtu(self) -> int:
        data = json.loads(sh("ip", "-n", self.client, "-j", "link", "show", "dev", self.client_dev).stdout)
        return int(data[0]["mtu"])

    def cli(self, *args: str, check: bool = True) -> dict:
        env = {**os.environ, "SAMBATUNE_HOME": str(self.home)}
        done = subprocess.run(
            ["ip", "netns", "exec", self.client, sys.executable, "-m", "sambatune", "client", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"sambatune client {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
            )
        return json.loads(done.stdout) if done.stdout.strip() else {}

    def serve_tcp(self, port: int) -> None:
        code = (
            "import socket,sys\ns=socket.socket()\n"
            "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            f"s.bind(('0.0.0.0', {port}))\ns.listen(64)\nprint('ready', flush=True)\n"
            "while True:\n    c,_=s.accept()\n    c.close()\n"
        )
        process = subprocess.Popen(
            ["ip", "netns", "exec", self.server, sys.executable, "-c", code], stdout=subprocess.PIPE
        )
        self.processes.append(process)
        assert process.stdout is not None and process.stdout.readline().strip() == b"ready"


def _build(lab: NetLab, tag: str, blackhole: bool) -> None:
    for ns in (lab.client, lab.router, lab.server):
        sh("ip", "netns", "add", ns)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
    sh("ip", "link", "add", f"{tag}c", "type", "veth", "peer", "name", f"{tag}ra")
    sh("ip", "link", "set", f"{tag}c", "netns", lab.client)
    sh("ip", "link", "set", f"{tag}ra", "netns", lab.router)
    sh("ip", "link", "add", f"{tag}rb", "type", "veth", "peer", "name", f"{tag}s")
    sh("ip", "link", "set", f"{tag}rb", "netns", lab.router)
    sh("ip", "link", "set", f"{tag}s", "netns", lab.server)
    for ns, dev, address in (
        (lab.client, f"{tag}c", CLIENT_IP),
        (lab.router, f"{tag}ra", ROUTER_A),
        (lab.router, f"{tag}rb", ROUTER_B),
        (lab.server, f"{tag}s", SERVER_IP),
    ):
        sh("ip", "-n", ns, "addr", "add", f"{address}/24", "dev", dev)
        sh("ip", "-n", ns, "link", "set", dev, "up")
    if blackhole:
        sh("ip", "-n", lab.server, "link", "set", f"{tag}s", "mtu", "1396")
    else:
        sh("ip", "-n", lab.router, "link", "set", f"{tag}rb", "mtu", "1400")
        sh("ip", "-n", lab.server, "link", "set", f"{tag}s", "mtu", "1400")
    sh("ip", "-n", lab.client, "route", "add", "default", "via", ROUTER_A)
    sh("ip", "-n", lab.server, "route", "add", "default", "via", ROUTER_B)
    sh("ip", "netns", "exec", lab.router, "sysctl", "-qw", "net.ipv4.ip_forward=1")


def lab(tmp_path: Path, blackhole: bool) -> Generator[NetLab, None, None]:
    tag = f"st{os.getpid() % 1000:03d}{next(_counter)}"
    lab = NetLab(
        f"{tag}-client",
        f"{tag}-router",
        f"{tag}-server",
        f"{tag}c",
        tmp_path / "lab-home",
        tmp_path / "sysctl.d",
    )
    try:
        _build(lab, tag, blackhole)
        yield lab
    finally:
        for process in lab.processes:
            process.kill()
            process.wait()
        for ns in (lab.client, lab.router, lab.server):
            sh("ip", "netns", "del", ns, check=False)
        leftovers = sh("ip", "netns", "list").stdout
        assert tag not in leftovers, leftovers


def host_values() -> dict[str, str]:
    values = {name: " ".join(sh("sysctl", "-n", name).stdout.split()) for name in SYSCTLS}
    values["links"] = sh("ip", "-j", "link", "show").stdout
    return values


def writable_in(ns: str, name: str) -> bool:
    path = "/proc/sys/" + name.replace(".", "/")
    done = sh("ip", "netns", "exec", ns, "stat", "-c", "%a", path, check=False)
    return done.returncode == 0 and int(done.stdout.strip(), 8) & 0o222 != 0
