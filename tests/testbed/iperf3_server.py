"""An iperf3 server for the benchmarks' comparisons, started the way iperf3 likes.

It is ready when it prints its "listening" line (--forceflush, or the line sits in a
buffer): probing the port with a client instead can leave it in a half-started test.
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from testbed.processes import start_group, stop_group


@dataclass
class Iperf3Server:
    log: Path
    port: int
    bind: str = "127.0.0.1"
    #: A command prefix, e.g. ["ip", "netns", "exec", "ns1"].
    launcher: tuple[str, ...] = ()
    process: subprocess.Popen | None = field(default=None, repr=False)

    def start(self, timeout: float = 15.0) -> Iperf3Server:
        self.process = start_group(
            [*self.launcher, "iperf3", "-s", "--forceflush", "-B", self.bind, "-p", str(self.port)],
            self.log,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if "listening" in self.log.read_text(errors="replace").lower():
                return self
            time.sleep(0.05)
        raise RuntimeError(f"iperf3 did not start:\n{self.log.read_text()}")

    def stop(self) -> None:
        if self.process is not None:
            stop_group(self.process)
            self.process = None


def iperf3_bits(host: str, port: int, seconds: float, direction: str, length: str | None = None) -> float:
    """One iperf3 run, as the receiver counted it; "download" means the server sends (-R)."""
    # iperf3 takes whole seconds, and -t 0 would mean "forever".
    argv = ["iperf3", "-c", host, "-p", str(port), "-t", str(max(1, round(seconds))), "-J"]
    if length:
        argv += ["-l", length]
    if direction == "download":
        argv.append("-R")
    for _attempt in range(3):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 60)
        data = json.loads(done.stdout or "{}")
        received = (data.get("end") or {}).get("sum_received")
        if received:
            return float(received["bits_per_second"])
        time.sleep(1)  # "the server is busy": its previous test is still closing
    raise RuntimeError(f"iperf3 failed: {data.get('error') or done.stderr}")
