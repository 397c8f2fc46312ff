"""The SMB test: smbclient put and get through a share on the server's own loopback.

Run there, SMB has no network in its way, so its throughput can be set against the
server's raw TCP (the net agent streaming to itself over 127.0.0.1) and its disk:
the book's "Samba vs FTP" comparison, where Samba reached 68-80% of FTP in 1999.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sambatune.bench.context import BenchContext
from sambatune.bench.disk import DiskOptions, run_disk_agent
from sambatune.bench.events import BenchEvent
from sambatune.bench.records import SeriesResult
from sambatune.bench.runner import Benchmark, Phase, Recorder, translate_agent
from sambatune.errors import InvalidInput, SambaTuneError
from sambatune.remote.agents import AgentRun

PUT, GET = "put", "get"
TCP_LOOPBACK = "tcp-loopback"
SERIES_LABELS = {
    GET: "SMB get (smbclient, server loopback)",
    PUT: "SMB put (smbclient, server loopback)",
    TCP_LOOPBACK: "Raw TCP on the server's loopback",
}
BOOK_RANGE = (0.68, 0.80)


@dataclass(frozen=True)
class SmbOptions:
    share: str
    size: int = 512 << 20
    operations: tuple[str, ...] = (PUT, GET)
    #: An account for the share; without one the session is a guest session.
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    domain: str | None = None
    #: smbd's port (default: from the server's "smb ports", else 445).
    port: int | None = None
    address: str = "127.0.0.1"
    #: The share's directory on the server (default: from the survey).
    directory: str | None = None
    protocol: str | None = None
    #: Also measure raw TCP on the server's loopback and its disk, for the ratios.
    ceilings: bool = True
    tcp_seconds: float = 3.0

    def __post_init__(self) -> None:
        if not self.share:
            raise InvalidInput("Which share? The SMB test needs a share name.")
        if self.size <= 0:
            raise InvalidInput("The test file must be larger than 0 bytes.")
        unknown = [o for o in self.operations if o not in (PUT, GET)]
        if unknown or not self.operations:
            raise InvalidInput(f"SMB operations are put and get (not {unknown}).")

    def to_json(self) -> dict[str, Any]:
        return {
            "share": self.share, "size": self.size, "operations": list(self.operations),
            "user": self.user, "guest": not self.user, "domain": self.domain, "port": self.port,
            "address": self.address, "directory": self.directory, "protocol": self.protocol,
            "ceilings": self.ceilings, "tcp_seconds": self.tcp_seconds,
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
        raise InvalidInput('The SMB test needs options (at least the share).')

    def primary_series(self, recorder: Recorder) -> str:
        return GET if GET in recorder.series else PUT

    def _measure(self, recorder: Recorder) -> Iterator[BenchEvent]:
        options = self.options
        directory = options.directory or share_directory(self.context, options.share)
        phases = 3 if options.ceilings else 1
        for name in (GET, PUT):
            if name in options.operations:
                recorder.declare(name, SERIES_LABELS[name])
        params: dict[str, Any] = {
            "share": options.share, "port": options.port or self.context.smb_port(),
            "address": options.address, "size": options.size,
            "repeat": self.method.attempts, "operations": list(options.operations),
            "directory": directory, "protocol": options.protocol,
        }
        if options.user:
            params.update(user=options.user, password=options.password or "",
                          domain=options.domain or "")
        run = AgentRun(self.transport, "smb", params, cancel=self.cancel)
        result = yield from translate_agent(run, recorder, Phase(0, phases))
        recorder.extra["smb"] = result.data
        if not options.ceilings:
            return
        yield from self._tcp_ceiling(recorder, Phase(1, phases))
        if directory:
            disk = DiskOptions(directory=directory, size=options.size,
                               operations=("write", "read"), prefix="disk-")
            yield from run_disk_agent(self, recorder, disk, Phase(2, phases))
        else:
            yield recorder.note(
                "The share's directory on the server is unknown, so its disk was not measured."
            )
        recorder.extra["ratios"] = ratios(recorder.series)
        sentence = ratio_sentence(recorder.extra["ratios"])
        if sentence:
            yield recorder.note(sentence)

    def _tcp_ceiling(self, recorder: Recorder, phase: Phase) -> Iterator[BenchEvent]:
        recorder.declare(TCP_LOOPBACK, SERIES_LABELS[TCP_LOOPBACK])
        spec = {"direction": "download", "seconds": self.options.tcp_seconds}
        params = {"loopback": True, "runs": [spec] * self.method.attempts}
        run = AgentRun(self.transport, "net", params, cancel=self.cancel)
        yield from translate_agent(run, recorder, phase, lambda _name: TCP_LOOPBACK)


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
