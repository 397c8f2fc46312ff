"""A TCP relay to a local server, for faults a real server on loopback never shows.

Each connection to the relay gets its own connection to the target and two pump threads.
Its connections can be frozen (the requests still reach the server, the answers no longer
come back: a server or a network that hangs), what the client sends can be held to a
rate (a slow link or a server that takes writes slowly, with no netem in this kernel), and
the server's answers can be rewritten frame by frame (a broken or hostile server).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable

#: Rewrites one frame of the server's (an SMB frame: a 4-byte length, then the message).
Rewrite = Callable[[bytes], bytes]

#: Small reads keep a rate-limited stream smooth.
CHUNK = 16384
#: The receive buffer of a rate-limited relay's connections.
UPLOAD_QUEUE = 128 * 1024


class TcpRelay:
    def __init__(
        self, target_port: int, upload_bytes_per_s: float | None = None, answers: Rewrite | None = None
    ) -> None:
        self.target_port = target_port
        self.upload_bytes_per_s = upload_bytes_per_s
        self.answers = answers
        self.listener = socket.socket()
        if upload_bytes_per_s:
            # A slow server's queue, not a fast relay's: what the relay has taken in but
            # not passed on stays small (the rest waits, or is dropped by a reset, at
            # the client).
            self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, UPLOAD_QUEUE)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen()
        self.port = self.listener.getsockname()[1]
        self.frozen: list[threading.Event] = []
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.target_port))
            frozen = threading.Event()
            self.frozen.append(frozen)
            self.sockets += [client, server]
            upload = threading.Thread(
                target=self._pump, args=(client, server, None, self.upload_bytes_per_s), daemon=True
            )
            upload.start()
            if self.answers is not None:
                threading.Thread(target=self._rewrite, args=(server, client), daemon=True).start()
            else:
                threading.Thread(target=self._pump, args=(server, client, frozen, None), daemon=True).start()

    def _rewrite(self, source: socket.socket, sink: socket.socket) -> None:
        """Pass on the server's frames, each through ``answers``."""
        assert self.answers is not None
        pending = b""
        try:
            while data := source.recv(65536):
                pending += data
                while len(pending) >= 4 and len(pending) >= 4 + int.from_bytes(pending[1:4], "big"):
                    end = 4 + int.from_bytes(pending[1:4], "big")
                    sink.sendall(self.answers(pending[:end]))
                    pending = pending[end:]
        except OSError:
            pass
        for end_point in (source, sink):
            with contextlib.suppress(OSError):
                end_point.shutdown(socket.SHUT_RDWR)

    @staticmethod
    def _pump(
        source: socket.socket, sink: socket.socket, frozen: threading.Event | None, rate: float | None
    ) -> None:
        started = time.monotonic()
        moved = 0
        try:
            while data := source.recv(CHUNK if rate else 65536):
                while frozen is not None and frozen.is_set():
                    time.sleep(0.01)
                if rate:
                    moved += len(data)
                    ahead = moved / rate - (time.monotonic() - started)
                    if ahead > 0:
                        time.sleep(ahead)
                sink.sendall(data)
        except OSError:
            pass
        # Shut down, not closed: the other pump may be waiting in recv() on the same
        # socket, and a close under it would neither wake it nor end the connection.
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def freeze(self) -> None:
        """Freeze the connections open now; new ones pass (the clean-up's)."""
        for frozen in self.frozen:
            frozen.set()

    def close(self) -> None:
        self.listener.close()
        for end in self.sockets:
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)  # wakes a pump waiting in recv()
            with contextlib.suppress(OSError):
                end.close()
