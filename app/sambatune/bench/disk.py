"""The disk test: sequential write and read of one file on the server, and the metadata rate.

Reads keep the page cache out (O_DIRECT, or the file's pages dropped first) unless the
user asks for buffered I/O; the result says which method the server allowed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from sambatune.bench.events import BenchEvent
from sambatune.bench.records import BYTES, OPERATIONS
from sambatune.bench.runner import WHOLE, Benchmark, Phase, Recorder, translate_agent
from sambatune.errors import InvalidInput
from sambatune.remote.agents import AgentRun

WRITE, READ, METADATA = "write", "read", "metadata"
BYPASS, BUFFERED = "bypass", "buffered"
DISK_OPERATIONS = (WRITE, READ, METADATA)
SERIES_LABELS = {
    "write": "Sequential write (fsync at the end)",
    "read": "Sequential read",
    "metadata-create": "Small files: create",
    "metadata-stat": "Small files: stat",
    "metadata-unlink": "Small files: delete",
}


@dataclass(frozen=True)
class DiskOptions:
    directory: str
    size: int = 1 << 30
    block_size: int = 1 << 20
    cache: str = BYPASS
    #: Allow emptying the whole server's page cache when O_DIRECT is impossible (root only).
    drop_caches: bool = False
    operations: tuple[str, ...] = DISK_OPERATIONS
    metadata_files: int = 1000
    sample_interval: float = 0.5
    #: Series prefix, so the SMB test can run this one as its disk ceiling ("disk-").
    prefix: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.directory:
            raise InvalidInput("The disk test needs a directory on the server.")
        if self.size <= 0 or self.block_size <= 0:
            raise InvalidInput("The file and block sizes must be positive.")
        if self.block_size > 1 << 30:
            raise InvalidInput("Blocks larger than 1 GiB are not a sensible test.")
        if self.cache not in (BYPASS, BUFFERED):
            raise InvalidInput(f"cache must be 'bypass' or 'buffered', not '{self.cache}'.")
        unknown = [o for o in self.operations if o not in DISK_OPERATIONS]
        if unknown or not self.operations:
            raise InvalidInput(f"Disk operations are write, read and metadata (not {unknown}).")
        if self.metadata_files <= 0:
            raise InvalidInput("The metadata test needs at least one file.")

    def agent_params(self, repeat: int) -> dict[str, Any]:
        return {
            "directory": self.directory,
            "size": self.size,
            "block_size": self.block_size,
            "cache": self.cache,
            "drop_caches": self.drop_caches,
            "repeat": repeat,
            "operations": list(self.operations),
            "metadata_files": self.metadata_files,
            "sample_interval": self.sample_interval,
        }

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("prefix")
        data["operations"] = list(self.operations)
        return data


def run_disk_agent(
    bench: Benchmark, recorder: Recorder, options: DiskOptions, phase: Phase = WHOLE
) -> Iterator[BenchEvent]:
    """The disk agent under the method; declares its series, notes the cache method."""
    for name in _series_names(options):
        unit = OPERATIONS if name.startswith("metadata") else BYTES
        recorder.declare(options.prefix + name, _label(options.prefix, name), unit)
    run = AgentRun(bench.transport, "disk", options.agent_params(bench.method.attempts), cancel=bench.cancel)
    result = yield from translate_agent(run, recorder, phase, lambda s: options.prefix + s)
    data = result.data or {}
    key = "disk_cache" if options.prefix else "cache"
    recorder.extra[key] = {
        "method": data.get("cache"),
        "explanation": data.get("cache_explanation"),
        "filesystem": data.get("filesystem"),
        "file_bytes": data.get("file_bytes"),
        "block_size": data.get("block_size"),
    }
    if data.get("cache_explanation"):
        yield recorder.note(str(data["cache_explanation"]))


def _series_names(options: DiskOptions) -> list[str]:
    names = [o for o in (WRITE, READ) if o in options.operations]
    if METADATA in options.operations:
        names += ["metadata-create", "metadata-stat", "metadata-unlink"]
    return names


def _label(prefix: str, name: str) -> str:
    label = SERIES_LABELS.get(name, name)
    return f"Disk: {label.lower()}" if prefix else label


class DiskBenchmark(Benchmark[DiskOptions]):
    test = "disk"

    def default_options(self) -> DiskOptions:
        raise InvalidInput("The disk test needs options (at least the directory).")

    def primary_series(self, recorder: Recorder) -> str:
        for name in (READ, WRITE, "metadata-create"):
            if name in recorder.series:
                return name
        return READ

    def _measure(self, recorder: Recorder) -> Iterator[BenchEvent]:
        names = _series_names(self.options)
        self.plan_runs([n for n in names if n in (WRITE, READ)], bytes=self.options.size)
        # Small files: as long as the runs before them took, until one has been timed.
        self.plan_runs([n for n in names if n.startswith(METADATA)])
        yield from run_disk_agent(self, recorder, self.options)
