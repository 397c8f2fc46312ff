"""Reading the files an smb.conf includes: through a Transport, or straight from this disk.

Each included file becomes its own :class:`SmbConfDocument` (its own path, its own
line numbers), and :func:`sambatune.conf.effective.effective_view` links them in at
the ``include =`` line. Readers are callables ``path -> document | (status, detail)``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from sambatune.conf.document import SmbConfDocument
from sambatune.conf.effective import IncludeStatus
from sambatune.errors import SambaTuneError

if TYPE_CHECKING:  # the CLI's local path must not pay for the transport stack
    from sambatune.remote.transport import Transport


class TransportIncludes:
    """Reads includes on a target (local or SSH); each file is read once and kept."""

    def __init__(self, transport: Transport, *, sudo: bool = False) -> None:
        self.transport = transport
        self.sudo = sudo
        self.documents: dict[str, SmbConfDocument | tuple[IncludeStatus, str]] = {}

    def __call__(self, path: str) -> SmbConfDocument | tuple[IncludeStatus, str]:
        if path not in self.documents:
            self.documents[path] = self._read(path)
        return self.documents[path]

    def _read(self, path: str) -> SmbConfDocument | tuple[IncludeStatus, str]:
        try:
            return SmbConfDocument(self.transport.read_file(path, sudo=self.sudo), path)
        except SambaTuneError as error:
            if not self.transport.file_exists(path, sudo=self.sudo):
                return "missing", f"no such file on {self.transport.label}"
            return "unreadable", error.message


class LocalIncludes:
    """Reads includes from this computer's disk with plain file I/O (no subprocess)."""

    def __init__(self) -> None:
        self.documents: dict[str, SmbConfDocument | tuple[IncludeStatus, str]] = {}

    def __call__(self, path: str) -> SmbConfDocument | tuple[IncludeStatus, str]:
        if path not in self.documents:
            self.documents[path] = self._read(path)
        return self.documents[path]

    @staticmethod
    def _read(path: str) -> SmbConfDocument | tuple[IncludeStatus, str]:
        try:
            with open(path, "rb") as handle:
                return SmbConfDocument(handle.read(), path)
        except FileNotFoundError:
            return "missing", "no such file"
        except IsADirectoryError:
            return "unreadable", "it is a directory"
        except OSError as error:
            if not os.path.exists(path):
                return "missing", "no such file"
            return "unreadable", error.strerror or str(error)
