"""Parse the quantities people type: "1gbit", "940Mbit/s", "125MB/s", "20ms", "0.5s", "9000".

Network rates are decimal and in bits unless the unit says bytes with a capital B
("MB/s", "MiB/s", "bytes"). A bare number is refused for rates and durations: "100"
could be bits, bytes, milliseconds or seconds, and a wrong guess would give a plan
off by a factor of eight or a thousand.
"""

from __future__ import annotations

import re

from sambatune.errors import InvalidInput

_NUMBER = r"(?P<number>\d+(?:[.,]\d+)?|[.,]\d+)"
_QUANTITY = re.compile(rf"^\s*{_NUMBER}\s*(?P<unit>[A-Za-zµμ/ ]*)\s*$")

_DECIMAL_PREFIX = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
_BINARY_PREFIX = {"ki": 1024.0, "mi": 1024.0**2, "gi": 1024.0**3, "ti": 1024.0**4}

_DURATION_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "usec": 1e-6,
    "ms": 1e-3,
    "msec": 1e-3,
    "millisecond": 1e-3,
    "milliseconds": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "second": 1.0,
    "seconds": 1.0,
}


def _split(text: str, what: str) -> tuple[float, str]:
    match = _QUANTITY.match(text or "")
    if not match:
        raise InvalidInput(f"{text!r} is not a {what}.", details=_EXAMPLES[what])
    number = float(match.group("number").replace(",", "."))
    return number, match.group("unit").replace(" ", "")


_EXAMPLES = {
    "bandwidth": "Examples: 1gbit, 100mbit, 940Mbit/s, 2.5Gbps, 125MB/s (bytes per second).",
    "duration": "Examples: 20ms, 0.5s, 250us.",
    "size": "Examples: 1500, 64KiB, 1MiB.",
}


def parse_bandwidth(text: str) -> float:
    """A rate in bits per second. Bits unless the unit spells bytes with a capital B."""
    number, unit = _split(text, "bandwidth")
    if not unit:
        raise InvalidInput(
            f"{text!r} has no unit: is that bits or bytes per second?",
            details=_EXAMPLES["bandwidth"],
        )
    factor = _rate_factor(unit)
    if factor is None:
        raise InvalidInput(f"{text!r}: unknown rate unit {unit!r}.", details=_EXAMPLES["bandwidth"])
    value = number * factor
    if value <= 0:
        raise InvalidInput(f"{text!r}: the bandwidth must be above zero.")
    return value


def _rate_factor(unit: str) -> float | None:
    """Bits per second per unit, or None if the unit is not a rate we know."""
    body = unit
    for suffix in ("/s", "ps", "/sec"):
        if body.endswith(suffix) and len(body) > len(suffix):
            body = body[: -len(suffix)]
            break
    lowered = body.lower()
    per_unit: float | None = None
    for word, size in (("bytes", 8.0), ("byte", 8.0), ("bits", 1.0), ("bit", 1.0)):
        if lowered.endswith(word):
            prefix = lowered[: -len(word)]
            per_unit = size
            break
    else:
        if body.endswith("B"):
            prefix, per_unit = body[:-1].lower(), 8.0
        elif body.endswith("b"):
            prefix, per_unit = body[:-1].lower(), 1.0
        else:
            # "1g", "100M": a bare prefix is a bit rate, as link speeds are quoted.
            prefix, per_unit = lowered, 1.0
    scale = _DECIMAL_PREFIX.get(prefix)
    if scale is None:
        scale = _BINARY_PREFIX.get(prefix)
    if scale is None:
        return None
    return per_unit * scale


def parse_duration(text: str) -> float:
    """A duration in seconds: "20ms", "0.5s", "250us"."""
    number, unit = _split(text, "duration")
    if not unit:
        raise InvalidInput(f"{text!r} has no unit: milliseconds or seconds?", details=_EXAMPLES["duration"])
    factor = _DURATION_UNITS.get(unit) or _DURATION_UNITS.get(unit.lower())
    if factor is None:
        raise InvalidInput(f"{text!r}: unknown time unit {unit!r}.", details=_EXAMPLES["duration"])
    value = number * factor
    if value <= 0:
        raise InvalidInput(f"{text!r}: the round-trip time must be above zero.")
    return value


def parse_size(text: str) -> int:
    """A byte count: "1500", "64KiB", "1MiB", "64k" (k, M, G decimal; Ki, Mi, Gi binary)."""
    number, unit = _split(text, "size")
    lowered = unit.lower()
    for word in ("bytes", "byte", "b"):
        if lowered.endswith(word):
            lowered = lowered[: -len(word)]
            break
    scale = _DECIMAL_PREFIX.get(lowered)
    if scale is None:
        scale = _BINARY_PREFIX.get(lowered)
    if scale is None:
        raise InvalidInput(f"{text!r}: unknown size unit {unit!r}.", details=_EXAMPLES["size"])
    value = number * scale
    if value != int(value) or value <= 0:
        raise InvalidInput(f"{text!r} is not a whole, positive number of bytes.")
    return int(value)


def parse_count(text: str) -> int:
    """A number of files as people type it: 2000, 2,000, 2 000, 10k, 1m."""
    plain = text.strip().lower().replace(",", "").replace("_", "").replace(" ", "")
    scale = {"k": 1000, "m": 1_000_000}.get(plain[-1:], 1)
    digits = plain[:-1] if scale != 1 else plain
    if not digits.isdigit():
        raise InvalidInput(
            f"'{text.strip()}' is not a number of files.", details="Examples: 500, 2000, 10k, 1m."
        )
    return int(digits) * scale
