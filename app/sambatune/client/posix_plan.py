"""Linux and macOS planners: buffer ceilings for auto-tuning, window scaling, MTU.

Both kernels already size the window by themselves (receive auto-tuning); what a plan
can fix is a ceiling too low for the bandwidth-delay product, scaling turned off,
auto-tuning turned off, or an MTU that runs into a black hole.

A plan only ever raises a ceiling. For a profile (another machine, nothing readable) the
Linux plan states its ceilings as minimums, which the apply on that machine settles
against the real values (``minimums.py``); the macOS plan starts from XNU's defaults,
so it never asks for less than a Mac already has.
"""

from __future__ import annotations

from pathlib import Path

from sambatune.client.linux_system import (
    DEFAULT_SYSCTL_DIR,
    SYSCTL_FILE_NAME,
    LinuxSystem,
    boot_time_overrides,
    merge_sysctl_file,
    parse_sysctl_file,
)
from sambatune.client.plan import PlannedChange
from sambatune.client.planner import PlanContext
from sambatune.client.settings import FileRef, InterfaceMtuRef, Observed, SysctlRef, ValueState
from sambatune.client.window import (
    MAX_SCALED_WINDOW,
    MAX_UNSCALED_WINDOW,
    format_rtt,
)
from sambatune.units import format_bits, format_bytes

#: The kernel counts per-packet bookkeeping against the socket buffer, so the buffer must
#: be larger than the window it is to advertise. Twice the window is the classic margin
#: (Linux's old fixed tcp_adv_win_scale=1 advertised half the buffer).
BUFFER_PER_WINDOW = 2


def _need_text(ctx: PlanContext) -> str:
    s = ctx.sizing
    return (
        f"{format_bits(s.bandwidth_bps)} x {format_rtt(s.rtt_seconds)} needs a "
        f"{s.required_window:,}-byte window"
    )


def _int(observed: Observed) -> int | None:
    if observed.state == ValueState.PRESENT:
        text = str(observed.value).strip()
        if text.lstrip("-").isdigit():
            return int(text)
    return None


def _triple(observed: Observed) -> list[int] | None:
    if observed.state != ValueState.PRESENT:
        return None
    parts = str(observed.value).split()
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    return [int(p) for p in parts]


def _buffer_target(ctx: PlanContext) -> int:
    return BUFFER_PER_WINDOW * min(ctx.sizing.required_window, MAX_SCALED_WINDOW)


# -- Linux ----------------------------------------------------------------------------


def plan_linux(ctx: PlanContext) -> list[PlannedChange]:
    items: list[PlannedChange] = []
    need = ctx.sizing.required_window
    buffer = _buffer_target(ctx)
    persisted: dict[str, str] = {}

    def sysctl_item(
        catalog_id: str, name: str, wanted: str | None, reason_keep: str, reason_set: str
    ) -> None:
        ref = SysctlRef(name)
        current = ctx.read(ref)
        if current.state == ValueState.ABSENT:
            items.append(ctx.item(catalog_id, ref, current, "none", None, "This kernel has no such setting."))
            return
        system = ctx.system
        if wanted is not None and isinstance(system, LinuxSystem) and system.sysctl_read_only(name):
            ctx.warnings.append(
                f"{name} is read-only here: inside a container or network "
                "namespace it belongs to the host. Set it on the host."
            )
            items.append(
                ctx.item(
                    catalog_id,
                    ref,
                    current,
                    "none",
                    None,
                    f"Would be {wanted}, but this namespace may only read it (it "
                    "is the host's value); set it on the host instead.",
                )
            )
            return
        if wanted is None:
            items.append(ctx.item(catalog_id, ref, current, "keep", None, reason_keep))
            return
        items.append(ctx.item(catalog_id, ref, current, "set", wanted, reason_set))
        persisted[name] = wanted

    for catalog_id, name, direction in (
        ("linux-tcp-rmem", "net.ipv4.tcp_rmem", "receive"),
        ("linux-tcp-wmem", "net.ipv4.tcp_wmem", "send"),
    ):
        current = ctx.read(SysctlRef(name))
        values = _triple(current)
        wanted = None
        if values is None and current.state == ValueState.UNKNOWN:
            # Another machine's profile: say what the ceiling must be, keep the kernel's
            # usual first two numbers.
            wanted = f"4096 {131072 if direction == 'receive' else 16384} {buffer}"
        elif values is not None and values[2] < buffer:
            wanted = f"{values[0]} {values[1]} {buffer}"
        top = values[2] if values else None
        sysctl_item(
            catalog_id,
            name,
            wanted,
            f"{_need_text(ctx)}; the {direction} ceiling of {format_bytes(top)} leaves room for "
            f"it (about {BUFFER_PER_WINDOW}x the window is needed, for the kernel's bookkeeping)."
            if top
            else "Nothing to change.",
            f"{_need_text(ctx)}. The kernel grows each connection's {direction} buffer only up to "
            f"the third number, and only part of the buffer becomes window (the rest pays for "
            f"per-packet bookkeeping), so the ceiling should be about {BUFFER_PER_WINDOW}x the "
            f"window: {buffer:,} bytes"
            + (
                f" instead of {top:,} "
                f"({format_bits(top / BUFFER_PER_WINDOW * 8 / ctx.sizing.rtt_seconds)}"
                " per connection at this RTT)."
                if top
                else "."
            )
            + " The first two numbers are kept.",
        )

    for catalog_id, name, what in (
        ("linux-rmem-max", "net.core.rmem_max", "SO_RCVBUF"),
        ("linux-wmem-max", "net.core.wmem_max", "SO_SNDBUF"),
    ):
        current = ctx.read(SysctlRef(name))
        have = _int(current)
        wanted = (
            str(buffer)
            if (have is None and current.state == ValueState.UNKNOWN) or (have is not None and have < buffer)
            else None
        )
        sysctl_item(
            catalog_id,
            name,
            wanted,
            f"{format_bytes(have)} already lets a program that sets {what} itself ask for the "
            "buffer this path needs."
            if have
            else "Nothing to change.",
            f"Auto-tuned connections ignore this, but a program that fixes its buffer with "
            f"{what} (smbclient does when the client smb.conf has 'socket options = {what}=...') "
            f"is capped here and loses auto-tuning; {buffer:,} bytes lifts the cap to what this "
            "path needs. It only raises a ceiling: nothing uses more memory unless it asks.",
        )

    current = ctx.read(SysctlRef("net.ipv4.tcp_window_scaling"))
    scaling_off = _int(current) == 0
    sysctl_item(
        "linux-tcp-window-scaling",
        "net.ipv4.tcp_window_scaling",
        "1" if (scaling_off or current.state == ValueState.UNKNOWN) and need > MAX_UNSCALED_WINDOW else None,
        "On." if not scaling_off else "Off, but no window above 65,535 bytes is needed.",
        f"{_need_text(ctx)}, above the 65,535 bytes TCP can advertise without scaling; with "
        f"scaling off a connection is held to {format_bits(ctx.sizing.unscaled_throughput_bps)} "
        "at this RTT.",
    )

    current = ctx.read(SysctlRef("net.ipv4.tcp_moderate_rcvbuf"))
    sysctl_item(
        "linux-tcp-moderate-rcvbuf",
        "net.ipv4.tcp_moderate_rcvbuf",
        "1" if _int(current) == 0 else None,
        "On: the kernel grows receive buffers by itself.",
        "Receive auto-tuning is off, so every connection keeps tcp_rmem's starting buffer "
        "whatever the path needs. On is the kernel's default.",
    )

    current = ctx.read(SysctlRef("net.ipv4.tcp_mtu_probing"))
    sysctl_item(
        "linux-tcp-mtu-probing",
        "net.ipv4.tcp_mtu_probing",
        "1" if ctx.mtu.black_hole and (_int(current) == 0 or current.state == ValueState.UNKNOWN) else None,
        "No black hole was found on the way to the server." if not ctx.mtu.black_hole else "Already on.",
        "The probe found a path-MTU black hole; with probing on, a connection whose big segments "
        "vanish falls back to smaller ones instead of stalling (this also covers destinations "
        "beyond the same hole that the interface MTU change does not).",
    )

    nic = ctx.interface
    if nic is not None and ctx.mtu.target is not None:
        ref = InterfaceMtuRef(nic.name)
        items.append(
            ctx.item(
                "linux-interface-mtu",
                ref,
                ctx.read(ref),
                "set",
                ctx.mtu.target,
                ctx.mtu.reason,
                suffix=nic.name,
            )
        )
        ctx.notes.append(
            f"The MTU of {nic.name} is set with ip link and lasts until the next reboot or until "
            "the network manager reconfigures the interface; to keep it, set it there too "
            f"(NetworkManager: nmcli connection modify <name> 802-3-ethernet.mtu {ctx.mtu.target})."
        )
    else:
        ctx.notes.append(f"MTU: {ctx.mtu.reason}")

    if persisted:
        items.append(_persistence_item(ctx, persisted))
    return items


def _persistence_item(ctx: PlanContext, values: dict[str, str]) -> PlannedChange:
    system = ctx.system
    if isinstance(system, LinuxSystem):
        ref = system.persistence_file
    else:
        ref = FileRef(str(Path(DEFAULT_SYSCTL_DIR) / SYSCTL_FILE_NAME))
    current = ctx.read(ref)
    content = merge_sysctl_file(str(current.value) if current.state == ValueState.PRESENT else None, values)
    if isinstance(system, LinuxSystem):
        overrides = boot_time_overrides(list(parse_sysctl_file(content)), Path(ref.path))
        for name, files in overrides.items():
            ctx.warnings.append(
                f"{name} is also set in {', '.join(files)}, which systemd-sysctl reads after "
                f"{Path(ref.path).name}: at boot that value wins over SambaTune's."
            )
    reason = (
        f"Keeps the {len(values)} sysctl value(s) above across reboots; sysctl -w "
        "alone lasts until the next boot."
    )
    if current.state == ValueState.UNKNOWN:
        reason += (
            " Applied on that machine, the file keeps only the values the apply actually "
            "raises there, never one lower than the file or the kernel already holds."
        )
    return ctx.item("linux-sysctl-file", ref, current, "set", content, reason)


# -- macOS ----------------------------------------------------------------------------

#: What a Mac holds when nobody changed it, for planning a profile (its values cannot be
#: read). XNU: sb_max starts at SB_MAX, 8 MiB (bsd/kern/uipc_socket2.c,
#: bsd/sys/socketvar.h); tcp_autorcvbuf_max / tcp_autosndbuf_max are 2 MiB in
#: bsd/netinet/tcp_input.c / tcp_output.c, and tcp_init (bsd/netinet/tcp_subr.c) raises
#: both to 4 MiB on Macs with 4 GiB of memory or more, which is every current Mac.
MACOS_DEFAULTS = {
    "kern.ipc.maxsockbuf": 8 * 1024 * 1024,
    "net.inet.tcp.autorcvbufmax": 4 * 1024 * 1024,
    "net.inet.tcp.autosndbufmax": 4 * 1024 * 1024,
}
_MACOS_DEFAULT_SOURCE = {
    "kern.ipc.maxsockbuf": "macOS's default (SB_MAX, XNU)",
    "net.inet.tcp.autorcvbufmax": "macOS's default on a Mac with 4 GiB of memory or more "
    "(XNU tcp_init; 2 MiB on smaller ones)",
    "net.inet.tcp.autosndbufmax": "macOS's default on a Mac with 4 GiB of memory or more "
    "(XNU tcp_init; 2 MiB on smaller ones)",
}


def plan_macos(ctx: PlanContext) -> list[PlannedChange]:
    items: list[PlannedChange] = []
    buffer = _buffer_target(ctx)
    profile = not ctx.os.detected

    def read_int(name: str) -> tuple[SysctlRef, Observed, int | None, str]:
        """The value, or for a profile macOS's default, and where the number came from."""
        ref = SysctlRef(name)
        current = ctx.read(ref)
        have = _int(current)
        if have is None and profile and current.state == ValueState.UNKNOWN and name in MACOS_DEFAULTS:
            return ref, current, MACOS_DEFAULTS[name], _MACOS_DEFAULT_SOURCE[name]
        return ref, current, have, "the current value"

    ref_max, cur_max, have_max, max_source = read_int("kern.ipc.maxsockbuf")
    buffers = []
    for catalog_id, name in (
        ("macos-autorcvbufmax", "net.inet.tcp.autorcvbufmax"),
        ("macos-autosndbufmax", "net.inet.tcp.autosndbufmax"),
    ):
        ref, current, have, source = read_int(name)
        if have is None and not profile:
            buffers.append(
                ctx.item(
                    catalog_id,
                    ref,
                    current,
                    "none",
                    None,
                    f"Could not be read here ({current.display()}); nothing is planned for it.",
                )
            )
        elif have is None or have < buffer:
            buffers.append(
                ctx.item(
                    catalog_id,
                    ref,
                    current,
                    "set",
                    str(buffer),
                    f"{_need_text(ctx)}; auto-tuning stops at this ceiling, and the window is only "
                    f"part of the buffer, so about {BUFFER_PER_WINDOW}x the window: {buffer:,} bytes"
                    + (f", more than {source}, {have:,}." if have is not None else ".")
                    + (
                        " The kernel also picks each connection's window scale from this ceiling."
                        if name.endswith("autorcvbufmax")
                        else ""
                    ),
                )
            )
        else:
            buffers.append(
                ctx.item(
                    catalog_id,
                    ref,
                    current,
                    "keep",
                    None,
                    f"{_need_text(ctx)}; {source}, {have:,} bytes, leaves room "
                    f"for the {buffer:,}-byte buffer this needs.",
                )
            )
    # The socket-buffer ceiling must rise first, or the kernel refuses the larger values.
    if have_max is None:
        items.append(
            ctx.item(
                "macos-maxsockbuf",
                ref_max,
                cur_max,
                "none",
                None,
                f"Could not be read here ({cur_max.display()}); nothing is planned for it.",
            )
        )
    elif any(b.action == "set" for b in buffers) and have_max < buffer:
        items.append(
            ctx.item(
                "macos-maxsockbuf",
                ref_max,
                cur_max,
                "set",
                str(buffer),
                "No socket buffer can exceed this ceiling, so it must be at least "
                f"the new auto-tuning ceilings ({buffer:,} bytes); {max_source} "
                f"is {have_max:,}.",
            )
        )
    else:
        items.append(
            ctx.item(
                "macos-maxsockbuf",
                ref_max,
                cur_max,
                "keep",
                None,
                f"High enough for the auto-tuning ceilings ({max_source}, {have_max:,} bytes).",
            )
        )
    items += buffers

    ref, current, auto, _ = read_int("net.inet.tcp.doautorcvbuf")
    if auto == 0:
        items.append(
            ctx.item(
                "macos-doautorcvbuf",
                ref,
                current,
                "set",
                "1",
                "Receive auto-tuning is off, so buffers never grow to what the "
                "path needs; on is macOS's default.",
            )
        )
    else:
        items.append(
            ctx.item(
                "macos-doautorcvbuf",
                ref,
                current,
                "keep",
                None,
                "On." if auto is not None else "On unless someone turned it off (the default).",
            )
        )

    # net.inet.tcp.win_scale_factor is only where the kernel starts: tcp_set_max_rwinscale
    # (bsd/netinet/tcp_subr.c) raises each connection's shift until the window covers
    # autorcvbufmax. Reported, never set.
    shift = _int(ctx.read(SysctlRef("net.inet.tcp.win_scale_factor")))
    ctx.notes.append(
        "Window scaling: macOS chooses each connection's scale factor itself, large enough for "
        "the receive ceiling (net.inet.tcp.autorcvbufmax); net.inet.tcp.win_scale_factor"
        + (f" (here {shift})" if shift is not None else "")
        + " is only the smallest factor it starts from, so SambaTune does not set it."
    )

    # Old guides raise sendspace/recvspace. They are only the buffers a socket starts
    # with: auto-tuning grows an SMB connection's beyond them, and macOS's SMB client
    # stopped fixing its socket buffers so that it could (apple-oss-distributions/smb,
    # kernel/netsmb/smb_trantcp.c, "disables the TCP auto windows scaling").
    start = [
        f"{name.rsplit('.', 1)[1]} {value:,}"
        for name in ("net.inet.tcp.sendspace", "net.inet.tcp.recvspace")
        if (value := _int(ctx.read(SysctlRef(name)))) is not None
    ]
    ctx.notes.append(
        "Send and receive space: net.inet.tcp.sendspace and recvspace"
        + (f" (here {', '.join(start)} bytes)" if start else "")
        + " only size a new socket's buffers. Auto-tuning grows an SMB connection's buffers "
        "from there up to the ceilings above, since macOS's SMB client leaves its buffer "
        "sizes to auto-tuning. Raising them, as old guides advise, gives every socket on the "
        "Mac more memory and moves no ceiling, so SambaTune does not set them."
    )

    nic = ctx.interface
    if nic is not None and ctx.mtu.target is not None:
        mtu_ref = InterfaceMtuRef(nic.name)
        items.append(
            ctx.item(
                "macos-interface-mtu",
                mtu_ref,
                ctx.read(mtu_ref),
                "set",
                ctx.mtu.target,
                ctx.mtu.reason,
                suffix=nic.name,
            )
        )
    else:
        ctx.notes.append(f"MTU: {ctx.mtu.reason}")
    if any(i.action == "set" and isinstance(i.ref, SysctlRef) for i in items):
        ctx.notes.append(
            "macOS sysctl changes last until the next restart; run the apply again "
            "after a restart (the MTU set with networksetup is kept)."
        )
    return items
