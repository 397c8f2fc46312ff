"""Path-MTU probe: the largest IPv4 packet that reaches the server whole.

Each probe is one packet with the don't-fragment bit set. It *arrived* when the
server answers (an echo reply, or "port unreachable" for a UDP probe to a closed
port); it was *too big* when this computer or a router says so (EMSGSIZE, or an
ICMP "fragmentation needed" that the kernel turns into EMSGSIZE); it was *lost*
when nothing comes back. A binary search between a size that arrives and one that
does not finds the path MTU.

Losing big packets without any "too big" message is the classic black hole: a
router or a mismatched segment drops them silently, TCP connections stall as soon
as they send full-size segments, and only a smaller MTU (or TCP's own MTU probing)
gets through. The result says which of the two it saw.

Ways to probe, chosen by the OS:
- Linux: a UDP socket with ``IP_MTU_DISCOVER = IP_PMTUDISC_DO`` (no helper program);
  ``ping -M do`` as a second choice.
- macOS: ``ping -D``. Windows: ``ping -f -l``.
"""

from __future__ import annotations

import contextlib
import errno
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from sambatune.cancellation import CancelToken

# Linux <linux/in.h>; Python's socket module does not export them.
IP_MTU_DISCOVER = 10
IP_PMTUDISC_DO = 2
IP_MTU = 14
#: IPv4 header (20) + UDP or ICMP header (8).
PROBE_OVERHEAD = 28
#: Every IPv4 host must accept 576-byte packets (RFC 791), so a probe this size should arrive.
MIN_PROBE_SIZE = 576
#: The traceroute port range: normally closed, so the host answers "port unreachable".
UDP_PROBE_PORT = 33434

ARRIVED = "arrived"
TOO_BIG = "too-big"
LOST = "lost"
FAILED = "failed"


@dataclass(frozen=True)
class ProbeReply:
    outcome: str  # ARRIVED, TOO_BIG, LOST, FAILED
    #: With TOO_BIG: the MTU the kernel or router reported, if any.
    mtu_hint: int | None = None
    detail: str = ""


class PathMtuProber(Protocol):
    method: str

    def probe(self, size: int) -> ProbeReply:
        """Send one don't-fragment packet of ``size`` bytes (IP header included)."""
        ...


@dataclass
class PathMtuResult:
    server: str
    address: str | None
    interface_mtu: int | None
    path_mtu: int | None = None
    method: str = ""
    probed: bool = False
    #: A router or this kernel said "too big" (path-MTU discovery works).
    icmp_feedback: bool = False
    #: Big packets vanished without a "too big" message.
    black_hole: bool = False
    probes: list[tuple[int, str]] = field(default_factory=list)
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "address": self.address,
            "interface_mtu": self.interface_mtu,
            "path_mtu": self.path_mtu,
            "method": self.method,
            "probed": self.probed,
            "icmp_feedback": self.icmp_feedback,
            "black_hole": self.black_hole,
            "probes": [{"size": size, "outcome": outcome} for size, outcome in self.probes],
            "note": self.note,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PathMtuResult:
        return cls(
            server=data.get("server", ""),
            address=data.get("address"),
            interface_mtu=data.get("interface_mtu"),
            path_mtu=data.get("path_mtu"),
            method=data.get("method", ""),
            probed=bool(data.get("probed")),
            icmp_feedback=bool(data.get("icmp_feedback")),
            black_hole=bool(data.get("black_hole")),
            probes=[(int(p["size"]), str(p["outcome"])) for p in data.get("probes") or []],
            note=data.get("note", ""),
        )


class UdpDontFragmentProber:
    """Linux: UDP datagrams with IP_PMTUDISC_DO to a (normally closed) port on the server."""

    method = "udp-dont-fragment"

    def __init__(self, address: str, port: int = UDP_PROBE_PORT, timeout: float = 1.0) -> None:
        self.address = address
        self.port = port
        self.timeout = timeout

    @staticmethod
    def available() -> bool:
        return sys.platform.startswith("linux")

    def probe(self, size: int) -> ProbeReply:
        payload = b"\0" * max(0, size - PROBE_OVERHEAD)
        # A fresh socket per probe, so a late error from an earlier probe is never
        # read as this one's answer. What the kernel learned (the path MTU) stays.
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            try:
                sock.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
                sock.connect((self.address, self.port))
            except OSError as exc:
                return ProbeReply(FAILED, detail=f"cannot set up the probe socket: {exc}")
            sock.settimeout(self.timeout)
            try:
                sock.send(payload)
            except OSError as exc:
                return self._send_error(sock, exc)
            try:
                sock.recv(2048)
                return ProbeReply(ARRIVED, detail="the server answered the datagram")
            except ConnectionRefusedError:
                return ProbeReply(ARRIVED, detail="port unreachable came back")
            except TimeoutError:
                return ProbeReply(LOST, detail="no answer")
            except OSError as exc:
                if exc.errno == errno.EMSGSIZE:
                    return ProbeReply(TOO_BIG, _path_mtu(sock), "a router said fragmentation needed")
                if exc.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH):
                    return ProbeReply(FAILED, detail=f"unreachable: {exc.strerror}")
                return ProbeReply(LOST, detail=str(exc))

    @staticmethod
    def _send_error(sock: socket.socket, exc: OSError) -> ProbeReply:
        if exc.errno == errno.EMSGSIZE:
            return ProbeReply(TOO_BIG, _path_mtu(sock), "larger than the known path MTU")
        if exc.errno == errno.ENOBUFS:
            # veth and some drivers refuse an oversized frame at the first hop like this.
            return ProbeReply(LOST, detail="dropped at the first hop (ENOBUFS)")
        if exc.errno == errno.ECONNREFUSED:
            return ProbeReply(ARRIVED, detail="port unreachable came back")
        return ProbeReply(FAILED, detail=f"send failed: {exc.strerror or exc}")


def _path_mtu(sock: socket.socket) -> int | None:
    with contextlib.suppress(OSError):
        return int(sock.getsockopt(socket.IPPROTO_IP, IP_MTU))
    return None


_MTU_IN_TEXT = re.compile(r"mtu\s*=\s*(\d+)", re.IGNORECASE)


class PingProber:
    """The system ``ping`` with don't-fragment: Linux ``-M do``, macOS ``-D``, Windows ``-f``."""

    def __init__(
        self,
        address: str,
        flavor: str | None = None,
        timeout: float = 1.0,
        run: Callable[[Sequence[str], float], tuple[int, str]] | None = None,
    ) -> None:
        self.address = address
        self.flavor = flavor or _local_flavor()
        self.timeout = timeout
        self.method = f"ping ({self.flavor})"
        self._run = run or _run_command

    @staticmethod
    def available() -> bool:
        return shutil.which("ping") is not None

    def argv(self, size: int) -> list[str]:
        payload = str(max(0, size - PROBE_OVERHEAD))
        if self.flavor == "windows":
            return ["ping", "-n", "1", "-w", str(int(self.timeout * 1000)), "-f", "-l", payload, self.address]
        if self.flavor == "macos":
            return [
                "ping",
                "-n",
                "-c",
                "1",
                "-t",
                str(max(1, round(self.timeout))),
                "-D",
                "-s",
                payload,
                self.address,
            ]
        return [
            "ping",
            "-n",
            "-c",
            "1",
            "-W",
            str(max(1, round(self.timeout))),
            "-M",
            "do",
            "-s",
            payload,
            self.address,
        ]

    def probe(self, size: int) -> ProbeReply:
        code, output = self._run(self.argv(size), self.timeout + 5)
        return interpret_ping(self.flavor, code, output)


def interpret_ping(flavor: str, code: int, output: str) -> ProbeReply:
    """What one don't-fragment ping said, from its exit code and output."""
    lowered = output.lower()
    hint = _MTU_IN_TEXT.search(output)
    mtu = int(hint.group(1)) if hint else None
    if flavor == "windows":
        # Exit codes lie on Windows ("destination unreachable" exits 0); a reply has TTL=.
        if "ttl=" in lowered:
            return ProbeReply(ARRIVED)
        if "fragment" in lowered or "df set" in lowered:
            return ProbeReply(TOO_BIG, mtu, "needs to be fragmented but DF set")
        return ProbeReply(LOST, detail=output.strip()[-200:])
    if any(s in lowered for s in ("message too long", "frag needed", "fragmentation needed")):
        return ProbeReply(TOO_BIG, mtu, output.strip()[-200:])
    if code == 0:
        return ProbeReply(ARRIVED)
    if any(s in lowered for s in ("unknown host", "cannot resolve", "operation not permitted")):
        return ProbeReply(FAILED, detail=output.strip()[-200:])
    return ProbeReply(LOST, detail=output.strip()[-200:])


def _run_command(argv: Sequence[str], timeout: float) -> tuple[int, str]:
    try:
        done = subprocess.run(list(argv), capture_output=True, timeout=timeout, check=False)
    except FileNotFoundError:
        return 127, f"{argv[0]}: not found"
    except subprocess.TimeoutExpired:
        return 124, "timed out"
    return done.returncode, (done.stdout + done.stderr).decode("utf-8", "replace")


def _local_flavor() -> str:
    if sys.platform == "win32":
        return "windows"
    if sys.platform == "darwin":
        return "macos"
    return "linux"


def default_probers(address: str, timeout: float = 1.0) -> list[PathMtuProber]:
    """The probes this OS allows, best first."""
    probers: list[PathMtuProber] = []
    if UdpDontFragmentProber.available():
        probers.append(UdpDontFragmentProber(address, timeout=timeout))
    if PingProber.available():
        probers.append(PingProber(address, timeout=timeout))
    return probers


def probe_path_mtu(
    server: str,
    interface_mtu: int | None,
    probers: Sequence[PathMtuProber] | None = None,
    *,
    timeout: float = 1.0,
    attempts: int = 2,
    cancel: CancelToken | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> PathMtuResult:
    """Find the path MTU to ``server`` with the first prober that gets any answer."""
    address = _ipv4_address(server)
    result = PathMtuResult(server=server, address=address, interface_mtu=interface_mtu)
    if address is None:
        result.note = (
            f"{server} has no IPv4 address; SambaTune probes the path MTU over IPv4 "
            "only, so the MTU is left alone."
        )
        return result
    top = min(interface_mtu or 1500, 65535)  # an IPv4 packet's length field is 16 bits
    if top <= MIN_PROBE_SIZE:
        result.note = f"The interface MTU ({top}) is already at the IPv4 minimum worth probing."
        return result
    if probers is None:
        probers = default_probers(address, timeout)
    if not probers:
        result.note = (
            "This computer offers no way to send don't-fragment probes (no ping, "
            "no Linux UDP probe); the MTU is left alone."
        )
        return result
    reasons = []
    for prober in probers:
        attempt = PathMtuResult(
            server=server, address=address, interface_mtu=interface_mtu, method=prober.method
        )
        if _search(prober, attempt, top, attempts, cancel, on_progress):
            return attempt
        reasons.append(f"{prober.method}: {attempt.note}")
        result.probes += attempt.probes
    result.note = "The path MTU could not be probed: " + "; ".join(reasons) + ". The MTU is left alone."
    return result


def _search(
    prober: PathMtuProber,
    result: PathMtuResult,
    top: int,
    attempts: int,
    cancel: CancelToken | None,
    on_progress: Callable[[str], None] | None,
) -> bool:
    def ask(size: int) -> ProbeReply:
        reply = ProbeReply(LOST)
        for _ in range(max(1, attempts)):
            if cancel is not None:
                cancel.raise_if_cancelled()
            if on_progress:
                on_progress(f"path-MTU probe: {size} bytes ({prober.method})")
            reply = prober.probe(size)
            # Only a loss is worth repeating: a packet can be lost for other reasons.
            if reply.outcome != LOST:
                break
        result.probes.append((size, reply.outcome))
        if reply.outcome == TOO_BIG:
            result.icmp_feedback = True
        return reply

    first = ask(MIN_PROBE_SIZE)
    if first.outcome != ARRIVED:
        result.note = (
            f"no answer even to {MIN_PROBE_SIZE}-byte probes "
            f"({first.detail or first.outcome}); "
            "the server or a firewall ignores them"
        )
        return False
    low, high = MIN_PROBE_SIZE, top + 1  # low arrives; high is the first size known not to
    reply = ask(top)
    if reply.outcome == ARRIVED:
        low = top
    elif reply.outcome == TOO_BIG and reply.mtu_hint and MIN_PROBE_SIZE <= reply.mtu_hint < top:
        high = top
        hinted = ask(reply.mtu_hint)
        if hinted.outcome == ARRIVED:
            low = reply.mtu_hint
            high = min(high, reply.mtu_hint + 1)
        else:
            high = reply.mtu_hint
    else:
        high = top
    while high - low > 1:
        middle = (low + high) // 2
        reply = ask(middle)
        if reply.outcome == ARRIVED:
            low = middle
        elif reply.outcome == TOO_BIG and reply.mtu_hint and reply.mtu_hint < middle:
            high = min(middle, max(reply.mtu_hint + 1, low + 1))
        else:
            high = middle
    result.path_mtu = low
    result.probed = True
    result.black_hole = low < top and not result.icmp_feedback
    if low == top:
        result.note = f"Packets of the interface's full MTU ({top} bytes) reach {result.server}."
    elif result.black_hole:
        result.note = (
            f"Packets above {low} bytes vanish on the way to {result.server} without "
            "any 'too big' message: a path-MTU black hole."
        )
    else:
        result.note = (
            f"The path to {result.server} carries at most {low} bytes; the network "
            "says so ('fragmentation needed'), so path-MTU discovery handles it."
        )
    return True


def _ipv4_address(host: str) -> str | None:
    try:
        infos = socket.getaddrinfo(host, None, socket.AF_INET, socket.SOCK_DGRAM)
    except socket.gaierror:
        return None
    return str(infos[0][4][0]) if infos else None
