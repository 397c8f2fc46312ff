"""This computer as a target: commands through subprocess, files through the OS."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from typing import Any

from sambatune.cancellation import CancelToken
from sambatune.errors import Cancelled, CommandFailed, CommandTimedOut
from sambatune.remote.regular_file import FileRead, read_local
from sambatune.remote.transport import (
    LINE_LIMIT,
    OUTPUT_LIMIT,
    CommandResult,
    RemoteProcess,
    Transport,
    line_too_long,
    output_too_large,
)


class LocalProcess(RemoteProcess):
    def __init__(self, argv: Sequence[str]) -> None:
        self._argv = tuple(argv)
        try:
            self._popen = subprocess.Popen(
                self._argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=os.name == "posix",
            )
        except FileNotFoundError as exc:
            raise CommandFailed(f"{self._argv[0]}: command not found", exit_code=127) from exc
        self._stderr_chunks: list[bytes] = []
        # Drain stderr in the background so a chatty process never blocks on a full pipe.
        self._stderr_thread = threading.Thread(target=self._drain_stderr, daemon=True)
        self._stderr_thread.start()
        self._killed = False

    def _drain_stderr(self) -> None:
        stream = self._popen.stderr
        assert stream is not None
        for chunk in iter(lambda: stream.read(4096), b""):
            self._stderr_chunks.append(chunk)

    def write(self, data: bytes) -> None:
        assert self._popen.stdin is not None
        self._popen.stdin.write(data)
        self._popen.stdin.flush()

    def close_stdin(self) -> None:
        if self._popen.stdin and not self._popen.stdin.closed:
            with contextlib.suppress(OSError):
                self._popen.stdin.close()

    def readline(self, limit: int = LINE_LIMIT) -> bytes:
        assert self._popen.stdout is not None
        try:
            line = self._popen.stdout.readline(limit + 1)
        except (OSError, ValueError):
            return b""
        if len(line) > limit:
            self.kill()
            raise line_too_long(limit)
        return line

    def stderr_text(self) -> str:
        self._stderr_thread.join(timeout=5)
        return b"".join(self._stderr_chunks).decode("utf-8", "replace")

    def wait(self, timeout: float | None = None) -> int:
        code = self._popen.wait(timeout)
        return -1 if self._killed else code

    def kill(self) -> None:
        if self._popen.poll() is None:
            self._killed = True
            self.close_stdin()
            # Closing stdin is the agents' signal to clean up and leave; give them a
            # moment before the hard stop.
            try:
                self._popen.wait(timeout=3)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    self._popen.kill()
                self._popen.wait()
        for stream in (self._popen.stdout, self._popen.stdin):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


class _BoundedOutput:
    """A command's stdin fed and its stdout and stderr read by threads, at most
    ``limit`` bytes together: past that the command is stopped."""

    def __init__(self, popen: subprocess.Popen[bytes], limit: int) -> None:
        self.popen = popen
        self.limit = limit
        self.size = 0
        self.too_large = False
        self._lock = threading.Lock()
        self._chunks: dict[int, list[bytes]] = {1: [], 2: []}
        self._threads = [
            threading.Thread(target=self._drain, args=(stream, key), daemon=True)
            for key, stream in ((1, popen.stdout), (2, popen.stderr))
        ]
        for thread in self._threads:
            thread.start()

    def _drain(self, stream: Any, key: int) -> None:
        descriptor = stream.fileno()
        while True:
            try:
                chunk = os.read(descriptor, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self.size += len(chunk)
                if self.size > self.limit:
                    self.too_large = True
                    _stop_group(self.popen)
                    return
                self._chunks[key].append(chunk)

    def feed(self, data: bytes | None) -> None:
        def write() -> None:
            assert self.popen.stdin is not None
            with contextlib.suppress(OSError):
                if data:
                    self.popen.stdin.write(data)
                self.popen.stdin.close()

        if data:
            threading.Thread(target=write, daemon=True).start()
        else:
            write()

    def collected(self) -> tuple[bytes, bytes]:
        for thread in self._threads:
            thread.join(5)  # a grandchild that kept the pipe open is not waited for
        with self._lock:
            return b"".join(self._chunks[1]), b"".join(self._chunks[2])


def _stop_group(popen: subprocess.Popen[bytes]) -> None:
    """Stop the command and everything in its process group (on POSIX)."""
    if os.name == "posix":
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(popen.pid, signal.SIGKILL)
    if popen.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            popen.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(5)


class LocalTransport(Transport):
    label = "this computer"

    @property
    def is_local(self) -> bool:
        return True

    def _run(
        self,
        argv: Sequence[str],
        stdin: bytes | None,
        timeout: float | None,
        cancel: CancelToken | None,
        max_output: int = OUTPUT_LIMIT,
    ) -> CommandResult:
        try:
            popen = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                # Its own process group, so that stopping it stops what it started too.
                start_new_session=os.name == "posix",
            )
        except FileNotFoundError:
            return CommandResult(tuple(argv), 127, b"", f"{argv[0]}: command not found\n".encode())
        output = _BoundedOutput(popen, max_output)
        unregister = cancel.on_cancel(lambda: _stop_group(popen)) if cancel else (lambda: None)
        try:
            output.feed(stdin)
            try:
                popen.wait(timeout)
            except subprocess.TimeoutExpired as exc:
                _stop_group(popen)
                raise CommandTimedOut(
                    f"{argv[0]} did not finish within {timeout:g} s", exit_code=None
                ) from exc
            out, err = output.collected()
        except BaseException:
            _stop_group(popen)
            raise
        finally:
            unregister()
        if output.too_large:
            raise output_too_large(argv, max_output)
        if cancel is not None and cancel.cancelled:
            raise Cancelled()
        return CommandResult(tuple(argv), popen.returncode, out, err)

    def _start(self, argv: Sequence[str]) -> RemoteProcess:
        return LocalProcess(argv)

    def close(self) -> None:
        pass

    def read_regular_file(self, path: str, limit: int, *, sudo: bool = False) -> FileRead:
        if sudo and self.sudo_mode() != "root":
            return super().read_regular_file(path, limit, sudo=True)
        try:
            return read_local(path, limit)
        except OSError as exc:
            raise CommandFailed(f"Reading {path} failed: {exc.strerror}", details=str(exc)) from exc

    def file_exists(self, path: str, *, sudo: bool = False) -> bool:
        if sudo and self.sudo_mode() != "root":
            return super().file_exists(path, sudo=True)
        return os.path.exists(path)

    def write_file_atomic(
        self, path: str, data: bytes, *, sudo: bool = False, mode: int | None = None
    ) -> None:
        if sudo and os.name == "posix" and self.sudo_mode() != "root":
            super().write_file_atomic(path, data, sudo=True, mode=mode)
            return
        try:
            write_local_file_atomic(path, data, mode=mode)
        except OSError as exc:
            raise CommandFailed(f"Writing {path} failed: {exc.strerror}", details=str(exc)) from exc

    def sudo_mode(self) -> str:
        if os.name != "posix":
            # Windows has no sudo; elevation is handled by the client tuning helper.
            return "root"
        return super().sudo_mode()


def write_local_file_atomic(path: str, data: bytes, *, mode: int | None = None) -> None:
    """Temp file in the same directory, fsync, copy mode and owner, rename over."""
    directory = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{base}.sambatune.", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            st = os.stat(path)
        except FileNotFoundError:
            os.chmod(tmp, 0o644 if mode is None else mode)
        else:
            os.chmod(tmp, st.st_mode & 0o7777)
            if hasattr(os, "chown"):
                with contextlib.suppress(PermissionError):
                    os.chown(tmp, st.st_uid, st.st_gid)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if hasattr(os, "O_DIRECTORY"):
        dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
