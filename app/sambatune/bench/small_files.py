"""Many small files from this computer: create+write, stat, read, rename, list, delete.

Large copies measure bandwidth; a build tree, a mail store or a photo library is a
matter of round trips, and there every file costs several requests (create, write,
close) whatever its size. This test makes N files of S bytes in a directory of its own
on the share and times each operation, one file at a time per request slot, with K
requests in flight (like ``robocopy /MT:K``): per operation its rate (ops/s) and the
p50 and p99 latency of a single call.

Two ways in, as for the large-file test (:mod:`sambatune.bench.smb_client`): SambaTune's
SMB client (smbprotocol) with a server and share, or the operating system's own client
through a mounted path. The directory is named like every probe file
(:data:`~sambatune.bench.smb_wire.PROBE_PREFIX`), so it is recognisably SambaTune's,
and it is removed with everything in it at the end: after a cancel, an error or a
dropped connection too (then over a new connection).

K requests in flight are K threads. SMB could pipeline them on one thread, but each
file operation is several requests that depend on each other (the write needs the
handle the create returned), so a thread per slot that waits for its own answers is
the plain way to keep K operations going, and it is what a multi-threaded copy on a
client does. All threads share one SMB session, as ``robocopy /MT`` shares its
redirector's session: one logon, one TCP connection, K requests on it at once. For a
mounted path the threads call the operating system, which releases the interpreter
lock while it waits.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import secrets
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from sambatune.bench.context import BenchContext
from sambatune.bench.events import BenchEvent, Progress, Step
from sambatune.bench.records import OPERATIONS
from sambatune.bench.runner import Method, Recorder
from sambatune.bench.smb_client import (
    CLIENT_BUSY_SHARE,
    OS_PATH,
    SMBPROTOCOL,
    ShareTarget,
    ShareTargetBenchmark,
)
from sambatune.bench.smb_compounds import LISTING_CHARGE
from sambatune.bench.smb_file_ops import SmbFileOps, file_operations
from sambatune.bench.smb_wire import PROBE_PREFIX, SmbProbeConnection, connection_lost
from sambatune.cancellation import CancelToken
from sambatune.errors import Cancelled, InvalidInput, SambaTuneError
from sambatune.remote.transport import Transport
from sambatune.units import format_bytes, format_operations_rate, format_percent

CREATE, STAT, READ, RENAME, LIST, DELETE = "create", "stat", "read", "rename", "list", "delete"
#: In the order they run: each works on what the one before left.
OPERATION_NAMES = (CREATE, STAT, READ, RENAME, LIST, DELETE)
OPERATION_LABELS = {
    CREATE: "create and write a new file, close it",
    STAT: "stat a file (open for its attributes, close)",
    READ: "open a file, read it whole, close it",
    RENAME: "rename a file in its directory",
    LIST: "list the whole directory",
    DELETE: "delete a file",
}
DEFAULT_COUNT = 2000
MAX_COUNT = 100_000
DEFAULT_SIZE = 4096
#: Small files: one read request fetches a file whole (servers allow at least 64 KiB).
MAX_SIZE = 64 << 10
MAX_OUTSTANDING = 64
#: A listing is one operation over all N names; this many give its p50 and p99 something
#: to stand on without a 100,000-file run spending minutes listing.
LISTINGS = 10
#: The test's directory on the share: a probe name, so it is recognisably SambaTune's.
DIRECTORY_PREFIX = f"{PROBE_PREFIX}files-"
#: How long the threads get to finish the call they are in after a cancel, before the
#: connection is closed under them (a call on a healthy server takes milliseconds).
STOP_GRACE = 0.5
POLL = 0.1
#: How long a clean-up over a new connection keeps trying while the server winds down the
#: cut one (its smbd process closes that session's files when it notices the cut).
FRESH_CLEAN_UP_SECONDS = 15.0


@dataclass(frozen=True)
class SmallFilesOptions(ShareTarget):
    count: int = DEFAULT_COUNT
    size: int = DEFAULT_SIZE
    #: Operations in flight at once (threads).
    outstanding: int = 1
    #: SMB connections the operations are spread over (SambaTune's client only): each is
    #: a session of its own, served by an smbd process of its own, as that many clients.
    connections: int = 1

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 1 <= self.count <= MAX_COUNT:
            raise InvalidInput(f"The file count must be between 1 and {MAX_COUNT:,} (not {self.count:,}).")
        if not 0 <= self.size <= MAX_SIZE:
            raise InvalidInput(
                f"The file size must be between 0 and {format_bytes(MAX_SIZE, 0)} "
                f"(not {self.size:,} bytes): this is the small-file test.",
                details="For large files, use 'sambatune bench smb-client'.",
            )
        if not 1 <= self.outstanding <= MAX_OUTSTANDING:
            raise InvalidInput(f"Between 1 and {MAX_OUTSTANDING} operations can be in flight.")
        if not 1 <= self.connections <= self.outstanding:
            raise InvalidInput(
                f"Between 1 and {self.outstanding} connections: each carries at least one of "
                f"the {self.outstanding} operations in flight."
            )
        if self.connections > 1 and self.path:
            raise InvalidInput(
                "More than one connection needs SambaTune's own client (a server and share): "
                "a mounted path goes through the one connection of its mount."
            )

    def to_json(self) -> dict[str, Any]:
        return {
            **self.target_json(),
            "count": self.count,
            "size": self.size,
            "outstanding": self.outstanding,
            "connections": self.connections,
        }


class FileOperations(Protocol):
    """The operations timed, on names relative to where the test runs."""

    def join(self, directory: str, name: str) -> str: ...
    def make_directory(self, name: str) -> None: ...
    def create_and_write(self, name: str, data: bytes) -> None: ...
    def stat(self, name: str) -> int: ...
    def read_whole(self, name: str, size: int) -> int: ...
    def rename(self, name: str, new_name: str) -> None: ...
    def list_directory(self, name: str) -> list[str]: ...
    def delete(self, name: str) -> None: ...
    def remove_tree(self, name: str) -> None: ...
    def exists(self, name: str) -> bool: ...


class SpreadOperations:
    """The timed operations spread over several connections: each thread keeps to the
    connection it was given first (in turn), as each of that many clients keeps its own.
    Making and removing the directory goes through the first."""

    def __init__(self, connections: Sequence[SmbFileOps]) -> None:
        self.connections = list(connections)
        self._turn = itertools.count()
        self._mine = threading.local()
        self.join = self.connections[0].join
        self.make_directory = self.connections[0].make_directory
        self.remove_tree = self.connections[0].remove_tree
        self.exists = self.connections[0].exists

    def _ops(self) -> SmbFileOps:
        ops = getattr(self._mine, "ops", None)
        if ops is None:
            ops = self._mine.ops = self.connections[next(self._turn) % len(self.connections)]
        return ops

    def create_and_write(self, name: str, data: bytes) -> None:
        self._ops().create_and_write(name, data)

    def stat(self, name: str) -> int:
        return self._ops().stat(name)

    def read_whole(self, name: str, size: int) -> int:
        return self._ops().read_whole(name, size)

    def rename(self, name: str, new_name: str) -> None:
        self._ops().rename(name, new_name)

    def list_directory(self, name: str) -> list[str]:
        return self._ops().list_directory(name)

    def delete(self, name: str) -> None:
        self._ops().delete(name)


class PathFileOperations:
    """The operating system's client: plain file calls under a mounted directory."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def join(self, directory: str, name: str) -> str:
        return f"{directory}/{name}"

    def _at(self, name: str) -> Path:
        return self.root / name

    def make_directory(self, name: str) -> None:
        self._at(name).mkdir()

    def create_and_write(self, name: str, data: bytes) -> None:
        # "x": a new file only, never one that is there already.
        with open(self._at(name), "xb", buffering=0) as handle:
            handle.write(data)

    def stat(self, name: str) -> int:
        return os.stat(self._at(name)).st_size

    def read_whole(self, name: str, size: int) -> int:
        with open(self._at(name), "rb", buffering=0) as handle:
            return len(handle.read(size + 1))

    def rename(self, name: str, new_name: str) -> None:
        target = self._at(new_name)
        if target.exists():  # os.rename would replace it on POSIX; SMB's rename refuses
            raise FileExistsError(str(target))
        os.rename(self._at(name), target)

    def list_directory(self, name: str) -> list[str]:
        with os.scandir(self._at(name)) as entries:
            return [entry.name for entry in entries]

    def delete(self, name: str) -> None:
        self._at(name).unlink()

    def remove_tree(self, name: str) -> None:
        directory = self._at(name)
        if not directory.exists():
            return
        for entry in os.listdir(directory):
            with contextlib.suppress(FileNotFoundError):
                (directory / entry).unlink()
        directory.rmdir()

    def exists(self, name: str) -> bool:
        return self._at(name).exists()


def percentile(sorted_values: Sequence[float], p: float) -> float | None:
    """Nearest-rank percentile of values sorted ascending: p99 of 100 samples is the 99th."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(p / 100.0 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def latency_summary(latencies: Sequence[float]) -> dict[str, Any]:
    ordered = sorted(latencies)
    return {
        "samples": len(ordered),
        "p50_seconds": percentile(ordered, 50),
        "p99_seconds": percentile(ordered, 99),
        "mean_seconds": sum(ordered) / len(ordered) if ordered else None,
        "max_seconds": ordered[-1] if ordered else None,
    }


class _Crew:
    """K threads doing ``work(i)`` for i in range(count), each call timed.

    The threads take the next index from a shared counter, so a slow call holds up only
    its own slot. The first error stops them all; so does the cancel token.
    """

    def __init__(self, work: Callable[[int], None], count: int, threads: int, cancel: CancelToken) -> None:
        self.work = work
        self.count = count
        self.cancel = cancel
        self.latencies: list[float] = []
        self.error: BaseException | None = None
        self._next = itertools.count()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.threads = [
            threading.Thread(target=self._run, name="sambatune-small-files", daemon=True)
            for _ in range(min(threads, count))
        ]
        self.seconds = 0.0
        #: CPU time this process used meanwhile (all threads): how busy the client was.
        self.cpu_seconds = 0.0
        self._started = 0.0
        self._cpu = 0.0

    def _run(self) -> None:
        while not self._stop.is_set() and not self.cancel.cancelled:
            with self._lock:
                index = next(self._next)
            if index >= self.count:
                return
            started = time.perf_counter()
            try:
                self.work(index)
            except BaseException as exc:  # handed to the benchmark, which raises it
                with self._lock:
                    if self.error is None:
                        self.error = exc
                self._stop.set()
                return
            self.latencies.append(time.perf_counter() - started)

    def start(self) -> _Crew:
        self._started = time.perf_counter()
        self._cpu = time.process_time()
        for thread in self.threads:
            thread.start()
        return self

    @property
    def done(self) -> int:
        return len(self.latencies)

    def wait(self, seconds: float) -> bool:
        """True when every thread has ended (``seconds`` at most to wait)."""
        deadline = time.monotonic() + seconds
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                return False
        self.seconds = time.perf_counter() - self._started
        self.cpu_seconds = time.process_time() - self._cpu
        return True

    def stop(self, grace: float, abort: Callable[[], None]) -> None:
        """Stop the threads: they end after their current call, or ``abort`` cuts it short."""
        self._stop.set()
        if not self.wait(grace):
            abort()
            self.wait(5.0)


class SmallFilesBenchmark(ShareTargetBenchmark[SmallFilesOptions]):
    test = "small-files"

    def __init__(
        self,
        transport: Transport | None = None,
        method: Method | None = None,
        options: SmallFilesOptions | None = None,
        *,
        context: BenchContext | None = None,
        cancel: CancelToken | None = None,
    ) -> None:
        super().__init__(transport, method, options, context=context, cancel=cancel)
        #: SambaTune's client's connections (the first makes and removes the directory).
        self._probes: list[SmbProbeConnection] = []
        #: The directory the test made (relative to the share or the path), once it exists.
        self.directory: str | None = None

    def default_options(self) -> SmallFilesOptions:
        raise InvalidInput("The small-file test needs options (the share or a path).")

    def primary_series(self, recorder: Recorder) -> str:
        return CREATE

    def _measure(self, recorder: Recorder) -> Iterator[BenchEvent]:
        options = self.options
        for name in OPERATION_NAMES:
            recorder.declare(name, OPERATION_LABELS[name], OPERATIONS)
        yield Progress(None, f"connecting to {options.where}")
        ops = self._connect(recorder)
        directory = f"{DIRECTORY_PREFIX}{secrets.token_hex(6)}"
        try:
            try:
                ops.make_directory(directory)
            except Exception as exc:  # a read-only share, no rights: said plainly
                raise _explained(exc, f"Could not make the test directory on {options.where}") from exc
            self.directory = directory
            recorder.extra["directory"] = directory
            latencies: dict[str, list[float]] = {name: [] for name in OPERATION_NAMES}
            for attempt in range(1, self.method.attempts + 1):
                yield from self._attempt(recorder, ops, directory, attempt, latencies)
            recorder.extra["latency"] = {name: latency_summary(v) for name, v in latencies.items()}
            recorder.extra["operations"] = operations_table(recorder)
            listings = getattr(ops, "listings", None)
            if listings is not None:  # under directory leases: how many the server answered
                recorder.extra["listings"] = listings.counts.to_json()
            note = client_limit_note(recorder, options.client)
            if note:
                yield recorder.note(note)
        except BaseException:
            # Stopped from outside (Ctrl-C) or failed: the cancel stops any thread still going.
            self.cancel.cancel()
            raise
        finally:
            self._clean_up(ops, directory)
            for probe in self._probes:
                probe.close()

    def _connect(self, recorder: Recorder) -> FileOperations:
        options = self.options
        if options.path:
            root = Path(options.path)
            if not root.is_dir():
                raise InvalidInput(
                    f"{options.path} is not a directory this computer can reach.",
                    details="Give the mount point of the share (Linux, macOS) or its UNC path "
                    r"(\\server\share on Windows).",
                )
            recorder.extra["client"] = {"client": OS_PATH, "path": str(root)}
            return PathFileOperations(root)
        assert options.server and options.share
        connections: list[SmbFileOps] = []
        try:
            for _ in range(options.connections):
                probe = SmbProbeConnection(options.server, options.share, options.port, options.login)
                probe.connect()
                self._probes.append(probe)
                # Every thread has one operation out at a time: a compound of up to three
                # requests of one credit each (files of at most 64 KiB), or a listing's.
                probe.ensure_credits(LISTING_CHARGE * -(-options.outstanding // options.connections) + 1)
                connections.append(file_operations(probe))
        except BaseException:
            for probe in self._probes:
                probe.close()
            raise
        recorder.extra["client"] = {**self._probes[0].facts(), "connections": options.connections}
        return connections[0] if len(connections) == 1 else SpreadOperations(connections)

    def _attempt(
        self,
        recorder: Recorder,
        ops: FileOperations,
        directory: str,
        attempt: int,
        latencies: dict[str, list[float]],
    ) -> Iterator[BenchEvent]:
        options = self.options
        count, size = options.count, options.size
        data = os.urandom(size)
        # The names differ per attempt so no attempt can trip over another's leftovers.
        names = [ops.join(directory, f"file-{attempt}-{i:06d}.bin") for i in range(count)]
        renamed = [ops.join(directory, f"renamed-{attempt}-{i:06d}.bin") for i in range(count)]

        def check(what: str, got: int, index: int) -> None:
            if got != size:
                raise SambaTuneError(
                    f"The {what} of {names[index]} gave {got:,} bytes, not the {size:,} written."
                )

        def listing(_index: int) -> None:
            found = len(ops.list_directory(directory))
            if found != count:
                raise SambaTuneError(f"The listing of {directory} had {found:,} names, not {count:,}.")

        steps: list[tuple[str, Callable[[int], None], int]] = [
            (CREATE, lambda i: ops.create_and_write(names[i], data), count),
            (STAT, lambda i: check("stat", ops.stat(names[i]), i), count),
            (READ, lambda i: check("read", ops.read_whole(names[i], size), i), count),
            (RENAME, lambda i: ops.rename(names[i], renamed[i]), count),
            (LIST, listing, LISTINGS),
            (DELETE, lambda i: ops.delete(renamed[i]), count),
        ]
        for index, (name, work, operations) in enumerate(steps, 1):
            self.cancel.raise_if_cancelled()
            yield Step(index, len(steps), OPERATION_LABELS[name], (name,))
            yield recorder.started(name, attempt)
            crew = yield from self._run_crew(name, work, operations, attempt)
            summary = latency_summary(crew.latencies)
            if not self.method.is_warmup(attempt):
                latencies[name].extend(crew.latencies)
            yield recorder.record(
                name,
                attempt,
                seconds=crew.seconds,
                operations=crew.done,
                details={
                    "client": options.client,
                    "outstanding": options.outstanding,
                    "size": size,
                    "files": count,
                    "cpu_seconds": crew.cpu_seconds,
                    "client_cpu_share": crew.cpu_seconds / crew.seconds if crew.seconds > 0 else None,
                    **summary,
                },
            )

    def _run_crew(
        self, name: str, work: Callable[[int], None], count: int, attempt: int
    ) -> Generator[BenchEvent, None, _Crew]:
        crew = _Crew(work, count, self.options.outstanding, self.cancel).start()
        total = self.method.attempts * len(OPERATION_NAMES)
        position = (attempt - 1) * len(OPERATION_NAMES) + OPERATION_NAMES.index(name)
        started = time.monotonic()
        try:
            # The token is watched here too: a thread waiting for an answer that does
            # not come sees it only when the connection is closed under it (``_stop``).
            while not crew.wait(POLL) and not self.cancel.cancelled:
                done = crew.done
                fraction = (position + done / count) / total
                elapsed = time.monotonic() - started
                # The rate so far, as the live figure: a step can run for minutes.
                rate = f", {format_operations_rate(done / elapsed)}" if done and elapsed > 0 else ""
                yield Progress(fraction, f"{name}: {done:,} of {count:,}{rate}")
        except BaseException:
            self._stop(crew)
            raise
        if self.cancel.cancelled:
            self._stop(crew)
            raise Cancelled("The small-file test was cancelled.")
        if crew.error is not None:
            raise _explained(crew.error, f"{OPERATION_LABELS[name]}: failed")
        # A step that ends between two looks (a fast server's) still moves the bar.
        rate = f", {format_operations_rate(crew.done / crew.seconds)}" if crew.seconds > 0 else ""
        yield Progress((position + 1) / total, f"{name}: {crew.done:,} of {count:,}{rate}")
        return crew

    def _stop(self, crew: _Crew) -> None:
        self.cancel.cancel()
        crew.stop(STOP_GRACE, self._abort)

    def _abort(self) -> None:
        for probe in self._probes:
            probe.abort()

    def _clean_up(self, ops: FileOperations, directory: str) -> None:
        """Remove the test's directory with whatever is in it; over a new connection when
        a cancel or a dropped connection left one of them unusable (its server process
        may still hold files open there until it notices)."""
        probe = self._probes[0] if self._probes else None
        try:
            if probe is None:
                ops.remove_tree(directory)
                return
            if all(p.usable for p in self._probes):
                try:
                    ops.remove_tree(directory)
                    return
                except Exception as exc:
                    if probe.usable and not connection_lost(exc):
                        raise
            # Cut before or while cleaning up: try again on a new connection.
            self._abort()
            self._clean_up_fresh(probe, directory)
        except Exception as exc:
            raise _explained(
                exc, f"The test directory {directory} could not be removed from {self.options.where}"
            ) from exc

    def _clean_up_fresh(self, probe: SmbProbeConnection, directory: str) -> None:
        """Remove the directory over a new connection, trying again for a few seconds:
        the server's process of the cut connection still holds its open files until it
        notices the cut, and meanwhile the files it opened are only pending deletion, so
        the directory is not yet empty (seen on a loaded machine)."""
        deadline = time.monotonic() + FRESH_CLEAN_UP_SECONDS
        with SmbProbeConnection(
            probe.server, probe.share, probe.port, probe.login, timeout=probe.timeout
        ) as fresh:
            ops = file_operations(fresh)
            while True:
                try:
                    ops.remove_tree(directory)
                    return
                except Exception:
                    if time.monotonic() > deadline or not fresh.usable:
                        raise
                time.sleep(0.2)


def client_limit_note(recorder: Recorder, client: str) -> str | None:
    """Say when SambaTune's own client, not the server or the network, set the rates.

    The client is Python: each operation is one compound packed and parsed with
    ``struct`` (about 0.1 ms of this computer's CPU; an encrypted session's requests go
    through smbprotocol, several times that), so a fast server can still leave the
    client's one interpreter busy.
    """
    if client != SMBPROTOCOL:
        return None
    shares = [
        r.details["client_cpu_share"]
        for series in recorder.series.values()
        for r in series.counted
        if isinstance(r.details.get("client_cpu_share"), float)
    ]
    if not shares or sum(shares) / len(shares) < CLIENT_BUSY_SHARE:
        return None
    recorder.extra["client_limited"] = True
    return (
        f"SambaTune's SMB client kept {format_percent(sum(shares) / len(shares), 0)} of a CPU "
        "core busy, so this computer's client was probably the limit, not the server or the "
        "network. Mount the share and measure through its path (the operating system's own "
        "client) to see the server's rate."
    )


def _explained(exc: BaseException, message: str) -> BaseException:
    """The failure, saying what failed (``message``, without a full stop)."""
    if isinstance(exc, (Cancelled, KeyboardInterrupt)):
        return exc
    if isinstance(exc, SambaTuneError):
        return SambaTuneError(f"{message}: {exc.message}", details=exc.details)
    return SambaTuneError(f"{message}.", details=f"{type(exc).__name__}: {exc}")


def operations_table(recorder: Recorder) -> list[dict[str, Any]]:
    """One row per operation over the counted runs: how many, ops/s, p50 and p99 latency."""
    rows = []
    for name in OPERATION_NAMES:
        series = recorder.series.get(name)
        counted = series.counted if series else []
        operations = sum(r.operations or 0 for r in counted)
        seconds = sum(r.seconds for r in counted)
        latency = recorder.extra.get("latency", {}).get(name, {})
        rows.append(
            {
                "operation": name,
                "label": OPERATION_LABELS[name],
                "count": operations,
                "seconds": seconds,
                "operations_per_s": operations / seconds if seconds > 0 else None,
                "p50_seconds": latency.get("p50_seconds"),
                "p99_seconds": latency.get("p99_seconds"),
            }
        )
    return rows


def format_operations(rows: list[dict[str, Any]]) -> list[str]:
    """The table for the command line: operation, count, ops/s, p50 and p99 in ms."""

    def ms(value: float | None) -> str:
        return "-" if value is None else f"{value * 1000:.2f}"

    lines = [f"{'Operation':<10} {'Count':>9} {'Ops/s':>14} {'p50 (ms)':>10} {'p99 (ms)':>10}"]
    for row in rows:
        lines.append(
            f"{row['operation']:<10} {row['count']:>9,} "
            f"{format_operations_rate(row['operations_per_s'], '-'):>14} "
            f"{ms(row['p50_seconds']):>10} {ms(row['p99_seconds']):>10}"
        )
    return lines
