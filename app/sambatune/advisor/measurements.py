"""Measured figures the advisor can judge with. All optional: the benchmarks fill them in.

The JSON form (``Measurements.from_json``) is what ``sambatune advise --measurements
FILE`` reads, so a benchmark run, or a person, can hand figures to the advisor:

    {"throughput": {"smb_read": {"mean_bytes_per_second": 1.1e8, "source": "..."}},
     "metadata": {"ops_per_second": 2400, "source": "..."},
     "dirscale": [{"share": "data", "files": 20000, "open_seconds": 0.7,
                   "list_seconds": 1.2, "case_sensitive": false}],
     "client_window": {"bytes": 65535, "source": "..."},
     "path": {"bandwidth_bps": 1e9, "rtt_seconds": 0.0005, "path_mtu": 1500,
              "client_mtu": 1500}}
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from sambatune.client.window import bdp_bytes
from sambatune.errors import InvalidInput
from sambatune.json_fields import FieldsAsJson

THROUGHPUT_KINDS = ("disk_read", "disk_write", "network", "smb_read", "smb_write")


def _number(data: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> float | None:
    value = data.get(key)
    if value is None and not required:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise InvalidInput(f"Measurements: {where}.{key} must be a positive number, not {value!r}.")
    return float(value)


def _mapping(data: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise InvalidInput(f"Measurements: {where} must be an object.")
    return data


@dataclass(frozen=True)
class Throughput(FieldsAsJson):
    mean_bytes_per_second: float
    source: str = ""

    @classmethod
    def from_json(cls, data: Any, where: str) -> Throughput:
        data = _mapping(data, where)
        mean = _number(data, "mean_bytes_per_second", where)
        assert mean is not None
        return cls(mean, str(data.get("source", "")))


@dataclass(frozen=True)
class ThroughputSummary:
    """Mean throughput of the benchmark kinds: raw disk, raw network, and over SMB."""

    disk_read: Throughput | None = None
    disk_write: Throughput | None = None
    network: Throughput | None = None
    smb_read: Throughput | None = None
    smb_write: Throughput | None = None

    @classmethod
    def from_json(cls, data: Any) -> ThroughputSummary:
        data = _mapping(data, "throughput")
        unknown = set(data) - set(THROUGHPUT_KINDS)
        if unknown:
            raise InvalidInput(
                f"Measurements: unknown throughput kinds {sorted(unknown)}; "
                f"known: {', '.join(THROUGHPUT_KINDS)}."
            )
        return cls(
            **{k: Throughput.from_json(v, f"throughput.{k}") for k, v in data.items() if v is not None}
        )

    def to_json(self) -> dict[str, Any]:
        return {
            f.name: getattr(self, f.name).to_json() for f in fields(self) if getattr(self, f.name) is not None
        }


@dataclass(frozen=True)
class MetadataRate(FieldsAsJson):
    ops_per_second: float
    source: str = ""


@dataclass(frozen=True)
class SecurityCost(FieldsAsJson):
    """One session kind against another, from ``bench smb-client --security``: e.g. signed
    reads against plain ones, with Welch's test."""

    operation: str  # read | write
    mode: str  # signed | encrypted | plain
    baseline: str
    #: (mean of mode - mean of baseline) / mean of baseline: -0.2 is 20% slower.
    change: float
    significant: bool
    source: str = ""

    @classmethod
    def from_json(cls, data: Any, where: str) -> SecurityCost:
        data = _mapping(data, where)
        change = data.get("change")
        if isinstance(change, bool) or not isinstance(change, (int, float)) or not math.isfinite(change):
            raise InvalidInput(f"Measurements: {where}.change must be a number.")
        names = [data.get(k) for k in ("operation", "mode", "baseline")]
        if not all(isinstance(n, str) and n for n in names):
            raise InvalidInput(f"Measurements: {where} needs operation, mode and baseline.")
        return cls(
            str(data["operation"]),
            str(data["mode"]),
            str(data["baseline"]),
            float(change),
            bool(data.get("significant")),
            str(data.get("source", "")),
        )

    def sentence(self) -> str:
        if not self.significant:
            return f"{self.mode} {self.operation}s: no significant difference from {self.baseline}"
        slower = "slower" if self.change < 0 else "faster"
        return f"{self.mode} {self.operation}s {abs(self.change):.0%} {slower} than {self.baseline}"


@dataclass(frozen=True)
class ListingRate(FieldsAsJson):
    """Whole-directory listings per second from the small-file test, of ``files`` files."""

    share: str
    files: int
    lists_per_second: float
    source: str = ""

    @classmethod
    def from_json(cls, data: Any, where: str) -> ListingRate:
        data = _mapping(data, where)
        files = data.get("files")
        if not isinstance(files, int) or isinstance(files, bool) or files <= 0:
            raise InvalidInput(f"Measurements: {where}.files must be a positive whole number.")
        rate = _number(data, "lists_per_second", where)
        assert rate is not None
        return cls(str(data.get("share", "")), files, rate, str(data.get("source", "")))

    def sentence(self) -> str:
        return (
            f"listing [{self.share}] with {self.files:,} files took {1 / self.lists_per_second:.3f} s "
            f"({self.source})"
        )


@dataclass(frozen=True)
class DirscalePoint(FieldsAsJson):
    """One directory-scaling run: a directory of ``files`` files on ``share``."""

    share: str
    files: int
    #: Seconds to open (look up) the benchmark's batch of names in that directory.
    open_seconds: float
    #: Seconds to list the directory once.
    list_seconds: float
    #: Whether the share ran with ``case sensitive = yes`` for this run.
    case_sensitive: bool

    @classmethod
    def from_json(cls, data: Any, where: str) -> DirscalePoint:
        data = _mapping(data, where)
        files = data.get("files")
        if not isinstance(files, int) or isinstance(files, bool) or files <= 0:
            raise InvalidInput(f"Measurements: {where}.files must be a positive whole number.")
        if not isinstance(data.get("share"), str) or not data["share"]:
            raise InvalidInput(f"Measurements: {where}.share must name the share measured.")
        open_seconds = _number(data, "open_seconds", where)
        list_seconds = _number(data, "list_seconds", where)
        assert open_seconds is not None and list_seconds is not None
        return cls(data["share"], files, open_seconds, list_seconds, bool(data.get("case_sensitive", False)))


@dataclass(frozen=True)
class ClientWindow(FieldsAsJson):
    """The largest TCP receive window the client computer can advertise, in bytes."""

    bytes: int
    source: str = ""


@dataclass(frozen=True)
class NetworkPath(FieldsAsJson):
    """Bandwidth and round-trip time between the clients and the server."""

    bandwidth_bps: float
    rtt_seconds: float
    bandwidth_source: str = ""
    rtt_source: str = ""
    #: The largest packet that crossed the path (a path-MTU probe), and the MTU of the
    #: client's interface it was probed from.
    path_mtu: int | None = None
    client_mtu: int | None = None

    @property
    def bdp_bytes(self) -> float:
        return bdp_bytes(self.bandwidth_bps, self.rtt_seconds)

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "bdp_bytes": self.bdp_bytes}


@dataclass(frozen=True)
class Measurements(FieldsAsJson):
    throughput: ThroughputSummary = field(default_factory=ThroughputSummary)
    metadata: MetadataRate | None = None
    dirscale: tuple[DirscalePoint, ...] = ()
    client_window: ClientWindow | None = None
    path: NetworkPath | None = None
    #: Session kinds compared on this server (signing and encryption cost), newest run.
    security: tuple[SecurityCost, ...] = ()
    #: Directory listings of the newest small-file test.
    listing: ListingRate | None = None

    @classmethod
    def from_json(cls, data: Any) -> Measurements:
        data = _mapping(data, "the file")
        known = {"throughput", "metadata", "dirscale", "client_window", "path", "security", "listing"}
        unknown = set(data) - known
        if unknown:
            raise InvalidInput(
                f"Measurements: unknown keys {sorted(unknown)}; known: {', '.join(sorted(known))}."
            )
        metadata = path = window = None
        if data.get("metadata") is not None:
            entry = _mapping(data["metadata"], "metadata")
            rate = _number(entry, "ops_per_second", "metadata")
            assert rate is not None
            metadata = MetadataRate(rate, str(entry.get("source", "")))
        if data.get("client_window") is not None:
            entry = _mapping(data["client_window"], "client_window")
            size = _number(entry, "bytes", "client_window")
            assert size is not None
            window = ClientWindow(int(size), str(entry.get("source", "")))
        if data.get("path") is not None:
            entry = _mapping(data["path"], "path")
            bandwidth = _number(entry, "bandwidth_bps", "path")
            rtt = _number(entry, "rtt_seconds", "path")
            mtu = _number(entry, "path_mtu", "path", required=False)
            client_mtu = _number(entry, "client_mtu", "path", required=False)
            assert bandwidth is not None and rtt is not None
            path = NetworkPath(
                bandwidth,
                rtt,
                str(entry.get("bandwidth_source", "")),
                str(entry.get("rtt_source", "")),
                int(mtu) if mtu else None,
                int(client_mtu) if client_mtu else None,
            )
        points = data.get("dirscale") or []
        if not isinstance(points, list):
            raise InvalidInput("Measurements: dirscale must be a list of runs.")
        costs = data.get("security") or []
        if not isinstance(costs, list):
            raise InvalidInput("Measurements: security must be a list of comparisons.")
        return cls(
            throughput=ThroughputSummary.from_json(data.get("throughput") or {}),
            metadata=metadata,
            dirscale=tuple(DirscalePoint.from_json(p, f"dirscale[{i}]") for i, p in enumerate(points)),
            client_window=window,
            path=path,
            security=tuple(SecurityCost.from_json(c, f"security[{i}]") for i, c in enumerate(costs)),
            listing=ListingRate.from_json(data["listing"], "listing") if data.get("listing") else None,
        )

    def security_cost(self, mode: str) -> list[SecurityCost]:
        """The measured cost of ``mode`` sessions (signed, encrypted) against plain ones."""
        return [c for c in self.security if c.mode == mode and c.baseline == "plain"]
