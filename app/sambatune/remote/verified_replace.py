"""The one way SambaTune replaces a live file on a server: verified, atomic, race-checked.

Swap (the uploaded candidate becomes the live file) and rollback (a backup goes back)
both run :data:`REPLACE_SCRIPT` on the server's python3, the interpreter the agents
already need. It

1. takes the new bytes from a file already on the server (the candidate is renamed;
   a backup is copied beside the target, never re-streamed over the network),
2. proves them whole: size and SHA-256 must be the ones we expect,
3. gives them the live file's mode, owner and SELinux label and flushes them to disk,
4. hashes the live file through an open descriptor and refuses (exit 10) unless it
   is exactly the version the caller expects to replace,
5. swaps with ``renameat2(RENAME_EXCHANGE)``, so the file it displaced is still at
   hand, and checks that it is the very inode it hashed with the same bytes. If an
   editor saved in the gap (a rename, or a write into the file), the two are
   swapped back: their version stays live and nothing is reported as applied.

Where the filesystem cannot exchange (old kernels, some network filesystems), a plain
rename is used after checking the inode, and a write into the old file in the gap is
still detected and put back; only a rename by someone else in the few microseconds
between that check and ours could then go unseen.
"""

from __future__ import annotations

from dataclasses import dataclass

from sambatune.remote.transport import Transport

CHANGED_EXIT = 10
DAMAGED_EXIT = 3

# Runs under the server's python3 (3.6+). argv: target, sha256 the target must have,
# source file, sha256 and size the new bytes must have, "move" or "copy".
# The marker line below is where a test injects an editor's save (see tests/faults).
REPLACE_SCRIPT = r'''
import ctypes, hashlib, os, shutil, signal, subprocess, sys, tempfile
# Die well before the client stops waiting (120 s): when it gives up, this is gone and
# what it read back from the server is final, not a swap still about to happen.
signal.alarm(60)
target, expected, source, want_sha, want_size, how = sys.argv[1:7]
CHANGED, DAMAGED = 10, 3
directory = os.path.dirname(target) or "."
base = os.path.basename(target)

def digest_fd(fd):
    h = hashlib.sha256()
    os.lseek(fd, 0, 0)
    while True:
        block = os.read(fd, 1 << 16)
        if not block:
            return h.hexdigest()
        h.update(block)

def digest(path):
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        return digest_fd(fd)
    finally:
        os.close(fd)

libc = ctypes.CDLL(None, use_errno=True)
renameat2 = getattr(libc, "renameat2", None)

def exchange(a, b):
    """Swap two names atomically; False where the system or filesystem cannot."""
    if renameat2 is None:
        return False
    if renameat2(-100, a.encode(), -100, b.encode(), 2) == 0:
        return True
    return False

if how == "copy":
    fd, tmp = tempfile.mkstemp(prefix="." + base + ".sambatune-restore.", dir=directory)
    with os.fdopen(fd, "wb") as out, open(source, "rb") as src:
        shutil.copyfileobj(src, out)
else:
    tmp = source
keep = None
try:
    new_fd = os.open(tmp, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        size = os.fstat(new_fd).st_size
        if size != int(want_size) or digest_fd(new_fd) != want_sha:
            sys.stderr.write("the new bytes on the server are not the ones sent "
                             "(%d of %s bytes, or another checksum)\n" % (size, want_size))
            sys.exit(DAMAGED)
        live = os.stat(target)
        os.chmod(tmp, live.st_mode & 0o7777)
        try:
            os.chown(tmp, live.st_uid, live.st_gid)
        except OSError:
            pass
        if shutil.which("chcon"):
            subprocess.call(["chcon", "--reference=" + target, tmp],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.fsync(new_fd)
    finally:
        os.close(new_fd)
    old_fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW)
    old = os.fstat(old_fd)
    if digest_fd(old_fd) != expected:
        sys.exit(CHANGED)
    # between the check and the swap
    if exchange(tmp, target):
        now = os.lstat(tmp)
        if (now.st_dev, now.st_ino) != (old.st_dev, old.st_ino) or digest(tmp) != expected:
            exchange(tmp, target)
            sys.exit(CHANGED)
    else:
        if os.lstat(target).st_ino != old.st_ino:
            sys.exit(CHANGED)
        os.rename(tmp, target)
        tmp = None
        if digest_fd(old_fd) != expected:
            # Someone wrote into the file we replaced: their bytes go back live.
            fd, keep = tempfile.mkstemp(prefix="." + base + ".sambatune-theirs.", dir=directory)
            os.lseek(old_fd, 0, 0)
            with os.fdopen(fd, "wb") as out:
                while True:
                    block = os.read(old_fd, 1 << 16)
                    if not block:
                        break
                    out.write(block)
            os.chmod(keep, old.st_mode & 0o7777)
            try:
                os.chown(keep, old.st_uid, old.st_gid)
            except OSError:
                pass
            os.rename(keep, target)
            keep = None
            sys.exit(CHANGED)
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
finally:
    for leftover in (tmp, keep):
        if leftover and os.path.lexists(leftover):
            os.unlink(leftover)
'''


@dataclass(frozen=True)
class ReplaceResult:
    changed_meanwhile: bool  # the live file was not the expected version: nothing replaced
    ok: bool
    error: str


def replace_verified(
    transport: Transport,
    target: str,
    *,
    expected_sha256: str,
    source: str,
    source_sha256: str,
    size: int,
    how: str,
    sudo: bool = False,
    timeout: float = 120.0,
) -> ReplaceResult:
    """Replace ``target`` by the server-side file ``source`` ("move" or "copy")."""
    result = transport.run(
        # -I -S: nothing from the environment or a site directory runs as root with it
        # (and it starts faster).
        [
            "python3",
            "-I",
            "-S",
            "-c",
            REPLACE_SCRIPT,
            target,
            expected_sha256,
            source,
            source_sha256,
            str(size),
            how,
        ],
        sudo=sudo,
        timeout=timeout,
    )
    if result.exit_code == CHANGED_EXIT:
        return ReplaceResult(True, False, "")
    text = result.error_text.strip()
    if result.exit_code == 127:
        text = "python3 is not installed on the server"
    last = text.splitlines()[-1] if text else ""
    return ReplaceResult(False, result.ok, last or ("" if result.ok else f"exit code {result.exit_code}"))
