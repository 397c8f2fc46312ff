"""disk: sequential write and read of one test file, and the small-file metadata rate.

Runs on the server, standard library only, Python 3.6+. See README.md for the protocol.

Params:
  directory        where the test file goes, normally a share's path (required)
  size             bytes in the test file, rounded up to whole blocks (default 1 GiB)
  block_size       bytes per write/read call (default 1 MiB)
  cache            "bypass": keep the page cache out of the figures (O_DIRECT where the
                   filesystem allows it, otherwise drop the file's cached pages before
                   reading); "buffered": ordinary I/O through the page cache (default bypass)
  drop_caches      with cache=bypass, as root and without O_DIRECT: also write 1 to
                   /proc/sys/vm/drop_caches (affects the whole server; default false)
  repeat           how many runs; the app counts the first ones as warm-ups (default 1)
  operations       any of "write", "read", "metadata" (default all three)
  metadata_files   files created, stat'ed and unlinked per metadata run (default 1000)
  sample_interval  seconds between samples (default 0.5)

Lines: ``run_started`` {run, series}; ``sample`` {run, series, t, bytes, bytes_per_s};
``run`` {run, series, bytes or operations, seconds}. Result: how the cache was kept
out (``cache``), the filesystem, the file and block sizes.
"""

import errno
import mmap
import os
import struct
import time

import agent_runtime
from agent_runtime import AgentFailure

DEFAULT_SIZE = 1 << 30
DEFAULT_BLOCK = 1 << 20
OPERATIONS = ("write", "read", "metadata")

# Names for how reads were kept away from the page cache, as the app shows them.
CACHE_DIRECT = "o_direct"
CACHE_FADVISE = "fadvise_dontneed"
CACHE_DROP = "drop_caches"
CACHE_BUFFERED = "buffered"
CACHE_MEMORY_FS = "memory_filesystem"
MEMORY_FILESYSTEMS = ("tmpfs", "ramfs")


def positive_int(params, key, default):
    value = params.get(key, default)
    try:
        value = int(value)
    except (TypeError, ValueError) as exc:
        raise AgentFailure(
            "bad-parameter", "%s must be a whole number, not %r" % (key, value)) from exc
    if value <= 0:
        raise AgentFailure("bad-parameter", "%s must be positive, not %d" % (key, value))
    return value


def direct_io_works(directory, block_size):
    """Whether this filesystem accepts O_DIRECT writes of ``block_size`` bytes."""
    flag = getattr(os, "O_DIRECT", 0)
    if not flag:
        return False
    path = os.path.join(directory, "direct-probe")
    buffer = mmap.mmap(-1, block_size)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | flag, 0o600)
    except OSError:
        return False
    try:
        os.write(fd, buffer)
        return True
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP):
            return False
        raise
    finally:
        os.close(fd)
        buffer.close()
        try:
            os.unlink(path)
        except OSError:
            pass


def fill(buffer):
    """Random content, so compressing or deduplicating filesystems cannot cheat."""
    buffer.seek(0)
    buffer.write(os.urandom(len(buffer)))
    buffer.seek(0)


def write_file(agent, path, size, buffer, flags, sampler):
    """Write ``size`` bytes in blocks of ``len(buffer)``, fsync, close; return seconds."""
    block = len(buffer)
    view = memoryview(buffer)
    started = time.monotonic()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | flags, 0o600)
    try:
        written = 0
        index = 0
        while written < size:
            # A different first word per block: every block's content is unique.
            struct.pack_into("<Q", buffer, 0, index)
            count = os.write(fd, view)
            if count <= 0:
                raise AgentFailure("short-write", "The filesystem accepted no more data.")
            if count < block:
                view_rest = view[count:]
                while view_rest:
                    more = os.write(fd, view_rest)
                    view_rest = view_rest[more:]
            written += block
            index += 1
            sampler.add(block)
        os.fsync(fd)
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise AgentFailure(
                "not-enough-space", "The disk filled up during the test: %s" % exc) from exc
        raise
    finally:
        os.close(fd)
    return time.monotonic() - started


def read_file(agent, path, buffer, flags, sampler):
    """Read the whole file in blocks of ``len(buffer)``; return (bytes, seconds)."""
    started = time.monotonic()
    fd = os.open(path, os.O_RDONLY | flags)
    total = 0
    try:
        while True:
            count = os.readv(fd, [buffer])
            if count <= 0:
                break
            total += count
            sampler.add(count)
    finally:
        os.close(fd)
    return total, time.monotonic() - started


def forget_cached_pages(path):
    """Drop the file's clean pages from the page cache (it was fsync'ed, so all are clean)."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None:
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        advise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return True


def drop_all_caches():
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as handle:
            handle.write("1\n")
        return True
    except OSError:
        return False


def choose_cache_method(params, directory, block_size, fstype):
    """How reads avoid the page cache here, and the open flags that go with it."""
    wanted = params.get("cache", "bypass")
    if wanted not in ("bypass", "buffered"):
        raise AgentFailure("bad-parameter", "cache must be 'bypass' or 'buffered', not %r" % wanted)
    if wanted == "buffered":
        return CACHE_BUFFERED, 0
    if fstype in MEMORY_FILESYSTEMS:
        return CACHE_MEMORY_FS, 0
    if block_size % 4096 == 0 and direct_io_works(directory, block_size):
        return CACHE_DIRECT, os.O_DIRECT
    if params.get("drop_caches") and os.geteuid() == 0:
        return CACHE_DROP, 0
    if hasattr(os, "posix_fadvise"):
        return CACHE_FADVISE, 0
    return CACHE_BUFFERED, 0


CACHE_EXPLANATIONS = {
    CACHE_DIRECT: "O_DIRECT: reads and writes went straight to the disk, past the page cache.",
    CACHE_FADVISE: "This filesystem refuses O_DIRECT; the file's cached pages were dropped "
                   "(posix_fadvise DONTNEED) before each read.",
    CACHE_DROP: "This filesystem refuses O_DIRECT; the kernel's page cache was emptied "
                "(drop_caches) before each read.",
    CACHE_BUFFERED: "Buffered I/O: reads may come from the page cache (memory), not the disk.",
    CACHE_MEMORY_FS: "This is a memory filesystem: the page cache is the storage, so these "
                     "are memory speeds.",
}


def metadata_run(agent, directory, count, run):
    """Create, stat and unlink ``count`` empty files; one ``run`` line per phase."""
    names = [os.path.join(directory, "f%07d" % index) for index in range(count)]
    phases = (
        ("metadata-create", lambda p: os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))),
        ("metadata-stat", os.stat),
        ("metadata-unlink", os.unlink),
    )
    for series, operation in phases:
        agent.emit("run_started", run=run, series=series)
        started = time.monotonic()
        for index, name in enumerate(names):
            operation(name)
            if index & 255 == 0:
                agent.check()
        seconds = time.monotonic() - started
        agent.emit("run", run=run, series=series, operations=count, seconds=round(seconds, 6))


def main(agent, params):
    directory = params.get("directory")
    if not directory:
        raise AgentFailure("bad-parameter", "Which directory should the disk test use?")
    if not os.path.isdir(directory):
        raise AgentFailure("no-such-directory", "%s is not a directory on this server." % directory)
    block_size = positive_int(params, "block_size", DEFAULT_BLOCK)
    size = positive_int(params, "size", DEFAULT_SIZE)
    size = -(-size // block_size) * block_size
    repeat = positive_int(params, "repeat", 1)
    operations = params.get("operations") or list(OPERATIONS)
    unknown = [o for o in operations if o not in OPERATIONS]
    if unknown:
        raise AgentFailure("bad-parameter", "Unknown disk operations: %s" % ", ".join(unknown))
    metadata_files = positive_int(params, "metadata_files", 1000)
    interval = float(params.get("sample_interval", 0.5))

    needs_file = "write" in operations or "read" in operations
    agent_runtime.require_free_space(
        directory, (size if needs_file else 0) + (metadata_files * 4096 if "metadata" in operations else 0))
    if "metadata" in operations:
        agent_runtime.require_free_inodes(directory, metadata_files)
    work = agent.work_dir(directory)
    mount_point, fstype = agent_runtime.filesystem_type(work)
    method, flags = choose_cache_method(params, work, block_size, fstype)
    path = agent.own_path(os.path.join(work, "testfile"))
    buffer = mmap.mmap(-1, block_size)  # page-aligned, as O_DIRECT wants
    fill(buffer)
    agent.on_cleanup(buffer.close)

    if "read" in operations and "write" not in operations:
        # Reading needs a file: write it once, unmeasured.
        agent.progress(0.0, "writing the test file")
        write_file(agent, path, size, buffer, flags, agent_runtime.Sampler(agent, 1e9))
    for run in range(1, repeat + 1):
        agent.progress((run - 1) / float(repeat), "run %d of %d" % (run, repeat))
        if "write" in operations:
            agent.emit("run_started", run=run, series="write")
            sampler = agent_runtime.Sampler(agent, interval, run=run, series="write")
            seconds = write_file(agent, path, size, buffer, flags, sampler)
            agent.emit("run", run=run, series="write", bytes=size, seconds=round(seconds, 6))
        if "read" in operations:
            if method == CACHE_FADVISE:
                forget_cached_pages(path)
            elif method == CACHE_DROP and not drop_all_caches():
                forget_cached_pages(path)
                method = CACHE_FADVISE
            agent.emit("run_started", run=run, series="read")
            sampler = agent_runtime.Sampler(agent, interval, run=run, series="read")
            count, seconds = read_file(agent, path, buffer, flags, sampler)
            agent.emit("run", run=run, series="read", bytes=count, seconds=round(seconds, 6))
        agent.check()
        if "metadata" in operations:
            metadata_run(agent, work, metadata_files, run)
    agent.progress(1.0, "done")
    return {
        "directory": directory,
        "file_bytes": size,
        "block_size": block_size,
        "cache": method,
        "cache_explanation": CACHE_EXPLANATIONS[method],
        "filesystem": {"mount_point": mount_point, "type": fstype},
        "metadata_files": metadata_files if "metadata" in operations else 0,
        "operations": operations,
    }


if __name__ == "__main__":
    agent_runtime.run("disk", main)
