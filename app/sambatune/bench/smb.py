"""The SMB test: smbclient put and get through a share on the server's own loopback.

Run there, SMB has no network in its way, so its throughput can be set against the
server's raw TCP (the net agent streaming to itself over 127.0.0.1) and its disk:
the book's "Samba vs FTP" comparison, where Samba reached 68-80% of FTP in 1999.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

from sambatune.bench.context import BenchContext
from sambatune.bench.disk import DiskOptions, run_disk_agent
from sambatune.bench.events import BenchEvent, Progress, RunFinished, Sample, Step
from sambatune.bench.progress import PlannedRun
from sambatune.bench.records import SeriesResult
from sambatune.bench.runner import Benchmark, Method, Phase, Recorder, translate_agent
from sambatune.bench.sizing import adapted_size
from sambatune.errors import InvalidInput, SambaTuneError
from sambatune.remote.agents import AgentRun
from sambatune.units import format_bytes, format_rate

PUT, GET = "put", "get"
TCP_LOOPBACK = "tcp-loopback"
SERIES_LABELS = {
    GET: "SMB get (smbclient, server loopback)",
    PUT: "SMB put (smbclient, server loopback)",
    TCP_LOOPBACK: "Raw TCP on the server's loopback",
}
BOOK_RANGE = (0.68, 0.80)
#: With no size given: a probe of this size first, then a file between these two sizes
#: so that all SMB runs take about TARGET_SECONDS (the largest is the old fixed default).
PROBE_SIZE = 4 << 20
SMALLEST_SIZE = 4 << 20
LARGEST_SIZE = 512 << 20
TARGET_SECONDS = 60.0
#: What the time left assumes of the disk ceiling's rate until it has measured it.
DISK_GUESS = 200e6


@dataclass(frozen=True)
class SmbOptions:
    share: str
    #: The test file's size; None: sized from a short probe so the runs fit ``target_seconds``.
    size: int | None = None
    operations: tuple[str, ...] = (PUT, GET)
    #: An account for the share; without one the session is a guest session.
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    domain: str | None = None
    #: smbd's port (default: from the server's "smb ports", else 445).
    port: int | None = None
    #: Where the server's own client reaches smbd (default: an address it listens on).
    address: str | None = None
    #: The share's directory on the server (default: from the survey).
    directory: str | None = None
    protocol: str | None = None
    #: Also measure raw TCP on the server's loopback and its disk, for the ratios.
    ceilings: bool = True
    tcp_seconds: float = 3.0
    #: With no size given: about how long all the SMB runs together should take.
    target_seconds: float = TARGET_SECONDS

    def __post_init__(self) -> None:
        if not self.share:
            raise InvalidInput("Which share? The SMB test needs a share name.")
        if self.size is not None and self.size <= 0:
            raise InvalidInput("The test file must be larger than 0 bytes.")
        if self.target_seconds <= 0:
            raise InvalidInput("The SMB runs need more than 0 seconds.")
        unknown = [o for o in self.operations if o not in (PUT, GET)]
        if unknown or not self.operations:
            raise InvalidInput(f"SMB operations are put and get (not {unknown}).")

    def to_json(self) -> dict[str, Any]:
        return {
            "share": self.share,
            "size": self.size,
            "operations": list(self.operations),
            "user": self.user,
            "guest": not self.user,
            "domain": self.domain,
            "port": self.port,
            "address": self.address,
            "directory": self.directory,
            "protocol": self.protocol,
            "ceilings": self.ceilings,
            "tcp_seconds": self.tcp_seconds,
        }


def share_directory(context: BenchContext, share: str) -> str | None:
    """The share's path if the survey knows it (None rather than an error)."""
    if context.survey is None:
        return None
    try:
        return context.share_path(share)
    except SambaTuneError:
        return None


class SmbBenchmark(Benchmark[SmbOptions]):
    test = "smb"

    def default_options(self) -> SmbOptions:
        raise InvalidInput("The SMB test needs options (at least the share).")

    def primary_series(self, recorder: Recorder) -> str:
        return GET if GET in recorder.series else PUT

    def _agent_params(self, directory: str | None, size: int, repeat: int) -> dict[str, Any]:
        options = self.options
        params: dict[str, Any] = {
            "share": options.share,
            "port": options.port or self.context.smb_port(),
            "address": options.address or self.context.smb_address(),
            "size": size,
            "repeat": repeat,
            "operations": list(options.operations),
            "directory": directory,
            "protocol": options.protocol,
        }
        if options.user:
            params.update(user=options.user, password=options.password or "", domain=options.domain or "")
        return params

    def _measure(self, recorder: Recorder) -> Iterator[BenchEvent]:
        options = self.options
        directory = options.directory or share_directory(self.context, options.share)
        operations = [name for name in (PUT, GET) if name in options.operations]
        for name in (GET, PUT):
            if name in options.operations:
                recorder.declare(name, SERIES_LABELS[name])
        steps = Steps((options.size is None) + 1 + 2 * options.ceilings)
        size = options.size
        rates: dict[str, float] = {}
        if size is None:
            yield steps.next(f"sizing the test file with a {format_bytes(PROBE_SIZE, 0)} probe")
            rates = yield from self._probe(directory)
            sizing = adapted_size(
                rates,
                operations,
                self.method.attempts,
                target_seconds=options.target_seconds,
                smallest=SMALLEST_SIZE,
                largest=LARGEST_SIZE,
                probe_size=PROBE_SIZE,
                what="SMB copies",
            )
            size = sizing.size
            recorder.parameters["size"] = size
            recorder.extra["sizing"] = sizing.to_json()
            yield recorder.note(sizing.reason)
        self.plan.add(
            PlannedRun(name, attempt, bytes=size, rate=rates.get(name))
            for attempt in range(1, self.method.attempts + 1)
            for name in operations
        )
        if options.ceilings:
            self.plan_runs([TCP_LOOPBACK], seconds=options.tcp_seconds)
            if directory:
                self.plan_runs(["disk-write", "disk-read"], bytes=size, rate=DISK_GUESS)
        yield steps.next("SMB put and get through the share (smbclient)", tuple(operations))
        run = AgentRun(
            self.transport,
            "smb",
            self._agent_params(directory, size, self.method.attempts),
            cancel=self.cancel,
        )
        result = yield from translate_agent(run, recorder, steps.phase())
        recorder.extra["smb"] = result.data
        if not options.ceilings:
            return
        yield steps.next("raw TCP on the server's loopback (the ceiling)", (TCP_LOOPBACK,))
        yield from self._tcp_ceiling(recorder, steps.phase())
        yield steps.next("the share's disk (the ceiling)", ("disk-write", "disk-read"))
        if directory:
            disk = DiskOptions(directory=directory, size=size, operations=("write", "read"), prefix="disk-")
            yield from run_disk_agent(self, recorder, disk, steps.phase())
        else:
            yield recorder.note(
                "The share's directory on the server is unknown, so its disk was not measured."
            )
        recorder.extra["ratios"] = ratios(recorder.series)
        sentence = ratio_sentence(recorder.extra["ratios"])
        if sentence:
            yield recorder.note(sentence)

    def _probe(self, directory: str | None) -> Generator[BenchEvent, None, dict[str, float]]:
        """One put and get of a small file, counted nowhere: the rates to size the file by."""
        scratch = Recorder(self.test, self.target_label, {}, Method(runs=1, warmup=0), None)
        run = AgentRun(
            self.transport, "smb", self._agent_params(directory, PROBE_SIZE, 1), cancel=self.cancel
        )
        rates: dict[str, float] = {}
        samples: dict[str, list[Sample]] = {}
        for event in translate_agent(run, scratch):
            if isinstance(event, Sample):
                samples.setdefault(event.series, []).append(event)
                yield Progress(None, f"probe: {event.series} {format_rate(event.bytes_per_s)}")
            elif isinstance(event, RunFinished):
                record = event.record
                rate = steady_rate(record.bytes_per_s, samples.get(record.series, []))
                if rate:
                    rates[record.series] = rate
                yield Progress(None, f"probe: {record.series} {format_rate(rate)}")
        return rates

    def _tcp_ceiling(self, recorder: Recorder, phase: Phase) -> Iterator[BenchEvent]:
        recorder.declare(TCP_LOOPBACK, SERIES_LABELS[TCP_LOOPBACK])
        spec = {"direction": "download", "seconds": self.options.tcp_seconds}
        params = {"loopback": True, "runs": [spec] * self.method.attempts}
        run = AgentRun(self.transport, "net", params, cancel=self.cancel)
        yield from translate_agent(run, recorder, phase, lambda _name: TCP_LOOPBACK)


def steady_rate(whole: float | None, samples: list[Sample]) -> float | None:
    """A copy's rate without its first burst: from its first sample to its last, when that
    is slower than smbclient's figure for the whole copy (a small file on a slow server
    gets its first hundreds of KiB at once, as the socket buffers fill)."""
    if len(samples) >= 2:
        first, last = samples[0], samples[-1]
        if last.t - first.t >= 0.4 and last.bytes > first.bytes:
            steady = (last.bytes - first.bytes) / (last.t - first.t)
            return steady if whole is None else min(whole, steady)
    return whole


class Steps:
    """Numbers a benchmark's parts as they start ("step 2 of 4"); one part says nothing."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.index = 0

    def next(self, title: str, series: tuple[str, ...] = ()) -> Step:
        self.index += 1
        return Step(self.index, self.count, title, series)

    def phase(self) -> Phase:
        return Phase(self.index - 1, self.count)


def _mean(series: dict[str, SeriesResult], name: str) -> float | None:
    found = series.get(name)
    stats = found.stats() if found else None
    return stats.mean if stats else None


def ratios(series: dict[str, SeriesResult]) -> dict[str, float | None]:
    """SMB throughput as a fraction of each ceiling (None where one side is missing)."""
    pairs = {
        "get_vs_tcp_loopback": (GET, TCP_LOOPBACK),
        "put_vs_tcp_loopback": (PUT, TCP_LOOPBACK),
        "get_vs_disk_read": (GET, "disk-read"),
        "put_vs_disk_write": (PUT, "disk-write"),
    }
    found: dict[str, float | None] = {}
    for key, (smb, ceiling) in pairs.items():
        top, bottom = _mean(series, smb), _mean(series, ceiling)
        found[key] = top / bottom if top is not None and bottom else None
    return found


def ratio_sentence(found: dict[str, float | None]) -> str:
    parts = []
    get_tcp = found.get("get_vs_tcp_loopback")
    if get_tcp is not None:
        low, high = BOOK_RANGE
        where = "below" if get_tcp < low else "above" if get_tcp > high else "within"
        parts.append(
            f"SMB get reached {get_tcp:.0%} of raw TCP on the server's loopback, {where} the "
            f"{low:.0%}-{high:.0%} the book measured for Samba against FTP in 1999."
        )
    get_disk = found.get("get_vs_disk_read")
    if get_disk is not None:
        parts.append(
            f"It reached {get_disk:.0%} of the disk's uncached read rate; a get of a file "
            "smbd has just written is usually served from the page cache, so above 100% is normal."
        )
    return " ".join(parts)
