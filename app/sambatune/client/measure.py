"""Measurements a plan starts from: RTT by timing TCP connects, bandwidth from a benchmark.

A TCP connect costs one round trip (SYN out, SYN-ACK back), so timing it from
``connect()`` to return measures the RTT without any agent on the server. A port
that answers with a reset (refused) costs one round trip too and still counts. The
median of a few connects is used: the first one can include an ARP lookup, and an
odd slow one should not size the window.
"""

from __future__ import annotations

import errno
import json
import socket
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sambatune.cancellation import CancelToken
from sambatune.errors import ConnectionFailed, InvalidInput

DEFAULT_RTT_PORTS = (445, 22, 139)


@dataclass(frozen=True)
class RttMeasurement:
    host: str
    address: str
    port: int
    samples: tuple[float, ...]
    #: "connected" (the port accepted) or "refused" (the host answered with a reset).
    answer: str

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def minimum(self) -> float:
        return min(self.samples)

    @property
    def maximum(self) -> float:
        return max(self.samples)

    def to_json(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "address": self.address,
            "port": self.port,
            "answer": self.answer,
            "samples_seconds": list(self.samples),
            "median_seconds": self.median,
            "min_seconds": self.minimum,
            "max_seconds": self.maximum,
        }


def _time_connect(sockaddr: Any, family: int, timeout: float) -> tuple[str, float]:
    """('connected' | 'refused' | 'timeout' | 'error', seconds)."""
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    start = time.perf_counter()
    try:
        sock.connect(sockaddr)
        return "connected", time.perf_counter() - start
    except ConnectionRefusedError:
        return "refused", time.perf_counter() - start
    except TimeoutError:
        return "timeout", timeout
    except OSError as exc:
        if exc.errno in (errno.ETIMEDOUT,):
            return "timeout", timeout
        return "error", time.perf_counter() - start
    finally:
        sock.close()


def measure_rtt(
    host: str,
    ports: Iterable[int] = DEFAULT_RTT_PORTS,
    samples: int = 5,
    timeout: float = 2.0,
    cancel: CancelToken | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> RttMeasurement:
    """The round-trip time to ``host``, from ``samples`` timed TCP connects.

    The first port that accepts is used; if none accepts but one refuses, that one is.
    """
    if samples < 1:
        raise InvalidInput("At least one RTT sample is needed.")
    port_list = list(ports)
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ConnectionFailed(f"Cannot resolve {host}: {exc.strerror}") from exc
    family, _, _, _, sockaddr = infos[0]
    address = str(sockaddr[0])
    refused_port = None
    tried = []
    for port in port_list:
        if cancel is not None:
            cancel.raise_if_cancelled()
        target = (address, port) if family == socket.AF_INET else (address, port, 0, 0)
        if on_progress:
            on_progress(f"trying {address} port {port}")
        outcome, _ = _time_connect(target, family, timeout)
        tried.append(f"{port}: {outcome}")
        if outcome == "connected":
            return _sample(
                host, address, port, target, family, samples, timeout, "connected", cancel, on_progress
            )
        # Windows retries a refused SYN for about a second before giving up, so there a
        # refusal measures that retry, not the round trip.
        if outcome == "refused" and refused_port is None and sys.platform != "win32":
            refused_port = (port, target)
    if refused_port is not None:
        port, target = refused_port
        return _sample(host, address, port, target, family, samples, timeout, "refused", cancel, on_progress)
    raise ConnectionFailed(
        f"No TCP answer from {host} to time the round trip.",
        details="Ports tried: " + ", ".join(tried) + ". Enter the RTT instead (--rtt 20ms).",
    )


def _sample(
    host: str,
    address: str,
    port: int,
    target: Any,
    family: int,
    count: int,
    timeout: float,
    answer: str,
    cancel: CancelToken | None,
    on_progress: Callable[[str], None] | None,
) -> RttMeasurement:
    values: list[float] = []
    for index in range(count):
        if cancel is not None:
            cancel.raise_if_cancelled()
        outcome, seconds = _time_connect(target, family, timeout)
        if outcome == answer:
            values.append(seconds)
        if on_progress:
            on_progress(f"RTT sample {index + 1}/{count} to {address}:{port}")
    if not values:
        raise ConnectionFailed(f"{host} port {port} stopped answering while the RTT was measured.")
    return RttMeasurement(host, address, port, tuple(values), answer)


def bandwidth_from_file(path: Path) -> tuple[float, str]:
    """:func:`bandwidth_from_result` of a saved result file; where names the file too."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"Cannot read {path}: {exc}") from exc
    bits, where = bandwidth_from_result(data)
    return bits, f"{where} in {path.name}"


def bandwidth_from_result(data: Any) -> tuple[float, str]:
    """Bits per second from a benchmark result: iperf3 ``-J`` output or a SambaTune result.

    Returns (bits per second, where it was found).
    """
    if not isinstance(data, dict):
        raise InvalidInput("A benchmark result is a JSON object.")
    end = data.get("end")
    if isinstance(end, dict):
        for key in ("sum_received", "sum", "sum_sent"):
            part = end.get(key)
            if isinstance(part, dict) and _positive(part.get("bits_per_second")):
                return float(part["bits_per_second"]), f"iperf3 end.{key}.bits_per_second"
    for path in (
        ("bits_per_second",),
        ("mean_bits_per_second",),
        ("result", "bits_per_second"),
        ("result", "mean_bits_per_second"),
        ("summary", "mean_bits_per_second"),
        ("summary", "mean_bits_per_s"),
        ("throughput_bps",),
    ):
        node: Any = data
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if _positive(node):
            return float(node), ".".join(path)
    for path in (
        ("mean_bytes_per_second",),
        ("result", "mean_bytes_per_second"),
        ("summary", "mean_bytes_per_second"),
        ("summary", "mean_bytes_per_s"),
    ):
        node = data
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if _positive(node):
            return float(node) * 8.0, ".".join(path) + " x 8"
    raise InvalidInput(
        "No throughput found in the benchmark result.",
        details="Expected iperf3 -J output (end.sum_received.bits_per_second) or a SambaTune "
        "network result with bits_per_second / mean_bits_per_second.",
    )


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
