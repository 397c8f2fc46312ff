"""A real iperf3 measurement on loopback, saved as the JSON file ``iperf3 -J`` prints."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path


def iperf3_result(folder: Path, seconds: int = 1) -> Path:
    """Run a one-off iperf3 server and a client against it; return the client's JSON file."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Wait for the server's own "listening" line instead of polling with clients: a probe
    # that races the bind can leave the one-off server with a half-finished test.
    # --forceflush because iperf3 block-buffers stdout into a pipe.
    server = subprocess.Popen(
        ["iperf3", "-s", "-1", "--forceflush", "-p", str(port), "-B", "127.0.0.1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert server.stdout is not None
        for line in server.stdout:
            if "listening" in line.lower():
                break
        client = subprocess.run(
            ["iperf3", "-c", "127.0.0.1", "-p", str(port), "-t", str(seconds), "-J"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert client.returncode == 0, client.stdout + client.stderr
        result = folder / "iperf3.json"
        result.write_text(client.stdout)
        return result
    finally:
        server.kill()
        server.wait()
