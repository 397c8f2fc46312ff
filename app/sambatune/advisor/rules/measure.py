"""What could not be judged yet: one finding per missing kind of measurement.

Rules that need a measurement stay silent without it; these findings say, once per
missing kind, what to measure and which judgements wait for it.
"""

from __future__ import annotations

from collections.abc import Iterator

from sambatune.advisor.findings import INFO, MEASUREMENT, Evidence, Finding
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.rule import rule

_NOTHING_TO_CHANGE = "None: nothing changes until something is measured."


def _missing(what: str) -> Evidence:
    return Evidence(MEASUREMENT, f"no {what} was given to the advisor")


@rule("measure-network-path", "measure")
def measure_network_path(inputs: AdvisorInput) -> Iterator[Finding]:
    if inputs.measurements.path is not None:
        return
    yield Finding(
        id="measure-network-path",
        severity=INFO,
        title="Not judged yet: bandwidth and round trip between clients and server",
        subject="network",
        evidence=(_missing("bandwidth or round-trip time"),),
        change=None,
        expected_effect=(
            "With both figures the advisor compares the client's receive window and the "
            "server's TCP buffer ceilings with the bandwidth-delay product, and shows what a "
            "fixed socket buffer costs on this path."
        ),
        effect_source="Not measured: run the network benchmark, or time the path with "
                      "`sambatune client plan --server HOST` from a client.",
        risk=_NOTHING_TO_CHANGE,
    )


@rule("measure-client-window", "measure")
def measure_client_window(inputs: AdvisorInput) -> Iterator[Finding]:
    if inputs.measurements.client_window is not None:
        return
    yield Finding(
        id="measure-client-window",
        severity=INFO,
        title="Not judged yet: the client's TCP receive window",
        subject="client",
        evidence=(_missing("client receive window"),),
        change=None,
        expected_effect=(
            "Knowing how far the client lets its receive window grow tells whether it, rather "
            "than the server, limits reads on a fast or distant link."
        ),
        effect_source="Not measured: `sambatune client show` on the client reports its "
                      "window settings (or pass --client-window to this command).",
        risk=_NOTHING_TO_CHANGE,
    )


@rule("measure-directory-scaling", "measure")
def measure_directory_scaling(inputs: AdvisorInput) -> Iterator[Finding]:
    if inputs.measurements.dirscale:
        return
    yield Finding(
        id="measure-directory-scaling",
        severity=INFO,
        title="Not judged yet: how lookups scale with directory size",
        subject="shares",
        evidence=(_missing("directory-scaling run"),),
        change=None,
        expected_effect=(
            "A directory-scaling run (opening and listing directories of growing size) shows "
            "whether a share with huge directories needs the case-sensitive recipe."
        ),
        effect_source="Not measured: run the directory-scaling benchmark on the share that "
                      "holds the biggest directories.",
        risk=_NOTHING_TO_CHANGE,
    )


@rule("measure-throughput", "measure")
def measure_throughput(inputs: AdvisorInput) -> Iterator[Finding]:
    throughput = inputs.measurements.throughput
    if throughput.smb_read is not None or throughput.smb_write is not None:
        return
    yield Finding(
        id="measure-throughput",
        severity=INFO,
        title="Not judged yet: SMB throughput against the disk and the network",
        subject="throughput",
        evidence=(_missing("SMB throughput figure"),),
        change=None,
        expected_effect=(
            "Measured SMB, disk and network throughput show which of them is the bottleneck, "
            "and whether Samba itself loses much on the way."
        ),
        effect_source="Not measured: run the disk, network and SMB benchmarks (warm-up runs, "
                      "then several counted runs).",
        risk=_NOTHING_TO_CHANGE,
    )
