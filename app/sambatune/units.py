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
    """Throughput as MB/s (decimal, as benchmarks and link speeds are quoted)."""
    if bytes_per_second is None:
        return "?"
    value = bytes_per_second / 1e6
    if value >= 1000:
        return f"{value / 1000:.2f} GB/s"
    if value >= 100:
        return f"{value:.0f} MB/s"
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
