"""Numbers for people: bytes, bits per second, durations."""

from __future__ import annotations

_BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
_BIT_UNITS = ("bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s")


def format_bytes(value: float | None, precision: int = 1) -> str:
    """1536 -> '1.5 KiB' (binary units, as file sizes are usually shown)."""
    if value is None:
        return "?"
    size = float(value)
    for unit in _BYTE_UNITS:
        if abs(size) < 1024 or unit == _BYTE_UNITS[-1]:
            if unit == "B":
                return f"{int(size)} B"
            return f"{size:.{precision}f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def format_rate(bytes_per_second: float | None) -> str:
    """Throughput in decimal units (as benchmarks and link speeds are quoted): MB/s, GB/s
    from 1 GB/s, kB/s below 1 MB/s."""
    if bytes_per_second is None:
        return "?"
    value = bytes_per_second / 1e6
    if value >= 1000:
        return f"{value / 1000:.2f} GB/s"
    if value >= 100:
        return f"{value:.0f} MB/s"
    if 0 < abs(bytes_per_second) < 1e3:
        return f"{bytes_per_second:.0f} B/s"
    if 0 < abs(value) < 1:
        # What one client of an office asks for: 27.6 kB/s, not "0.0 MB/s".
        kilo = bytes_per_second / 1e3
        return f"{kilo:.0f} kB/s" if abs(kilo) >= 100 else f"{kilo:.1f} kB/s"
    return f"{value:.1f} MB/s"


def format_bits(bits_per_second: float | None) -> str:
    """Decimal bit rates: 1e9 -> '1 Gbit/s'."""
    if bits_per_second is None:
        return "?"
    value = float(bits_per_second)
    for unit in _BIT_UNITS:
        if abs(value) < 1000 or unit == _BIT_UNITS[-1]:
            return f"{value:.3g} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    if seconds < 120:
        return f"{seconds:.2f} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest} s"


def format_rate_pair(first: float, second: float) -> tuple[str, str]:
    """Two throughputs in one unit, with enough decimals that different values look different.

    Used where two figures are set side by side ("112.4 MB/s vs 98.1 MB/s"):
    ``format_rate`` alone would print 112.3 and 112.4 MB/s both as "112 MB/s".
    """
    largest = max(abs(first), abs(second))
    smallest = min(abs(first), abs(second))
    if smallest == 0 or largest / smallest >= 100:
        # One shared unit would print the small one as "0.00 GB/s": each gets its own.
        return format_rate(first), format_rate(second)
    divisor, unit, decimals = next(
        (step for step in ((1e9, "GB/s", 2), (1e6, "MB/s", 1), (1e3, "kB/s", 1)) if largest >= step[0]),
        (1.0, "B/s", 0),
    )
    a, b = first / divisor, second / divisor
    while decimals < 3 and a != b and f"{a:.{decimals}f}" == f"{b:.{decimals}f}":
        decimals += 1
    return f"{a:.{decimals}f} {unit}", f"{b:.{decimals}f} {unit}"


def format_operations_rate(per_second: float | None, missing: str = "?") -> str:
    """File or metadata operations per second: 12345.6 -> '12,346 ops/s'."""
    if per_second is None:
        return missing
    if abs(per_second) >= 100:
        return f"{per_second:,.0f} ops/s"
    return f"{per_second:.3g} ops/s"


#: The units a benchmark series counts in (bench.records uses these).
BYTES = "bytes"
OPERATIONS = "operations"


def format_figure(value: float | None, unit: str, missing: str = "?") -> str:
    """A series' figure in its own unit: a throughput for bytes, else operations per second."""
    if value is None:
        return missing
    return format_rate(value) if unit == BYTES else format_operations_rate(value)


def format_percent(fraction: float | None, decimals: int = 1) -> str:
    """0.146 -> '14.6%'."""
    if fraction is None:
        return "?"
    return f"{fraction * 100:.{decimals}f}%"
