"""Reading the files an smb.conf includes: through a Transport, or straight from this disk.

Each included file becomes its own :class:`SmbConfDocument` (its own path, its own
line numbers), and :func:`sambatune.conf.effective.effective_view` links them in at
the ``include =`` line. Readers are callables ``path -> document | (status, detail)``.

An include can name anything, so only regular files are read (a device, FIFO or
directory is reported, never opened), each of at most :data:`FILE_SIZE_LIMIT` bytes
and all of them together at most :data:`INCLUDES_SIZE_LIMIT`.
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING

from sambatune.conf.document import SmbConfDocument
from sambatune.conf.effective import IncludeStatus, include_key
from sambatune.errors import SambaTuneError
from sambatune.remote.regular_file import READ_LIMIT, FileRead, read_local

if TYPE_CHECKING:  # the CLI's local path must not pay for the transport stack
    from sambatune.remote.transport import Transport

MIB = 1024 * 1024
#: The most SambaTune reads of one smb.conf file. Real ones are far smaller: the
#: 50,000-line file of bench/conf_parse.py (3,500 shares) is 1.2 MiB, so 8 MiB is some
#: 24,000 such shares or 340,000 lines, which lint reads in about 1.3 s and 170 MB,
#: and which SSH brings over in a second on a 100 Mbit/s link. Samba itself has no
#: limit; this one keeps a sparse giant from eating the memory.
FILE_SIZE_LIMIT = READ_LIMIT
#: The most read across all the includes of one configuration: includes nest 100 deep,
#: and 100 files of 8 MiB would need some 17 GB to lint.
INCLUDES_SIZE_LIMIT = 16 * MIB

IncludeResult = SmbConfDocument | tuple[IncludeStatus, str]


def size_text(size: int) -> str:
    return f"{size // MIB} MiB"


class _Includes(abc.ABC):
    """Each file read once and kept; the bytes read so far count against the budget."""

    def __init__(self) -> None:
        self.documents: dict[str, IncludeResult] = {}
        self.total = 0

    def __call__(self, path: str) -> IncludeResult:
        key = include_key(path)  # every spelling of one file is read once
        if key not in self.documents:
            self.documents[key] = self._read(path)
        return self.documents[key]

    def already_read(self, path: str) -> IncludeResult:
        """What was read for ``path`` so far, reading nothing (a GUI thread's question)."""
        return self.documents.get(include_key(path), ("not-followed", "not read yet"))

    @abc.abstractmethod
    def _fetch(self, path: str, limit: int) -> FileRead | tuple[IncludeStatus, str]: ...

    def _read(self, path: str) -> IncludeResult:
        left = INCLUDES_SIZE_LIMIT - self.total
        limit = min(FILE_SIZE_LIMIT, left)
        found = self._fetch(path, limit)
        if not isinstance(found, FileRead):  # the reader's own (status, detail)
            return found
        if found.kind == "file":
            self.total += len(found.data)
            return SmbConfDocument(found.data, path)
        if found.kind == "missing":
            return "missing", "no such file"
        if found.kind == "too large":
            if limit < FILE_SIZE_LIMIT:
                return "too-large", (f"the included files together pass {size_text(INCLUDES_SIZE_LIMIT)}")
            return "too-large", f"larger than {size_text(FILE_SIZE_LIMIT)}"
        return "not-regular", found.kind


class TransportIncludes(_Includes):
    """Reads includes on a target (local or SSH)."""

    def __init__(self, transport: Transport, *, sudo: bool = False) -> None:
        super().__init__()
        self.transport = transport
        self.sudo = sudo

    def _fetch(self, path: str, limit: int) -> FileRead | tuple[IncludeStatus, str]:
        try:
            found = self.transport.read_regular_file(path, limit, sudo=self.sudo)
        except SambaTuneError as error:
            return "unreadable", error.message
        if found.kind == "missing":
            return "missing", f"no such file on {self.transport.label}"
        return found


class LocalIncludes(_Includes):
    """Reads includes from this computer's disk with plain file I/O (no subprocess)."""

    def _fetch(self, path: str, limit: int) -> FileRead | tuple[IncludeStatus, str]:
        try:
            return read_local(path, limit)
        except OSError as error:
            return "unreadable", error.strerror or str(error)
