"""The network under SMB: link speed and duplex, MTU, TCP windows against the path."""

from __future__ import annotations

from collections.abc import Iterator

from sambatune.advisor.config_view import GLOBAL
from sambatune.advisor.findings import (
    INFO,
    PROBLEM,
    WARNING,
    ClientChange,
    Evidence,
    Finding,
    HostChange,
)
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.measurements import NetworkPath, Throughput
from sambatune.advisor.rule import rule
from sambatune.bench.bottleneck import (
    SMB_HEALTHY_SHARE,
    SMB_WELL_BELOW_SHARE,
    Direction,
    tcp_payload_share,
)
from sambatune.client.posix_plan import BUFFER_PER_WINDOW
from sambatune.client.window import MAX_UNSCALED_WINDOW, size_window, throughput_bps
from sambatune.units import format_bits, format_bytes, format_rate

GIGABIT = 1000
#: Round trips to show a window's cost with when none was measured.
EXAMPLE_RTTS = (0.001, 0.01)


def _path_evidence(path: NetworkPath) -> list[Evidence]:
    return [
        Evidence(
            "measurement",
            f"bandwidth {format_bits(path.bandwidth_bps)}"
            + (f" ({path.bandwidth_source})" if path.bandwidth_source else ""),
        ),
        Evidence(
            "measurement",
            f"round trip {path.rtt_seconds * 1000:g} ms"
            + (f" ({path.rtt_source})" if path.rtt_source else ""),
        ),
        Evidence("measurement", f"bandwidth-delay product {path.bdp_bytes:,.0f} bytes"),
    ]


def _plan_command(path: NetworkPath) -> str:
    return (
        f"sambatune client plan --bandwidth {path.bandwidth_bps / 1e6:g}mbit "
        f"--rtt {path.rtt_seconds * 1000:g}ms"
    )


@rule("nic-slow-link", "network")
def nic_slow_link(inputs: AdvisorInput) -> Iterator[Finding]:
    for nic in inputs.server.active_physical_nics:
        if nic.speed_mbit is None or nic.speed_mbit >= GIGABIT:
            continue
        share = tcp_payload_share(nic.mtu if nic.mtu and nic.mtu >= 576 else 1500)
        now = nic.speed_mbit * 1e6 / 8 * share
        gigabit = GIGABIT * 1e6 / 8 * share
        yield Finding(
            id="nic-slow-link",
            severity=PROBLEM,
            title=f"{nic.name} links at only {nic.speed_mbit} Mbit/s",
            subject=nic.name,
            evidence=(Evidence("survey", f"{nic.name}: up, {nic.speed_mbit} Mbit/s, MTU {nic.mtu or '?'}"),),
            change=HostChange(
                nic.name,
                "Check the cable, the switch port and autonegotiation "
                "so the link comes up at 1 Gbit/s or more (or replace a "
                "100 Mbit/s card).",
                f"ethtool {nic.name}",
            ),
            expected_effect=(
                f"At {nic.speed_mbit} Mbit/s no setting can move more than about "
                f"{format_rate(now)}; at 1 Gbit/s the same link carries about "
                f"{format_rate(gigabit)}."
            ),
            effect_source="Arithmetic from the link rate (about 94% of it is TCP payload with "
            "1500-byte frames); the network is one of the three classic "
            "bottlenecks, with disk and CPU.",
            risk="None from checking; re-plugging a cable or changing a port drops the link for a moment.",
        )


@rule("nic-half-duplex", "network")
def nic_half_duplex(inputs: AdvisorInput) -> Iterator[Finding]:
    for nic in inputs.server.active_physical_nics:
        if nic.duplex != "half":
            continue
        yield Finding(
            id="nic-half-duplex",
            severity=PROBLEM,
            title=f"{nic.name} runs at half duplex",
            subject=nic.name,
            evidence=(Evidence("survey", f"{nic.name}: duplex half, {nic.speed_mbit or '?'} Mbit/s"),),
            change=HostChange(
                nic.name,
                "Set both the card and the switch port to "
                "autonegotiate (or both to the same full-duplex speed).",
                f"ethtool -s {nic.name} autoneg on",
            ),
            expected_effect="Full duplex ends collisions and the retransmissions a duplex "
            "mismatch causes, which can cut throughput to a small fraction of "
            "the link rate.",
            effect_source="Using Samba (1999) already named a card set to half duplex as a "
            "cause of slow networking; it holds. Not measured here.",
            risk="The link renegotiates, dropping for a moment.",
        )


@rule("nic-mtu-mismatch", "network")
def nic_mtu_mismatch(inputs: AdvisorInput) -> Iterator[Finding]:
    nics = [n for n in inputs.server.active_physical_nics if n.mtu]
    if len({n.mtu for n in nics}) < 2:
        return
    largest = max(nics, key=lambda n: n.mtu or 0)
    yield Finding(
        id="nic-mtu-mismatch",
        severity=INFO,
        title="The server's interfaces use different MTUs",
        subject="network",
        evidence=tuple(Evidence("survey", f"{n.name}: MTU {n.mtu}") for n in nics),
        change=HostChange(
            largest.name,
            "Where these interfaces serve the same network, give "
            "them, the switch ports and the clients one MTU; jumbo frames only "
            "help when every hop carries them.",
        ),
        expected_effect=(
            "Matching MTUs avoid large frames being dropped or fragmented on the way; a "
            "difference is fine when the interfaces face separate networks (storage and "
            "office LAN, for example)."
        ),
        effect_source="Using Samba (1999): an MTU too small costs throughput and one too "
        "large for the path costs fragments and retransmissions; still true. "
        "Not measured here.",
        risk="Changing an MTU briefly interrupts that interface, and a wrong value can cut "
        "hosts off: change one side at a time and check.",
    )


@rule("path-mtu-mismatch", "network")
def path_mtu_mismatch(inputs: AdvisorInput) -> Iterator[Finding]:
    path = inputs.measurements.path
    if path is None or path.path_mtu is None:
        return
    if path.client_mtu is not None and path.client_mtu <= path.path_mtu:
        return  # TCP's MSS keeps both ends within what the client's side carries
    big = [n for n in inputs.server.active_physical_nics if n.mtu and n.mtu > path.path_mtu]
    if not big:
        return
    nic = max(big, key=lambda n: n.mtu or 0)
    evidence = [
        Evidence("measurement", f"path MTU {path.path_mtu} bytes (probed from the client)"),
        Evidence("survey", f"{nic.name}: MTU {nic.mtu}"),
    ]
    if path.client_mtu is not None:
        evidence.append(Evidence("measurement", f"client interface MTU {path.client_mtu}"))
    yield Finding(
        id="path-mtu-mismatch",
        severity=WARNING,
        title=f"{nic.name} sends {nic.mtu}-byte frames, but the path carries only {path.path_mtu}",
        subject=nic.name,
        evidence=tuple(evidence),
        change=HostChange(
            nic.name,
            f"Either let every switch on the way carry {nic.mtu}-byte "
            f"frames, or lower {nic.name}'s MTU to {path.path_mtu}.",
            f"ip link set dev {nic.name} mtu {path.path_mtu}",
        ),
        expected_effect="Full-size packets stop being dropped or fragmented between client and "
        "server; where nothing reports the drop, connections stop stalling.",
        effect_source="Using Samba (1999) on MTUs too large for the link: fragments and "
        "retransmissions; still true, and silent drops are worse. Not measured "
        "here.",
        risk="Lowering the server's MTU also shrinks packets to hosts that could take large "
        "ones; prefer fixing the switch when jumbo frames were intended.",
    )


@rule("tcp-window-scaling-off", "network")
def tcp_window_scaling_off(inputs: AdvisorInput) -> Iterator[Finding]:
    if inputs.server.tcp.get("net.ipv4.tcp_window_scaling") != "0":
        return
    path = inputs.measurements.path
    rtts = (path.rtt_seconds,) if path else EXAMPLE_RTTS
    caps = ", ".join(
        f"{format_bits(throughput_bps(MAX_UNSCALED_WINDOW, r))} at {r * 1000:g} ms" for r in rtts
    )
    yield Finding(
        id="tcp-window-scaling-off",
        severity=PROBLEM,
        title="TCP window scaling is off on the server",
        subject="tcp",
        evidence=(Evidence("survey", "net.ipv4.tcp_window_scaling = 0"),),
        change=HostChange(
            "net.ipv4.tcp_window_scaling",
            "Turn window scaling back on (the kernel default) and make it permanent in /etc/sysctl.d.",
            "sysctl -w net.ipv4.tcp_window_scaling=1",
        ),
        expected_effect=(
            f"Windows can grow past 64 KiB again. Without scaling one connection moves at most {caps}."
        ),
        effect_source="Arithmetic: at most one window (65,535 bytes without scaling) per round trip.",
        risk="Only broken middleboxes mishandle window scaling; they are rare today.",
    )


@rule("client-window-below-bdp", "network")
def client_window_below_bdp(inputs: AdvisorInput) -> Iterator[Finding]:
    path = inputs.measurements.path
    window = inputs.measurements.client_window
    if path is None or window is None or window.bytes >= path.bdp_bytes:
        return
    sizing = size_window(path.bandwidth_bps, path.rtt_seconds, window.bytes)
    cap = sizing.current_throughput_bps or 0.0
    capped = (
        " No single TCP window can fill this path: SMB multichannel, which spreads a "
        "transfer over several connections, is the way past it."
        if sizing.capped
        else ""
    )
    yield Finding(
        id="client-window-below-bdp",
        severity=WARNING,
        title="The client's receive window is smaller than the path needs",
        subject="client",
        evidence=(
            *_path_evidence(path),
            Evidence(
                "measurement",
                f"client receive window {window.bytes:,} bytes"
                + (f" ({window.source})" if window.source else ""),
            ),
        ),
        change=ClientChange(
            "TCP receive window",
            f"Let the client's receive window grow to at least {sizing.required_window:,} bytes.",
            _plan_command(path),
        ),
        expected_effect=(
            f"Reads from the server are held to at most {format_bits(cap)} per connection by the "
            f"window ({cap / path.bandwidth_bps:.0%} of {format_bits(path.bandwidth_bps)}); with "
            f"{format_bytes(sizing.required_window)} of window one connection can fill the "
            "path." + capped
        ),
        effect_source=(
            "Arithmetic from your measured bandwidth and round trip: a connection carries at "
            "most one window per round trip. Speed.txt tuned the client's window by trial "
            "(DefaultRcvWindow); the bandwidth-delay product gives the size directly."
        ),
        risk="A higher ceiling only lets the window grow when a connection needs it; memory "
        "is used only by fast, long-distance connections.",
    )


@rule("server-buffers-below-bdp", "network")
def server_buffers_below_bdp(inputs: AdvisorInput) -> Iterator[Finding]:
    path = inputs.measurements.path
    server = inputs.server
    if path is None or not server.is_linux:
        return
    needed = size_window(path.bandwidth_bps, path.rtt_seconds).required_window
    for name, what in (
        ("net.ipv4.tcp_wmem", "reads by clients (the server sends)"),
        ("net.ipv4.tcp_rmem", "writes by clients (the server receives)"),
    ):
        top = server.tcp_buffer_ceiling(name)
        if top is None or top / BUFFER_PER_WINDOW >= path.bdp_bytes:
            continue
        low, start = server.tcp[name].split()[:2]
        target = BUFFER_PER_WINDOW * needed
        cap = throughput_bps(max(1, top // BUFFER_PER_WINDOW), path.rtt_seconds)
        yield Finding(
            id="server-buffers-below-bdp",
            severity=WARNING,
            title=f"The server's {name.rsplit('.', 1)[1]} ceiling is too low for this path",
            subject="tcp",
            evidence=(*_path_evidence(path), Evidence("survey", f"{name} = {server.tcp[name]}")),
            change=HostChange(
                name,
                f"Raise the third number of {name} to {target:,} bytes "
                "(about twice the window, for the kernel's bookkeeping) and make "
                "it permanent in /etc/sysctl.d.",
                f"sysctl -w {name}='{low} {start} {target}'",
            ),
            expected_effect=(
                f"{what.capitalize()} are held to about {format_bits(cap)} per "
                f"connection today; with the higher ceiling auto-tuning can grow "
                f"the window to the {needed:,} bytes the path needs."
            ),
            effect_source="Arithmetic from your measured bandwidth and round trip; Linux "
            "advertises about half of a socket buffer as window.",
            risk="Only a ceiling: buffers grow that large only for connections that need it.",
        )


@rule("smb-throughput-vs-ceiling", "network")
def smb_throughput_vs_ceiling(inputs: AdvisorInput) -> Iterator[Finding]:
    throughput = inputs.measurements.throughput
    directions: tuple[tuple[Direction, Throughput | None], ...] = (
        ("read", throughput.smb_read),
        ("write", throughput.smb_write),
    )
    for direction, smb in directions:
        limit = inputs.slowest_layer(direction)
        if smb is None or limit is None:
            continue
        limited_by = limit.kind
        share = smb.mean_bytes_per_second / limit.ceiling_bytes_per_s
        evidence = (
            Evidence(
                "measurement",
                f"SMB {direction}s: {format_rate(smb.mean_bytes_per_second)}"
                + (f" ({smb.source})" if smb.source else ""),
            ),
            Evidence("measurement", inputs.layer_evidence(limit)),
        )
        if share < SMB_WELL_BELOW_SHARE:
            yield Finding(
                id="smb-throughput-vs-ceiling",
                severity=WARNING,
                title=f"SMB {direction}s reach only {share:.0%} of what the {limited_by} allows",
                subject=GLOBAL,
                evidence=evidence,
                change=None,
                expected_effect=(
                    f"Something between the {limited_by} and the client costs "
                    f"{1 - share:.0%}: look at the other findings first (logging, socket "
                    "options, sync settings, signing and encryption), then at the CPU during a "
                    "transfer. Change one thing at a time and measure again."
                ),
                effect_source="Your measurements. The 1999 book saw Samba at 68-80% of FTP over "
                "the same network; a healthy current server gets closer.",
                risk="None: this finding asks for measurement, not a change.",
            )
        elif share >= SMB_HEALTHY_SHARE:
            yield Finding(
                id="smb-throughput-vs-ceiling",
                severity=INFO,
                title=f"SMB {direction}s run at {min(share, 1.0):.0%} of the {limited_by}'s "
                f"speed: the {limited_by} is the limit",
                subject=GLOBAL,
                evidence=evidence,
                change=None,
                expected_effect=(
                    f"Samba settings cannot add much here; a faster {limited_by} (or, for "
                    "the network, several links with multichannel) would."
                ),
                effect_source="Your measurements: total throughput is the minimum of disk, network and CPU.",
                risk="None: nothing to change in Samba.",
            )
