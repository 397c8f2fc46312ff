"""Path-MTU search logic with scripted probers, ping output, and a real probe on loopback.

The real black-hole and fragmentation-needed paths are in test_client_netns.py.
"""

from __future__ import annotations

import pytest

from sambatune.client.nics import NetworkInterface
from sambatune.client.planner import decide_mtu
from sambatune.client.pmtu import (
    ARRIVED,
    LOST,
    TOO_BIG,
    PingProber,
    ProbeReply,
    UdpDontFragmentProber,
    interpret_ping,
    probe_path_mtu,
)


class PathOf:
    """A path that carries ``limit`` bytes; bigger packets get "too big" or vanish."""

    def __init__(self, limit: int, icmp: bool, answers: bool = True) -> None:
        self.limit, self.icmp, self.answers = limit, icmp, answers
        self.method = "scripted"
        self.sizes: list[int] = []

    def probe(self, size: int) -> ProbeReply:
        self.sizes.append(size)
        if not self.answers:
            return ProbeReply(LOST)
        if size <= self.limit:
            return ProbeReply(ARRIVED)
        return ProbeReply(TOO_BIG, self.limit) if self.icmp else ProbeReply(LOST)


def test_full_size_packets_arrive() -> None:
    path = PathOf(1500, icmp=True)
    result = probe_path_mtu("127.0.0.1", 1500, [path])
    assert result.probed and result.path_mtu == 1500 and not result.black_hole
    assert path.sizes == [576, 1500]


def test_a_black_hole_is_found_by_binary_search() -> None:
    path = PathOf(1400, icmp=False)
    result = probe_path_mtu("127.0.0.1", 1500, [path], attempts=2)
    assert result.path_mtu == 1400 and result.black_hole and not result.icmp_feedback
    assert "black hole" in result.note
    assert len(path.sizes) < 40


def test_fragmentation_needed_is_used_directly() -> None:
    path = PathOf(1400, icmp=True)
    result = probe_path_mtu("127.0.0.1", 1500, [path])
    assert result.path_mtu == 1400 and result.icmp_feedback and not result.black_hole
    assert path.sizes == [576, 1500, 1400]


def test_a_silent_server_means_no_probe_and_the_next_prober_is_tried() -> None:
    silent = PathOf(1500, icmp=False, answers=False)
    working = PathOf(1492, icmp=False)
    result = probe_path_mtu("127.0.0.1", 1500, [silent, working], attempts=1)
    assert result.path_mtu == 1492 and result.method == "scripted"
    nothing = probe_path_mtu("127.0.0.1", 1500, [PathOf(1500, False, answers=False)])
    assert not nothing.probed and nothing.path_mtu is None
    assert "could not be probed" in nothing.note


def test_no_probers_or_no_ipv4_is_reported() -> None:
    assert "no way" in probe_path_mtu("127.0.0.1", 1500, []).note
    assert "IPv4" in probe_path_mtu("no-such-host.invalid", 1500, [PathOf(1500, True)]).note


def test_mtu_decisions() -> None:
    nic = NetworkInterface("eth0", 1500)
    hole = probe_path_mtu("127.0.0.1", 1500, [PathOf(1400, icmp=False)])
    assert decide_mtu(nic, hole, None).target == 1400
    told = probe_path_mtu("127.0.0.1", 1500, [PathOf(1400, icmp=True)])
    decision = decide_mtu(nic, told, None)
    assert decision.target is None and "path-MTU discovery" in decision.reason
    jumbo = decide_mtu(nic, None, 9000)
    assert jumbo.target == 9000 and "every hop" in jumbo.reason
    assert decide_mtu(nic, None, 1500).target is None
    # Loopback: 65,536 bytes, but an IPv4 packet (and so the probe) stops at 65,535.
    loopback = NetworkInterface("lo", 65536, kind="loopback")
    whole = probe_path_mtu("127.0.0.1", 65536, [PathOf(65535, icmp=False)])
    full = decide_mtu(loopback, whole, None)
    assert full.target is None and "Full-size packets" in full.reason


@pytest.mark.parametrize(
    ("flavor", "code", "output", "outcome", "hint"),
    [
        ("linux", 0, "1 packets transmitted, 1 received, 0% packet loss", ARRIVED, None),
        ("linux", 1, "ping: local error: message too long, mtu=1400\n", TOO_BIG, 1400),
        ("linux", 1, "From 10.0.0.1 icmp_seq=1 Frag needed and DF set (mtu = 1400)", TOO_BIG, 1400),
        ("linux", 1, "1 packets transmitted, 0 received, 100% packet loss", LOST, None),
        ("windows", 0, "Reply from 10.0.0.2: bytes=1472 time<1ms TTL=64", ARRIVED, None),
        ("windows", 0, "Packet needs to be fragmented but DF set.", TOO_BIG, None),
        ("windows", 0, "Reply from 10.0.0.1: Destination host unreachable.", LOST, None),
        ("macos", 2, "ping: sendto: Message too long", TOO_BIG, None),
        ("macos", 0, "1 packets transmitted, 1 packets received, 0.0% packet loss", ARRIVED, None),
    ],
)
def test_ping_outputs(flavor: str, code: int, output: str, outcome: str, hint: int | None) -> None:
    reply = interpret_ping(flavor, code, output)
    assert (reply.outcome, reply.mtu_hint) == (outcome, hint)


def test_ping_command_lines_per_os() -> None:
    assert PingProber("10.0.0.2", "linux").argv(1500) == [
        "ping",
        "-n",
        "-c",
        "1",
        "-W",
        "1",
        "-M",
        "do",
        "-s",
        "1472",
        "10.0.0.2",
    ]
    assert PingProber("10.0.0.2", "windows").argv(1500) == [
        "ping",
        "-n",
        "1",
        "-w",
        "1000",
        "-f",
        "-l",
        "1472",
        "10.0.0.2",
    ]
    assert PingProber("10.0.0.2", "macos").argv(1500) == [
        "ping",
        "-n",
        "-c",
        "1",
        "-t",
        "1",
        "-D",
        "-s",
        "1472",
        "10.0.0.2",
    ]


@pytest.mark.skipif(not UdpDontFragmentProber.available(), reason="Linux UDP probe")
def test_real_udp_probe_on_loopback() -> None:
    # Loopback's MTU is 65536; the largest IPv4 packet is 65,535 bytes and arrives.
    result = probe_path_mtu("127.0.0.1", 65536, [UdpDontFragmentProber("127.0.0.1")])
    assert result.probed and result.path_mtu == 65535
    assert result.probes[0] == (576, ARRIVED)
