"""The receive window this computer, as an SMB client, can advertise at most.

Read through ``sambatune.client`` (the same backends the client tuning uses): on Linux the
ceiling of receive auto-tuning (the third number of ``net.ipv4.tcp_rmem``), on macOS
``net.inet.tcp.autorcvbufmax`` (XNU picks each connection's window scale to fit it, so
``net.inet.tcp.win_scale_factor``, only the starting shift, is no limit). Windows sizes its
window by an auto-tuning level rather than a number, so it is not read here.
"""

from __future__ import annotations

from sambatune.advisor.measurements import ClientWindow
from sambatune.client.posix_plan import BUFFER_PER_WINDOW
from sambatune.client.settings import Observed, SysctlRef, ValueState
from sambatune.client.system import ClientSystem
from sambatune.client.window import MAX_SCALED_WINDOW, MAX_UNSCALED_WINDOW


def _numbers(observed: Observed) -> list[int]:
    if observed.state != ValueState.PRESENT:
        return []
    parts = str(observed.value).split()
    return [int(p) for p in parts] if parts and all(p.isdigit() for p in parts) else []


def this_computer_window(system: ClientSystem | None = None) -> ClientWindow | None:
    """The largest receive window this computer lets a connection reach, or None."""
    if system is None:
        from sambatune.client.system import local_system

        system = local_system()
    family = system.os.family
    if family == "linux":
        ceiling = _numbers(system.read(SysctlRef("net.ipv4.tcp_rmem")))
        if len(ceiling) != 3:
            return None
        window = ceiling[2] // BUFFER_PER_WINDOW
        source = (
            f"net.ipv4.tcp_rmem ceiling {ceiling[2]:,} bytes on this computer, about half "
            "of it usable as window"
        )
        if _numbers(system.read(SysctlRef("net.ipv4.tcp_window_scaling"))) == [0]:
            window = min(window, MAX_UNSCALED_WINDOW)
            source += "; window scaling is off"
        return ClientWindow(window, source)
    if family == "macos":
        ceiling = _numbers(system.read(SysctlRef("net.inet.tcp.autorcvbufmax")))
        if len(ceiling) != 1:
            return None
        window = min(ceiling[0] // BUFFER_PER_WINDOW, MAX_SCALED_WINDOW)
        return ClientWindow(
            window,
            f"net.inet.tcp.autorcvbufmax {ceiling[0]:,} bytes on this "
            "computer, about half of it usable as window",
        )
    return None
