"""SMB from this computer: write and read a test file on a share, as a client would.

Two ways in. With a server and share, SambaTune's own SMB client (smbprotocol) logs on
and keeps several requests in flight. With a path (a mount point, or a UNC path on
Windows) the operating system's client does the work: the real stack users have.
Both run here, on this computer, so the figure covers this computer, the network and
the server together; the server-side tests (net, disk, smb) split that up.

Each attempt writes the test file and then reads it back; warm-up attempts first,
as the method asks. The file is deleted at the end, also on failure or cancel. With no
size given, a short probe (one write and read of 4 MiB) first measures the rates, and
the file is sized so that all runs take about a minute (:mod:`sambatune.bench.sizing`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from sambatune.bench import path_probe
from sambatune.bench.context import BenchContext
from sambatune.bench.events import BenchEvent, Progress, Step
from sambatune.bench.progress import PlannedRun
from sambatune.bench.records import MOUNTED_SHARE_CLIENT
from sambatune.bench.runner import Benchmark, Method, Recorder
from sambatune.bench.sizing import adapted_size
from sambatune.bench.smb_security import (
    ServerSessions,
    cost_notes,
    describe,
    mismatch,
    session_on_port,
)
from sambatune.bench.smb_wire import (
    SECURITY_MODES,
    OnProgress,
    SmbLogin,
    SmbProbeConnection,
    Transfer,
)
from sambatune.cancellation import CancelToken
from sambatune.errors import InvalidInput, SambaTuneError
from sambatune.remote.local import LocalTransport
from sambatune.remote.transport import Transport
from sambatune.units import format_bits, format_bytes, format_percent, format_rate

WRITE, READ = "write", "read"
SMBPROTOCOL = "smbprotocol"
OS_PATH = MOUNTED_SHARE_CLIENT
SERIES_LABELS = {
    (SMBPROTOCOL, WRITE): "SMB write from this computer (SambaTune's client)",
    (SMBPROTOCOL, READ): "SMB read from this computer (SambaTune's client)",
    (OS_PATH, WRITE): "Write to the share through this computer's own SMB client",
    (OS_PATH, READ): "Read from the share through this computer's own SMB client",
}
#: Above these the client itself is the likely limit, so faster links need the OS path.
#: Both take the lean path (smb_bulk): reads 1.1 to 3.2 GB/s from a loopback smbd with
#: a third to half of a core busy, writes 0.3 to 1.7 GB/s (as fast as smbclient put;
#: the server's page cache sets the pace) with about a third of a core.
PURE_PYTHON_CEILING_BITS = {READ: 10e9, WRITE: 8e9}
#: A client process this busy (CPU seconds per second) is the limit itself.
CLIENT_BUSY_SHARE = 0.85
#: With no size given: a probe of this size, then a file between these sizes so that all
#: runs take about ``target_seconds`` (the largest is the form's old fixed default).
PROBE_SIZE = 4 << 20
#: The probe starts small: a transfer of this size that takes this long has measured a
#: slow server well enough, and 4 MiB at its pace could take a minute.
FIRST_PROBE_SIZE = 512 << 10
PROBE_ENOUGH_SECONDS = 1.0
SMALLEST_SIZE = 4 << 20
LARGEST_SIZE = 256 << 20
#: How long a transfer stopped from outside may take to notice (it polls every 50 ms).
STOP_WAIT = 5.0
#: Moves the test file: (where its progress goes, how many bytes).
Work = Callable[[OnProgress, int], Transfer]


@dataclass(frozen=True)
class ShareTarget:
    """Where a test from this computer runs: a share through SambaTune's own client, or a
    directory of a share this computer mounted (plain file I/O)."""

    server: str | None = None
    share: str | None = None
    port: int = 445
    login: SmbLogin = field(default_factory=SmbLogin)
    #: A directory on the share as this computer sees it (mount point or UNC path).
    path: str | None = None

    def __post_init__(self) -> None:
        if self.path and (self.server or self.share):
            raise InvalidInput("Give either a server and share, or a path, not both.")
        if not self.path and not (self.server and self.share):
            raise InvalidInput("Which share? Give the server and the share (or a mounted path).")
        if not 0 < self.port < 65536:
            raise InvalidInput(f"{self.port} is not a TCP port.")

    @property
    def client(self) -> str:
        return OS_PATH if self.path else SMBPROTOCOL

    @property
    def where(self) -> str:
        if self.path:
            return self.path
        port = "" if self.port == 445 else f":{self.port}"
        return f"//{self.server}{port}/{self.share}"

    def target_json(self) -> dict[str, Any]:
        return {
            "client": self.client,
            "server": self.server,
            "share": self.share,
            "port": self.port,
            "path": self.path,
            "user": self.login.user,
            "guest": self.login.guest,
            "domain": self.login.domain,
        }

    def to_json(self) -> dict[str, Any]:
        return self.target_json()


TargetT = TypeVar("TargetT", bound=ShareTarget)


class ShareTargetBenchmark(Benchmark[TargetT]):
    """A test that runs on this computer against a :class:`ShareTarget`."""

    def __init__(
        self,
        transport: Transport | None = None,
        method: Method | None = None,
        options: TargetT | None = None,
        *,
        context: BenchContext | None = None,
        cancel: CancelToken | None = None,
    ) -> None:
        # Nothing runs on the server through the transport; it only names the session.
        self._own_label = transport is None
        super().__init__(transport or LocalTransport(), method, options, context=context, cancel=cancel)

    @property
    def target_label(self) -> str:
        if self._own_label:
            return self.options.server or self.options.where
        return self.transport.label


@dataclass(frozen=True)
class SmbClientOptions(ShareTarget):
    #: The test file's size; None: sized from a short probe so the runs fit ``target_seconds``.
    size: int | None = None
    #: Bytes per request (capped at what the server negotiated) or per OS write/read.
    block_size: int = 4 << 20
    #: Requests in flight at once (SambaTune's client only).
    outstanding: int = 4
    operations: tuple[str, ...] = (WRITE, READ)
    sample_interval: float = 0.1
    target_seconds: float = 60.0
    #: Sessions to compare, one after the other on the same share and file size (plain,
    #: signed, encrypted); empty: one session as the probe always makes it.
    security: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        if (self.size is not None and self.size <= 0) or self.block_size <= 0:
            raise InvalidInput("The test file and the block size must be larger than 0 bytes.")
        if not 1 <= self.outstanding <= 64:
            raise InvalidInput("Between 1 and 64 requests can be in flight.")
        unknown = [o for o in self.operations if o not in (WRITE, READ)]
        if unknown or not self.operations:
            raise InvalidInput(f"The operations are write and read (not {unknown}).")
        if self.security:
            wrong = [m for m in self.security if m not in SECURITY_MODES]
            if wrong or len(set(self.security)) != len(self.security):
                raise InvalidInput(
                    f"Compare each of {', '.join(SECURITY_MODES)} once (not {', '.join(self.security)})."
                )
            if self.path:
                raise InvalidInput(
                    "A mounted path keeps the session its mount made: compare security "
                    "with SambaTune's own client (--server and --share)."
                )
            if self.login.guest and any(m != "plain" for m in self.security):
                raise InvalidInput(
                    "Signed and encrypted sessions need a user: a guest session has no key "
                    "to sign or encrypt with."
                )

    def to_json(self) -> dict[str, Any]:
        return {
            **self.target_json(),
            "size": self.size,
            "block_size": self.block_size,
            "outstanding": self.outstanding if self.client == SMBPROTOCOL else 1,
            "operations": list(self.operations),
            "security": list(self.security),
        }

    def series_name(self, operation: str, mode: str | None) -> str:
        """``read``, or ``read-signed`` when sessions are compared."""
        return operation if mode is None else f"{operation}-{mode}"


class _Watched(threading.Thread):
    """One transfer in a thread of its own, so the benchmark can sample it meanwhile."""

    def __init__(self, work: Callable[[OnProgress], Transfer]) -> None:
        super().__init__(name="sambatune-smb-probe", daemon=True)
        self.work = work
        self.progress = (0, 0.0)
        self.result: Transfer | None = None
        self.error: BaseException | None = None
        #: Set when the transfer has ended. Waited on instead of join(): a join that Ctrl-C
        #: interrupts marks the thread as ended while it still runs (Python 3.11).
        self.ended = threading.Event()

    def _on_progress(self, moved: int, seconds: float) -> None:
        self.progress = (moved, seconds)

    def run(self) -> None:
        try:
            self.result = self.work(self._on_progress)
        except BaseException as exc:  # handed to the benchmark, which raises it
            self.error = exc
        finally:
            self.ended.set()


class SmbClientBenchmark(ShareTargetBenchmark[SmbClientOptions]):
    test = "smb-client"

    def __init__(self, *args: Any, server_sessions: ServerSessions | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Reads the server's session list, to name what each compared session negotiated.
        self.server_sessions = server_sessions
        self._runs_done = 0
        self._runs_total = 0
        #: The largest transfer the sizing probe made (it starts small, see _probe).
        self.probe_size = 0

    def default_options(self) -> SmbClientOptions:
        raise InvalidInput("The SMB client test needs options (the share or a path).")

    def primary_series(self, recorder: Recorder) -> str:
        reads = [name for name in recorder.series if name.startswith(READ)]
        return reads[0] if reads else next(iter(recorder.series), WRITE)

    def _measure(self, recorder: Recorder) -> Iterator[BenchEvent]:
        options = self.options
        modes: tuple[str | None, ...] = options.security or (None,)
        for mode in modes:
            for name in (WRITE, READ):
                if name in options.operations:
                    label = SERIES_LABELS[(options.client, name)]
                    if mode is not None:
                        label = f"{label}, {mode} session"
                    recorder.declare(options.series_name(name, mode), label)
        self._runs_total = self.method.attempts * len(options.operations) * len(modes)
        if options.client == SMBPROTOCOL:
            size = options.size
            for mode in modes:
                size = yield from self._measure_smbprotocol(recorder, mode, size)
        else:
            yield from self._measure_path(recorder)
        if options.security:
            yield from self._security_costs(recorder)
        for message in client_limit_notes(recorder, options.client):
            yield recorder.note(message)

    # -- SambaTune's own client ----------------------------------------------------------
    def _measure_smbprotocol(
        self, recorder: Recorder, mode: str | None, size: int | None
    ) -> Generator[BenchEvent, None, int | None]:
        """One session (of kind ``mode`` when sessions are compared) through all its runs;
        returns the test file's size, chosen by the first session's probe when not given."""
        options = self.options
        assert options.server and options.share
        yield Progress(None, f"connecting to {options.where}" + (f" ({mode} session)" if mode else ""))
        connection = SmbProbeConnection(
            options.server, options.share, options.port, options.login, security=mode
        )
        connection.connect()
        try:
            facts = connection.facts()
            recorder.extra.setdefault("client", facts)
            if mode is not None:
                yield from self._record_negotiated(recorder, mode, connection, facts)
            elif connection.session_is_guest:
                yield recorder.note(
                    "Connected as a guest (no user given, or the server mapped the "
                    "user to its guest account)."
                )
            name = connection.new_name()
            created = False
            try:

                def write(on_progress: OnProgress, size: int) -> Transfer:
                    return connection.write_file(
                        name, size, options.block_size, options.outstanding, self.cancel, on_progress
                    )

                def read(on_progress: OnProgress, size: int) -> Transfer:
                    return connection.read_file(
                        name, size, options.block_size, options.outstanding, self.cancel, on_progress
                    )

                created = True
                return (yield from self._attempts(recorder, write, read, mode, size))
            finally:
                if created:
                    # A cancel may have closed the connection under a slow transfer.
                    connection.remove(name)
        finally:
            connection.close()

    def _record_negotiated(
        self, recorder: Recorder, mode: str, connection: SmbProbeConnection, facts: dict[str, Any]
    ) -> Iterator[BenchEvent]:
        """What the ``mode`` session got, from the server's session list when it can be read."""
        server = None
        why_not = "no connection to the server to read its session list"
        if self.server_sessions is not None:
            try:
                server = session_on_port(self.server_sessions(self.cancel), facts.get("local_port"))
            except SambaTuneError as exc:
                why_not = f"the server's session list could not be read: {exc}"
            else:
                if server is None:
                    why_not = "the server's session list did not show this session"
        recorder.extra.setdefault("security", {})[mode] = {
            "client": facts,
            "server": server.to_json() if server is not None else None,
            "server_not_read": None if server is not None else why_not,
        }
        yield recorder.note(describe(mode, facts, server, why_not))
        warning = mismatch(mode, server)
        if warning:
            yield recorder.note(warning)

    def _security_costs(self, recorder: Recorder) -> Iterator[BenchEvent]:
        """Each compared session's rate against the first one's (usually plain)."""
        options = self.options
        rows = []
        for operation in (WRITE, READ):
            if operation not in options.operations:
                continue
            by_mode = {
                mode: recorder.series[options.series_name(operation, mode)].values()
                for mode in options.security
            }
            rows += cost_notes(by_mode, operation, options.security[0])
        recorder.extra["security_cost"] = rows
        for row in rows:
            yield recorder.note(row["text"])

    # -- the operating system's client ------------------------------------------------
    def _measure_path(self, recorder: Recorder) -> Iterator[BenchEvent]:
        options = self.options
        assert options.path
        directory = path_probe.check_directory(options.path)
        file = path_probe.new_file(directory)
        recorder.extra["client"] = {
            "client": OS_PATH,
            "path": str(directory),
            "drops_cache": path_probe.CAN_DROP_CACHE,
        }
        if not path_probe.CAN_DROP_CACHE and READ in options.operations:
            yield recorder.note(
                "This system cannot drop a file from its cache, so a read right "
                "after the write may come from this computer's memory."
            )

        def write(on_progress: OnProgress, size: int) -> Transfer:
            return path_probe.write_file(file, size, options.block_size, self.cancel, on_progress)

        def read(on_progress: OnProgress, size: int) -> Transfer:
            path_probe.drop_cached(file)
            return path_probe.read_file(file, options.block_size, self.cancel, on_progress)

        try:
            yield from self._attempts(recorder, write, read, None, options.size)
        finally:
            path_probe.remove(Path(file))

    # -- shared ---------------------------------------------------------------------------
    def _attempts(
        self,
        recorder: Recorder,
        write: Work,
        read: Work,
        mode: str | None = None,
        size: int | None = None,
    ) -> Generator[BenchEvent, None, int]:
        """Warm-up and counted runs of each operation; returns the file size used (sized
        by a probe first when ``size`` is None)."""
        options = self.options
        steps = [
            (options.series_name(n, mode), write if n == WRITE else read)
            for n in (WRITE, READ)
            if n in options.operations
        ]
        modes = len(options.security) or 1
        rates: dict[str, float] = {}
        if size is None:
            yield Step(1, 2, "sizing the test file with a probe")
            probed = yield from self._probe(write, read)
            rates = {options.series_name(n, mode): rate for n, rate in probed.items()}
            sizing = adapted_size(
                rates,
                [name for name, _work in steps],
                self.method.attempts,
                # Every compared session runs the same file: together they keep the target.
                target_seconds=options.target_seconds / modes,
                smallest=SMALLEST_SIZE,
                largest=LARGEST_SIZE,
                probe_size=self.probe_size or PROBE_SIZE,
                what="runs",
            )
            size = sizing.size
            recorder.parameters["size"] = size
            recorder.extra["sizing"] = sizing.to_json()
            yield recorder.note(sizing.reason)
            yield Step(2, 2, "writes and reads of the test file", tuple(recorder.series))
        if WRITE not in options.operations:
            yield Progress(self._runs_done / self._runs_total, "writing the test file to read")
            yield from self._watch(None, 0, write, size)
        self.plan.add(
            PlannedRun(name, attempt, bytes=size, rate=rates.get(name))
            for attempt in range(1, self.method.attempts + 1)
            for name, _work in steps
        )
        for attempt in range(1, self.method.attempts + 1):
            for name, work in steps:
                self.cancel.raise_if_cancelled()
                yield recorder.started(name, attempt)
                transfer = yield from self._watch(recorder, attempt, work, size, name)
                share = transfer.client_cpu_share
                yield recorder.record(
                    name,
                    attempt,
                    seconds=transfer.seconds,
                    bytes=transfer.bytes,
                    details={
                        "client": options.client,
                        "cpu_seconds": transfer.cpu_seconds,
                        "client_cpu_share": share,
                        "block_size": options.block_size,
                        "outstanding": options.to_json()["outstanding"],
                        **({"security": mode} if mode else {}),
                    },
                )
                self._runs_done += 1
                yield Progress(
                    self._runs_done / self._runs_total, f"{name} {attempt} of {self.method.attempts}"
                )
        return size

    def _probe(self, write: Work, read: Work) -> Generator[BenchEvent, None, dict[str, float]]:
        """A write and a read of a small file, counted nowhere: the rates to size by.

        Each starts with :data:`FIRST_PROBE_SIZE`; only when that was quick does the full
        :data:`PROBE_SIZE` follow (a read never asks for more than was written)."""
        rates: dict[str, float] = {}
        written = 0
        self.probe_size = 0
        for name, work in ((WRITE, write), (READ, read)):
            # A read never asks for more than was written.
            largest = PROBE_SIZE if name == WRITE else min(PROBE_SIZE, written)
            size = min(FIRST_PROBE_SIZE, largest)
            while size > 0:
                yield Progress(None, f"probe: {name} of {format_bytes(size, 0)}")
                transfer = yield from self._watch(None, 0, work, size, f"probe: {name}")
                if name == WRITE:
                    written = size
                self.probe_size = max(self.probe_size, size)
                if transfer.seconds > 0:
                    rates[name] = transfer.bytes / transfer.seconds
                    yield Progress(None, f"probe: {name} {format_rate(rates[name])}")
                if transfer.seconds >= PROBE_ENOUGH_SECONDS or size >= largest:
                    break
                size = largest
        return rates

    def _watch(
        self, recorder: Recorder | None, attempt: int, work: Work, size: int, series: str = ""
    ) -> Generator[BenchEvent, None, Transfer]:
        watched = _Watched(lambda on_progress: work(on_progress, size))
        watched.start()
        last_bytes, last_t = 0, 0.0
        try:
            while not watched.ended.is_set():
                watched.ended.wait(self.options.sample_interval)
                moved, t = watched.progress
                if t > last_t:
                    rate = (moved - last_bytes) / (t - last_t)
                    if recorder is not None:
                        yield recorder.sample(series, attempt, t, moved, rate, source="client")
                    elif series:  # a transfer counted nowhere (the probe): its figure as a message
                        yield Progress(
                            None,
                            f"{series}: {format_bytes(moved)} of {format_bytes(size)}, {format_rate(rate)}",
                        )
                    last_bytes, last_t = moved, t
        except BaseException:
            # Stopped from outside (Ctrl-C, the events no longer wanted): the transfer stops
            # first, so the cleanup never shares the connection with it.
            self.cancel.cancel()
            watched.ended.wait(STOP_WAIT)
            raise
        if watched.error is not None:
            self.cancel.raise_if_cancelled()
            raise watched.error
        assert watched.result is not None
        return watched.result


def client_limit_notes(recorder: Recorder, client: str) -> list[str]:
    """Say when this computer's client, not the server or network, set the figure."""
    if client != SMBPROTOCOL:
        return []
    notes = []
    for name, series in recorder.series.items():
        counted = series.counted
        shares = [r.details.get("client_cpu_share") for r in counted]
        busy = [s for s in shares if isinstance(s, float)]
        stats = series.stats()
        if not busy or stats is None:
            continue
        busy_share = sum(busy) / len(busy)
        bits = stats.mean * 8
        # "read", or "read-signed" when sessions are compared.
        ceiling = PURE_PYTHON_CEILING_BITS.get(name.split("-")[0], PURE_PYTHON_CEILING_BITS[WRITE])
        advice = (
            "To measure a faster link, mount the share and measure through its path "
            "(the operating system's own client)."
        )
        if busy_share >= CLIENT_BUSY_SHARE:
            notes.append(
                f"{series.label}: SambaTune's SMB client kept {format_percent(busy_share, 0)} "
                f"of a CPU core busy, so at {format_bits(bits)} this computer's client was "
                f"the limit, not the server or the network. {advice}"
            )
        elif bits >= ceiling:
            notes.append(
                f"{series.label}: {format_bits(bits)} is above the "
                f"{format_bits(ceiling)} SambaTune's SMB client "
                f"is made for, so this computer's client was probably the limit. {advice}"
            )
        else:
            continue
        recorder.extra["client_limited"] = True
    return notes
