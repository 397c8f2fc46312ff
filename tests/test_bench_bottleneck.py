"""The bottleneck table and the "how many clients" arithmetic, on worked examples."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from sambatune.bench.bottleneck import (
    BOOK_REQUEST_BYTES,
    BottleneckReport,
    LayerRow,
    clients_supported,
    demand_from_existing_server,
    find_bottleneck,
    per_client_demand,
    tcp_payload_share,
)
from sambatune.errors import InvalidInput

GIGABIT = 1e9


def row(report: BottleneckReport, name: str) -> LayerRow:
    return next(r for r in report.rows if r.name == name)


def test_tcp_payload_share_of_ethernet() -> None:
    assert tcp_payload_share(1500) == pytest.approx(1448 / 1538)
    assert GIGABIT / 8 * tcp_payload_share(1500) == pytest.approx(117.7e6, rel=1e-3)
    assert tcp_payload_share(9000) == pytest.approx(0.990, abs=1e-3)
    with pytest.raises(InvalidInput, match="576"):
        tcp_payload_share(100)


def test_a_gigabit_link_with_a_fast_disk_is_limited_by_the_network() -> None:
    report = find_bottleneck(disk_read_bytes_per_s=2.0e9, network_bytes_per_s=112e6, link_bits_per_s=GIGABIT)
    assert report.limiting == "network"
    assert report.expected_bytes_per_s == 112e6
    network = row(report, "network")
    assert network.limits and network.counted
    assert network.ceiling_mb_per_s == pytest.approx(112.0)
    assert network.ceiling_mbit_per_s == pytest.approx(896.0)
    assert network.percent_of_link == pytest.approx(89.6)
    assert not row(report, "disk read").limits
    assert not row(report, "link").counted  # the measured TCP figure stands for the network
    assert "network (112 MB/s)" in report.reason
    assert any("faster link" in line for line in report.advice)


def test_a_slow_disk_is_the_limit() -> None:
    report = find_bottleneck(disk_read_bytes_per_s=80e6, network_bytes_per_s=112e6, link_bits_per_s=GIGABIT)
    assert report.limiting == "disk"
    assert row(report, "disk read").limits
    assert row(report, "disk read").percent_of_link == pytest.approx(64.0)
    assert "storage" in report.advice[0]


def test_writes_are_limited_by_the_disk_write_figure() -> None:
    kwargs: dict[str, Any] = dict(
        disk_read_bytes_per_s=500e6, disk_write_bytes_per_s=60e6, network_bytes_per_s=112e6
    )
    assert find_bottleneck(**kwargs, direction="read").limiting == "network"
    report = find_bottleneck(**kwargs, direction="write")
    assert report.limiting == "disk"
    assert row(report, "disk write").limits
    assert not row(report, "disk read").counted


def test_smb_well_below_both_ceilings_is_samba_processing() -> None:
    report = find_bottleneck(
        disk_read_bytes_per_s=2.0e9, network_bytes_per_s=112e6, smb_bytes_per_s=50e6, link_bits_per_s=GIGABIT
    )
    assert report.limiting == "smb processing"
    assert report.smb_vs_raw == pytest.approx(50 / 112)
    assert report.smb_vs_raw_meaning is not None and "well below" in report.smb_vs_raw_meaning
    assert "45%" in report.reason
    assert any("log level" in line for line in report.advice)
    smb = row(report, "SMB read")
    assert not smb.counted and not smb.limits
    assert smb.percent_of_link == pytest.approx(40.0)


def test_smb_well_below_with_a_saturated_core_is_the_cpu() -> None:
    report = find_bottleneck(
        disk_read_bytes_per_s=2.0e9,
        network_bytes_per_s=112e6,
        smb_bytes_per_s=50e6,
        cpu_busy_percent=[96.0, 99.0, 100.0, 98.0],
    )
    assert report.limiting == "cpu"
    assert "99% busy" in report.reason
    assert any("one smbd process" in line for line in report.advice)


def test_smb_well_below_with_an_idle_cpu_is_still_samba_processing() -> None:
    report = find_bottleneck(
        disk_read_bytes_per_s=2.0e9,
        network_bytes_per_s=112e6,
        smb_bytes_per_s=50e6,
        cpu_busy_percent=[30, 35],
    )
    assert report.limiting == "smb processing"
    assert "no CPU core was saturated" in report.reason


def test_smb_close_to_the_ceiling_confirms_that_layer() -> None:
    healthy = find_bottleneck(disk_read_bytes_per_s=2.0e9, network_bytes_per_s=112e6, smb_bytes_per_s=108e6)
    assert healthy.limiting == "network"
    assert healthy.smb_vs_raw_meaning is not None and "healthy" in healthy.smb_vs_raw_meaning
    book_range = find_bottleneck(disk_read_bytes_per_s=2.0e9, network_bytes_per_s=112e6, smb_bytes_per_s=85e6)
    assert book_range.limiting == "network"
    assert book_range.smb_vs_raw_meaning is not None and "68-80%" in book_range.smb_vs_raw_meaning
    assert any("log level" in line for line in book_range.advice)


def test_smb_faster_than_the_disk_means_the_cache_answered() -> None:
    report = find_bottleneck(disk_read_bytes_per_s=80e6, network_bytes_per_s=112e6, smb_bytes_per_s=110e6)
    assert report.limiting == "unknown"
    assert "memory" in report.reason
    assert "larger than the server's memory" in report.advice[0]


def test_ops_times_8_kib_is_the_file_operation_ceiling() -> None:
    assert BOOK_REQUEST_BYTES == 8192
    report = find_bottleneck(
        disk_read_bytes_per_s=2.0e9, file_ops_per_s=5000, network_bytes_per_s=112e6, workload="small files"
    )
    file_ops = row(report, "file operations")
    assert file_ops.ceiling_bytes_per_s == 5000 * 8192
    assert file_ops.source == "measured ops/s × 8 KiB"
    assert file_ops.limits
    assert report.limiting == "cpu"
    assert "Small-file work" in report.advice[0]


def test_the_file_operation_ceiling_does_not_limit_large_copies() -> None:
    report = find_bottleneck(disk_read_bytes_per_s=2.0e9, file_ops_per_s=5000, network_bytes_per_s=112e6)
    assert not row(report, "file operations").counted
    assert report.limiting == "network"


def test_the_books_pentium_example_still_comes_out_at_the_disk() -> None:
    # Using Samba, B.3: one 7200 RPM disk (70 ops/s of 8 KB), a Pentium 133 (700 file ops/s),
    # 10 Mbit/s Ethernet. The book: "the hard disk is still the limiting factor".
    report = find_bottleneck(
        disk_read_bytes_per_s=70 * 8192,
        file_ops_per_s=700,
        link_bits_per_s=10e6,
        workload="small files",
    )
    assert report.limiting == "disk"
    assert row(report, "link").counted  # no TCP measurement: the link speed stands in
    assert row(report, "link").ceiling_bytes_per_s == pytest.approx(10e6 / 8 * 1448 / 1538)
    assert row(report, "file operations").ceiling_bytes_per_s == 700 * 8192


def test_a_network_test_faster_than_the_link_did_not_cross_it() -> None:
    report = find_bottleneck(disk_read_bytes_per_s=2.0e9, network_bytes_per_s=3.0e9, link_bits_per_s=10e9)
    assert report.limiting == "network"
    assert row(report, "link").limits
    assert not row(report, "network").counted
    assert "did not cross that link" in report.advice[0]


def test_a_network_far_below_its_link_is_pointed_out() -> None:
    report = find_bottleneck(disk_read_bytes_per_s=2.0e9, network_bytes_per_s=40e6, link_bits_per_s=GIGABIT)
    assert report.limiting == "network"
    assert report.advice[0].startswith("Raw TCP reaches only 34% of what the 1 Gbit/s link can carry")


def test_missing_layers_make_the_verdict_unknown() -> None:
    nothing = find_bottleneck()
    assert nothing.limiting == "unknown"
    assert nothing.expected_bytes_per_s is None
    assert "nothing" in nothing.reason
    no_disk = find_bottleneck(network_bytes_per_s=112e6, smb_bytes_per_s=30e6)
    assert no_disk.limiting == "unknown"
    assert "disk read" in no_disk.reason
    assert no_disk.advice == ("Run the disk test (read) on the server.",)
    no_network = find_bottleneck(disk_write_bytes_per_s=300e6, direction="write")
    assert no_network.limiting == "unknown"
    assert "network" in no_network.advice[0]


@pytest.mark.parametrize("bad", [0, -5.0, math.nan, math.inf])
def test_unusable_measurements_are_refused(bad: float) -> None:
    with pytest.raises(InvalidInput, match="disk read"):
        find_bottleneck(disk_read_bytes_per_s=bad)


def test_cpu_samples_must_be_percentages() -> None:
    with pytest.raises(InvalidInput, match="percentage"):
        find_bottleneck(disk_read_bytes_per_s=1e9, network_bytes_per_s=1e8, cpu_busy_percent=[150])


def test_report_json_is_plain_json() -> None:
    report = find_bottleneck(
        disk_read_bytes_per_s=2.0e9, network_bytes_per_s=112e6, smb_bytes_per_s=50e6, link_bits_per_s=GIGABIT
    )
    data = json.loads(json.dumps(report.to_json(), allow_nan=False))
    assert data["limiting"] == "smb processing"
    assert [r["name"] for r in data["rows"]] == ["disk read", "network", "link", "SMB read"]
    assert data["rows"][1]["ceiling_mbit_per_s"] == pytest.approx(896.0)


# -- how many clients ----------------------------------------------------------------------------


def test_the_books_office_example() -> None:
    # "36 clients x 2.3 transfers/second x 12k file = 1 MB/s", no headroom in the book.
    demand = per_client_demand(2.3, 12_000)
    assert demand == pytest.approx(27_600)
    estimate = clients_supported(1_000_000, demand, headroom=0.0)
    assert estimate.clients == 36
    # The per-client figure reads as what it is, not "0.0 MB/s".
    assert "27.6 kB/s" in estimate.assumption and "= 36 clients" in estimate.assumption
    assert clients_supported(960_000, demand, headroom=0.0).clients == 34


def test_the_books_reverse_estimate_from_an_existing_server() -> None:
    # 375 KB/s serving 25 clients well -> 15 KB/s each; a lab of 75 needs 1,125 KB/s.
    demand = demand_from_existing_server(375_000, 25)
    assert demand == 15_000
    assert clients_supported(1_125_000, demand, headroom=0.0).clients == 75


def test_default_headroom_keeps_thirty_percent_spare() -> None:
    estimate = clients_supported(117.7e6, 12e6)
    assert estimate.headroom == 0.3
    assert estimate.usable_bytes_per_s == pytest.approx(82.39e6)
    assert estimate.clients == 6
    assert "30%" in estimate.assumption and "= 6 clients" in estimate.assumption
    json.dumps(estimate.to_json(), allow_nan=False)


def test_exact_fits_are_not_lost_to_rounding() -> None:
    assert clients_supported(100.0, 7.0, headroom=0.3).clients == 10


def test_a_client_needing_more_than_the_server_has_gives_zero() -> None:
    assert clients_supported(100e6, 200e6).clients == 0


@pytest.mark.parametrize("headroom", [-0.1, 1.0, 2.0])
def test_headroom_must_be_a_share(headroom: float) -> None:
    with pytest.raises(InvalidInput, match="headroom"):
        clients_supported(100e6, 1e6, headroom=headroom)


def test_clients_inputs_are_checked() -> None:
    with pytest.raises(InvalidInput, match="each client"):
        clients_supported(100e6, 0)
    with pytest.raises(InvalidInput, match="whole number"):
        demand_from_existing_server(375_000, 2.5)  # type: ignore[arg-type]  # the point: not whole
    with pytest.raises(InvalidInput, match="at least 1"):
        demand_from_existing_server(375_000, 0)


def test_smb_far_below_the_slowest_layer_puts_the_limit_on_the_smb_row() -> None:
    report = find_bottleneck(
        disk_read_bytes_per_s=1.4e9, network_bytes_per_s=1.6e9, smb_bytes_per_s=2.3e6, direction="read"
    )
    assert report.limiting == "smb processing"
    assert report.limit_row == "SMB read"
    assert row(report, "disk read").limits  # still the slowest layer, not the limit named
    # A share under 1% keeps its digits: "0%" would say SMB did nothing.
    assert "0.16%" in report.reason and " 0% " not in report.reason
    healthy = find_bottleneck(disk_read_bytes_per_s=200e6, network_bytes_per_s=1e9, smb_bytes_per_s=190e6)
    assert (healthy.limiting, healthy.limit_row) == ("disk", "disk read")
    assert find_bottleneck(disk_read_bytes_per_s=200e6).limit_row is None


def test_runs_that_swing_are_reported_and_a_mean_near_the_ceiling_does_not_hide_them() -> None:
    report = find_bottleneck(
        disk_read_bytes_per_s=30e6,
        network_bytes_per_s=1e9,
        smb_bytes_per_s=24e6,
        smb_runs=(1.5e6, 28e6, 28e6, 28e6, 28e6),
    )
    assert report.limiting == "disk"  # the mean reaches 80% of it
    assert "ranged from 1.5 MB/s to 28.0 MB/s" in report.reason
    assert "the slowest reached only 5.0% of that layer" in report.reason
    steady = find_bottleneck(
        disk_read_bytes_per_s=30e6, network_bytes_per_s=1e9, smb_bytes_per_s=27e6, smb_runs=(26e6, 28e6)
    )
    assert "ranged" not in steady.reason


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ("SO_RCVBUF=8192 SO_SNDBUF=8192", "8.0 KiB"),
        ("TCP_NODELAY, so_sndbuf=65536", "64.0 KiB"),
        # smbd reads the number with atoi: 64K is 64 bytes.
        ("SO_SNDBUF=64K", "64 B"),
        ("TCP_NODELAY IPTOS_LOWDELAY", None),
        ("SO_SNDBUF=", None),
    ],
)
def test_fixed_socket_buffers_are_named_when_smb_is_slow(options: str, named: str | None) -> None:
    slow = find_bottleneck(
        disk_read_bytes_per_s=1e9, network_bytes_per_s=1e9, smb_bytes_per_s=5e6, socket_options=options
    )
    if named is None:
        assert not any("socket options" in line for line in slow.advice)
        return
    assert slow.advice[0].startswith("The smb.conf these figures ran with fixes smbd's socket buffers")
    assert f"socket options = {options}" in slow.advice[0] and f"with {named} a connection" in slow.advice[0]
    healthy = find_bottleneck(
        disk_read_bytes_per_s=1e9, network_bytes_per_s=1e9, smb_bytes_per_s=0.95e9, socket_options=options
    )
    assert not any("socket options" in line for line in healthy.advice)
