"""The slowest part of the path: what SMB throughput is judged against.

The classic method: total throughput is the minimum of what the disk, the network (and
the CPU) can do, so SMB can at best approach the slower of the measured disk and network.
"""

from __future__ import annotations

from dataclasses import dataclass

from sambatune.advisor.inputs import AdvisorInput
from sambatune.units import format_rate

#: Share of an Ethernet link's bit rate left for TCP payload with 1500-byte frames.
TCP_PAYLOAD_SHARE = 0.94


@dataclass(frozen=True)
class Ceiling:
    bytes_per_second: float
    limited_by: str  # "network" | "disk"
    evidence: str


def network_ceiling(inputs: AdvisorInput) -> Ceiling | None:
    measured = inputs.measurements.throughput.network
    if measured is not None:
        return Ceiling(measured.mean_bytes_per_second, "network",
                       f"network benchmark: {format_rate(measured.mean_bytes_per_second)}"
                       + (f" ({measured.source})" if measured.source else ""))
    linked = [n for n in inputs.server.active_physical_nics if n.speed_mbit]
    if not linked:
        return None
    fastest = max(linked, key=lambda n: n.speed_mbit or 0)
    assert fastest.speed_mbit is not None
    rate = fastest.speed_mbit * 1e6 / 8 * TCP_PAYLOAD_SHARE
    return Ceiling(rate, "network", f"{fastest.name} links at {fastest.speed_mbit} Mbit/s, about "
                   f"{format_rate(rate)} of TCP payload (not measured)")


def ceiling(inputs: AdvisorInput, direction: str) -> Ceiling | None:
    """The lower of disk and network for ``direction`` ("read" or "write"), if known."""
    throughput = inputs.measurements.throughput
    disk = throughput.disk_read if direction == "read" else throughput.disk_write
    candidates = []
    if disk is not None:
        candidates.append(Ceiling(disk.mean_bytes_per_second, "disk",
                                  f"disk {direction} benchmark: "
                                  f"{format_rate(disk.mean_bytes_per_second)}"
                                  + (f" ({disk.source})" if disk.source else "")))
    network = network_ceiling(inputs)
    if network is not None:
        candidates.append(network)
    return min(candidates, key=lambda c: c.bytes_per_second) if candidates else None
