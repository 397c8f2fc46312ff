"""Delete many files fast: one compounded CREATE (delete on close) and CLOSE per file.

Removing what a small-file test made is its cancel's longest part. Through smbprotocol a
delete costs two requests built and two answers parsed in Python, about 0.9 ms of this
computer's CPU a file, so a cancel after a few thousand files waited seconds. Here each
file is one frame of two related requests packed by hand, with many in flight on the
probe's own transport (:class:`FramedTcp` hands their answers to :meth:`_Delete.answered`),
as a Windows client deletes a file. Sessions that sign or encrypt keep the smbprotocol
path (:meth:`SmallFileOps.remove_tree`).
"""

from __future__ import annotations

import struct
from collections import deque

from sambatune.bench.smb_bulk import HEADER, PROTOCOL_ID, FramedTcp, ProbeRequests, _Slot
from sambatune.errors import SambaTuneError

SMB2_CREATE = 0x0005
SMB2_CLOSE = 0x0006
FLAG_RELATED = 0x4
#: StructureSize, SecurityFlags, RequestedOplockLevel, ImpersonationLevel,
#: SmbCreateFlags, Reserved, DesiredAccess, FileAttributes, ShareAccess,
#: CreateDisposition, CreateOptions, NameOffset, NameLength, CreateContextsOffset,
#: CreateContextsLength; the name follows.
CREATE_REQUEST = struct.Struct("<HBBIQQIIIIIHHII")
#: StructureSize, Flags, Reserved, FileId (all ones: the file the CREATE before opened).
CLOSE_REQUEST = struct.Struct("<HHI16s")
IMPERSONATION = 2
DELETE_AND_READ_ATTRIBUTES = 0x00010000 | 0x00000080
SHARE_ALL = 0x7
FILE_OPEN = 1
NON_DIRECTORY_DELETE_ON_CLOSE = 0x00000040 | 0x00001000
STATUS_SUCCESS = 0
STATUS_PENDING = 0x00000103
#: Gone already: nothing to delete.
GONE = {0xC0000034, 0xC000003A}  # OBJECT_NAME_NOT_FOUND, OBJECT_PATH_NOT_FOUND
#: Deletes in flight.
IN_FLIGHT = 32


class _Delete:
    """One file's CREATE and CLOSE in flight: which answers came, with what status."""

    def __init__(self, transport: FramedTcp, name: str, create_id: int) -> None:
        self.transport = transport
        self.name = name
        self.create_id = create_id
        self.statuses: dict[int, int] = {}
        self.slot = _Slot(0, memoryview(b""), None, on_frame=self.answered)

    def answered(self, message_id: int, head: bytes, rest: memoryview) -> int:
        """Read the answers in one frame (the CLOSE's may come in a frame of its own when
        the CREATE went asynchronous); returns the credits granted after the first."""
        status, next_command = _status_and_next(head, 0)
        extra = 0
        answers = [(message_id, status)]
        offset = next_command - 64
        while next_command and 0 <= offset <= len(rest) - 64:
            header = HEADER.unpack_from(rest, offset)
            next_command = header[7]
            answers.append((header[8], header[3]))
            extra += header[5]
            offset += next_command
        for answer_id, answer_status in answers:
            if answer_status != STATUS_PENDING:
                self.statuses[answer_id] = answer_status
                self.transport.forget(answer_id)
        if {self.create_id, self.create_id + 1} <= self.statuses.keys():
            self.slot.done.set()
        return extra

    def error(self) -> SambaTuneError | None:
        status = self.statuses.get(self.create_id)
        if status == STATUS_SUCCESS or status in GONE:
            return None
        return SambaTuneError(f"The SMB server refused to delete {self.name} (status 0x{status or 0:08x}).")


def _status_and_next(head: bytes, offset: int) -> tuple[int, int]:
    header = HEADER.unpack_from(head, offset)
    return header[3], header[7]


class LeanDeletes(ProbeRequests):
    """Deletes on one unsigned, unencrypted session of the probe's own transport."""

    def delete_all(self, names: list[str], in_flight: int = IN_FLIGHT) -> None:
        """Delete every file in ``names`` (gone already is fine); raises on the first
        refusal, after the deletes in flight have been answered."""
        pending: deque[_Delete] = deque()
        failure: SambaTuneError | None = None
        for name in names:
            while len(pending) >= in_flight:
                failure = failure or self._finish(pending.popleft())
            if failure is not None:
                break
            pending.append(self._send(name))
        while pending:
            failure = failure or self._finish(pending.popleft())
        if failure is not None:
            raise failure

    def _send(self, name: str) -> _Delete:
        create_id = self.take_message_ids(2, "a delete (CREATE and CLOSE)")
        encoded = name.encode("utf-16-le")
        create = CREATE_REQUEST.pack(
            57, 0, 0, IMPERSONATION, 0, 0, DELETE_AND_READ_ATTRIBUTES, 0, SHARE_ALL, FILE_OPEN,
            NON_DIRECTORY_DELETE_ON_CLOSE, 64 + CREATE_REQUEST.size, len(encoded), 0, 0,
        ) + encoded  # fmt: skip
        first = 64 + len(create)
        padded = (first + 7) & ~7  # the next request starts on an 8-byte boundary
        ids = (self.tree_id, self.session_id, bytes(16))
        message = b"".join(
            (
                HEADER.pack(PROTOCOL_ID, 64, 1, 0, SMB2_CREATE, 1, self.flags, padded, create_id, 0, *ids),
                create,
                bytes(padded - first),
                HEADER.pack(
                    PROTOCOL_ID, 64, 1, 0, SMB2_CLOSE, 1, self.flags | FLAG_RELATED, 0, create_id + 1, 0, *ids
                ),
                CLOSE_REQUEST.pack(24, 0, 0, b"\xff" * 16),
            )
        )
        delete = _Delete(self.transport, name, create_id)
        self.transport.expect(create_id, delete.slot)
        self.transport.expect(create_id + 1, delete.slot)
        try:
            self.transport.send_raw(struct.pack(">L", len(message)) + message)
        except BaseException:
            self.transport.forget(create_id)
            self.transport.forget(create_id + 1)
            raise
        return delete

    def _finish(self, delete: _Delete) -> SambaTuneError | None:
        self.wait(delete.slot)
        if delete.slot.error is not None:
            raise delete.slot.error
        return delete.error()
