"""The small-file operations on one probe connection, as a client program makes them.

Each call is one file operation (create and write, stat, read, rename, list, delete):
the small-file benchmark (bench/small_files.py) times each call, and keeps several in
flight by calling from several threads on one connection.

:func:`file_operations` chooses the way once, for the session it gets:
:class:`CompoundFileOps` sends each operation as one SMB2 compound packed by hand
(bench/smb_compounds.py), on sessions that sign or send in the clear;
:class:`SmbFileOps` asks smbprotocol, a request at a time (create, then write, then
close), which an encrypted session needs. smbprotocol allows calls from several threads
on one connection: it hands out message ids under a lock and matches answers by id.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sambatune.bench.smb_compounds import GONE, LISTING_CHARGE, Compounds, RefusedRequest
from sambatune.bench.smb_directory_leases import (
    OPLOCK_LEVEL_LEASE,
    DirectoryListings,
    acknowledgement,
    granted_state,
    lease_request_context,
)
from sambatune.bench.smb_wire import SmbProbeConnection

#: Deletes in flight when a test directory is removed.
REMOVE_IN_FLIGHT = 32


def file_operations(probe: SmbProbeConnection) -> SmbFileOps:
    """The operations for ``probe``'s session: compounds unless it encrypts."""
    return SmbFileOps(probe) if probe.encrypted else CompoundFileOps(probe)


def _access(*names: str) -> int:
    """An access mask from smbprotocol's names: a file's, or a directory's (listing)."""
    from smbprotocol.open import DirectoryAccessMask, FilePipePrinterAccessMask

    mask = 0
    for name in names:
        kind = DirectoryAccessMask if name == "FILE_LIST_DIRECTORY" else FilePipePrinterAccessMask
        mask |= getattr(kind, name)
    return mask


class SmbFileOps:
    """The operations through smbprotocol, names from the share's root (SMB's backslash)."""

    def __init__(self, probe: SmbProbeConnection) -> None:
        self.probe = probe
        #: Listings answered from here while the server's directory lease holds.
        self.listings: DirectoryListings | None = None
        if probe.directory_leases_offered:
            self.listings = DirectoryListings(self._open_leased, self._read_names, self._acknowledge)
            probe.connection.transport.on_lease_break = self.listings.lease_broken

    def join(self, directory: str, name: str) -> str:
        return f"{directory}\\{name}"

    def _create(
        self, name: str, access: int, disposition: int, options: int, contexts: list[Any] | None = None
    ) -> tuple[Any, list[Any] | None]:
        from smbprotocol.open import FileAttributes, ImpersonationLevel, Open, ShareAccess

        handle = Open(self.probe.tree, name)
        answered = handle.create(
            ImpersonationLevel.Impersonation,
            access,
            FileAttributes.FILE_ATTRIBUTE_NORMAL,
            ShareAccess.FILE_SHARE_READ | ShareAccess.FILE_SHARE_WRITE | ShareAccess.FILE_SHARE_DELETE,
            disposition,
            options,
            create_contexts=contexts,
            oplock_level=OPLOCK_LEVEL_LEASE if contexts else 0,
        )
        return handle, answered

    def _open(self, name: str, access: int, disposition: int, options: int) -> Any:
        return self._create(name, access, disposition, options)[0]

    def make_directory(self, name: str) -> None:
        """Create ``name`` as a new directory; fails if anything is there already."""
        from smbprotocol.open import CreateDisposition, CreateOptions

        self._open(
            name,
            _access("FILE_READ_ATTRIBUTES"),
            CreateDisposition.FILE_CREATE,
            CreateOptions.FILE_DIRECTORY_FILE,
        ).close()

    def create_and_write(self, name: str, data: bytes) -> None:
        """A new file (never an existing one replaced), written whole, closed."""
        from smbprotocol.open import CreateDisposition, CreateOptions

        handle = self._open(
            name,
            _access("GENERIC_WRITE"),
            CreateDisposition.FILE_CREATE,
            CreateOptions.FILE_NON_DIRECTORY_FILE,
        )
        try:
            if data:
                handle.write(data, 0)
        finally:
            handle.close()

    def stat(self, name: str) -> int:
        """The file's size, as a client's stat gets it: open for attributes, close."""
        from smbprotocol.open import CreateDisposition, CreateOptions

        handle = self._open(
            name,
            _access("FILE_READ_ATTRIBUTES"),
            CreateDisposition.FILE_OPEN,
            CreateOptions.FILE_NON_DIRECTORY_FILE,
        )
        size = int(handle.end_of_file)
        handle.close()
        return size

    def read_whole(self, name: str, size: int) -> int:
        """Open, read ``size`` bytes (one request: small files), close; the bytes read."""
        from smbprotocol.open import CreateDisposition, CreateOptions

        handle = self._open(
            name, _access("GENERIC_READ"), CreateDisposition.FILE_OPEN, CreateOptions.FILE_NON_DIRECTORY_FILE
        )
        try:
            return len(handle.read(0, size)) if size else 0
        finally:
            handle.close()

    def rename(self, name: str, new_name: str) -> None:
        """Rename ``name`` to ``new_name`` (both from the share's root), never over a file."""
        from smbprotocol.file_info import FileRenameInformation
        from smbprotocol.open import CreateDisposition, CreateOptions, SMB2SetInfoRequest, SMB2SetInfoResponse

        handle = self._open(
            name, _access("DELETE"), CreateDisposition.FILE_OPEN, CreateOptions.FILE_NON_DIRECTORY_FILE
        )
        try:
            info = FileRenameInformation()
            info["replace_if_exists"] = False
            info["file_name"] = new_name
            request = SMB2SetInfoRequest()
            request["info_type"] = info.INFO_TYPE
            request["file_info_class"] = info.INFO_CLASS
            request["file_id"] = handle.file_id
            request["buffer"] = info
            probe = self.probe
            sent = probe.connection.send(request, probe.session.session_id, probe.tree.tree_connect_id)
            SMB2SetInfoResponse().unpack(probe.connection.receive(sent)["data"].get_value())
        finally:
            handle.close()

    def list_directory(self, name: str) -> list[str]:
        """The names in directory ``name`` (without . and ..): from the server, or from
        the listing kept under a directory lease that no change has broken since."""
        if self.listings is not None:
            return self.listings.names(name)
        return self._listed(name)

    def _listed(self, name: str) -> list[str]:
        """The names in ``name``, asked of the server."""
        handle, _ = self._open_directory(name)
        try:
            return self._read_names(handle)
        finally:
            handle.close()

    def _open_directory(self, name: str, contexts: list[Any] | None = None) -> tuple[Any, list[Any] | None]:
        from smbprotocol.open import CreateDisposition, CreateOptions

        return self._create(
            name,
            _access("FILE_LIST_DIRECTORY", "FILE_READ_ATTRIBUTES"),
            CreateDisposition.FILE_OPEN,
            CreateOptions.FILE_DIRECTORY_FILE,
            contexts,
        )

    def _open_leased(self, name: str, key: bytes) -> tuple[Any, int]:
        handle, answered = self._open_directory(name, [lease_request_context(key)])
        return handle, granted_state(answered)

    def _read_names(self, handle: Any) -> list[str]:
        """Every name in an open directory, as many requests as it takes."""
        from smbprotocol.exceptions import NoMoreFiles
        from smbprotocol.file_info import FileInformationClass

        names: list[str] = []
        while True:
            try:
                entries = handle.query_directory("*", FileInformationClass.FILE_NAMES_INFORMATION)
            except NoMoreFiles:
                break
            for entry in entries:
                text = entry["file_name"].get_value().decode("utf-16-le")
                if text not in (".", ".."):
                    names.append(text)
        return names

    def _acknowledge(self, key: bytes, state: int) -> None:
        probe = self.probe
        sent = probe.connection.send(
            acknowledgement(key, state), probe.session.session_id, probe.tree.tree_connect_id
        )
        probe.connection.receive(sent)

    def delete(self, name: str) -> None:
        self.probe.delete(name)

    def remove_directory(self, name: str) -> None:
        from smbprotocol.open import CreateDisposition, CreateOptions

        if self.listings is not None:
            self.listings.forget(name)  # our own kept handle would hold it open

        self._open(
            name,
            _access("DELETE", "FILE_READ_ATTRIBUTES"),
            CreateDisposition.FILE_OPEN,
            CreateOptions.FILE_DIRECTORY_FILE | CreateOptions.FILE_DELETE_ON_CLOSE,
        ).close()

    def remove_tree(self, name: str) -> None:
        """Delete the files in directory ``name``, then the directory; gone already is fine."""
        from smbprotocol.exceptions import ObjectNameNotFound, ObjectPathNotFound

        try:
            names = self.list_directory(name)
        except (ObjectNameNotFound, ObjectPathNotFound):
            return
        except RefusedRequest as refused:
            if refused.status in GONE:
                return
            raise

        self._delete_files([self.join(name, entry) for entry in names])
        self.remove_directory(name)

    def _delete_files(self, paths: Sequence[str]) -> None:
        """Delete ``paths`` (a name gone already is fine), several in flight."""
        from smbprotocol.exceptions import ObjectNameNotFound

        def delete(path: str) -> None:
            with contextlib.suppress(ObjectNameNotFound):
                self.delete(path)

        with ThreadPoolExecutor(8, thread_name_prefix="sambatune-remove") as pool:
            for _ in pool.map(delete, paths):
                pass

    def exists(self, name: str) -> bool:
        from smbprotocol.exceptions import ObjectNameNotFound, ObjectPathNotFound
        from smbprotocol.open import CreateDisposition

        try:
            self._open(name, _access("FILE_READ_ATTRIBUTES"), CreateDisposition.FILE_OPEN, 0).close()
        except (ObjectNameNotFound, ObjectPathNotFound):
            return False
        return True


class CompoundFileOps(SmbFileOps):
    """Each operation one related compound: one frame out, one answer back."""

    def __init__(self, probe: SmbProbeConnection) -> None:
        super().__init__(probe)
        self.compounds = Compounds(probe.connection, probe.session, probe.tree)

    def create_and_write(self, name: str, data: bytes) -> None:
        self.compounds.create_and_write(name, data)

    def stat(self, name: str) -> int:
        return self.compounds.stat(name)

    def read_whole(self, name: str, size: int) -> int:
        return self.compounds.read_whole(name, size)

    def rename(self, name: str, new_name: str) -> None:
        self.compounds.rename(name, new_name)

    def delete(self, name: str) -> None:
        self.compounds.delete(name)

    def _listed(self, name: str) -> list[str]:
        self.probe.ensure_credits(LISTING_CHARGE)  # asks only when short (a clean-up's)
        names = self.compounds.list_directory(name)
        # None: the names may not all have fitted in one answer; ask the long way.
        return super()._listed(name) if names is None else names

    def _delete_files(self, paths: Sequence[str]) -> None:
        # A cancel waits for this: 0.05 ms a file here, 0.9 ms through smbprotocol.
        self.probe.ensure_credits(2 * REMOVE_IN_FLIGHT + 1)
        self.compounds.delete_all(paths, REMOVE_IN_FLIGHT)
