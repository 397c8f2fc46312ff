"""Bandwidth-delay arithmetic: how big the TCP receive window must be, and what a window allows.

A TCP sender may have at most one receive window of unacknowledged data in flight, so
one connection moves at most ``window / RTT``. To fill a link the window must hold
``bandwidth x RTT`` bytes (the bandwidth-delay product, BDP).

The window field in the TCP header is 16 bits: 65,535 bytes at most. RFC 7323 window
scaling multiplies it by ``2**shift``; the shift is agreed in the SYNs, is at most 14,
and so the largest window is 65,535 x 2**14 = 1,073,725,440 bytes, just under the
1 GiB (2**30) bound the RFC states.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from sambatune.errors import InvalidInput

MAX_UNSCALED_WINDOW = 65_535
MAX_WINDOW_SHIFT = 14
#: The largest window TCP can advertise: 65,535 << 14.
MAX_SCALED_WINDOW = MAX_UNSCALED_WINDOW << MAX_WINDOW_SHIFT
#: RFC 7323, section 2.2: "a maximum permissible receive window size of 1 GiB".
RFC7323_WINDOW_LIMIT = 1 << 30


def bdp_bytes(bandwidth_bps: float, rtt_seconds: float) -> float:
    """Bandwidth-delay product in bytes (bits per second x seconds / 8)."""
    _check_positive(bandwidth_bps, rtt_seconds)
    return bandwidth_bps * rtt_seconds / 8.0


def required_window(bandwidth_bps: float, rtt_seconds: float) -> int:
    """The receive window (bytes) that keeps the link busy, capped at what TCP can advertise."""
    return min(_ceil_bytes(bdp_bytes(bandwidth_bps, rtt_seconds)), MAX_SCALED_WINDOW)


def scale_shift_for(window: int) -> int:
    """The smallest RFC 7323 shift whose largest window holds ``window`` (at most 14)."""
    for shift in range(MAX_WINDOW_SHIFT + 1):
        if MAX_UNSCALED_WINDOW << shift >= window:
            return shift
    return MAX_WINDOW_SHIFT


def largest_window(shift: int) -> int:
    """The largest window a connection with this scale shift can advertise."""
    if not 0 <= shift <= MAX_WINDOW_SHIFT:
        raise InvalidInput(f"A window scale shift is 0 to 14, not {shift}.")
    return MAX_UNSCALED_WINDOW << shift


def throughput_bps(window_bytes: int, rtt_seconds: float) -> float:
    """The most one TCP connection can move with this window at this RTT, in bits/s."""
    if window_bytes <= 0:
        raise InvalidInput("The window must be above zero bytes.")
    _check_positive(1.0, rtt_seconds)
    return window_bytes * 8.0 / rtt_seconds


def round_up_to_multiple(value: int, step: int) -> int:
    """``value`` rounded up to a whole multiple of ``step`` (e.g. of the MSS)."""
    if step <= 0:
        raise ValueError("step must be positive")
    return -(-value // step) * step


@dataclass(frozen=True)
class WindowSizing:
    """Everything the bandwidth-delay calculator shows, for one bandwidth and RTT."""

    bandwidth_bps: float
    rtt_seconds: float
    bdp_bytes: float
    #: ceil(BDP), capped at :data:`MAX_SCALED_WINDOW`.
    required_window: int
    #: True when the BDP is larger than any TCP window (1 GiB bound).
    capped: bool
    scale_shift: int
    scaling_needed: bool
    #: What 65,535 bytes (no scaling) allows at this RTT.
    unscaled_throughput_bps: float
    current_window: int | None = None

    @property
    def largest_window_at_shift(self) -> int:
        return largest_window(self.scale_shift)

    @property
    def current_throughput_bps(self) -> float | None:
        """What the current window allows at this RTT, if a current window was given."""
        if self.current_window is None:
            return None
        return throughput_bps(self.current_window, self.rtt_seconds)

    def to_json(self) -> dict[str, Any]:
        return {
            "bandwidth_bps": self.bandwidth_bps,
            "rtt_seconds": self.rtt_seconds,
            "bdp_bytes": self.bdp_bytes,
            "required_window": self.required_window,
            "capped": self.capped,
            "scale_shift": self.scale_shift,
            "scaling_needed": self.scaling_needed,
            "largest_window_at_shift": self.largest_window_at_shift,
            "max_unscaled_window": MAX_UNSCALED_WINDOW,
            "max_window": MAX_SCALED_WINDOW,
            "unscaled_throughput_bps": self.unscaled_throughput_bps,
            "current_window": self.current_window,
            "current_throughput_bps": self.current_throughput_bps,
        }


def size_window(bandwidth_bps: float, rtt_seconds: float, current_window: int | None = None) -> WindowSizing:
    """The whole calculation at once: cheap enough to run on every keystroke."""
    bdp = bdp_bytes(bandwidth_bps, rtt_seconds)
    needed = _ceil_bytes(bdp)
    window = min(needed, MAX_SCALED_WINDOW)
    shift = scale_shift_for(window)
    return WindowSizing(
        bandwidth_bps=bandwidth_bps,
        rtt_seconds=rtt_seconds,
        bdp_bytes=bdp,
        required_window=window,
        capped=needed > MAX_SCALED_WINDOW,
        scale_shift=shift,
        scaling_needed=shift > 0,
        unscaled_throughput_bps=throughput_bps(MAX_UNSCALED_WINDOW, rtt_seconds),
        current_window=current_window,
    )


def format_rtt(seconds: float) -> str:
    """A round-trip time as people write it: "20 ms", "0.5 ms", "15.1 µs", "1.25 s"."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3g} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


def _ceil_bytes(value: float) -> int:
    # Binary floating point makes 1e9 * 0.01 / 8 land a hair above 1,250,000; a
    # byte count that is whole to a millionth of a byte is that whole number.
    nearest = round(value)
    if abs(value - nearest) < 1e-6:
        return int(nearest)
    return math.ceil(value)


def _check_positive(bandwidth_bps: float, rtt_seconds: float) -> None:
    if not (bandwidth_bps > 0 and math.isfinite(bandwidth_bps)):
        raise InvalidInput("The bandwidth must be a positive number of bits per second.")
    if not (rtt_seconds > 0 and math.isfinite(rtt_seconds)):
        raise InvalidInput("The round-trip time must be a positive number of seconds.")
