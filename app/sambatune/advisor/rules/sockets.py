"""``socket options``: fixed buffers, a lost TCP_NODELAY, flags from the 1990s."""

from __future__ import annotations

from collections.abc import Iterator

from sambatune.advisor.config_view import GLOBAL
from sambatune.advisor.findings import INFO, PROBLEM, WARNING, ConfigChange, Evidence, Finding
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.rule import rule
from sambatune.conf.values import parse_decimal
from sambatune.units import format_bits, format_bytes

DEFAULT = "TCP_NODELAY"
BUFFER_FLAGS = ("SO_SNDBUF", "SO_RCVBUF")
#: Flags that do nothing useful for smbd today (see the socket options explanation).
CLASSIC_FLAGS = ("IPTOS_LOWDELAY", "IPTOS_THROUGHPUT", "SO_KEEPALIVE", "SO_SNDLOWAT", "SO_RCVLOWAT")
#: A LAN round trip, to show what a fixed buffer allows when no RTT was measured.
EXAMPLE_RTT = 0.001


def tokens(value: str) -> list[str]:
    return value.replace(",", " ").split()


def flag(token: str) -> str:
    return token.partition("=")[0].strip().upper()


def _without(items: list[str], names: tuple[str, ...]) -> list[str]:
    return [t for t in items if flag(t) not in names]


def _change_to(remaining: list[str]) -> ConfigChange:
    """Set the remaining flags, keeping TCP_NODELAY; remove the line when that is all."""
    if DEFAULT not in (flag(t) for t in remaining):
        remaining = [DEFAULT, *remaining]
    if [flag(t) for t in remaining] == [DEFAULT]:
        return ConfigChange(GLOBAL, "socket options", "unset")
    return ConfigChange(GLOBAL, "socket options", "set", " ".join(remaining))


def _value(inputs: AdvisorInput) -> str | None:
    return inputs.config.explicit_value(GLOBAL, "socket options")


@rule("socket-options-fixed-buffers", "sockets")
def fixed_buffers(inputs: AdvisorInput) -> Iterator[Finding]:
    value = _value(inputs)
    if value is None:
        return
    items = tokens(value)
    # set_socket_options() (lib/util/util_net.c) reads the number with atoi: no K/M suffix.
    sizes = [parse_decimal(t.partition("=")[2]) for t in items if flag(t) in BUFFER_FLAGS]
    if not sizes:
        return
    smallest = min((s for s in sizes if s), default=None)
    server = inputs.server
    path = inputs.measurements.path
    evidence = [Evidence.setting(GLOBAL, "socket options", value)]
    if server.os_system:
        evidence.append(Evidence("survey", f"the server runs {server.os_system}"))
    if smallest:
        rtt = path.rtt_seconds if path else EXAMPLE_RTT
        cap = format_bits(smallest * 8 / rtt)
        where = (
            f"at the measured round trip of {rtt * 1000:g} ms"
            if path
            else f"at a {rtt * 1000:g} ms LAN round trip"
        )
        ceiling = (
            f"With {format_bytes(smallest)} buffers a connection can have at most about "
            f"that much data in flight, so it moves at most {cap} {where}. "
        )
    else:
        ceiling = ""
    tuned = [
        f"{name} = {server.tcp[name]}"
        for name in ("net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem")
        if name in server.tcp
    ]
    if tuned:
        evidence.append(Evidence("survey", "the kernel's auto-tuning ranges: " + "; ".join(tuned)))
    linux = server.is_linux or server.os_system is None
    yield Finding(
        id="socket-options-fixed-buffers",
        severity=PROBLEM if linux else WARNING,
        title="Fixed socket buffers switch off TCP auto-tuning",
        subject=GLOBAL,
        evidence=tuple(evidence),
        change=_change_to(_without(items, BUFFER_FLAGS)),
        expected_effect=(
            ceiling + "Without the fixed sizes the kernel grows each connection's buffers to "
            "what the path needs (up to the tcp_rmem / tcp_wmem ceilings), so transfers over "
            "any link with real bandwidth or latency speed up, often by orders of magnitude."
        ),
        effect_source=(
            "SambaTune measurement on Samba 4.17.12, loopback: with SO_RCVBUF=8192 "
            "SO_SNDBUF=8192 a 16 MiB read fell from about 580 MiB/s to about 2 MiB/s, and 65536 "
            "gained nothing over the default. The 1999 book's advice to raise these buffers "
            "predates auto-tuning and no longer holds; testparm warns about the same lines."
        ),
        risk=(
            "None known for smbd: the kernel's own sizing replaces a number chosen for 1990s "
            "networks. Larger windows for long, fast links come from the kernel ceilings "
            "(net.ipv4.tcp_rmem / tcp_wmem), not from smb.conf."
        ),
        applies_to_version=(
            (
                "Linux auto-tunes socket buffers unless a program fixes them; any Samba version "
                "hands these flags straight to setsockopt()."
            )
            if linux
            else (
                f"{server.os_system} also sizes buffers by itself on current releases; a fixed size "
                "overrides that, so the line is at best useless there."
            )
        ),
        parameters=("socket options",),
        sources=inputs.sources("socket options"),
    )


@rule("socket-options-without-nodelay", "sockets")
def without_nodelay(inputs: AdvisorInput) -> Iterator[Finding]:
    value = _value(inputs)
    if value is None:
        return
    items = tokens(value)
    names = [flag(t) for t in items]
    # The fixed-buffer finding's change already puts TCP_NODELAY back.
    if DEFAULT in names or any(n in BUFFER_FLAGS for n in names):
        return
    yield Finding(
        id="socket-options-without-nodelay",
        severity=WARNING,
        title="socket options replaced the default TCP_NODELAY",
        subject=GLOBAL,
        evidence=(
            Evidence.setting(
                GLOBAL, "socket options", value, note="the default TCP_NODELAY is not in the list"
            ),
        ),
        change=_change_to(_without(items, ())),
        expected_effect=(
            "Small replies leave at once again instead of waiting for Nagle's algorithm to "
            "collect more data; request-response traffic (opens, locks, listings) stops "
            "stalling on delayed acknowledgements."
        ),
        effect_source=(
            "Not measured here: measure a metadata-heavy workload before and after. The book's "
            "30-50% for TCP_NODELAY dates from before it became the default (2.0.4); what "
            "remains true is that losing it brings the delays back."
        ),
        risk="None: TCP_NODELAY is what Samba uses when the line is absent.",
        parameters=("socket options",),
        sources=inputs.sources("socket options"),
    )


@rule("socket-options-classic-flags", "sockets")
def classic_flags(inputs: AdvisorInput) -> Iterator[Finding]:
    value = _value(inputs)
    if value is None:
        return
    items = tokens(value)
    names = [flag(t) for t in items]
    if any(n in BUFFER_FLAGS for n in names):
        return  # judged after the fixed buffers are gone, against what is left
    old = [t for t in items if flag(t) in CLASSIC_FLAGS]
    if names == [DEFAULT]:
        old = items  # the whole line restates the default
    if not old:
        return
    yield Finding(
        id="socket-options-classic-flags",
        severity=INFO,
        title="socket options repeats flags that no longer do anything",
        subject=GLOBAL,
        evidence=(
            Evidence.setting(
                GLOBAL, "socket options", value, note="flags from old tuning guides: " + " ".join(old)
            ),
        ),
        change=_change_to(_without(items, CLASSIC_FLAGS)),
        expected_effect=(
            "No speed change: TCP_NODELAY is already the default, smbd turns on SO_KEEPALIVE by "
            "itself, IPTOS_* only marks packets for routers that mostly ignore the marks, and "
            "the *LOWAT flags only matter for programs that poll sockets in ways smbd does not. "
            "Removing them makes the configuration say what it really does."
        ),
        effect_source=(
            "SambaTune measurement on Samba 4.17.12, loopback: IPTOS_LOWDELAY was within noise "
            "of the default; strace showed smbd setting SO_KEEPALIVE on every client socket."
        ),
        risk="None.",
        parameters=("socket options",),
        sources=inputs.sources("socket options"),
    )
