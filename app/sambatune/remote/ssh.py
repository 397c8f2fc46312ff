"""SSH targets through paramiko, checked and authenticated the way OpenSSH users expect."""

from __future__ import annotations

import contextlib
import logging
import math
import shlex
import socket
import threading
import time
from collections.abc import Sequence
from typing import Any

import paramiko

from sambatune.cancellation import CancelToken
from sambatune.errors import (
    AuthenticationFailed,
    Cancelled,
    CommandTimedOut,
    ConnectionFailed,
    HostKeyChanged,
    HostKeyRevoked,
    HostKeyUnknown,
    SecretRequired,
)
from sambatune.remote.channel_eof import send_eof
from sambatune.remote.hostkeys import (
    HostKeyCheck,
    HostKeyQuestion,
    HostKeyStatus,
    HostKeyStore,
    KnownKey,
    check_host_key,
    key_type_label,
    sha256_fingerprint,
)
from sambatune.remote.prompts import ConnectionPrompts, SecretRequest
from sambatune.remote.sshconfig import SshEndpoint
from sambatune.remote.transport import (
    LINE_LIMIT,
    OUTPUT_LIMIT,
    CommandResult,
    RemoteProcess,
    Transport,
    line_too_long,
    output_too_large,
)

_RSA_ALGORITHMS = ("rsa-sha2-512", "rsa-sha2-256", "ssh-rsa")

# paramiko logs expected events (a socket we closed on cancel) at ERROR; with no
# handler Python would print them on the terminal. The app's log file still gets them.
logging.getLogger("paramiko").addHandler(logging.NullHandler())


class SshProcess(RemoteProcess):
    def __init__(self, channel: paramiko.Channel) -> None:
        self._channel = channel
        # stdout read straight from the channel (paramiko's readline copies the line for
        # every 8 KiB it gets: a 50 MB line took minutes): bytes before _start are read.
        self._buffer = bytearray()
        self._start = 0
        self._stderr_chunks: list[bytes] = []
        self._stderr_thread = threading.Thread(target=self._drain_stderr, daemon=True)
        self._stderr_thread.start()
        self._killed = False

    def _drain_stderr(self) -> None:
        with contextlib.suppress(Exception):
            while True:
                chunk = self._channel.recv_stderr(65536)
                if not chunk:
                    return
                self._stderr_chunks.append(chunk)

    def write(self, data: bytes) -> None:
        try:
            self._channel.sendall(data)
        except (OSError, EOFError, paramiko.SSHException) as exc:
            raise ConnectionFailed("The SSH channel closed while sending data.") from exc

    def close_stdin(self) -> None:
        with contextlib.suppress(Exception):
            send_eof(self._channel)

    def readline(self, limit: int = LINE_LIMIT) -> bytes:
        scanned = self._start
        while True:
            end = self._buffer.find(b"\n", scanned)
            if end >= 0:
                return self._take(end + 1)
            scanned = len(self._buffer)
            if scanned - self._start > limit:
                self.kill()
                raise line_too_long(limit)
            try:
                chunk = self._channel.recv(1 << 16)
            except (OSError, EOFError, paramiko.SSHException):
                chunk = b""
            if not chunk:
                return self._take(len(self._buffer))
            if self._start > (1 << 20) and self._start * 2 > len(self._buffer):
                del self._buffer[: self._start]
                scanned -= self._start
                self._start = 0
            self._buffer += chunk

    def _take(self, end: int) -> bytes:
        line = bytes(self._buffer[self._start : end])
        self._start = end
        return line

    def stderr_text(self) -> str:
        self._stderr_thread.join(timeout=5)
        return b"".join(self._stderr_chunks).decode("utf-8", "replace")

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._channel.exit_status_ready():
            if self._channel.closed:
                return -1
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError("process still running")
            time.sleep(0.02)
        return -1 if self._killed else self._channel.recv_exit_status()

    def kill(self) -> None:
        if not self._channel.closed:
            if not self._channel.exit_status_ready():
                self._killed = True
            # Closing the channel closes the remote process's stdin: agents take that
            # as the order to clean up and exit.
            with contextlib.suppress(Exception):
                self._channel.close()


class SshTransport(Transport):
    """A connected SSH session. Build one with :func:`connect_ssh`."""

    def __init__(
        self, endpoint: SshEndpoint, client: paramiko.Transport, hops: list[paramiko.Transport]
    ) -> None:
        super().__init__()
        self.endpoint = endpoint
        self.label = endpoint.label
        self._transport = client
        self._hops = hops

    @property
    def is_local(self) -> bool:
        return False

    @property
    def paramiko_transport(self) -> paramiko.Transport:
        return self._transport

    def peer_address(self) -> str:
        """The server address as the last hop reached it (for opening our own sockets)."""
        if self._hops:
            return self.endpoint.hostname
        peer = self._transport.getpeername()
        return str(peer[0])

    def local_address(self) -> str:
        """The address this computer used to reach the server."""
        sock = self._transport.sock
        if isinstance(sock, socket.socket):
            return str(sock.getsockname()[0])
        return ""

    def is_connected(self) -> bool:
        return self._transport.is_active()

    def _open_channel(self) -> paramiko.Channel:
        try:
            return self._transport.open_session(timeout=30)
        except (paramiko.SSHException, EOFError, OSError) as exc:
            raise ConnectionFailed(f"The connection to {self.label} is closed.", details=str(exc)) from exc

    def _run(
        self,
        argv: Sequence[str],
        stdin: bytes | None,
        timeout: float | None,
        cancel: CancelToken | None,
        max_output: int = OUTPUT_LIMIT,
    ) -> CommandResult:
        channel = self._open_channel()
        unregister = cancel.on_cancel(channel.close) if cancel else (lambda: None)
        started = time.monotonic()
        try:
            try:
                channel.exec_command(shlex.join(time_limited(argv, timeout)))
            except (paramiko.SSHException, EOFError, OSError) as exc:
                # The channel closed between opening and starting the command: a cancel
                # (it closes the channel) or the connection closing under a task (then
                # paramiko's packetizer raises EOFError or the socket's OSError).
                if cancel is not None and cancel.cancelled:
                    raise Cancelled() from exc
                raise ConnectionFailed(
                    f"The connection to {self.label} is closed.", details=str(exc)
                ) from exc
            sender = None
            if stdin:
                sender = threading.Thread(target=_send_and_close, args=(channel, stdin), daemon=True)
                sender.start()
            else:
                send_eof(channel)
            # The server stops the command at ``timeout``; this side waits a little longer
            # for that answer, then gives up on a server that sends none.
            wait = None if timeout is None else timeout + SERVER_TIME_LIMIT_GRACE
            out, err = _collect(channel, wait, argv, max_output)
            if cancel is not None and cancel.cancelled:
                raise Cancelled()
            # paramiko marks every channel of a dead connection as exited with -1 (no
            # server sends it: statuses are unsigned), the same as a command killed by a
            # signal, and wakes them before it marks the connection inactive. Only the
            # connection tells the two apart, and a drop must never pass for the
            # command's own failure: let paramiko's reader thread settle first.
            code = channel.recv_exit_status()
            if code == -1 and self._transport.is_active():
                self._transport.join(DROP_SETTLE_SECONDS)
            if not self._transport.is_active():
                raise ConnectionFailed(f"The connection to {self.label} dropped.", command_sent=True)
            if sender is not None:
                sender.join(timeout=5)
            if (
                timeout is not None
                and code in TIME_LIMIT_EXITS
                and time.monotonic() - started >= timeout - 0.5
            ):
                raise CommandTimedOut(
                    f"{argv[0]} did not finish within {timeout:g} s and was stopped on the server."
                )
            return CommandResult(tuple(argv), code, out, err)
        finally:
            unregister()
            _close_quietly(channel)

    def _start(self, argv: Sequence[str]) -> RemoteProcess:
        channel = self._open_channel()
        channel.exec_command(shlex.join(argv))
        return SshProcess(channel)

    def open_forward(self, host: str, port: int) -> paramiko.Channel:
        """A direct-tcpip channel to ``host:port`` as seen from the server."""
        try:
            return self._transport.open_channel("direct-tcpip", (host, port), ("127.0.0.1", 0))
        except (paramiko.SSHException, OSError) as exc:
            raise ConnectionFailed(
                f"The server refused to forward a connection to {host}:{port}.", details=str(exc)
            ) from exc

    def close(self) -> None:
        self._transport.close()
        for hop in reversed(self._hops):
            hop.close()


def _close_quietly(channel: paramiko.Channel) -> None:
    """Close a channel whose connection may be gone already (paramiko raises EOFError or
    OSError then): what the command did is decided before this, never by it."""
    try:
        channel.close()
    except (EOFError, OSError, paramiko.SSHException):
        pass


def _send_and_close(channel: paramiko.Channel, data: bytes) -> None:
    with contextlib.suppress(Exception):
        channel.sendall(data)
        send_eof(channel)


# Put in front of a command with a time limit, on the server: GNU timeout stops it
# there (its whole process group, SIGKILL 5 s after SIGTERM) when the limit passes, so
# a command that blocks (testparm opening a FIFO an include names) is not left running
# when SambaTune stops waiting. A server without GNU timeout runs the command as is.
_TIME_LIMIT_SCRIPT = 'timeout --version >/dev/null 2>&1 && exec timeout -k 5 "$0" "$@"; exec "$@"'
#: Exit codes of GNU timeout for a command it stopped (SIGTERM, then SIGKILL).
TIME_LIMIT_EXITS = (124, 137)
#: How much longer than a command's limit the client waits for the server's answer.
SERVER_TIME_LIMIT_GRACE = 10.0
#: How long a command that ended without an exit status waits to learn whether its
#: connection dropped (the reader thread of a cut connection ends within milliseconds).
DROP_SETTLE_SECONDS = 1.0


def time_limited(argv: Sequence[str], timeout: float | None) -> Sequence[str]:
    """``argv`` as sent to the server: stopped there after ``timeout`` seconds."""
    if timeout is None:
        return argv
    return ("sh", "-c", _TIME_LIMIT_SCRIPT, str(max(1, math.ceil(timeout))), *argv)


class _EitherReady:
    """Wakes the reader of a channel when its stdout or stderr buffer has data or closes.

    paramiko's own way, ``select`` on ``Channel.fileno()``, makes an OS pipe that
    ``Channel.close()`` closes: a cancel closes the channel from another thread, so the
    reader's next read of that pipe got EBADF (seen in CI), or took a byte from whatever
    file had been given the number since. These flags own no descriptor.
    """

    def __init__(self, channel: paramiko.Channel) -> None:
        self._condition = threading.Condition()
        self._ready = [False, False]
        # A BufferedPipe sets its event on data or close and clears it once read empty.
        channel.in_buffer.set_event(_BufferFlag(self, 0))
        channel.in_stderr_buffer.set_event(_BufferFlag(self, 1))

    def mark(self, which: int, ready: bool) -> None:
        with self._condition:
            self._ready[which] = ready
            if ready:
                self._condition.notify_all()

    def wait(self, timeout: float) -> None:
        with self._condition:
            self._condition.wait_for(lambda: any(self._ready), timeout)


class _BufferFlag(threading.Event):
    """The event a paramiko BufferedPipe sets and clears, for one of the two buffers."""

    def __init__(self, either: _EitherReady, which: int) -> None:
        super().__init__()
        self._either = either
        self._which = which

    def set(self) -> None:
        super().set()
        self._either.mark(self._which, True)

    def clear(self) -> None:
        super().clear()
        self._either.mark(self._which, False)


def _collect(
    channel: paramiko.Channel, timeout: float | None, argv: Sequence[str], max_output: int = OUTPUT_LIMIT
) -> tuple[bytes, bytes]:
    readable = _EitherReady(channel)
    out: list[bytes] = []
    err: list[bytes] = []
    size = 0
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        drained = False
        while channel.recv_ready():
            out.append(channel.recv(1 << 16))
            size += len(out[-1])
            drained = True
        while channel.recv_stderr_ready():
            err.append(channel.recv_stderr(1 << 16))
            size += len(err[-1])
            drained = True
        if size > max_output:
            channel.close()
            raise output_too_large(argv, max_output)
        # The command's answer may all arrive between the drain above and this check:
        # output, exit status, EOF and close. Whatever ends the loop, what is buffered
        # (and still in flight after the exit status) is read to EOF first.
        ended = channel.exit_status_ready() and not channel.recv_ready() and not channel.recv_stderr_ready()
        if ended or channel.closed or (channel.eof_received and channel.exit_status_ready()):
            for receive, chunks in ((channel.recv, out), (channel.recv_stderr, err)):
                while chunk := receive(1 << 16):
                    chunks.append(chunk)
                    size += len(chunk)
                    if size > max_output:
                        channel.close()
                        raise output_too_large(argv, max_output)
            break
        if deadline is not None and time.monotonic() > deadline:
            channel.close()
            raise CommandTimedOut(f"{argv[0]} did not finish within {timeout:g} s")
        if not drained:
            # Bounded: the exit status arrives without touching either buffer.
            readable.wait(0.1)
    return b"".join(out), b"".join(err)


# --------------------------------------------------------------------------------------
# Connecting


def connect_ssh(
    endpoint: SshEndpoint,
    prompts: ConnectionPrompts,
    host_keys: HostKeyStore,
    *,
    password: str | None = None,
    password_opens_keys: bool = False,
    cancel: CancelToken | None = None,
) -> SshTransport:
    """Connect (through every ProxyJump hop), verify the host key, authenticate.

    ``password_opens_keys``: the password is also the answer to a key's passphrase
    question. It is then never sent to a server while an encrypted key is configured
    anywhere in the chain, whatever the server offers: a server that offers no
    publickey never makes SambaTune ask for a passphrase, so the line would otherwise
    go out as a password though it was meant for a key.
    """
    hops: list[paramiko.Transport] = []
    # Every secret given as a key passphrase on any hop: none of them may reach a server
    # as a password, and the same prompts (the same stdin line) serve every hop.
    passphrases: set[str] = set()
    chain = [*endpoint.proxy_jump, endpoint]
    if password is not None and password_opens_keys and any(map(_may_need_passphrase, chain)):
        passphrases.add(password)
    try:
        sock: Any = None
        for hop in endpoint.proxy_jump:
            hop_transport = _open_transport(hop, sock, prompts, host_keys, None, passphrases, cancel)
            hops.append(hop_transport)
            sock = _forward(hop_transport, hop, endpoint_after(endpoint, hop))
        final = _open_transport(endpoint, sock, prompts, host_keys, password, passphrases, cancel)
    except BaseException:
        for hop_transport in reversed(hops):
            hop_transport.close()
        raise
    return SshTransport(endpoint, final, hops)


def endpoint_after(endpoint: SshEndpoint, hop: SshEndpoint) -> SshEndpoint:
    """The endpoint that comes after ``hop`` in the chain."""
    chain = [*endpoint.proxy_jump, endpoint]
    return chain[chain.index(hop) + 1]


def _forward(hop_transport: paramiko.Transport, hop: SshEndpoint, target: SshEndpoint) -> paramiko.Channel:
    try:
        return hop_transport.open_channel(
            "direct-tcpip",
            (target.hostname, target.port),
            ("127.0.0.1", 0),
            timeout=target.connect_timeout,
        )
    except paramiko.ChannelException as exc:
        raise ConnectionFailed(
            f"Jump host {hop.label} could not reach {target.hostname}:{target.port}: "
            f"{exc.text or 'connect failed'}"
        ) from exc
    except (paramiko.SSHException, OSError) as exc:
        raise ConnectionFailed(
            f"Jump host {hop.label} could not open a tunnel to {target.hostname}:{target.port}.",
            details=str(exc),
        ) from exc


def _handshake_failed(endpoint: SshEndpoint, exc: BaseException) -> ConnectionFailed:
    where = f"{endpoint.hostname}:{endpoint.port}"
    text = str(exc)
    if isinstance(exc, ConnectionResetError) or "reset by peer" in text:
        why = "reset the connection during the SSH handshake"
    elif isinstance(exc, EOFError) or "EOF" in text:
        why = "closed the connection during the SSH handshake"
    else:
        return ConnectionFailed(
            f"{where} answered, but the SSH handshake failed (not an SSH server, or no common algorithms).",
            details=text,
        )
    # sshd drops connections past MaxStartups while others authenticate; fail2ban, a
    # firewall or a TCP wrapper refuse this computer the same way.
    return ConnectionFailed(
        f"{where} {why}: sshd refusing more connections at once (MaxStartups), "
        "a firewall or fail2ban, or not an SSH server.",
        details=text,
    )


def _tcp_connect(endpoint: SshEndpoint, cancel: CancelToken | None) -> socket.socket:
    where = f"{endpoint.hostname}:{endpoint.port}"
    try:
        infos = socket.getaddrinfo(endpoint.hostname, endpoint.port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ConnectionFailed(
            f"Cannot find the host '{endpoint.hostname}': the name does not resolve (DNS).",
            details=str(exc),
        ) from exc
    last: Exception | None = None
    for family, kind, proto, _name, address in infos:
        sock = socket.socket(family, kind, proto)
        sock.settimeout(endpoint.connect_timeout)
        unregister = cancel.on_cancel(sock.close) if cancel else (lambda: None)
        try:
            sock.connect(address)
            sock.settimeout(None)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock
        except TimeoutError as exc:
            sock.close()
            last = exc
        except OSError as exc:
            sock.close()
            last = exc
        finally:
            unregister()
    if cancel is not None and cancel.cancelled:
        raise Cancelled()
    if isinstance(last, ConnectionRefusedError):
        raise ConnectionFailed(
            f"Connection refused by {where}: nothing listens for SSH on that port.",
            details=str(last),
        )
    if isinstance(last, TimeoutError):
        raise ConnectionFailed(
            f"No answer from {where} within {endpoint.connect_timeout:g} s "
            "(host down, a firewall dropping packets, or a wrong address).",
            details=str(last),
        )
    raise ConnectionFailed(f"Cannot connect to {where}: {last}", details=repr(last))


def _open_transport(
    endpoint: SshEndpoint,
    sock: Any,
    prompts: ConnectionPrompts,
    host_keys: HostKeyStore,
    password: str | None,
    passphrases: set[str],
    cancel: CancelToken | None,
) -> paramiko.Transport:
    if sock is None:
        sock = _tcp_connect(endpoint, cancel)
    host_keys = host_keys.for_endpoint(endpoint)
    transport = paramiko.Transport(sock)
    unregister = cancel.on_cancel(transport.close) if cancel else (lambda: None)
    try:
        entries = host_keys.entries(endpoint.known_hosts_name)
        _prefer_known_key_types(transport, [e for e in entries if not e.marker])
        try:
            transport.start_client(timeout=endpoint.connect_timeout)
        except (paramiko.SSHException, EOFError, OSError) as exc:
            if cancel is not None and cancel.cancelled:
                raise Cancelled() from exc
            raise _handshake_failed(endpoint, exc) from exc
        if not transport.is_active() or not transport.initial_kex_done:
            # paramiko's start_client returns quietly when its timeout runs out.
            raise ConnectionFailed(
                f"{endpoint.hostname}:{endpoint.port} accepted the connection, but the SSH "
                f"handshake failed: no SSH greeting within {endpoint.connect_timeout:g} s "
                "(not an SSH server, or one too busy to answer)."
            )
        _verify_host_key(endpoint, transport.get_remote_server_key(), entries, prompts, host_keys)
        if cancel is not None:
            cancel.raise_if_cancelled()
        _authenticate(endpoint, transport, prompts, password, passphrases, cancel)
        transport.set_keepalive(30)
        return transport
    except BaseException:
        transport.close()
        raise
    finally:
        unregister()


def _prefer_known_key_types(transport: paramiko.Transport, known: list[KnownKey]) -> None:
    """Ask the server for a key type already on record, as OpenSSH does.

    A server that also has a key of another type would otherwise present that one,
    and a key of another type than the one on record counts as a changed key.
    """
    types = {k.key_type for k in known}
    if not types:
        return
    options = transport.get_security_options()
    preferred = [a for a in options.key_types if ("ssh-rsa" if a in _RSA_ALGORITHMS else a) in types]
    rest = [a for a in options.key_types if a not in preferred]
    options.key_types = tuple(preferred + rest)


def _verify_host_key(
    endpoint: SshEndpoint,
    server_key: paramiko.PKey,
    entries: list[KnownKey],
    prompts: ConnectionPrompts,
    host_keys: HostKeyStore,
) -> None:
    host = endpoint.known_hosts_name
    check = check_host_key(entries, server_key)
    if check.status is HostKeyStatus.NEW and endpoint.port != 22:
        # ssh accepts a key recorded for the plain name on any port. It ignores a
        # revocation there, but a revoked key is refused here wherever it is marked.
        plain = host_keys.check(endpoint.hostname, server_key)
        if plain.status in (HostKeyStatus.KNOWN, HostKeyStatus.REVOKED):
            check = plain
    if check.status is HostKeyStatus.KNOWN:
        return
    fingerprint = sha256_fingerprint(server_key)
    label = key_type_label(server_key)
    if check.status is HostKeyStatus.REVOKED:
        assert check.line is not None
        raise HostKeyRevoked(
            f"REFUSED: the {label} host key of {host} is marked as revoked. "
            f"Connection refused. Key: {fingerprint}.",
            details=(
                f"{check.line.where} marks this key @revoked: it must not be trusted any more "
                "(it may have been stolen), so whoever presents it may be impersonating the "
                "server. A revoked key is refused whatever else known_hosts says about it, "
                "as ssh does.\n"
                "Ask the server's administrator for its current key; SambaTune will not "
                "connect while the server presents this one."
            ),
        )
    if check.status is HostKeyStatus.CHANGED:
        raise _host_key_changed(host, server_key, check)
    note = ""
    if check.authorities:
        note = (
            "A certificate authority is on record for this host "
            f"({check.authorities[0].where}), but SambaTune cannot check host certificates: "
            "compare the fingerprint with the server's yourself."
        )
    question = HostKeyQuestion(
        host=host,
        key_type=label,
        bits=server_key.get_bits(),
        fingerprint=fingerprint,
        note=note,
    )
    if not prompts.confirm_host_key(question):
        raise HostKeyUnknown(
            f"Unknown host key for {host}: {question.key_type} {fingerprint}. "
            "Not accepted, so not connected.",
            details=question.describe()
            + "\nCompare it with the server's own: ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub",
        )
    host_keys.remember(host, server_key)


def _host_key_changed(host: str, server_key: paramiko.PKey, check: HostKeyCheck) -> HostKeyChanged:
    old = check.line
    assert old is not None
    label = key_type_label(server_key)
    fingerprint = sha256_fingerprint(server_key)
    if old.key_type == server_key.get_name():
        what = f"New {label} key: {fingerprint}."
        why = "or the server was reinstalled and got a new key."
    else:
        what = (
            f"The server presents a key of type {label} ({fingerprint}), "
            f"but the key on record for it is of type {old.type_label}."
        )
        why = (
            f"or the server no longer offers its {old.type_label} key. "
            "A key of another type than the one on record is refused, as ssh does."
        )
    lines = [f"Someone could be intercepting this connection (a man-in-the-middle attack), {why}"]
    lines.append("On record for this host:")
    for known in check.known:
        shared = f" (the line is for '{known.hosts}')" if known.covers_other_hosts else ""
        lines.append(f"  {known.where}: {known.type_label} {known.fingerprint}{shared}")
    shared_lines = [k for k in check.known if k.covers_other_hosts]
    if shared_lines:
        lines.append(
            "A pattern or a list of several hosts vouches for this one: ssh-keygen -R would "
            "delete such a line for all of them, so edit it by hand if the change is legitimate."
        )
    files = dict.fromkeys(k.path for k in check.known if not k.covers_other_hosts)
    if files:
        lines.append("If you are sure the change is legitimate, remove the old entry with:")
        lines.extend(f"  ssh-keygen -R '{host}' -f '{path}'" for path in files)
        lines.append("and connect again to review the new key.")
    return HostKeyChanged(
        f"DANGER: the host key of {host} has CHANGED. Connection refused. {what}",
        details="\n".join(lines),
    )


def _authenticate(
    endpoint: SshEndpoint,
    transport: paramiko.Transport,
    prompts: ConnectionPrompts,
    password: str | None,
    passphrases: set[str],
    cancel: CancelToken | None,
) -> None:
    user = endpoint.user
    tried: list[str] = []
    try:
        transport.auth_none(user)
        return
    except paramiko.BadAuthenticationType as exc:
        allowed = list(exc.allowed_types)
    except paramiko.SSHException:
        allowed = ["publickey", "password", "keyboard-interactive"]

    def done() -> bool:
        return transport.is_authenticated()

    unlocked: list[str] = []  # encrypted keys a passphrase was asked for
    if "publickey" in allowed:
        if endpoint.use_agent and not endpoint.identities_only:
            for key in _agent_keys():
                if _try_key(transport, user, key):
                    return
            tried.append("ssh-agent")
        encrypted: list[str] = []
        for path in endpoint.identity_files:
            try:
                key = _load_private_key(path, None)
            except paramiko.PasswordRequiredException:
                encrypted.append(path)
                continue
            except FileNotFoundError:
                continue
            except (paramiko.SSHException, ValueError, OSError):
                continue
            tried.append(path)
            if _try_key(transport, user, key):
                return
        for path in encrypted:
            attempt = 1
            while True:
                if cancel is not None:
                    cancel.raise_if_cancelled()
                phrase = prompts.ask_secret(SecretRequest("passphrase", path, attempt))
                if phrase is None:
                    break
                # Kept whether or not it opens the key: a mistyped passphrase is still
                # close to the real one, and no passphrase may reach the server.
                passphrases.add(phrase)
                unlocked.append(path)
                try:
                    key = _load_private_key(path, phrase)
                except (paramiko.SSHException, ValueError):
                    attempt += 1
                    if attempt > 3:
                        break
                    continue
                tried.append(path)
                if _try_key(transport, user, key):
                    return
                break

    password_methods = [m for m in ("password", "keyboard-interactive") if m in allowed]
    withheld = False
    if password_methods and not done():
        offered = password
        for attempt in range(1, 4):
            if cancel is not None:
                cancel.raise_if_cancelled()
            secret = (
                offered
                if offered is not None
                else prompts.ask_secret(SecretRequest("password", endpoint.label, attempt))
            )
            offered = None
            if secret is None:
                break
            if secret in passphrases:
                # With --password-stdin one line answers both the passphrase and the
                # password question; once used for a key it stays on this computer.
                withheld = True
                continue
            if _try_password(transport, user, secret, password_methods):
                return
            tried.append("password")

    if not done():
        if "password" in tried:
            raise AuthenticationFailed(
                f"The server rejected the password for {endpoint.label}.",
                details=f"The server accepts: {', '.join(allowed)}.",
            )
        if withheld:
            keys = ", ".join(dict.fromkeys(unlocked))
            raise SecretRequired(
                f"{endpoint.label} wants a password, but the secret given was used as a key "
                "passphrase, and SambaTune does not send a key passphrase to the server.",
                details=(
                    f"It was tried as the passphrase of {keys}; the server did not accept "
                    "that key (or the passphrase did not open it). Nothing was sent as a "
                    "password.\n"
                    "To sign in with a password, give it on its own: add --auth password "
                    "(keys are not tried, so --password-stdin is only the password), or put "
                    "the key's passphrase on its own line with --passphrase-stdin. In the app, "
                    'choose "Sign in with: Password" for this server.\n'
                    f"The server accepts: {', '.join(allowed)}."
                ),
            )
        if password_methods:
            raise SecretRequired(
                f"{endpoint.label} wants a password and none was given.",
                details=f"Server accepts: {', '.join(allowed)}.",
            )
        raise AuthenticationFailed(
            f"Authentication failed for {endpoint.label} "
            f"(tried: {', '.join(dict.fromkeys(tried)) or 'nothing usable'}).",
            details=f"The server accepts: {', '.join(allowed)}.",
        )


def _may_need_passphrase(endpoint: SshEndpoint) -> bool:
    """True when a key file the endpoint would try cannot be opened without a
    passphrase (or cannot be read at all: a passphrase may have been meant for it)."""
    for path in endpoint.identity_files:
        try:
            _load_private_key(path, None)
        except FileNotFoundError:
            continue
        except (paramiko.SSHException, ValueError, OSError):
            return True
    return False


def _agent_keys() -> list[paramiko.PKey]:
    try:
        agent = paramiko.Agent()
        keys: list[paramiko.PKey] = list(agent.get_keys())
    except (paramiko.SSHException, OSError):
        return []
    return keys


def _load_private_key(path: str, passphrase: str | None) -> paramiko.PKey:
    try:
        # Positional: paramiko 5 renamed the keyword (passphrase -> password).
        # The stubs say str; paramiko hands it to cryptography, which takes bytes.
        return paramiko.PKey.from_path(path, passphrase.encode() if passphrase else None)  # type: ignore[arg-type]
    except TypeError as exc:
        # New-format OpenSSH keys come through `cryptography`, which says "encrypted"
        # with a TypeError rather than paramiko's own exception.
        if "password" in str(exc).lower():
            raise paramiko.PasswordRequiredException(str(exc)) from exc
        raise
    except paramiko.PasswordRequiredException:
        raise
    except paramiko.SSHException:
        raise
    except ValueError as exc:
        # A wrong passphrase on a new-format key shows up as a failed decryption.
        raise paramiko.SSHException(str(exc)) from exc


def _try_key(transport: paramiko.Transport, user: str, key: paramiko.PKey) -> bool:
    try:
        transport.auth_publickey(user, key)
    except paramiko.AuthenticationException:
        return False
    except paramiko.SSHException:
        return False
    return transport.is_authenticated()


def _try_password(transport: paramiko.Transport, user: str, secret: str, methods: Sequence[str]) -> bool:
    if "password" in methods:
        try:
            transport.auth_password(user, secret, fallback=False)
            if transport.is_authenticated():
                return True
        except paramiko.AuthenticationException:
            pass
    if "keyboard-interactive" in methods:

        def answer(_title: str, _instructions: str, fields: list[tuple[str, bool]]) -> list[str]:
            return [secret if not echo else "" for _prompt, echo in fields]

        try:
            transport.auth_interactive(user, answer)
            return transport.is_authenticated()
        except paramiko.AuthenticationException:
            pass
    return False
