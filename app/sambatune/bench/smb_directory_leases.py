"""Directory leases in SambaTune's SMB client: list a directory once, answer again from
the listing kept here, until the server says the directory changed.

This is what current Windows clients do against a server that offers directory leases
(Samba 4.22 and later, ``smb3 directory leases``), so the small-file test's list step
measures a server with and without them from here:

- the client says at negotiate that it takes directory leases (capability 0x20);
- a listing opens the directory with a lease request (SMB2_CREATE_REQUEST_LEASE_V2, read
  and handle caching) and, when the server grants read caching, keeps the handle open
  and the names here;
- the server breaks the lease when anything changes in the directory (an unsolicited
  LEASE_BREAK notification, message id 0xFFFFFFFFFFFFFFFF). The transport hands it to
  :meth:`DirectoryListings.lease_broken` from smbprotocol's receive thread: the listing
  is dropped at once, and a break that takes handle caching away closes the kept
  handle and is acknowledged from a thread of its own (the request that caused the
  break may be one of ours, waiting on the server, which waits for this answer).

Encrypted sessions ask for no lease: their notifications arrive encrypted, and
smbprotocol's receive thread takes an unsolicited message for a fatal error.
"""

from __future__ import annotations

import secrets
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sambatune.json_fields import FieldsAsJson

#: [MS-SMB2] 2.2.3: the client takes leases, and leases on directories.
CAP_LEASING = 0x02
CAP_DIRECTORY_LEASING = 0x20
#: 2.2.13.2.8 lease states, and what a listing asks for.
READ_CACHING, HANDLE_CACHING = 0x01, 0x02
ASKED_STATE = READ_CACHING | HANDLE_CACHING
#: 2.2.13: the oplock level that says "see the lease context".
OPLOCK_LEVEL_LEASE = 0xFF
#: 2.2.23.2 Lease Break Notification: after the 64-byte header, 44 bytes.
OPLOCK_BREAK = 0x12
UNSOLICITED = 0xFFFFFFFFFFFFFFFF
ACK_REQUIRED = 0x01
_NOTIFICATION = struct.Struct("<HHI16sIIIII")


@dataclass(frozen=True)
class LeaseBreak:
    key: bytes
    new_state: int
    ack_required: bool


def parse_lease_break(body: bytes) -> LeaseBreak | None:
    """The lease break notification in a frame's body (after the header); None if it is
    not one (an oplock break, which SambaTune never asks for)."""
    if len(body) < _NOTIFICATION.size:
        return None
    size, _epoch, flags, key, _current, new_state, *_ = _NOTIFICATION.unpack_from(body)
    if size != _NOTIFICATION.size:
        return None
    return LeaseBreak(key, new_state, bool(flags & ACK_REQUIRED))


@dataclass
class _Listing:
    key: bytes
    handle: Any  # the open directory, kept while the lease lets us
    names: list[str] | None = None  # None: not read yet, or broken: ask the server again
    broken: bool = False


@dataclass
class ListingCounts(FieldsAsJson):
    from_server: int = 0
    from_cache: int = 0
    granted: int = 0  # listings whose open got read caching
    breaks: int = 0


@dataclass
class DirectoryListings:
    """The listings this connection holds a directory lease for, by directory name."""

    #: Opens ``name`` with a lease request for ``key``: (handle, granted lease state).
    open_leased: Callable[[str, bytes], tuple[Any, int]]
    #: Every name in an open directory.
    read_names: Callable[[Any], list[str]]
    #: Sends the acknowledgement of a break of ``key`` to ``state``.
    acknowledge: Callable[[bytes, int], None]
    counts: ListingCounts = field(default_factory=ListingCounts)
    _by_name: dict[str, _Listing] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _fetching: threading.Lock = field(default_factory=threading.Lock)

    def names(self, directory: str) -> list[str]:
        # One listing fetched at a time; the state lock is never held across a request,
        # since the receive thread that answers it takes that lock for a break.
        with self._fetching:
            with self._lock:
                held = self._by_name.get(directory)
                if held is not None and held.names is not None and not held.broken:
                    self.counts.from_cache += 1
                    return list(held.names)
                if held is not None:
                    self._by_name.pop(directory)
            key = secrets.token_bytes(16)
            if held is not None:
                _close(held.handle)
            handle, state = self.open_leased(directory, key)
            listing = _Listing(key, handle)
            if state & READ_CACHING:
                with self._lock:  # from now on a break of ``key`` finds it
                    self._by_name[directory] = listing
            try:
                names = self.read_names(handle)
            except BaseException:
                with self._lock:
                    self._by_name.pop(directory, None)
                _close(handle)
                raise
            with self._lock:
                self.counts.from_server += 1
                if state & READ_CACHING:
                    self.counts.granted += 1
                    listing.names = names  # kept only while no break came meanwhile
            if not state & READ_CACHING:
                _close(handle)
            return list(names)

    def lease_broken(self, notice: LeaseBreak) -> None:
        """From the receive thread: never waits on the server."""
        with self._lock:
            self.counts.breaks += 1
            held = next((h for h in self._by_name.values() if h.key == notice.key), None)
            if held is not None:
                held.broken = True
            release = held is not None and not notice.new_state & HANDLE_CACHING
            if release:
                self._by_name = {n: h for n, h in self._by_name.items() if h is not held}
        if release or notice.ack_required:
            handle = held.handle if release and held is not None else None
            threading.Thread(target=self._answer, args=(notice, handle), daemon=True).start()

    def _answer(self, notice: LeaseBreak, handle: Any) -> None:
        if handle is not None:
            _close(handle)  # the last open with the key: the lease ends with it
            return
        try:
            self.acknowledge(notice.key, notice.new_state)
        except Exception:
            pass

    def forget(self, directory: str) -> None:
        """Close the kept handle of ``directory`` (before removing it)."""
        with self._lock:
            held = self._by_name.pop(directory, None)
        if held is not None:
            _close(held.handle)


def _close(handle: Any) -> None:
    try:
        handle.close()
    except Exception:
        pass


def lease_request_context(key: bytes) -> Any:
    """The create context that asks for a read- and handle-caching lease with ``key``."""
    from smbprotocol.create_contexts import (
        CreateContextName,
        SMB2CreateContextRequest,
        SMB2CreateRequestLeaseV2,
    )

    lease = SMB2CreateRequestLeaseV2()
    lease["lease_key"] = key
    lease["lease_state"] = ASKED_STATE
    lease["parent_lease_key"] = b"\x00" * 16
    lease["epoch"] = b"\x00\x00"
    context = SMB2CreateContextRequest()
    context["buffer_name"] = CreateContextName.SMB2_CREATE_REQUEST_LEASE_V2
    context["buffer_data"] = lease
    return context


def granted_state(contexts: list[Any] | None) -> int:
    """The lease state in a create's answer; 0 when the server granted none."""
    from smbprotocol.create_contexts import SMB2CreateResponseLeaseV2

    for context in contexts or []:
        if isinstance(context, SMB2CreateResponseLeaseV2):
            return int(context["lease_state"].get_value())
    return 0


def acknowledgement(key: bytes, state: int) -> Any:
    """[MS-SMB2] 2.2.24.2 Lease Break Acknowledgment."""
    from collections import OrderedDict

    from smbprotocol.structure import BytesField, IntField, Structure

    class LeaseBreakAcknowledgement(Structure):
        COMMAND = OPLOCK_BREAK

        def __init__(self) -> None:
            self.fields = OrderedDict(
                [
                    ("structure_size", IntField(size=2, default=36)),
                    ("reserved", IntField(size=2)),
                    ("flags", IntField(size=4)),
                    ("lease_key", BytesField(size=16)),
                    ("lease_state", IntField(size=4)),
                    ("lease_duration", IntField(size=8)),
                ]
            )
            super().__init__()

    message = LeaseBreakAcknowledgement()
    message["lease_key"] = key
    message["lease_state"] = state
    return message
