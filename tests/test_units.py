"""Figures as people read them: the unit follows the value."""

from __future__ import annotations

from sambatune.units import format_rate, format_rate_pair


def test_a_slow_figure_next_to_a_fast_one_keeps_its_own_unit() -> None:
    # 1.7 MB/s beside 2.5 GB/s used to read "0.00 GB/s".
    assert format_rate_pair(1.7e6, 2.5e9) == ("1.7 MB/s", "2.50 GB/s")
    assert format_rate_pair(0, 2.5e9) == ("0.0 MB/s", "2.50 GB/s")


def test_close_figures_share_a_unit_with_enough_decimals() -> None:
    assert format_rate_pair(112.31e6, 112.36e6) == ("112.3 MB/s", "112.4 MB/s")
    assert format_rate_pair(112.31e6, 112.34e6) == ("112.31 MB/s", "112.34 MB/s")
    assert format_rate(1.7e6) == "1.7 MB/s" and format_rate(2.5e9) == "2.50 GB/s"


def test_a_rate_below_one_megabyte_is_shown_in_kilobytes() -> None:
    assert format_rate(27_600) == "27.6 kB/s"
    assert format_rate(375_000) == "375 kB/s"
    assert format_rate(950) == "950 B/s"
    assert format_rate(0) == "0.0 MB/s"
    assert format_rate(999_999_999) == "1000 MB/s"
