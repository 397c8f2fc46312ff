"""Lint in a process of its own, so a long check never holds the editor's interpreter lock.

A thread is not enough: lint is pure Python, and while a 50,000-line file is checked
(about 150 ms) every keystroke waits for the interpreter lock, 10 ms and more each.
This module runs the check in a child Python started from the app's own interpreter
(``sys.executable -u -c ...``; inside the bundle that is the program itself, see
:mod:`sambatune.frozen_interpreter`) and talks to it over its stdin and stdout.

The child knows nothing but what it is sent: the file's bytes and the parameter
catalog. Included files are read by the caller, through its own reader (the SSH
connection lives here), when the child asks for them; the caller keeps the documents
it read, so the include links it returns point at the same documents.

Frames on the pipes: a 4-byte big-endian length and a JSON header, then a 4-byte
length and a body of bytes (the file, an included file, a pickled catalog). Only the
parent's own messages are unpickled, by the child it started.
"""

from __future__ import annotations

import json
import logging
import pickle
import struct
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable
from typing import IO, Any, NamedTuple

from sambatune.cancellation import CancelToken
from sambatune.conf.catalog import ParameterCatalog
from sambatune.conf.document import SmbConfDocument
from sambatune.conf.effective import IncludeLink, IncludeReader, Origin
from sambatune.conf.lint import Finding
from sambatune.errors import Cancelled, SambaTuneError

log = logging.getLogger(__name__)

_CHILD_CODE = "from sambatune.conf.lint_process import serve; serve()"
_LENGTH = struct.Struct(">I")


class LintSummary(NamedTuple):
    """What a check in the child found."""

    findings: list[Finding]
    includes: list[IncludeLink]
    #: How many settings each section makes itself, by :func:`section_key`-folded name.
    section_settings: dict[str, int]


# -- frames ---------------------------------------------------------------------------------


def _write(stream: IO[bytes], header: dict[str, Any], body: bytes = b"") -> None:
    encoded = json.dumps(header).encode()
    stream.write(_LENGTH.pack(len(encoded)) + encoded + _LENGTH.pack(len(body)))
    stream.write(body)
    stream.flush()


def _read_exact(stream: IO[bytes], size: int) -> bytes:
    data = stream.read(size)
    if data is None or len(data) != size:
        raise EOFError("the other end closed the pipe")
    return data


def _read(stream: IO[bytes]) -> tuple[dict[str, Any], bytes]:
    header = json.loads(_read_exact(stream, _LENGTH.unpack(_read_exact(stream, 4))[0]))
    body = _read_exact(stream, _LENGTH.unpack(_read_exact(stream, 4))[0])
    return header, body


# -- the parent's side ------------------------------------------------------------------------


class LintProcess:
    """One child that checks one editor's text; started on first use, restarted if it died.

    :meth:`check` runs on a worker thread and blocks only on the pipe (which lets go
    of the interpreter lock). One check at a time.
    """

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._catalog: ParameterCatalog | None = None
        self._lock = threading.Lock()
        self._closed = False

    def check(
        self,
        data: bytes,
        path: str | None,
        catalog: ParameterCatalog,
        read_include: IncludeReader | None,
        cancel: CancelToken | None = None,
    ) -> LintSummary:
        with self._lock:
            process = self._started()
            assert process.stdin is not None and process.stdout is not None
            try:
                if self._catalog is not catalog:
                    _write(process.stdin, {"op": "catalog"}, pickle.dumps(catalog))
                    self._catalog = catalog
                _write(
                    process.stdin, {"op": "check", "path": path, "includes": read_include is not None}, data
                )
                documents: list[SmbConfDocument] = []
                while True:
                    header, _body = _read(process.stdout)
                    op = header.get("op")
                    if op == "include":
                        self._answer_include(process.stdin, header["path"], read_include, documents, cancel)
                    elif op == "done":
                        return _summary(header, documents)
                    elif op == "cancelled":
                        raise Cancelled("The check was stopped.")
                    elif op == "error":
                        log.error("The lint process failed:\n%s", header.get("traceback", ""))
                        raise SambaTuneError(f"The check of smb.conf failed: {header['message']}")
                    else:
                        raise SambaTuneError(f"The lint process sent {op!r}.")
            except (OSError, EOFError, ValueError) as exc:
                self._discard()
                if self._closed or (cancel is not None and cancel.cancelled):
                    raise Cancelled("The check was stopped.") from exc
                raise SambaTuneError(f"The background check of smb.conf stopped: {exc}") from exc

    def _answer_include(
        self,
        stdin: IO[bytes],
        path: str,
        read_include: IncludeReader | None,
        documents: list[SmbConfDocument],
        cancel: CancelToken | None,
    ) -> None:
        if cancel is not None and cancel.cancelled:
            _write(stdin, {"kind": "cancelled"})  # the child answers "cancelled"
            return
        assert read_include is not None  # the child asks only when told it may
        try:
            result = read_include(path)
        except BaseException:
            # The child stops this check; its answer is read here so the next check
            # starts on a clean pipe. The reader's error is the one to report.
            _write(stdin, {"kind": "cancelled"})
            assert self._process is not None and self._process.stdout is not None
            _read(self._process.stdout)
            raise
        if isinstance(result, SmbConfDocument):
            documents.append(result)
            _write(
                stdin, {"kind": "document", "path": result.path, "index": len(documents) - 1}, result.render()
            )
        else:
            status, detail = result
            _write(stdin, {"kind": "status", "status": status, "detail": detail})

    def _started(self) -> subprocess.Popen[bytes]:
        if self._closed:
            raise Cancelled("The editor is closing.")
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-u", "-c", _CHILD_CODE],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
            )
            self._catalog = None
        return self._process

    def _discard(self) -> None:
        process, self._process = self._process, None
        self._catalog = None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()

    def close(self) -> None:
        """Stop the child; a check running now ends with :class:`Cancelled`.

        Called from the GUI thread while a worker may be inside :meth:`check`, so it
        does not take the lock: killing the child ends the worker's read.
        """
        self._closed = True
        process = self._process
        if process is not None and process.poll() is None:
            process.kill()
        # Never wait for a check here: one may be inside an include read over SSH. If a
        # check holds the lock, the killed child fails its read and it discards the child.
        if self._lock.acquire(blocking=False):
            try:
                self._discard()
            finally:
                self._lock.release()


def _summary(header: dict[str, Any], documents: list[SmbConfDocument]) -> LintSummary:
    findings = [
        Finding(line, section, parameter, severity, code, message, file)
        for line, section, parameter, severity, code, message, file in header["findings"]
    ]
    includes = [
        IncludeLink(
            Origin(origin_file, origin_line),
            section,
            path,
            status,
            documents[index] if index is not None else None,
            detail,
        )
        for origin_file, origin_line, section, path, status, index, detail in header["includes"]
    ]
    return LintSummary(findings, includes, dict(header["sections"]))


# -- the child's side -------------------------------------------------------------------------


class _Stopped(Exception):
    """The parent stopped this check (cancelled, or its reader failed)."""


def serve(stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
    """Answer checks until the parent closes the pipe (the child's main loop)."""
    from sambatune.conf.effective import effective_view
    from sambatune.conf.lint import lint

    source = stdin or sys.stdin.buffer
    sink = stdout or sys.stdout.buffer
    catalog: ParameterCatalog | None = None
    catalog_error = "no parameter catalog was sent"
    while True:
        try:
            header, body = _read(source)
        except EOFError:
            return
        if header["op"] == "catalog":
            # No answer to this message: a catalog that cannot be read fails the next check.
            try:
                catalog = pickle.loads(body)
            except Exception as exc:  # any failure is reported with the next check
                catalog, catalog_error = None, f"the parameter catalog could not be read: {exc!r}"
            continue
        try:
            if catalog is None:
                raise SambaTuneError(catalog_error)
            document = SmbConfDocument.parse(body, header.get("path"))
            documents: dict[int, int] = {}
            reader = _asking_reader(source, sink, documents) if header.get("includes") else None
            view = effective_view(document, catalog, read_include=reader)
            findings = lint(document, catalog, view=view)
        except _Stopped:
            _write(sink, {"op": "cancelled"})
            continue
        except Exception as exc:  # any failure goes back to the editor, as a message
            message = exc.message if isinstance(exc, SambaTuneError) else repr(exc)
            _write(sink, {"op": "error", "message": message, "traceback": traceback.format_exc()})
            continue
        _write(
            sink,
            {
                "op": "done",
                "findings": [
                    [f.line, f.section, f.parameter, f.severity, f.code, f.message, f.file] for f in findings
                ],
                "includes": [
                    [
                        link.origin.file,
                        link.origin.line,
                        link.section,
                        link.path,
                        link.status,
                        documents.get(id(link.document)) if link.document is not None else None,
                        link.detail,
                    ]
                    for link in view.includes
                ],
                "sections": {
                    key: len(section.own_settings())
                    for key, section in [("global", view.global_section), *view.sections.items()]
                },
            },
        )


def _asking_reader(source: IO[bytes], sink: IO[bytes], documents: dict[int, int]) -> Callable[[str], Any]:
    """An include reader that asks the parent; ``documents`` maps each document to its index."""

    def read(path: str) -> Any:
        _write(sink, {"op": "include", "path": path})
        header, body = _read(source)
        if header["kind"] == "document":
            document = SmbConfDocument.parse(body, header["path"])
            documents[id(document)] = header["index"]
            return document
        if header["kind"] == "status":
            return header["status"], header["detail"]
        raise _Stopped

    return read
