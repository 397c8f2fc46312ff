"""Small-file operations as SMB2 compounds packed by hand: one frame, one round trip.

A program that copies a small file asks CREATE, WRITE, CLOSE one after the other: three
round trips. Windows sends such steps as one related compound (each request after the
first works on the file the CREATE opened, named by an all-ones FileId), and the server
answers them in one frame. Through smbprotocol each request is also built and each
answer parsed as a tree of Python structures, about 0.3 ms of this computer's CPU a
request: with one file in flight SambaTune created 0.54x as many files a second as
``smbclient mput``, and eight in flight gained little, the client's CPU being the limit.

Here each file operation is one compound frame packed with ``struct`` and answered in one
frame that :class:`FramedTcp` (the probe's transport) hands to :meth:`Chain.answered`:

* create and write: CREATE (a new file) + WRITE + CLOSE;
* stat: CREATE (attributes) + CLOSE, the size read from the CREATE's answer;
* read: CREATE + READ + CLOSE;
* rename: CREATE (DELETE access) + SET_INFO (FileRenameInformation) + CLOSE;
* list: CREATE (the directory) + QUERY_DIRECTORY (names, a 1 MiB answer) + CLOSE, the
  names taken from the answer with ``struct``;
* delete: CREATE (delete on close) + CLOSE, many in flight from one thread.

A signed session signs each request of a compound on its own (over its header, body
and the padding up to the next) and checks each answer's signature the same way, with
the session's algorithm (HMAC-SHA256, AES-CMAC or AES-GMAC). Encrypted sessions keep
smbprotocol's path (:class:`~sambatune.bench.smb_file_ops.SmbFileOps`).
"""

from __future__ import annotations

import struct
from collections import deque
from collections.abc import Sequence
from typing import Any

from sambatune.bench.smb_bulk import (
    CREDIT_BYTES,
    HEADER,
    PROTOCOL_ID,
    READ_REQUEST,
    READ_RESPONSE,
    WRITE_REQUEST,
    ProbeRequests,
    Signer,
    _Slot,
    credit_charge,
)
from sambatune.errors import SambaTuneError

SMB2_CREATE, SMB2_CLOSE, SMB2_READ, SMB2_WRITE, SMB2_QUERY_DIRECTORY, SMB2_SET_INFO = (
    0x5, 0x6, 0x8, 0x9, 0xE, 0x11,
)  # fmt: skip
FLAG_RELATED, FLAG_SIGNED = 0x4, 0x8
#: StructureSize, SecurityFlags, RequestedOplockLevel, ImpersonationLevel,
#: SmbCreateFlags, Reserved, DesiredAccess, FileAttributes, ShareAccess,
#: CreateDisposition, CreateOptions, NameOffset, NameLength, CreateContextsOffset,
#: CreateContextsLength; the name follows.
CREATE_REQUEST = struct.Struct("<HBBIQQIIIIIHHII")
#: EndofFile in a CREATE answer's body (after StructureSize ... AllocationSize).
CREATE_END_OF_FILE = struct.Struct("<48xQ")
#: StructureSize, Flags, Reserved, FileId.
CLOSE_REQUEST = struct.Struct("<HHI16s")
#: StructureSize, InfoType, FileInfoClass, BufferLength, BufferOffset, Reserved,
#: AdditionalInformation, FileId; the buffer follows.
SET_INFO_REQUEST = struct.Struct("<HBBIHHI16s")
#: FileRenameInformation (SMB2 form): ReplaceIfExists, Reserved, RootDirectory,
#: FileNameLength; the new name follows.
RENAME_INFORMATION = struct.Struct("<B7xQI")
#: StructureSize, FileInformationClass, Flags, FileIndex, FileId, FileNameOffset,
#: FileNameLength, OutputBufferLength; the search pattern follows.
QUERY_DIRECTORY_REQUEST = struct.Struct("<HBBI16sHHI")
#: StructureSize, OutputBufferOffset, OutputBufferLength.
QUERY_DIRECTORY_RESPONSE = struct.Struct("<HHI")
#: FILE_NAMES_INFORMATION: NextEntryOffset, FileIndex, FileNameLength; the name follows.
NAMES_ENTRY = struct.Struct("<III")
FILE_NAMES_INFORMATION, RESTART_SCANS = 0x0C, 0x01
#: A listing's answer: 16 credits' worth. One that comes back this full minus the room of
#: the longest entry may have left names out, and is asked again the long way.
LISTING_BYTES = 16 * CREDIT_BYTES
LONGEST_ENTRY = NAMES_ENTRY.size + 255 * 2 + 8
#: Credits a listing's compound costs (CREATE, QUERY_DIRECTORY, CLOSE).
LISTING_CHARGE = credit_charge(LISTING_BYTES) + 2
#: A related request's FileId: the file the CREATE before it opened.
OPENED = b"\xff" * 16
IMPERSONATION = 2
GENERIC_READ, GENERIC_WRITE, DELETE, READ_ATTRIBUTES = 0x80000000, 0x40000000, 0x00010000, 0x00000080
LIST_DIRECTORY = 0x00000001
SHARE_ALL = 0x7
FILE_OPEN, FILE_CREATE = 1, 2
DIRECTORY, NON_DIRECTORY, DELETE_ON_CLOSE = 0x00000001, 0x00000040, 0x00001000
FILE_ATTRIBUTE_NORMAL = 0x80
INFO_FILE, FILE_RENAME_INFORMATION = 1, 10
STATUS_SUCCESS = 0
STATUS_PENDING = 0x00000103
STATUS_NO_MORE_FILES = 0x80000006
#: Gone already: nothing to delete.
GONE = {0xC0000034, 0xC000003A}  # OBJECT_NAME_NOT_FOUND, OBJECT_PATH_NOT_FOUND
#: Deletes in flight when a whole directory is emptied.
IN_FLIGHT = 32


class Chain:
    """One compound in flight: each request's answer (status, body) by message id."""

    def __init__(self, what: str, ids: Sequence[int], signer: Signer | None) -> None:
        self.what = what
        self.ids = tuple(ids)
        self.signer = signer
        self.answers: dict[int, tuple[int, bytes]] = {}
        self.forged: int | None = None  # the message id of an answer whose signature failed
        self.slot = _Slot(0, memoryview(b""), None, on_frame=self.answered)

    def answered(self, message_id: int, head: bytes, rest: memoryview) -> int:
        """Take the answers in one frame (a request that went asynchronous answers later in
        a frame of its own); returns the credits granted after the first answer."""
        header = HEADER.unpack_from(head)
        # (message id, status, NextCommand, where its header starts in ``rest``)
        found = [(message_id, header[3], header[7], -64)]
        extra = 0
        offset = header[7] - 64
        while found[-1][2] and 0 <= offset <= len(rest) - 64:
            header = HEADER.unpack_from(rest, offset)
            found.append((header[8], header[3], header[7], offset))
            extra += header[5]
            offset += header[7]
        for answer_id, status, next_command, at in found:
            if status == STATUS_PENDING:
                continue
            end = at + next_command if next_command else len(rest)
            body = bytes(rest[at + 64 : end])
            if self.signer is not None:
                raw = head if at < 0 else bytes(rest[at : at + 64])
                if not self._signed(raw, body, answer_id):
                    self.forged = answer_id
            self.answers[answer_id] = (status, body)
        if self.answers.keys() >= set(self.ids):
            self.slot.done.set()
        return extra

    def _signed(self, header: bytes, body: bytes, message_id: int) -> bool:
        assert self.signer is not None
        if not HEADER.unpack_from(header)[6] & FLAG_SIGNED:
            return False
        expected = self.signer.sign(header[:48] + bytes(16), body, message_id=message_id, response=True)
        return expected == header[48:64]

    def status(self, index: int) -> int:
        return self.answers[self.ids[index]][0]

    def body(self, index: int) -> bytes:
        return self.answers[self.ids[index]][1]

    def refused(self, status: int) -> RefusedRequest:
        return RefusedRequest(status, f"The SMB server refused to {self.what} (status 0x{status:08x}).")

    def unreadable(self, problem: str) -> SambaTuneError:
        """The server said yes, but its answer cannot be what SMB2 says it is."""
        return SambaTuneError(
            f"The SMB server's answer to {self.what} cannot be read: {problem}.",
            details="The server, or something between it and this computer, sent a broken answer.",
        )


class Compounds(ProbeRequests):
    """Small-file operations on one unencrypted session of the probe's own transport,
    each one compound; safe to call from several threads at once."""

    def __init__(self, connection: Any, session: Any, tree: Any) -> None:
        super().__init__(connection, session, tree)
        self.signer = Signer.for_session(connection, session)

    # -- the operations ----------------------------------------------------------------
    def create_and_write(self, name: str, data: bytes) -> None:
        """A new file (never an existing one replaced), written whole, closed."""
        requests = [self._create(name, GENERIC_WRITE, FILE_CREATE, NON_DIRECTORY)]
        if data:
            write = WRITE_REQUEST.pack(49, 64 + WRITE_REQUEST.size, len(data), 0, OPENED, 0, 0, 0, 0, 0)
            requests.append((SMB2_WRITE, write + data, credit_charge(len(data))))
        requests.append(_close())
        chain = self.run(f"create and write {name}", requests)
        self._check(chain)

    def stat(self, name: str) -> int:
        """The file's size, from the answer to an open for its attributes (then closed)."""
        chain = self.run(
            f"stat {name}", [self._create(name, READ_ATTRIBUTES, FILE_OPEN, NON_DIRECTORY), _close()]
        )
        self._check(chain)
        body = chain.body(0)
        if len(body) < CREATE_END_OF_FILE.size:
            raise chain.unreadable(f"the open's answer has {len(body)} bytes")
        return int(CREATE_END_OF_FILE.unpack_from(body)[0])

    def read_whole(self, name: str, size: int) -> int:
        """Open, read ``size`` bytes (one request: small files), close; the bytes read."""
        requests = [self._create(name, GENERIC_READ, FILE_OPEN, NON_DIRECTORY), _close()]
        if size:
            read = READ_REQUEST.pack(49, 0x50, 0, size, 0, OPENED, 0, 0, 0, 0, 0, 0)
            requests.insert(1, (SMB2_READ, read, credit_charge(size)))
        chain = self.run(f"read {name}", requests)
        self._check(chain)
        if not size:
            return 0
        body = chain.body(1)
        if len(body) < READ_RESPONSE.size:
            return 0
        _, data_offset, _, data_length, _, _ = READ_RESPONSE.unpack_from(body)
        return min(data_length, max(0, len(body) - (data_offset - 64)))

    def rename(self, name: str, new_name: str) -> None:
        """Rename ``name`` to ``new_name`` (both from the share's root), never over a file."""
        encoded = new_name.encode("utf-16-le")
        info = RENAME_INFORMATION.pack(0, 0, len(encoded)) + encoded
        set_info = SET_INFO_REQUEST.pack(
            33, INFO_FILE, FILE_RENAME_INFORMATION, len(info), 64 + SET_INFO_REQUEST.size, 0, 0, OPENED
        )
        chain = self.run(
            f"rename {name}",
            [
                self._create(name, DELETE, FILE_OPEN, NON_DIRECTORY),
                (SMB2_SET_INFO, set_info + info, 1),
                _close(),
            ],
        )
        self._check(chain)

    def list_directory(self, name: str) -> list[str] | None:
        """The names in directory ``name`` (without . and ..), or None when they may not
        all have fitted in one answer (a very large directory: ask the long way)."""
        pattern = "*".encode("utf-16-le")
        query = QUERY_DIRECTORY_REQUEST.pack(
            33, FILE_NAMES_INFORMATION, RESTART_SCANS, 0, OPENED, 64 + QUERY_DIRECTORY_REQUEST.size,
            len(pattern), LISTING_BYTES,
        )  # fmt: skip
        chain = self.run(
            f"list {name}",
            [
                self._create(name, LIST_DIRECTORY | READ_ATTRIBUTES, FILE_OPEN, DIRECTORY),
                (SMB2_QUERY_DIRECTORY, query + pattern, credit_charge(LISTING_BYTES)),
                _close(),
            ],
        )
        if chain.status(1) == STATUS_NO_MORE_FILES and chain.status(0) == STATUS_SUCCESS:
            return []
        self._check(chain)
        body = chain.body(1)
        if len(body) < QUERY_DIRECTORY_RESPONSE.size:
            raise chain.unreadable(f"the listing has {len(body)} bytes")
        _, offset, length = QUERY_DIRECTORY_RESPONSE.unpack_from(body)
        if length > LISTING_BYTES - LONGEST_ENTRY:
            return None
        start = offset - 64
        if start < 0 or start + length > len(body):
            raise chain.unreadable("its names lie outside it")
        return _names(chain, memoryview(body)[start : start + length])

    def delete(self, name: str) -> None:
        """Delete the file ``name`` (gone already is fine)."""
        self._finish_delete(self._send_delete(name))

    def delete_all(self, names: Sequence[str], in_flight: int = IN_FLIGHT) -> None:
        """Delete every file in ``names`` with ``in_flight`` deletes at once (gone already
        is fine); raises on the first refusal, after those in flight were answered."""
        pending: deque[Chain] = deque()
        failure: SambaTuneError | None = None
        for name in names:
            while len(pending) >= in_flight:
                failure = failure or self._finish_delete(pending.popleft(), raise_error=False)
            if failure is not None:
                break
            pending.append(self._send_delete(name))
        while pending:
            failure = failure or self._finish_delete(pending.popleft(), raise_error=False)
        if failure is not None:
            raise failure

    # -- compounds -----------------------------------------------------------------------
    def run(self, what: str, requests: Sequence[tuple[int, bytes, int]]) -> Chain:
        """Send ``requests`` (command, body, credit charge) as one related compound and
        wait for all its answers."""
        chain = self.send(what, requests)
        self._wait(chain)
        return chain

    def send(self, what: str, requests: Sequence[tuple[int, bytes, int]]) -> Chain:
        first = self.take_message_ids(sum(charge for _, _, charge in requests), what)
        ids, parts, message_id = [], [], first
        for index, (command, body, charge) in enumerate(requests):
            last = index == len(requests) - 1
            length = 64 + len(body)
            padded = length if last else (length + 7) & ~7  # the next starts 8-aligned
            flags = self.flags | (FLAG_RELATED if index else 0) | (FLAG_SIGNED if self.signer else 0)
            ids.append(message_id)
            header = HEADER.pack(
                PROTOCOL_ID, 64, charge, 0, command, charge, flags, 0 if last else padded,
                message_id, 0, self.tree_id, self.session_id, bytes(16),
            )  # fmt: skip
            padding = bytes(padded - length)
            if self.signer is not None:
                # Each request signed alone, its padding to the next one included.
                signature = self.signer.sign(header, body, padding, message_id=message_id, response=False)
                header = header[:48] + signature
            parts += [header, body, padding]
            message_id += charge
        chain = Chain(what, ids, self.signer)
        for answer_id in ids:
            self.transport.expect(answer_id, chain.slot)
        message = b"".join(parts)
        try:
            self.transport.send_raw(struct.pack(">L", len(message)) + message)
        except BaseException:
            for answer_id in ids:
                self.transport.forget(answer_id)
            raise
        return chain

    def _create(self, name: str, access: int, disposition: int, options: int) -> tuple[int, bytes, int]:
        encoded = name.encode("utf-16-le")
        create = CREATE_REQUEST.pack(
            57, 0, 0, IMPERSONATION, 0, 0, access, FILE_ATTRIBUTE_NORMAL, SHARE_ALL, disposition, options,
            64 + CREATE_REQUEST.size, len(encoded), 0, 0,
        )  # fmt: skip
        return SMB2_CREATE, create + encoded, 1

    def _check(self, chain: Chain) -> None:
        """Raise for the first request the server refused (the CREATE's refusal names the
        cause; the related requests after it then fail too)."""
        for index in range(len(chain.ids)):
            status = chain.status(index)
            if status != STATUS_SUCCESS:
                raise chain.refused(status)

    def _send_delete(self, name: str) -> Chain:
        return self.send(
            f"delete {name}",
            [
                self._create(name, DELETE | READ_ATTRIBUTES, FILE_OPEN, NON_DIRECTORY | DELETE_ON_CLOSE),
                _close(),
            ],
        )

    def _wait(self, chain: Chain) -> None:
        self.wait(chain.slot)
        if chain.slot.error is not None:
            raise chain.slot.error
        if chain.forged is not None:
            raise SambaTuneError(f"An SMB answer to {chain.what} failed its signature check.")

    def _finish_delete(self, chain: Chain, *, raise_error: bool = True) -> RefusedRequest | None:
        self._wait(chain)
        status = chain.status(0)
        if status == STATUS_SUCCESS or status in GONE:
            return None
        error = chain.refused(status)
        if raise_error:
            raise error
        return error


class RefusedRequest(SambaTuneError):
    """The server answered a request with an error status (``status``)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _names(chain: Chain, entries: memoryview) -> list[str]:
    """The names in a FILE_NAMES_INFORMATION listing (without . and ..)."""
    names: list[str] = []
    at = 0
    while True:
        if at + NAMES_ENTRY.size > len(entries):
            raise chain.unreadable("an entry runs past its end")
        following, _, size = NAMES_ENTRY.unpack_from(entries, at)
        start = at + NAMES_ENTRY.size
        if start + size > len(entries):
            raise chain.unreadable("a name runs past its end")
        try:
            text = bytes(entries[start : start + size]).decode("utf-16-le")
        except UnicodeDecodeError:
            raise chain.unreadable("a name is not UTF-16") from None
        if text not in (".", ".."):
            names.append(text)
        if not following:
            return names
        at += following


def _close() -> tuple[int, bytes, int]:
    return SMB2_CLOSE, CLOSE_REQUEST.pack(24, 0, 0, OPENED), 1
