"""The probe's lean SMB2 READ and WRITE paths: bulk data never copied in Python.

Profiling smbprotocol's own read (cProfile, 512 MiB from a loopback smbd) showed the
client spending its time copying: every answer is received in pieces into fresh bytes
objects, joined, copied into a header structure, sliced into a READ structure and
copied once more, and each ``recv`` of up to 8 MiB allocates (and the kernel zeroes) a
new 8 MiB buffer. Its writes copy the same way on the way out (the data is packed into
a structure, joined with the header, signed over a fresh copy). smbclient copies each
byte once, between the socket and its buffer.

This module keeps smbprotocol for everything but the bulk data: negotiate, logon, tree
connect, create, flush and close still go through it. Only READ and WRITE requests of
the probe are packed here (64-byte header and a 48/49-byte request, ``struct``): a
WRITE's data goes to the socket straight from the caller's buffer, and the answers are
taken off the socket by :class:`FramedTcp`, the connection's transport: it reads each
frame's header first and, when the message id is one of ours, receives a READ's data
with ``recv_into`` into the caller's buffer (or one scratch buffer when the bytes are
only counted). Every other frame goes to smbprotocol's worker unchanged.

Signed sessions stay signed: requests are signed and every answer's signature is checked
with an incremental MAC over the same memory (HMAC-SHA256, AES-CMAC or AES-GMAC, as
negotiated), so the check costs no copy either. Encrypted sessions are not handled here;
the probe falls back to smbprotocol's own path for them.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import select
import socket
import struct
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from smbprotocol.transport import Tcp

from sambatune.bench.smb_directory_leases import OPLOCK_BREAK, UNSOLICITED, LeaseBreak, parse_lease_break
from sambatune.cancellation import CancelToken
from sambatune.errors import Cancelled, ConnectionFailed, SambaTuneError

PROTOCOL_ID = b"\xfeSMB"
HEADER = struct.Struct("<4sHHIHHIIQIIQ16s")
READ_REQUEST = struct.Struct("<HBBIQ16sIIIHHB")
#: StructureSize, DataOffset, Reserved, DataLength, DataRemaining, Reserved2.
READ_RESPONSE = struct.Struct("<HBBIII")
#: StructureSize, DataOffset, Length, Offset, FileId, Channel, RemainingBytes,
#: WriteChannelInfoOffset, WriteChannelInfoLength, Flags; the data follows.
WRITE_REQUEST = struct.Struct("<HHIQ16sIIHHI")
#: StructureSize, Reserved, Count, Remaining, WriteChannelInfoOffset/Length.
WRITE_RESPONSE = struct.Struct("<HHIIHH")
SMB2_READ = 0x0008
SMB2_WRITE = 0x0009
FLAG_SERVER_TO_REDIR = 0x1
FLAG_SIGNED = 0x8
FLAG_DFS = 0x10000000
STATUS_SUCCESS = 0
STATUS_PENDING = 0x00000103
STATUS_END_OF_FILE = 0xC0000011
#: smbprotocol's numbering of the signing algorithms (SMB2_SIGNING_CAPABILITIES).
HMAC_SHA256, AES_CMAC, AES_GMAC = 0, 1, 2
CREDIT_BYTES = 64 * 1024
#: Without a single answer for this long, the server is taken to be gone.
IDLE_LIMIT = 60.0
#: How often a wait for an answer looks at the cancel token (seconds).
CANCEL_POLL = 0.05
#: An answer's data is received in pieces of this size (one system call each).
FILL_PIECE = 1 << 20
#: After a cancel or a failure, answers still in flight get this long to arrive so the
#: connection stays usable; a slow server's are dropped with the connection instead
#: (its socket closed), because a cancel must stop within a second.
DRAIN_SECONDS = 0.2

#: Called with (bytes moved so far, seconds since the transfer started).
OnProgress = Callable[[int, float], None]


def credit_charge(length: int) -> int:
    return max(1, (length - 1) // CREDIT_BYTES + 1)


class Signer:
    """The SMB2/3 message signature, computed over several pieces of memory at once."""

    def __init__(self, algorithm: int, key: bytes) -> None:
        self.algorithm = algorithm
        self.key = key

    @classmethod
    def for_session(cls, connection: Any, session: Any) -> Signer | None:
        if not (session.signing_required and session.signing_key):
            return None
        if connection.dialect >= 0x311 and connection.signing_algorithm_id is not None:
            algorithm = int(connection.signing_algorithm_id)
        elif connection.dialect >= 0x300:
            algorithm = AES_CMAC
        else:
            algorithm = HMAC_SHA256
        return cls(algorithm, session.signing_key)

    def sign(
        self,
        header: bytes | bytearray | memoryview,
        *rest: bytes | bytearray | memoryview,
        message_id: int,
        response: bool,
    ) -> bytes:
        """The signature of a message whose header's signature field is zeroed."""
        if self.algorithm == AES_GMAC:
            from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

            nonce = message_id.to_bytes(8, "little") + (1 if response else 0).to_bytes(4, "little")
            gmac = Cipher(algorithms.AES(self.key), modes.GCM(nonce)).encryptor()
            for piece in (header, *rest):
                gmac.authenticate_additional_data(piece)
            gmac.finalize()
            return bytes(gmac.tag)
        if self.algorithm == AES_CMAC:
            from cryptography.hazmat.primitives import cmac
            from cryptography.hazmat.primitives.ciphers import algorithms

            mac = cmac.CMAC(algorithms.AES(self.key))
            for piece in (header, *rest):
                # Typed as bytes, but any buffer works (the tests sign memoryviews): no copy.
                mac.update(piece)  # type: ignore[arg-type]
            return mac.finalize()
        digest = hmac.new(self.key, digestmod=hashlib.sha256)
        for piece in (header, *rest):
            digest.update(piece)
        return digest.digest()[:16]


#: Takes a whole answer frame (message id, header, the rest) for a request of its own
#: kind; returns the credits granted by answers compounded after the first.
OnFrame = Callable[[int, bytes, memoryview], int]


class _Slot:
    """One READ or WRITE in flight: where a read's bytes go and how it ended; or another
    request whose answer ``on_frame`` reads (bench/smb_compounds.py)."""

    __slots__ = ("arrived", "done", "error", "length", "on_frame", "received", "signer", "target", "write")

    def __init__(
        self,
        length: int,
        target: memoryview,
        signer: Signer | None,
        *,
        write: bool = False,
        on_frame: OnFrame | None = None,
    ) -> None:
        self.length = length
        self.target = target
        self.signer = signer
        #: A WRITE: its answer only says how many bytes the server took.
        self.write = write
        self.done = threading.Event()
        self.received = 0
        #: Data bytes in so far, while the answer arrives (a slow server's progress).
        self.arrived = 0
        self.error: BaseException | None = None
        self.on_frame = on_frame


class FramedTcp(Tcp):
    """smbprotocol's TCP transport, with the probe's READ answers received in place
    (and its WRITE answers taken here too, so their credits and errors reach the probe).

    ``recv`` runs only in smbprotocol's worker thread. It returns every frame that is not
    a probe READ answer, exactly as the plain transport would; a probe answer is consumed
    here, its credits granted to the connection, and its slot marked done.
    """

    def __init__(self, server: str, port: int, timeout: float | None = None, connection: Any = None) -> None:
        super().__init__(server, port, timeout)
        self.connection = connection
        self._slots: dict[int, _Slot] = {}
        self._slots_lock = threading.Lock()
        self._prefix = bytearray(4 + 64)
        self._fixed = bytearray(READ_RESPONSE.size)
        #: Hears the server's lease breaks (sambatune.bench.smb_directory_leases).
        self.on_lease_break: Callable[[LeaseBreak], None] | None = None

    # -- the probe's side ------------------------------------------------------------
    def expect(self, message_id: int, slot: _Slot) -> None:
        with self._slots_lock:
            self._slots[message_id] = slot

    def forget(self, message_id: int) -> None:
        with self._slots_lock:
            self._slots.pop(message_id, None)

    def send_raw(
        self, frame: bytes, data: memoryview | None = None, cancel: CancelToken | None = None
    ) -> None:
        """Send one frame; a WRITE's ``data`` follows its header straight from the caller's
        buffer (the frame's length prefix counts it).

        With ``cancel``, a cancel during the send cuts the connection under it: a server
        that takes writes slowly kept a 4 MiB write in ``sendall`` for seconds, and a
        cancel waited for it. A frame cut off leaves the stream unusable anyway.
        """
        unregister = cancel.on_cancel(self._cut) if cancel is not None else None
        try:
            with self._sock_lock:
                if not self.connected:
                    raise ConnectionFailed("The SMB connection was closed.")
                try:
                    self._sock.sendall(frame)
                    if data is not None:
                        self._sock.sendall(data)
                    return
                except OSError as exc:
                    failure: BaseException = (
                        Cancelled()
                        if cancel is not None and cancel.cancelled
                        else ConnectionFailed(
                            "The SMB connection broke during the transfer.", details=str(exc)
                        )
                    )
        finally:
            if unregister is not None:
                unregister()
        self.reset()
        raise failure

    def _cut(self) -> None:
        """Wake a send blocked on a slow server, from the cancelling thread (the sender
        holds the socket lock): what is queued is dropped, the connection reset."""
        with contextlib.suppress(OSError):
            self._drop_queued_on_close()
            self._sock.shutdown(socket.SHUT_RDWR)

    def _drop_queued_on_close(self) -> None:
        """SO_LINGER 0: closing resets the connection, what is still queued is dropped."""
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    def reset(self) -> None:
        """Close the connection with a reset: what is still queued to send is dropped.

        A graceful close delivers it first: a cancelled write's megabytes went on to a
        slow server for seconds, its session kept the test file open, and the file could
        not be removed meanwhile.
        """
        with self._sock_lock:
            if self.connected:
                with contextlib.suppress(OSError):
                    self._drop_queued_on_close()
        self.close()

    def recv(self, timeout: float) -> bytes:
        try:
            return self._next_frame(timeout)
        except BaseException as exc:
            self._fail_all(exc)
            raise

    def _fail_all(self, exc: BaseException) -> None:
        with self._slots_lock:
            slots = list(self._slots.values())
            self._slots.clear()
        for slot in slots:
            slot.error = exc
            slot.done.set()

    def _next_frame(self, timeout: float) -> bytes:
        prefix = memoryview(self._prefix)
        while True:
            if not self._wait_readable(timeout) or not self._fill(prefix[:4]):
                self._fail_all(ConnectionFailed("The SMB server closed the connection."))
                return b""
            length = struct.unpack_from(">L", prefix, 0)[0]
            head = prefix[4 : 4 + min(length, 64)]
            if not self._fill(head):
                self._fail_all(ConnectionFailed("The SMB server closed the connection."))
                return b""
            slot = None
            message_id = -1
            if len(head) == 64 and head[:4] == PROTOCOL_ID:
                message_id = struct.unpack_from("<Q", head, 24)[0]
                with self._slots_lock:
                    slot = self._slots.get(message_id)
            if slot is None:
                rest = bytearray(length - len(head))
                if not self._fill(memoryview(rest)):
                    return b""
                if message_id == UNSOLICITED and struct.unpack_from("<H", head, 12)[0] == OPLOCK_BREAK:
                    # A lease break: the listings hear it; smbprotocol's worker would take
                    # a message it did not ask for as a fatal error.
                    notice = parse_lease_break(bytes(rest))
                    if notice is not None and self.on_lease_break is not None:
                        self.on_lease_break(notice)
                    continue
                return bytes(head) + bytes(rest)
            if not self._answer(slot, message_id, head, length - 64):
                self._fail_all(ConnectionFailed("The SMB server closed the connection."))
                return b""

    def _answer(self, slot: _Slot, message_id: int, head: memoryview, body_length: int) -> bool:
        """Receive one answer to a probe READ or WRITE; False when the socket closed meanwhile."""
        (_, _, _, status, _, credits, flags, _, _, _, _, _, signature) = HEADER.unpack_from(head)
        self._grant(credits)
        if status == STATUS_PENDING:
            # An interim answer: the real one follows with the same message id.
            return self._fill(memoryview(bytearray(body_length)))
        if slot.on_frame is not None:
            answers = memoryview(bytearray(body_length))
            if not self._fill(answers):
                return False
            granted = slot.on_frame(message_id, bytes(head), answers)
            if granted:
                self._grant(granted)
            return True
        pieces: list[memoryview | bytes] = []
        error: BaseException | None = None
        if slot.write:
            body = memoryview(bytearray(body_length))
            if not self._fill(body):
                return False
            pieces.append(body)
            if status != STATUS_SUCCESS or body_length < WRITE_RESPONSE.size:
                error = SambaTuneError(
                    f"The SMB server refused a write of {slot.length} bytes (status 0x{status:08x})."
                )
            else:
                slot.received = WRITE_RESPONSE.unpack_from(body)[2]
        elif status != STATUS_SUCCESS or body_length < READ_RESPONSE.size:
            body = memoryview(bytearray(body_length))
            if not self._fill(body):
                return False
            pieces.append(body)
            error = _status_error(status, slot.length)
        else:
            fixed = memoryview(self._fixed)
            if not self._fill(fixed):
                return False
            pieces.append(bytes(fixed))
            _, data_offset, _, data_length, _, _ = READ_RESPONSE.unpack_from(fixed)
            gap = max(0, data_offset - 64 - READ_RESPONSE.size)
            if gap:
                pad = memoryview(bytearray(gap))
                if not self._fill(pad):
                    return False
                pieces.append(pad)
            if data_length > slot.length or gap + READ_RESPONSE.size + data_length > body_length:
                error = SambaTuneError("The SMB server answered a read with more bytes than asked for.")
                data_length = 0
            data = slot.target[:data_length]
            # In pieces, so a slow server's progress shows within an answer of megabytes.
            for start in range(0, data_length, FILL_PIECE):
                if not self._fill(data[start : start + FILL_PIECE]):
                    return False
                slot.arrived = min(start + FILL_PIECE, data_length)
            pieces.append(data)
            tail = body_length - READ_RESPONSE.size - gap - data_length
            if tail > 0:
                extra = memoryview(bytearray(tail))
                if not self._fill(extra):
                    return False
                pieces.append(extra)
            slot.received = data_length
        if slot.signer is not None and error is None:
            if not flags & FLAG_SIGNED:
                error = SambaTuneError("The SMB server sent an unsigned answer on a signed session.")
            else:
                unsigned = bytes(head[:48]) + bytes(16)
                expected = slot.signer.sign(
                    unsigned, *pieces, message_id=message_id, response=bool(flags & FLAG_SERVER_TO_REDIR)
                )
                if expected != signature:
                    error = SambaTuneError("An SMB answer failed its signature check.")
        self.forget(message_id)
        slot.error = error
        slot.done.set()
        return True

    def _grant(self, credits: int) -> None:
        connection = self.connection
        if credits == 0 and not connection.supports_multi_credit:
            credits = 1
        with connection.sequence_lock:
            connection.sequence_window["high"] += credits

    def _wait_readable(self, timeout: float) -> bool:
        """Block until a frame starts; TimeoutError lets smbprotocol send its keep-alive."""
        with self._close_lock:
            if not self.connected:
                return False
            ready = select.select([self._sock], [], [], max(timeout, 1))[0]
        if not ready:
            raise TimeoutError(f"recv idle for {timeout:.1f}s")
        return True

    def _fill(self, view: memoryview) -> bool:
        """Receive exactly ``len(view)`` bytes into ``view``; False when the socket closed."""
        offset, size = 0, len(view)
        while offset < size:
            with self._close_lock:
                if not self.connected:
                    return False
                try:
                    # One system call for the whole answer: the GIL is free meanwhile.
                    got = self._sock.recv_into(view[offset:], size - offset, socket.MSG_WAITALL)
                except OSError:
                    got = 0
            if got == 0:
                self.close()
                return False
            offset += got
        return True


def _status_error(status: int, length: int) -> SambaTuneError:
    if status == STATUS_END_OF_FILE:
        return SambaTuneError("The test file on the share is shorter than the probe expected.")
    return SambaTuneError(f"The SMB server refused a read of {length} bytes (status 0x{status:08x}).")


class ProbeRequests:
    """Requests packed by hand on one session and tree of the probe's own transport:
    their message ids, and the wait for an answer (:class:`BulkFile`, and the deletes
    of bench/smb_compounds.py)."""

    def __init__(self, connection: Any, session: Any, tree: Any) -> None:
        transport = connection.transport
        if not isinstance(transport, FramedTcp):
            raise SambaTuneError("The lean path needs the probe's own transport.")
        self.connection = connection
        self.transport = transport
        self.session_id = int(session.session_id)
        self.tree_id = int(tree.tree_connect_id)
        self.flags = FLAG_DFS if getattr(tree, "is_dfs_share", False) else 0

    def take_message_ids(self, charge: int, what: str) -> int:
        """The first of ``charge`` message ids (and credits) for one request or chain."""
        connection = self.connection
        with connection.sequence_lock:
            window = connection.sequence_window
            available = window["high"] - window["low"]
            if charge > available:
                raise SambaTuneError(f"The SMB server granted {available} credits; {what} needs {charge}.")
            message_id = int(window["low"])
            window["low"] += charge
        return message_id

    def wait(
        self, slot: _Slot, cancel: CancelToken | None = None, arriving: Callable[[], None] | None = None
    ) -> bool:
        """Wait for the answer, saying how much of it has ``arriving``; False as soon as
        ``cancel`` is set."""
        import time

        deadline = time.monotonic() + IDLE_LIMIT
        while not slot.done.wait(CANCEL_POLL):
            if cancel is not None and cancel.cancelled:
                return False
            if arriving is not None:
                arriving()
            if not self.transport.connected or self.connection._t_exc is not None:
                raise ConnectionFailed(
                    "The SMB connection broke during the transfer.", details=repr(self.connection._t_exc)
                )
            if time.monotonic() > deadline:
                raise ConnectionFailed(f"The SMB server sent nothing for {IDLE_LIMIT:.0f} s.")
        return True


class BulkFile(ProbeRequests):
    """Reads or writes one open file with several requests in flight, through :class:`FramedTcp`."""

    def __init__(self, connection: Any, session: Any, tree: Any, file_id: bytes) -> None:
        super().__init__(connection, session, tree)
        self.file_id = bytes(file_id)
        self.signer = Signer.for_session(connection, session)

    def read(
        self,
        size: int,
        block: int,
        outstanding: int,
        cancel: CancelToken,
        on_progress: OnProgress | None = None,
        into: memoryview | None = None,
    ) -> int:
        """Read ``size`` bytes from offset 0; into ``into`` when given, else only counted.

        Returns the bytes received. A short file or any failure raises. A cancel stops
        the wait for an answer at once; the answers still in flight get DRAIN_SECONDS to
        arrive so the connection can still close the file, else the connection is closed
        (:attr:`FramedTcp.connected` turns False), so a cancel never waits for a slow
        server to send megabytes nobody wants.
        """
        scratch = memoryview(bytearray(block)) if into is None else None

        def send(offset: int, length: int) -> tuple[int, _Slot]:
            target = scratch if into is None else into[offset : offset + length]
            assert target is not None
            request = READ_REQUEST.pack(49, 0x50, 0, length, offset, self.file_id, 0, 0, 0, 0, 0, 0)
            return self._send(SMB2_READ, request, _Slot(length, target, self.signer), length)

        return self._transfer(size, block, outstanding, cancel, on_progress, send)

    def write(
        self,
        data: memoryview,
        size: int,
        outstanding: int,
        cancel: CancelToken,
        on_progress: OnProgress | None = None,
    ) -> int:
        """Write ``size`` bytes from offset 0, ``len(data)`` per request (the same block
        again and again, as the probe's test file needs no particular content)."""
        block = len(data)

        def send(offset: int, length: int) -> tuple[int, _Slot]:
            request = WRITE_REQUEST.pack(49, 64 + 48, length, offset, self.file_id, 0, 0, 0, 0, 0)
            slot = _Slot(length, data, self.signer, write=True)
            return self._send(SMB2_WRITE, request, slot, length, data[:length], cancel)

        return self._transfer(size, block, outstanding, cancel, on_progress, send)

    def _transfer(
        self,
        size: int,
        block: int,
        outstanding: int,
        cancel: CancelToken,
        on_progress: OnProgress | None,
        send: Callable[[int, int], tuple[int, _Slot]],
    ) -> int:
        import time

        pending: deque[tuple[int, _Slot]] = deque()
        offset = moved = reported = 0
        started = time.perf_counter()
        try:
            while offset < size or pending:
                while offset < size and len(pending) < outstanding and not cancel.cancelled:
                    length = min(block, size - offset)
                    pending.append(send(offset, length))
                    offset += length
                if not pending:
                    break
                _message_id, slot = pending[0]

                def arriving(slot: _Slot = slot, moved: int = moved) -> None:
                    nonlocal reported
                    if on_progress is not None and moved + slot.arrived > reported:
                        reported = moved + slot.arrived
                        on_progress(reported, time.perf_counter() - started)

                if not self.wait(slot, cancel, arriving):
                    break  # cancelled: the answer is left to the drain below
                pending.popleft()
                if slot.error is not None:
                    raise slot.error
                if slot.received != slot.length:
                    raise SambaTuneError(
                        f"The SMB server took {slot.received} of the {slot.length} bytes written."
                        if slot.write
                        else "The test file on the share is shorter than the probe expected."
                    )
                moved += slot.received
                if on_progress is not None:
                    on_progress(moved, time.perf_counter() - started)
        finally:
            self._drain(pending)
        cancel.raise_if_cancelled()
        return moved

    def _drain(self, pending: deque[tuple[int, _Slot]]) -> None:
        """Let the answers in flight arrive, briefly; else close the connection under them."""
        import time

        deadline = time.monotonic() + DRAIN_SECONDS
        for _message_id, slot in pending:
            left = deadline - time.monotonic()
            if not (self.transport.connected and slot.done.wait(max(left, 0.0))):
                break
        else:
            return
        for message_id, _slot in pending:
            self.transport.forget(message_id)
        self.transport.reset()

    def _send(
        self,
        command: int,
        request: bytes,
        slot: _Slot,
        length: int,
        data: memoryview | None = None,
        cancel: CancelToken | None = None,
    ) -> tuple[int, _Slot]:
        """Send one READ or WRITE (``data`` after a WRITE's request), signed when the
        session signs, with ``slot`` waiting for its answer."""
        charge = credit_charge(length)
        message_id = self.take_message_ids(charge, f"a request of {length} bytes")
        flags = self.flags | (FLAG_SIGNED if self.signer is not None else 0)
        header = bytearray(
            HEADER.pack(
                PROTOCOL_ID,
                64,
                charge,
                0,
                command,
                charge,
                flags,
                0,
                message_id,
                0,
                self.tree_id,
                self.session_id,
                bytes(16),
            )
        )
        rest = (request,) if data is None else (request, data)
        if self.signer is not None:
            header[48:64] = self.signer.sign(header, *rest, message_id=message_id, response=False)
        self.transport.expect(message_id, slot)
        message = bytes(header) + request
        total = len(message) + (len(data) if data is not None else 0)
        try:
            self.transport.send_raw(struct.pack(">L", total) + message, data, cancel)
        except BaseException:
            self.transport.forget(message_id)
            raise
        return message_id, slot


def probe_connection_class() -> type:
    """smbprotocol's Connection, with :class:`FramedTcp` as its transport.

    ``Connection.connect`` builds a plain ``Tcp`` itself and starts the worker on it
    straight away; catching the assignment is the one place the transport can be
    chosen before any frame is read.
    """
    from smbprotocol.connection import Connection

    class ProbeConnection(Connection):
        @property
        def transport(self) -> Any:
            return self.__dict__.get("_framed_transport")

        @transport.setter
        def transport(self, value: Any) -> None:
            if value is not None and not isinstance(value, FramedTcp):
                value = FramedTcp(value.server, value.port, value.timeout, connection=self)
            self.__dict__["_framed_transport"] = value

    return ProbeConnection
