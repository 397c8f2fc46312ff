"""Where an edited smb.conf comes from: a local file, or a server's config over its transport.

A source knows how to read the bytes, which parameter catalog answers for them
(first a quick one from the cache or the bundled snapshot, then, when that was not
exact, the server's own from testparm), how to follow includes and where the man
page lives. Every method here runs in a worker thread (``ui/tasks.py``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from sambatune.cancellation import CancelToken
from sambatune.conf import catalog as catalogs
from sambatune.conf.catalog import ParameterCatalog
from sambatune.conf.effective import IncludeReader
from sambatune.errors import InvalidInput, SambaTuneError

if TYPE_CHECKING:
    from sambatune.ui.session import ServerSession


class Opened(NamedTuple):
    data: bytes
    catalog: ParameterCatalog
    #: The catalog is the target's own (cached from its testparm); no need to ask again.
    catalog_is_final: bool


class LocalFile:
    """A file on this computer: read and saved with plain file I/O (atomic save)."""

    can_save = True
    can_apply = False

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)

    @property
    def title(self) -> str:
        return self.path

    @property
    def where(self) -> str:
        return "this computer"

    def open(self, cancel: CancelToken) -> Opened:
        try:
            with open(self.path, "rb") as handle:
                data = handle.read()
        except IsADirectoryError as exc:
            raise InvalidInput(f"{self.path} is a folder, not an smb.conf file.") from exc
        except OSError as exc:
            raise InvalidInput(f"Cannot read {self.path}: {exc.strerror or exc}.") from exc
        cached = catalogs.cached_local_catalog()
        if cached is not None:
            return Opened(data, cached, True)
        return Opened(data, catalogs.load_bundled(), catalogs.local_testparm() is None)

    def live_catalog(self, cancel: CancelToken) -> ParameterCatalog | None:
        """This computer's testparm catalog (built once per Samba version), if it has one."""
        if catalogs.local_testparm() is None:
            return None
        from sambatune.conf.catalog_build import live_catalog
        from sambatune.remote.local import LocalTransport

        return live_catalog(LocalTransport(), cancel=cancel)

    def include_reader(self) -> IncludeReader:
        from sambatune.conf.includes import LocalIncludes

        return LocalIncludes()

    def man_page_entry(self, name: str) -> str | None:
        from sambatune.conf.manpage import parameter_entry

        return parameter_entry(name)

    def save(self, data: bytes, path: str | None = None) -> str:
        from sambatune.remote.local import write_local_file_atomic

        target = os.path.abspath(path or self.path)
        try:
            write_local_file_atomic(target, data)
        except OSError as exc:
            raise InvalidInput(f"Cannot save {target}: {exc.strerror or exc}.") from exc
        return target


class ServerConfig:
    """The smb.conf a server (or this computer, through LocalTransport) runs with."""

    can_save = False
    can_apply = True

    def __init__(self, session: ServerSession) -> None:
        self.session = session
        try:
            self.path = session.config_path()
        except SambaTuneError:  # several instances, none chosen yet: open() says so
            self.path = ""
        self.sudo = False

    @property
    def title(self) -> str:
        return self.path

    @property
    def where(self) -> str:
        return self.session.profile.target_label

    def open(self, cancel: CancelToken) -> Opened:
        session = self.session
        self.path = session.config_path()
        data = self.read(cancel)
        survey = session.survey
        version = survey.samba_version if survey is not None else None
        text = survey.samba.get("version_text") if survey is not None else None
        cached = catalogs.load_cached(str(text).replace("Version ", "")) if text else None
        if cached is not None:
            return Opened(data, cached, True)
        if version is not None:
            near = catalogs.cached_catalog_for(version)
            if near is not None:
                return Opened(data, near, near.exact)
        return Opened(data, catalogs.load_bundled(version), False)

    def read(self, cancel: CancelToken) -> bytes:
        """The bytes the file at :attr:`path` holds now (with sudo when it needs it)."""
        session = self.session
        transport = session.require_transport()
        try:
            return transport.read_file(self.path, sudo=self.sudo)
        except SambaTuneError:
            if not transport.file_exists(self.path):
                raise InvalidInput(f"{self.path} does not exist on {transport.label}.") from None
            self.sudo = session.prepare_root(transport, self.path, cancel)
            return transport.read_file(self.path, sudo=self.sudo)

    def live_catalog(self, cancel: CancelToken) -> ParameterCatalog | None:
        from sambatune.conf.catalog_build import live_catalog

        return live_catalog(self.session.require_transport(), cancel=cancel)

    def include_reader(self) -> IncludeReader:
        from sambatune.conf.includes import TransportIncludes

        return TransportIncludes(self.session.require_transport(), sudo=self.sudo)

    def man_page_entry(self, name: str) -> str | None:
        from sambatune.conf.manpage import parameter_entry

        return parameter_entry(name, self.session.require_transport())


class IncludedFile:
    """A file an smb.conf includes, shown read-only with the bytes already read."""

    can_save = False
    can_apply = False

    def __init__(
        self,
        path: str,
        data: bytes,
        where: str,
        catalog: ParameterCatalog,
        man_page_entry: Callable[[str], str | None],
    ) -> None:
        self.path = path
        self.data = data
        self._where = where
        self.catalog = catalog
        self._man_page_entry = man_page_entry

    @property
    def title(self) -> str:
        return self.path

    @property
    def where(self) -> str:
        return self._where

    def open(self, cancel: CancelToken) -> Opened:
        return Opened(self.data, self.catalog, True)

    def live_catalog(self, cancel: CancelToken) -> ParameterCatalog | None:
        return None

    def include_reader(self) -> IncludeReader | None:
        return None

    def man_page_entry(self, name: str) -> str | None:
        return self._man_page_entry(name)


ConfSource = LocalFile | ServerConfig | IncludedFile
