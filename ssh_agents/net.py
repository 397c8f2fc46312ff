"""net: TCP throughput between the app and this server, over a TCP connection of its own.

Runs on the server, standard library only, Python 3.6+. See README.md for the protocol.
The measured data never travels through the SSH channel that started this agent: for
every run the agent listens on a fresh ephemeral port of the address the app reached
it on, accepts ONE connection that presents that run's one-time token, and streams.

Params:
  runs             [{"direction": "download" | "upload", "seconds": 10, "bytes": null,
                     "sndbuf": null, "rcvbuf": null, "nodelay": false}, ...]
                   download = this server sends, upload = the app sends. "bytes" (if
                   set) ends the run after that many bytes instead of after "seconds".
                   sndbuf/rcvbuf (bytes) are set with setsockopt before listening, like
                   smb.conf's socket options; null leaves the kernel's autotuning on.
  tokens           one secret per run (hex), sent by the app as the first line
  address          where to listen (default: the server address of SSH_CONNECTION,
                   else 127.0.0.1)
  accept_timeout   seconds to wait for the app's connection (default 30)
  block_size       bytes per send/receive call (default 1 MiB)
  sample_interval  seconds between samples (default 0.5)
  loopback         true: both ends run inside this agent over 127.0.0.1 and no app
                   connects; measures this server's own TCP stack (default false)

Lines: ``listening`` {run, address, port}; ``run_started`` {run}; ``sample`` {run, t,
bytes, bytes_per_s}; ``run`` {run, role, bytes, seconds, sndbuf, rcvbuf, tcp_info}.
"""

import hmac
import mmap
import os
import socket
import struct
import sys
import threading
import time

import agent_runtime
from agent_runtime import AgentFailure

ACK = b"GO\n"
TOKEN_BYTES = 33  # 32 hex characters and a newline


def listen_address(params):
    if params.get("address"):
        return params["address"]
    parts = os.environ.get("SSH_CONNECTION", "").split()
    if len(parts) == 4:
        return parts[2]
    return "127.0.0.1"


def apply_options(sock, spec):
    if spec.get("sndbuf"):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, int(spec["sndbuf"]))
    if spec.get("rcvbuf"):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, int(spec["rcvbuf"]))
    if spec.get("nodelay") and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def buffer_sizes(sock):
    return {
        "sndbuf": sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF),
        "rcvbuf": sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF),
    }


def tcp_info(sock):
    """What the kernel knows about the connection (Linux): RTT, window, retransmits."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        raw = sock.getsockopt(socket.IPPROTO_TCP, getattr(socket, "TCP_INFO", 11), 104)
    except OSError:
        return None
    if len(raw) < 104:
        return None
    fields = struct.unpack("8B24I", raw[:104])
    numbers = fields[8:]
    return {
        "snd_mss": numbers[2],
        "pmtu": numbers[13],
        "rtt_us": numbers[15],
        "rttvar_us": numbers[16],
        "snd_cwnd": numbers[18],
        "total_retrans": numbers[23],
    }


def make_listener(address, spec):
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    # Buffer sizes before listen(): accepted sockets inherit them, and the window
    # scale is agreed in the handshake.
    apply_options(listener, spec)
    try:
        listener.bind((address, 0))
    except OSError as exc:
        listener.close()
        raise AgentFailure("cannot-listen", "Cannot listen on %s: %s" % (address, exc)) from exc
    listener.listen(4)
    return listener


def read_exactly(sock, count, deadline):
    data = b""
    while len(data) < count:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = sock.recv(count - len(data))
        if not chunk:
            break
        data += chunk
    return data


def accept_with_token(agent, listener, token, timeout):
    """The first connection that presents ``token``; others are closed and logged."""
    deadline = time.monotonic() + timeout
    listener.settimeout(0.2)
    expected = (token + "\n").encode("ascii")
    while True:
        agent.check()
        if time.monotonic() > deadline:
            raise AgentFailure(
                "no-connection",
                "Nobody connected to port %d within %d s." % (listener.getsockname()[1], timeout),
            )
        try:
            conn, peer = listener.accept()
        except socket.timeout:
            continue
        try:
            presented = read_exactly(conn, TOKEN_BYTES, time.monotonic() + 10)
        except (socket.timeout, OSError):
            presented = b""
        if presented and hmac.compare_digest(presented, expected):
            conn.settimeout(None)
            conn.sendall(ACK)
            return conn, peer
        agent.log("refused a connection from %s without the right token" % (peer[0],))
        conn.close()


def page_aligned(block_size, content=None):
    """A buffer on its own pages: the kernel copies to and from it measurably faster
    (about 10% on loopback) than to a malloc'ed bytearray, which starts mid-page."""
    buffer = mmap.mmap(-1, block_size)
    if content:
        buffer.write(content)
        buffer.seek(0)
    return buffer


def send_stream(sock, seconds, limit, block_size, sampler):
    """Send until the time (or the byte limit) is up; return (bytes, seconds)."""
    view = memoryview(page_aligned(block_size, os.urandom(block_size)))
    started = time.monotonic()
    end = started + seconds
    sent = 0
    while True:
        if limit:
            if sent >= limit:
                break
            chunk = view if limit - sent >= block_size else view[:limit - sent]
        else:
            if time.monotonic() >= end:
                break
            chunk = view
        sock.sendall(chunk)
        sent += len(chunk)
        sampler.add(len(chunk))
    return sent, time.monotonic() - started


def receive_stream(sock, block_size, sampler):
    """Receive until the peer closes; time from the first byte; return (bytes, seconds)."""
    buffer = memoryview(page_aligned(block_size))
    count = sock.recv_into(buffer)
    started = time.monotonic()
    sampler.restart()
    received = count
    sampler.add(count)
    while count:
        count = sock.recv_into(buffer)
        received += count
        sampler.add(count)
    return received, time.monotonic() - started


def finish_sending(sock, timeout=30):
    """Half-close and wait for the receiver to close: then every byte has arrived."""
    sock.shutdown(socket.SHUT_WR)
    sock.settimeout(timeout)
    try:
        while sock.recv(65536):
            pass
    except (socket.timeout, OSError):
        pass


def serve_run(agent, params, index, spec, token, address):
    listener = make_listener(address, spec)
    try:
        port = listener.getsockname()[1]
        agent.emit("listening", run=index, address=address, port=port)
        conn, peer = accept_with_token(
            agent, listener, token, float(params.get("accept_timeout", 30)))
    finally:
        listener.close()
    try:
        apply_options(conn, spec)
        agent.emit("run_started", run=index, peer=peer[0])
        sampler = agent_runtime.Sampler(agent, params.get("sample_interval", 0.5), run=index)
        block = int(params.get("block_size", 1 << 20))
        if spec.get("direction", "download") == "download":
            moved, seconds = send_stream(
                conn, float(spec.get("seconds", 10)), spec.get("bytes"), block, sampler)
            info = tcp_info(conn)
            finish_sending(conn)
            role = "sender"
        else:
            moved, seconds = receive_stream(conn, block, sampler)
            info = tcp_info(conn)
            role = "receiver"
        sizes = buffer_sizes(conn)
    finally:
        conn.close()
    agent.emit("run", run=index, role=role, bytes=moved, seconds=round(seconds, 6),
               sndbuf=sizes["sndbuf"], rcvbuf=sizes["rcvbuf"], tcp_info=info)


def loopback_run(agent, params, index, spec):
    """Both ends here: what this server's TCP stack moves over 127.0.0.1."""
    listener = make_listener("127.0.0.1", spec)
    port = listener.getsockname()[1]
    block = int(params.get("block_size", 1 << 20))
    box = {}

    def sender():
        try:
            sock = socket.create_connection(("127.0.0.1", port))
            apply_options(sock, spec)
            box["sent"] = send_stream(sock, float(spec.get("seconds", 10)), spec.get("bytes"), block,
                                      NoSamples())
            finish_sending(sock)
            sock.close()
        except Exception as exc:  # reported by the receiving side
            box["error"] = exc

    thread = threading.Thread(target=sender)
    thread.daemon = True
    thread.start()
    listener.settimeout(10)
    try:
        conn, _ = listener.accept()
    finally:
        listener.close()
    try:
        conn.settimeout(None)
        apply_options(conn, spec)
        agent.emit("run_started", run=index, peer="127.0.0.1")
        sampler = agent_runtime.Sampler(agent, params.get("sample_interval", 0.5), run=index)
        moved, seconds = receive_stream(conn, block, sampler)
        sizes = buffer_sizes(conn)
    finally:
        conn.close()
    thread.join(30)
    if "error" in box:
        raise AgentFailure("loopback-failed", "The loopback sender failed: %s" % box["error"])
    agent.emit("run", run=index, role="receiver", bytes=moved, seconds=round(seconds, 6),
               sndbuf=sizes["sndbuf"], rcvbuf=sizes["rcvbuf"], tcp_info=None)


class NoSamples(object):
    def add(self, count):
        pass


def main(agent, params):
    runs = params.get("runs") or []
    if not runs:
        raise AgentFailure("bad-parameter", "The net agent needs at least one run.")
    for spec in runs:
        if spec.get("direction", "download") not in ("download", "upload"):
            raise AgentFailure("bad-parameter", "direction must be download or upload")
    loopback = bool(params.get("loopback"))
    tokens = params.get("tokens") or []
    if not loopback and len(tokens) != len(runs):
        raise AgentFailure("bad-parameter", "The net agent needs one token per run.")
    address = "127.0.0.1" if loopback else listen_address(params)
    for index, spec in enumerate(runs, 1):
        agent.progress((index - 1) / float(len(runs)), "run %d of %d" % (index, len(runs)))
        if loopback:
            loopback_run(agent, params, index, spec)
        else:
            serve_run(agent, params, index, spec, tokens[index - 1], address)
    agent.progress(1.0, "done")
    return {"address": address, "runs": len(runs), "loopback": loopback}


if __name__ == "__main__":
    agent_runtime.run("net", main)
