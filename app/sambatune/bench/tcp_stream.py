"""This computer's end of the network test: a plain TCP socket, as fast as iperf3.

The hot loops do nothing but move bytes: ``recv_into`` a reused buffer, ``sendall`` of
one big memoryview, no per-call timing. The connection starts with the run's one-time
token; the agent answers ``GO`` and the stream begins.

Through an SSH forward (paramiko ``direct-tcpip``) the same code runs over a channel,
which then measures SSH (encryption, one TCP connection shared with everything else),
not the network; results say so.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import socket
import struct
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from sambatune.errors import AgentFailed, ConnectionFailed, PortUnreachable

ACK = b"GO\n"
BLOCK = 1 << 20
DOWNLOAD = "download"
UPLOAD = "upload"
DIRECT = "direct"
SSH_FORWARD = "ssh-forward"
#: Wait for a whole block per recv where the system can (Windows, Linux and macOS can).
WAIT_ALL = getattr(socket, "MSG_WAITALL", 0)


class StreamSocket(Protocol):
    def sendall(self, data: Any) -> Any: ...
    def recv(self, size: int) -> bytes: ...
    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int: ...
    def settimeout(self, value: float | None) -> None: ...
    def close(self) -> None: ...


@dataclass(frozen=True)
class StreamSpec:
    """One run's stream, as both ends must agree on it."""

    direction: str = DOWNLOAD
    seconds: float = 10.0
    #: Stop after this many bytes instead of after ``seconds``.
    bytes: int | None = None
    sndbuf: int | None = None
    rcvbuf: int | None = None
    nodelay: bool = False

    def to_agent(self) -> dict[str, Any]:
        return {
            "direction": self.direction,
            "seconds": self.seconds,
            "bytes": self.bytes,
            "sndbuf": self.sndbuf,
            "rcvbuf": self.rcvbuf,
            "nodelay": self.nodelay,
        }


def apply_options(sock: socket.socket, spec: StreamSpec, buffers: bool) -> None:
    if buffers and spec.sndbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, spec.sndbuf)
    if buffers and spec.rcvbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, spec.rcvbuf)
    if spec.nodelay:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def connect_direct(host: str, port: int, spec: StreamSpec, *, buffers: bool, timeout: float) -> socket.socket:
    """A TCP connection to the agent's port, or :class:`PortUnreachable` saying why not."""
    where = f"{host}:{port}"
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise PortUnreachable(
            f"Cannot resolve {host} for the network test's own connection.",
            details=str(exc),
            host=host,
            port=port,
        ) from exc
    last: OSError | None = None
    for family, kind, proto, _name, address in infos:
        sock = socket.socket(family, kind, proto)
        try:
            # Buffer sizes before connect(): the window scale is agreed in the handshake.
            apply_options(sock, spec, buffers)
            sock.settimeout(timeout)
            sock.connect(address)
            sock.settimeout(None)
            return sock
        except OSError as exc:
            sock.close()
            last = exc
    if isinstance(last, ConnectionRefusedError):
        reason = "the connection was refused (a firewall rejects it)"
    elif isinstance(last, (TimeoutError, socket.timeout)):
        reason = f"no answer within {timeout:g} s (a firewall drops it)"
    else:
        reason = f"{last}"
    raise PortUnreachable(
        f"The network test could not open its own TCP connection to {where}: {reason}.",
        details=(
            "SSH works, but the test streams over a separate TCP connection to a port the "
            "agent opened for it, so that SSH's encryption does not get measured. Allow TCP "
            "from this computer to the server's ephemeral ports (net.ipv4.ip_local_port_range), "
            "or measure through the SSH connection instead: that works everywhere, but "
            "measures SSH rather than the network, and the result says so."
        ),
        host=host,
        port=port,
    )


class ChannelSocket:
    """A paramiko channel (SSH direct-tcpip forward) with the socket calls the stream uses."""

    def __init__(self, channel: Any) -> None:
        self.channel = channel

    def sendall(self, data: Any) -> None:
        self.channel.sendall(data)

    def recv(self, size: int) -> bytes:
        data: bytes = self.channel.recv(size)
        return data

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        data = self.channel.recv(nbytes or len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def settimeout(self, value: float | None) -> None:
        self.channel.settimeout(value)

    def shutdown_write(self) -> None:
        from sambatune.remote.channel_eof import send_eof  # paramiko only for SSH streams

        send_eof(self.channel)

    def close(self) -> None:
        self.channel.close()


def connect_forwarded(transport: Any, address: str, port: int) -> ChannelSocket:
    """The agent's port reached through the SSH connection (measures SSH, not the network)."""
    opener = getattr(transport, "open_forward", None)
    if opener is None:
        raise ConnectionFailed("Only an SSH connection can carry the network test; this target has none.")
    return ChannelSocket(opener(address, port))


def handshake(sock: StreamSocket, token: str, timeout: float = 15.0) -> None:
    sock.settimeout(timeout)
    try:
        sock.sendall((token + "\n").encode("ascii"))
        answer = b""
        while len(answer) < len(ACK):
            chunk = sock.recv(len(ACK) - len(answer))
            if not chunk:
                break
            answer += chunk
    except OSError as exc:
        raise AgentFailed(
            "The network test's connection broke during the handshake.", details=str(exc)
        ) from exc
    if answer != ACK:
        raise AgentFailed(
            "The agent did not accept the network test's connection "
            "(something else answered on its port, or the token was refused)."
        )
    sock.settimeout(None)


def half_close(sock: StreamSocket) -> None:
    if isinstance(sock, ChannelSocket):
        sock.shutdown_write()
    else:
        assert isinstance(sock, socket.socket)
        sock.shutdown(socket.SHUT_WR)


def page_aligned(content: bytes | None = None) -> mmap.mmap:
    """A block on its own pages: the kernel copies to and from it measurably faster
    (about 10% on loopback) than to a malloc'ed bytearray, which starts mid-page."""
    buffer = mmap.mmap(-1, BLOCK)
    if content:
        buffer.write(content)
        buffer.seek(0)
    return buffer


def receive_all(sock: StreamSocket) -> tuple[int, float]:
    """Bytes until the sender closes, timed from the first byte: (bytes, seconds).

    After the first bytes, each call waits for a whole block: one system call and one
    pass through the interpreter per MiB instead of per arriving segment, so this thread
    takes the GIL a few thousand times a second, not tens of thousands, and the GUI
    thread of the same process gets it when it asks.
    """
    view = memoryview(page_aligned())
    count = sock.recv_into(view)
    started = time.perf_counter()
    total = count
    while count:
        count = sock.recv_into(view, BLOCK, WAIT_ALL)
        total += count
    return total, time.perf_counter() - started


def send_for(sock: StreamSocket, seconds: float, limit: int | None) -> tuple[int, float]:
    """Send for ``seconds`` (or ``limit`` bytes): (bytes, seconds)."""
    view = memoryview(page_aligned(os.urandom(BLOCK)))
    started = time.perf_counter()
    end = started + seconds
    sent = 0
    if limit:
        while sent < limit:
            chunk = view if limit - sent >= BLOCK else view[: limit - sent]
            sock.sendall(chunk)
            sent += len(chunk)
    else:
        while time.perf_counter() < end:
            sock.sendall(view)
            sent += BLOCK
    return sent, time.perf_counter() - started


def finish_sending(sock: StreamSocket, timeout: float = 60.0) -> None:
    """Half-close and wait until the receiver closes: then every byte has arrived."""
    half_close(sock)
    sock.settimeout(timeout)
    with contextlib.suppress(OSError):
        while sock.recv(65536):
            pass


def tcp_info(sock: Any) -> dict[str, int] | None:
    """RTT, congestion window and retransmits of a Linux TCP socket (None elsewhere)."""
    if not sys.platform.startswith("linux") or not isinstance(sock, socket.socket):
        return None
    try:
        raw = sock.getsockopt(socket.IPPROTO_TCP, getattr(socket, "TCP_INFO", 11), 104)
    except OSError:
        return None
    if len(raw) < 104:
        return None
    numbers = struct.unpack("8B24I", raw[:104])[8:]
    return {
        "snd_mss": numbers[2],
        "pmtu": numbers[13],
        "rtt_us": numbers[15],
        "rttvar_us": numbers[16],
        "snd_cwnd": numbers[18],
        "total_retrans": numbers[23],
    }


def buffer_sizes(sock: Any) -> dict[str, int] | None:
    if not isinstance(sock, socket.socket):
        return None
    return {
        "sndbuf": sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF),
        "rcvbuf": sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF),
    }


@dataclass
class StreamOutcome:
    bytes: int = 0
    seconds: float = 0.0
    tcp_info: dict[str, int] | None = None
    buffers: dict[str, int] | None = None
    error: BaseException | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class StreamThread(threading.Thread):
    """Runs this computer's end of one stream while the caller reads the agent's lines."""

    def __init__(self, sock: StreamSocket, spec: StreamSpec) -> None:
        super().__init__(name="sambatune-net-stream", daemon=True)
        self.sock = sock
        self.spec = spec
        self.outcome = StreamOutcome()

    def run(self) -> None:
        try:
            self.outcome.buffers = buffer_sizes(self.sock)
            if self.spec.direction == DOWNLOAD:
                moved, seconds = receive_all(self.sock)
                self.outcome.tcp_info = tcp_info(self.sock)
            else:
                moved, seconds = send_for(self.sock, self.spec.seconds, self.spec.bytes)
                self.outcome.tcp_info = tcp_info(self.sock)
                finish_sending(self.sock)
            self.outcome.bytes, self.outcome.seconds = moved, seconds
        except BaseException as exc:  # handed to the caller, who raises it
            self.outcome.error = exc
        finally:
            with contextlib.suppress(OSError):
                self.sock.close()

    def abort(self) -> None:
        """Unblock the loop (cancel, or the agent failed): close the socket under it."""
        if isinstance(self.sock, socket.socket):
            with contextlib.suppress(OSError):
                self.sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(Exception):
            self.sock.close()
