"""Reading a file only when it is a regular file, and never more than a given size.

A path read on someone's say-so (an ``include =`` line, a file named on the command
line) can be anything: ``/dev/zero`` and ``/dev/urandom`` never end, a FIFO blocks
until something writes to it, a directory or a socket cannot be read, and a sparse
regular file can claim terabytes. :func:`read_local` (this computer) and
:data:`SCRIPT` (any target, through ``Transport.run``) both look at what the path is
before opening anything, read only regular files, and stop after ``limit + 1``
bytes, so "larger than the limit" is known without reading the rest.
"""

from __future__ import annotations

import os
import stat
from typing import Literal, NamedTuple

#: The most :meth:`Transport.read_file` reads of one file: every file SambaTune reads
#: on a target (smb.conf and its includes, backups, a man page) is far smaller. The
#: 50,000-line smb.conf of bench/conf_parse.py (3,500 shares) is 1.2 MiB.
READ_LIMIT = 8 * 1024 * 1024

FileKind = Literal[
    "file",  # a regular file of at most the limit: ``data`` holds it
    "too large",  # a regular file of more than the limit: not kept
    "missing",
    "directory",
    "fifo",
    "character device",
    "block device",
    "socket",
    "other",
]


class FileRead(NamedTuple):
    kind: FileKind
    data: bytes = b""


_KIND_BY_FORMAT: dict[int, FileKind] = {
    stat.S_IFREG: "file",
    stat.S_IFDIR: "directory",
    stat.S_IFIFO: "fifo",
    stat.S_IFCHR: "character device",
    stat.S_IFBLK: "block device",
    stat.S_IFSOCK: "socket",
}


def kind_of(mode: int) -> FileKind:
    return _KIND_BY_FORMAT.get(stat.S_IFMT(mode), "other")


def described(kind: str) -> str:
    """A kind as it reads after "is": "a directory", "a FIFO", "an unusual file"."""
    if kind == "fifo":
        return "a FIFO"
    if kind in ("file", "directory", "character device", "block device", "socket"):
        return f"a {kind}"
    return "an unusual file (neither a regular file nor a directory, device or FIFO)"


# O_NONBLOCK: should the path turn into a FIFO between the stat and the open, the open
# returns at once instead of waiting for a writer. O_NOCTTY: a terminal device must
# never become our controlling terminal.
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def read_local(path: str, limit: int) -> FileRead:
    """What ``path`` on this computer is, with its bytes when it is a regular file.

    Follows symbolic links, as Samba does. Raises :class:`OSError` when the path
    exists but cannot be read (permissions, a loop of links).
    """
    try:
        kind = kind_of(os.stat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return FileRead("missing")
    # Devices are never opened: opening some (tapes, serial lines) already does something.
    if kind != "file":
        return FileRead(kind)
    descriptor = os.open(path, _OPEN_FLAGS)
    try:
        status = os.fstat(descriptor)
        kind = kind_of(status.st_mode)  # replaced since the stat?
        if kind != "file":
            return FileRead(kind)
        if status.st_size > limit:  # no need to read it; a size of 0 can still hide more
            return FileRead("too large")
        chunks = []
        left = limit + 1
        while left > 0:
            chunk = os.read(descriptor, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(descriptor)
    if left <= 0:
        return FileRead("too large")
    return FileRead("file", b"".join(chunks))


# Runs under POSIX sh on the target. Arguments: the path, the byte count to read at
# most (the limit + 1). Exit 0: the bytes on stdout. Exit 3: not a regular file, its
# kind on stdout. Exit 4: nothing there. Anything else: reading failed (stderr says why).
# `test -f` is false for a FIFO, so a FIFO is never opened; `timeout` (where there is
# one) ends a read that stalls on a strange file such as /proc/kmsg, which would
# otherwise outlive a dropped SSH channel.
SCRIPT = r"""
p=$1; n=$2
if [ -f "$p" ]; then
  if command -v timeout >/dev/null 2>&1; then exec timeout 60 head -c "$n" -- "$p"; fi
  exec head -c "$n" -- "$p"
fi
if [ -d "$p" ]; then echo directory
elif [ -p "$p" ]; then echo fifo
elif [ -c "$p" ]; then echo character device
elif [ -b "$p" ]; then echo block device
elif [ -S "$p" ]; then echo socket
elif [ -e "$p" ]; then echo other
else exit 4
fi
exit 3
"""
NOT_REGULAR_EXIT = 3
MISSING_EXIT = 4
ANSWERS = (0, NOT_REGULAR_EXIT, MISSING_EXIT)  # any other exit code: the read failed
TIMEOUT_EXIT = 124  # timeout(1) stopped a stalled read

_KINDS: dict[str, FileKind] = {
    kind: kind for kind in ("directory", "fifo", "character device", "block device", "socket", "other")
}


def outcome(exit_code: int, stdout: bytes, limit: int) -> FileRead:
    """What :data:`SCRIPT` found, from one of its :data:`ANSWERS` and its output."""
    if exit_code == MISSING_EXIT:
        return FileRead("missing")
    if exit_code == NOT_REGULAR_EXIT:
        return FileRead(_KINDS.get(stdout.decode("ascii", "replace").strip(), "other"))
    return FileRead("too large") if len(stdout) > limit else FileRead("file", stdout)
