"""This computer's SMB client for the probe: smbprotocol, several requests in flight.

smbprotocol is pure Python, so each request costs this computer CPU time; keeping
several reads (or writes) outstanding lets the server and the network work while
the client parses the previous answer. The probe asks the server for enough credits
up front (an SMB2 ECHO with a credit request), because SMB2 lets a client have only
as many bytes in flight as it holds credits (one per 64 KiB).

A guest session cannot sign, so it asks for no signing (the server's own requirement
is honoured). A logged-on session signs, as SMB 3.1.1 demands at least for the tree
connect and as current Windows clients do for everything. Guest sessions use a name
the server does not know, which "map to guest = Bad User" turns into the guest account.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sambatune.bench.smb_directory_leases import CAP_DIRECTORY_LEASING, CAP_LEASING
from sambatune.cancellation import CancelToken
from sambatune.errors import AuthenticationFailed, ConnectionFailed, InvalidInput, SambaTuneError

#: What one credit pays for (SMB2 multi-credit requests).
CREDIT_BYTES = 64 * 1024
#: An account name no server has: with "map to guest = Bad User" it becomes the guest.
GUEST_USER = "sambatune-guest"
PROBE_PREFIX = ".sambatune-probe-"
DIALECTS = {0x202: "2.0.2", 0x210: "2.1", 0x300: "3.0", 0x302: "3.0.2", 0x311: "3.1.1"}
#: smbprotocol's numbers for what SMB 3.1.1 negotiated, named as smbstatus names them.
SIGNING_NAMES = {0: "HMAC-SHA256", 1: "AES-128-CMAC", 2: "AES-128-GMAC"}
CIPHER_NAMES = {1: "AES-128-CCM", 2: "AES-128-GCM", 3: "AES-256-CCM", 4: "AES-256-GCM"}
#: What a session may be asked for: nothing (the server's minimum), signed, or encrypted.
PLAIN, SIGNED, ENCRYPTED = "plain", "signed", "encrypted"
SECURITY_MODES = (PLAIN, SIGNED, ENCRYPTED)

#: Called with (bytes moved so far, seconds since the transfer started).
OnProgress = Callable[[int, float], None]


@dataclass(frozen=True)
class SmbLogin:
    """Who connects. No user: a guest session. The password never leaves memory."""

    user: str | None = None
    password: str | None = field(default=None, repr=False)
    domain: str | None = None

    @property
    def guest(self) -> bool:
        return not self.user


@dataclass
class Transfer:
    bytes: int
    seconds: float
    #: CPU time this process used meanwhile (all threads): how busy the client was.
    cpu_seconds: float

    @property
    def client_cpu_share(self) -> float | None:
        return self.cpu_seconds / self.seconds if self.seconds > 0 else None


def _charge(length: int) -> int:
    return max(1, (length - 1) // CREDIT_BYTES + 1)


class SmbProbeConnection:
    """One SMB session and tree connect to a share, with pipelined whole-file I/O."""

    def __init__(
        self,
        server: str,
        share: str,
        port: int = 445,
        login: SmbLogin | None = None,
        timeout: float = 10.0,
        *,
        security: str | None = None,
        directory_leases: bool = True,
    ) -> None:
        if not server or not share:
            raise InvalidInput("The SMB probe needs a server and a share.")
        if security not in (None, *SECURITY_MODES):
            raise InvalidInput(f"A session is {', '.join(SECURITY_MODES)} (not {security}).")
        if security in (SIGNED, ENCRYPTED) and (login is None or login.guest):
            raise InvalidInput(
                f"A {security} session needs a user: a guest session has no key to sign or encrypt with."
            )
        self.server = server
        self.share = share.strip("\\/")
        self.port = port
        self.login = login or SmbLogin()
        self.timeout = timeout
        #: None: what the probe always asks (a user's session signed, a guest's not).
        self.security = security
        #: Ask for directory leases where the server offers them (never when encrypted).
        self.directory_leases = directory_leases and security != ENCRYPTED
        self.connection: Any = None
        self.session: Any = None
        self.tree: Any = None

    # -- connecting ------------------------------------------------------------------
    def connect(self) -> SmbProbeConnection:
        from smbprotocol.exceptions import (
            LogonFailure,
            SMBAuthenticationError,
            SMBException,
            SMBResponseException,
        )
        from smbprotocol.session import Session
        from smbprotocol.tree import TreeConnect

        from sambatune.bench.smb_bulk import probe_connection_class

        where = f"{self.server}:{self.port}"
        security = self.security
        sign = security == SIGNED or (security is None and not self.login.guest)
        connection = probe_connection_class()(uuid.uuid4(), self.server, self.port, require_signing=sign)
        if self.directory_leases:
            connection.client_capabilities |= CAP_LEASING | CAP_DIRECTORY_LEASING
        try:
            connection.connect(timeout=self.timeout)
        except (ValueError, OSError, SMBException) as exc:
            raise ConnectionFailed(f"No SMB server answered at {where}.", details=str(exc)) from exc
        self.connection = connection
        try:
            login = self.login
            self.session = Session(
                connection,
                username=login.user or GUEST_USER,
                password=login.password or "" if login.user else "guest",
                require_encryption=security == ENCRYPTED,
                auth_protocol="ntlm",
            )
            if login.user and login.domain:
                self.session.username = f"{login.domain}\\{login.user}"
            self.session.connect()
        except (SMBAuthenticationError, LogonFailure) as exc:
            self.close()
            raise AuthenticationFailed(
                f"The SMB server at {where} did not accept "
                + (f"the user {self.login.user}." if self.login.user else "a guest session."),
                details=str(exc),
            ) from exc
        except (SMBException, OSError, ValueError) as exc:
            self.close()
            raise _explained(exc, f"Logging on to the SMB server at {where} failed.") from exc
        try:
            self.tree = TreeConnect(self.session, rf"\\{self.server}\{self.share}")
            # SMB 3.1.1 wants a logged-on session's tree connect signed, so a plain session
            # signs that one request and nothing after it (as smbclient's
            # --client-protection=off does; smbstatus calls it partial signing).
            session = self.session
            unsigned = self.security == PLAIN and not self.session_is_guest and not session.signing_required
            session.signing_required = session.signing_required or unsigned
            # Without a session key (guest) the negotiate cannot be verified.
            self.tree.connect(require_secure_negotiate=not self.session_is_guest)
            if unsigned:
                session.signing_required = False
        except SMBResponseException as exc:
            self.close()
            raise InvalidInput(
                f"The server at {where} refused the share '{self.share}'.", details=str(exc)
            ) from exc
        except (SMBException, OSError) as exc:
            self.close()
            raise _explained(exc, f"Connecting to the share '{self.share}' failed.") from exc
        return self

    @property
    def directory_leases_offered(self) -> bool:
        """This session may take directory leases: asked for, offered by the server
        (Samba 4.22 and later with smb3 directory leases on), SMB 3, not encrypted."""
        connection = self.connection
        return bool(
            self.directory_leases
            and connection is not None
            and connection.dialect >= 0x300
            and connection.supports_directory_leasing
            and not self.encrypted
        )

    @property
    def session_is_guest(self) -> bool:
        return bool(self.session is not None and self.session.session_key is None)

    def facts(self) -> dict[str, Any]:
        """What this session negotiated, as this computer's side of it sees it."""
        connection = self.connection
        signing = bool(self.session.signing_required)
        encrypted = self.encrypted
        return {
            "client": "smbprotocol",
            "dialect": DIALECTS.get(int(connection.dialect), hex(int(connection.dialect))),
            "max_read_size": int(connection.max_read_size),
            "max_write_size": int(connection.max_write_size),
            "signing": signing,
            "signing_algorithm": self.signing_algorithm if signing else None,
            "encryption": encrypted,
            "cipher": CIPHER_NAMES.get(int(connection.cipher_id or 0)) if encrypted else None,
            "guest": self.session_is_guest,
            "local_port": self.local_port,
            "directory_leases": self.directory_leases_offered,
        }

    @property
    def signing_algorithm(self) -> str:
        """The algorithm that signs this session: negotiated in 3.1.1, fixed by the dialect before."""
        connection = self.connection
        if connection.dialect >= 0x311 and connection.signing_algorithm_id is not None:
            return SIGNING_NAMES.get(int(connection.signing_algorithm_id), "?")
        return SIGNING_NAMES[1] if connection.dialect >= 0x300 else SIGNING_NAMES[0]

    @property
    def local_port(self) -> int | None:
        """This end's TCP port: how the server's session list names this session."""
        transport: Any = self.connection.transport if self.connection is not None else None
        try:
            return int(transport._sock.getsockname()[1])
        except (AttributeError, OSError, TypeError):
            return None

    def ensure_credits(self, needed: int) -> None:
        """Hold at least ``needed`` credits, asking with ECHO (the server caps the grant)."""
        window = self.connection.sequence_window
        for _ in range(64):
            available = window["high"] - window["low"]
            if available >= needed:
                return
            before = available
            self.connection.echo(sid=self.session.session_id, credit_request=min(512, needed - available + 1))
            if window["high"] - window["low"] <= before:
                break
        available = window["high"] - window["low"]
        if available < needed:
            raise SambaTuneError(
                f"The SMB server grants only {available} credits, not the {needed} this many "
                "requests in flight need.",
                details="Use fewer outstanding requests or smaller blocks.",
            )

    def close(self) -> None:
        for step in (
            lambda: self.tree.disconnect() if self.tree is not None else None,
            lambda: self.session.disconnect() if self.session is not None else None,
            lambda: self.connection.disconnect() if self.connection is not None else None,
        ):
            with contextlib.suppress(Exception):
                step()
        self.tree = self.session = self.connection = None

    def __enter__(self) -> SmbProbeConnection:
        return self.connect() if self.connection is None else self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- files -----------------------------------------------------------------------
    def new_name(self) -> str:
        return f"{PROBE_PREFIX}{secrets.token_hex(6)}.bin"

    def _open(self, name: str, *, write: bool, delete_on_close: bool = False) -> Any:
        from smbprotocol.open import (
            CreateDisposition,
            CreateOptions,
            FileAttributes,
            FilePipePrinterAccessMask,
            ImpersonationLevel,
            Open,
            ShareAccess,
        )

        access = FilePipePrinterAccessMask.GENERIC_READ
        if write:
            access |= FilePipePrinterAccessMask.GENERIC_WRITE
        if delete_on_close:
            access |= FilePipePrinterAccessMask.DELETE
        options = CreateOptions.FILE_NON_DIRECTORY_FILE
        if delete_on_close:
            options |= CreateOptions.FILE_DELETE_ON_CLOSE
        handle = Open(self.tree, name)
        handle.create(
            ImpersonationLevel.Impersonation,
            access,
            FileAttributes.FILE_ATTRIBUTE_NORMAL,
            ShareAccess.FILE_SHARE_READ | ShareAccess.FILE_SHARE_WRITE | ShareAccess.FILE_SHARE_DELETE,
            CreateDisposition.FILE_OVERWRITE_IF if write else CreateDisposition.FILE_OPEN,
            options,
        )
        return handle

    def delete(self, name: str) -> None:
        self._open(name, write=False, delete_on_close=True).close()

    def write_file(
        self,
        name: str,
        size: int,
        block: int,
        outstanding: int,
        cancel: CancelToken,
        on_progress: OnProgress | None = None,
        *,
        flush: bool = True,
    ) -> Transfer:
        """Write ``size`` bytes in ``block``-sized requests, then FLUSH (smbd fsyncs) unless
        ``flush`` is False (as ``smbclient put`` leaves it to the server)."""
        from sambatune.bench.smb_bulk import BulkFile

        block = min(block, int(self.connection.max_write_size))
        handle = self._open(name, write=True)
        data = memoryview(os.urandom(block))
        try:
            if self.encrypted:

                def request(offset: int, length: int) -> tuple[Any, Any]:
                    message, receive = handle.write(
                        data[:length].tobytes() if length < block else data, offset, send=False
                    )
                    return message, receive

                transfer = self._pipeline(size, block, outstanding, request, cancel, on_progress)
            else:
                self.ensure_credits(_charge(block) * outstanding + 1)
                cpu = time.process_time()
                started = time.perf_counter()
                moved = BulkFile(self.connection, self.session, self.tree, handle.file_id).write(
                    data, size, outstanding, cancel, on_progress
                )
                transfer = Transfer(moved, time.perf_counter() - started, time.process_time() - cpu)
            if flush:
                started = time.perf_counter()
                cpu = time.process_time()
                handle.flush()
                transfer.seconds += time.perf_counter() - started
                transfer.cpu_seconds += time.process_time() - cpu
            return transfer
        finally:
            with contextlib.suppress(Exception):
                handle.close()

    def read_file(
        self,
        name: str,
        size: int,
        block: int,
        outstanding: int,
        cancel: CancelToken,
        on_progress: OnProgress | None = None,
        into: memoryview | None = None,
    ) -> Transfer:
        """Read the first ``size`` bytes of ``name``; into ``into`` when given, else only counted."""
        from sambatune.bench.smb_bulk import BulkFile

        block = min(block, int(self.connection.max_read_size))
        if into is not None and len(into) < size:
            raise InvalidInput("The buffer is smaller than the bytes to read.")
        handle = self._open(name, write=False)
        try:
            if self.encrypted:
                return self._pipeline(
                    size,
                    block,
                    outstanding,
                    lambda offset, length: handle.read(offset, length, send=False),
                    cancel,
                    on_progress,
                    into,
                )
            reader = BulkFile(self.connection, self.session, self.tree, handle.file_id)
            self.ensure_credits(_charge(block) * outstanding + 1)
            cpu = time.process_time()
            started = time.perf_counter()
            moved = reader.read(size, block, outstanding, cancel, on_progress, into)
            return Transfer(moved, time.perf_counter() - started, time.process_time() - cpu)
        finally:
            with contextlib.suppress(Exception):
                handle.close()

    @property
    def encrypted(self) -> bool:
        return bool(self.session.encrypt_data or self.tree.encrypt_data)

    def _pipeline(
        self,
        size: int,
        block: int,
        outstanding: int,
        request: Callable[[int, int], tuple[Any, Any]],
        cancel: CancelToken,
        on_progress: OnProgress | None,
        into: memoryview | None = None,
    ) -> Transfer:
        """Keep ``outstanding`` smbprotocol requests in flight until ``size`` bytes have moved.

        Writes, and reads on encrypted sessions, take this path; answers to reads are
        copied to ``into`` when given.
        """
        if size <= 0 or block <= 0 or outstanding <= 0:
            raise InvalidInput("Size, block size and outstanding requests must be positive.")
        charge = _charge(block)
        self.ensure_credits(charge * outstanding + 1)
        sid, tid = self.session.session_id, self.tree.tree_connect_id
        pending: deque[tuple[Any, Any, int]] = deque()
        offset = moved = 0
        cpu = time.process_time()
        started = time.perf_counter()
        while offset < size or pending:
            while offset < size and len(pending) < outstanding:
                length = min(block, size - offset)
                message, receive = request(offset, length)
                # Ask back what the request costs so the window stays this wide.
                sent = self.connection.send(message, sid, tid, credit_request=_charge(length))
                pending.append((sent, receive, offset))
                offset += length
            sent, receive, at = pending[0]
            if not _answered(sent, cancel):
                break
            pending.popleft()
            answer = receive(sent)
            if isinstance(answer, int):
                moved += answer
            else:
                if into is not None:
                    into[at : at + len(answer)] = answer
                moved += len(answer)
            if on_progress is not None:
                on_progress(moved, time.perf_counter() - started)
            if cancel.cancelled:
                break
        if cancel.cancelled:
            self._drain([(sent, receive) for sent, receive, _ in pending])
            cancel.raise_if_cancelled()
        return Transfer(moved, time.perf_counter() - started, time.process_time() - cpu)

    def _drain(self, pending: list[tuple[Any, Any]]) -> None:
        """Collect the answers still in flight, briefly (the connection stays usable for the
        cleanup); a slow server's are dropped with the connection, whose socket is closed."""
        from sambatune.bench.smb_bulk import DRAIN_SECONDS

        deadline = time.monotonic() + DRAIN_SECONDS
        for sent, receive in pending:
            if not sent.response_event.wait(max(deadline - time.monotonic(), 0.0)):
                self.abort()
                return
            with contextlib.suppress(Exception):
                receive(sent)

    def abort(self) -> None:
        """Close the socket under everything in flight: the connection cannot be used again."""
        connection = self.connection
        if connection is not None and connection.transport is not None:
            with contextlib.suppress(Exception):
                # A reset: a graceful close would deliver what is still queued first.
                connection.transport.reset()

    @property
    def usable(self) -> bool:
        connection = self.connection
        return bool(
            connection is not None
            and connection.transport is not None
            and connection.transport.connected
            and connection._t_exc is None
            and self.tree is not None
        )

    def remove(self, name: str) -> None:
        """Delete ``name``: on this connection, or on a new one when a cancel closed this one."""
        if self.usable:
            try:
                self.delete(name)
                return
            except Exception as exc:
                if not connection_lost(exc):
                    raise
                self.abort()
        with SmbProbeConnection(
            self.server, self.share, self.port, self.login, timeout=self.timeout, security=self.security
        ) as fresh:
            fresh.delete(name)


def connection_lost(exc: BaseException) -> bool:
    """Whether ``exc`` says the connection itself is gone (a broken pipe, a reset, a closed
    socket), which the connection's own state may not show yet: its receiving thread
    notices the cut a moment after the sending call that hit it."""
    from smbprotocol.exceptions import SMBConnectionClosed

    return isinstance(exc, (OSError, SMBConnectionClosed))


def _answered(sent: Any, cancel: CancelToken) -> bool:
    """Wait for the answer to ``sent``; False as soon as ``cancel`` is set."""
    from sambatune.bench.smb_bulk import CANCEL_POLL

    while not sent.response_event.wait(CANCEL_POLL):
        if cancel.cancelled:
            return False
    return True


def _explained(exc: BaseException, message: str) -> SambaTuneError:
    return SambaTuneError(message, details=f"{type(exc).__name__}: {exc}")
