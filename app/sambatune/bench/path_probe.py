"""The SMB probe through the operating system's own client: a file under a path the user gives.

A mount point (Linux, macOS) or a UNC path (``\\\\server\\share\\dir`` on Windows) puts the
real client stack in the measurement: its caching, its credits, its signing. Writes go
through a large buffer and end with fsync, so the time includes getting the data to
the server. Before a read the file's pages are dropped from this computer's cache
where the system allows it (posix_fadvise); otherwise the read may come from memory,
and the result says so.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from pathlib import Path

from sambatune.bench.smb_wire import PROBE_PREFIX, OnProgress, Transfer
from sambatune.cancellation import CancelToken
from sambatune.errors import InvalidInput, SambaTuneError

CAN_DROP_CACHE = hasattr(os, "posix_fadvise")


def check_directory(path: str) -> Path:
    directory = Path(path)
    if not directory.is_dir():
        raise InvalidInput(
            f"{path} is not a directory this computer can reach.",
            details="Give the mount point of the share (Linux, macOS) or its UNC path "
            r"(\\server\share on Windows).",
        )
    return directory


def new_file(directory: Path) -> Path:
    return directory / f"{PROBE_PREFIX}{secrets.token_hex(6)}.bin"


def _failed(action: str, path: Path, exc: OSError) -> SambaTuneError:
    return SambaTuneError(
        f"Could not {action} the test file {path}: {exc.strerror or exc}.", details=str(exc)
    )


def write_file(
    path: Path, size: int, block: int, cancel: CancelToken, on_progress: OnProgress | None = None
) -> Transfer:
    data = memoryview(os.urandom(block))
    cpu = time.process_time()
    started = time.perf_counter()
    written = 0
    try:
        with open(path, "wb", buffering=0) as handle:
            while written < size:
                cancel.raise_if_cancelled()
                length = min(block, size - written)
                written += handle.write(data[:length])
                if on_progress is not None:
                    on_progress(written, time.perf_counter() - started)
            os.fsync(handle.fileno())
    except OSError as exc:
        raise _failed("write", path, exc) from exc
    return Transfer(written, time.perf_counter() - started, time.process_time() - cpu)


def drop_cached(path: Path) -> bool:
    """Ask the system to forget the file's cached pages; False where it cannot."""
    if not CAN_DROP_CACHE:
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def read_file(path: Path, block: int, cancel: CancelToken, on_progress: OnProgress | None = None) -> Transfer:
    buffer = bytearray(block)
    view = memoryview(buffer)
    cpu = time.process_time()
    started = time.perf_counter()
    total = 0
    try:
        with open(path, "rb", buffering=0) as handle:
            while True:
                cancel.raise_if_cancelled()
                count = handle.readinto(view)
                if not count:
                    break
                total += count
                if on_progress is not None:
                    on_progress(total, time.perf_counter() - started)
    except OSError as exc:
        raise _failed("read", path, exc) from exc
    return Transfer(total, time.perf_counter() - started, time.process_time() - cpu)


def remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
