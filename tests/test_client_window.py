"""Bandwidth-delay arithmetic against worked examples, and the unit parser."""

from __future__ import annotations

import pytest

from sambatune.client.window import (
    MAX_SCALED_WINDOW,
    MAX_UNSCALED_WINDOW,
    RFC7323_WINDOW_LIMIT,
    bdp_bytes,
    format_rtt,
    largest_window,
    required_window,
    round_up_to_multiple,
    scale_shift_for,
    size_window,
    throughput_bps,
)
from sambatune.errors import InvalidInput
from sambatune.quantities import parse_bandwidth, parse_count, parse_duration, parse_size


def test_one_gigabit_at_ten_ms_needs_1250000_bytes_and_scale_factor_5() -> None:
    sizing = size_window(1e9, 0.010)
    assert sizing.bdp_bytes == pytest.approx(1_250_000)
    assert sizing.required_window == 1_250_000
    assert sizing.scale_shift == 5
    assert sizing.scaling_needed
    # 65,535 x 2^5 = 2,097,120 holds it; 2^4 (1,048,560) would not.
    assert sizing.largest_window_at_shift == 2_097_120
    assert largest_window(4) < 1_250_000


def test_the_same_from_typed_units() -> None:
    assert required_window(parse_bandwidth("1gbit"), parse_duration("10ms")) == 1_250_000


def test_65535_bytes_is_the_window_without_scaling() -> None:
    assert MAX_UNSCALED_WINDOW == 65_535
    assert scale_shift_for(65_535) == 0
    assert scale_shift_for(65_536) == 1
    small = size_window(parse_bandwidth("100mbit"), parse_duration("1ms"))  # 12,500 bytes
    assert small.required_window == 12_500
    assert small.scale_shift == 0 and not small.scaling_needed


def test_the_window_is_capped_at_the_rfc7323_one_gib_bound() -> None:
    assert MAX_SCALED_WINDOW == 65_535 << 14 == 1_073_725_440
    assert MAX_SCALED_WINDOW <= RFC7323_WINDOW_LIMIT == 2**30
    huge = size_window(100e9, 1.0)  # 12.5 GB in flight
    assert huge.capped
    assert huge.required_window == MAX_SCALED_WINDOW
    assert huge.scale_shift == 14
    assert scale_shift_for(10**12) == 14
    with pytest.raises(InvalidInput):
        largest_window(15)


def test_throughput_a_64_kib_window_allows_at_20_ms() -> None:
    # 65,536 bytes x 8 / 0.020 s = 26,214,400 bit/s
    assert throughput_bps(64 * 1024, 0.020) == pytest.approx(26_214_400)
    sizing = size_window(1e9, 0.020, current_window=parse_size("64KiB"))
    assert sizing.current_throughput_bps == pytest.approx(26_214_400)
    # ... and 65,535 bytes (no scaling) allows 26,214,000 bit/s at 20 ms.
    assert sizing.unscaled_throughput_bps == pytest.approx(26_214_000)


def test_microsoft_example_64_kb_at_10_ms_is_about_51_mbit() -> None:
    # The network tuning guide: "64 KB at 10 ms ~ 51 Mb/s" (with 64 KB = 64,000 bytes).
    assert throughput_bps(64_000, 0.010) == pytest.approx(51.2e6)


def test_bdp_is_bits_times_seconds_over_eight() -> None:
    assert bdp_bytes(8e6, 1.0) == pytest.approx(1e6)
    assert round_up_to_multiple(1_250_000, 1460) == 1_251_220
    assert round_up_to_multiple(2920, 1460) == 2920


def test_bad_calculator_inputs_give_clear_errors() -> None:
    with pytest.raises(InvalidInput):
        size_window(0, 0.01)
    with pytest.raises(InvalidInput):
        size_window(1e9, -1)
    with pytest.raises(InvalidInput):
        throughput_bps(0, 0.01)


@pytest.mark.parametrize(
    ("text", "bits"),
    [
        ("1gbit", 1e9),
        ("100mbit", 100e6),
        ("940Mbit/s", 940e6),
        ("2.5Gbps", 2.5e9),
        ("1 Gb/s", 1e9),
        ("1G", 1e9),
        ("10 kbit", 10e3),
        ("125MB/s", 1e9),
        ("1MiB/s", 8 * 1024 * 1024),
        ("0,5 gbit", 0.5e9),
        ("12 bytes/s", 96),
    ],
)
def test_bandwidth_units(text: str, bits: float) -> None:
    assert parse_bandwidth(text) == pytest.approx(bits)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("20ms", 0.020),
        ("0.5s", 0.5),
        ("250us", 250e-6),
        ("250µs", 250e-6),
        ("1.5 ms", 0.0015),
        ("2 sec", 2.0),
    ],
)
def test_duration_units(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("text", "size"),
    [("1500", 1500), ("64KiB", 65536), ("64k", 64000), ("1MiB", 1048576), ("9000 bytes", 9000)],
)
def test_size_units(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize(
    ("text", "count"),
    [("2000", 2000), ("2,000", 2000), ("2 000", 2000), ("10k", 10_000), ("1M", 1_000_000), (" 500 ", 500)],
)
def test_file_counts_read_as_people_write_them(text: str, count: int) -> None:
    # One grammar for the CLI and the benchmark form.
    assert parse_count(text) == count


@pytest.mark.parametrize("text", ["lots", "", "k", "-5", "1.5k", "10kb"])
def test_bad_file_counts_say_so(text: str) -> None:
    with pytest.raises(InvalidInput, match="is not a number of files"):
        parse_count(text)


@pytest.mark.parametrize("text", ["100", "fast", "1 parsec", "-5mbit", "0mbit", ""])
def test_bad_bandwidths_are_refused_with_a_message(text: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_bandwidth(text)
    assert caught.value.message


@pytest.mark.parametrize("text", ["20", "20 parsecs", "0ms", "ms"])
def test_bad_durations_are_refused(text: str) -> None:
    with pytest.raises(InvalidInput):
        parse_duration(text)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.020, "20 ms"), (0.0005, "500 µs"), (0.000015112, "15.1 µs"), (0.0015, "1.5 ms"), (1.25, "1.25 s")],
)
def test_rtts_read_as_people_write_them(seconds: float, text: str) -> None:
    assert format_rtt(seconds) == text
