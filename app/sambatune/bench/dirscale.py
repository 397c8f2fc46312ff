"""The directory-scaling test: listing and name lookups over SMB as a directory grows.

Around 20,000 files in one directory was where Samba used to hurt: with
"case sensitive = no" (the default for Windows clients) every lookup of a name that
is not stored exactly so, including every new file, scans the whole directory. This
test shows that cost at 1k, 10k and 100k files, so the effect of the case settings
can be measured before and after changing them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sambatune.bench.events import BenchEvent
from sambatune.bench.records import OPERATIONS, SeriesResult
from sambatune.bench.runner import Benchmark, Recorder, translate_agent
from sambatune.bench.smb import share_directory
from sambatune.errors import InvalidInput
from sambatune.remote.agents import AgentRun

DEFAULT_COUNTS = (1000, 10000, 100000)
OPERATION_LABELS = {
    "create": "create files on the server (local)",
    "list": "list the directory over SMB",
    "open": "open by exact name over SMB",
    "open-other-case": "open by name in other letter case over SMB",
    "missing": "look up a name that does not exist over SMB",
}
#: The settings that decide how names are matched, with Samba's defaults.
CASE_PARAMETERS = {
    "case sensitive": "Auto",
    "default case": "lower",
    "preserve case": "Yes",
    "short preserve case": "Yes",
}


@dataclass(frozen=True)
class DirscaleOptions:
    share: str
    counts: tuple[int, ...] = DEFAULT_COUNTS
    lookups: int = 100
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    domain: str | None = None
    port: int | None = None
    #: Where the server's own client reaches smbd (default: an address it listens on).
    address: str | None = None
    directory: str | None = None
    protocol: str | None = None

    def __post_init__(self) -> None:
        if not self.share:
            raise InvalidInput("Which share? The directory test needs a share name.")
        if not self.counts or min(self.counts) <= 0:
            raise InvalidInput("File counts must be positive numbers.")
        if max(self.counts) > 1_000_000:
            raise InvalidInput("More than a million files in one directory is not tested.")
        if self.lookups <= 0:
            raise InvalidInput("At least one lookup per run is needed.")

    def to_json(self) -> dict[str, Any]:
        return {
            "share": self.share,
            "counts": list(self.counts),
            "lookups": self.lookups,
            "user": self.user,
            "guest": not self.user,
            "domain": self.domain,
            "port": self.port,
            "address": self.address,
            "directory": self.directory,
            "protocol": self.protocol,
        }


class DirscaleBenchmark(Benchmark[DirscaleOptions]):
    test = "dirscale"

    def default_options(self) -> DirscaleOptions:
        raise InvalidInput("The directory test needs options (at least the share).")

    def primary_series(self, recorder: Recorder) -> str:
        return f"list/{max(self.options.counts)}"

    def _measure(self, recorder: Recorder) -> Iterator[BenchEvent]:
        options = self.options
        directory = options.directory or share_directory(self.context, options.share)
        if not directory:
            raise InvalidInput(
                f"The directory test creates its files directly in the share's directory, "
                f"and the path of '{options.share}' is unknown.",
                details="Give it with --directory.",
            )
        counts = sorted(set(options.counts))
        for count in counts:
            for operation, label in OPERATION_LABELS.items():
                recorder.declare(f"{operation}/{count}", f"{count:,} files: {label}", OPERATIONS)
        recorder.extra["case_settings"] = self._case_settings()
        agent_params: dict[str, Any] = {
            "share": options.share,
            "port": options.port or self.context.smb_port(),
            "address": options.address or self.context.smb_address(),
            "directory": directory,
            "counts": counts,
            "lookups": options.lookups,
            "repeat": self.method.attempts,
            "protocol": options.protocol,
        }
        if options.user:
            agent_params.update(
                user=options.user, password=options.password or "", domain=options.domain or ""
            )
        run = AgentRun(self.transport, "dirscale", agent_params, cancel=self.cancel)
        yield from translate_agent(run, recorder)
        recorder.extra["table"] = scaling_table(recorder.series, counts)

    def _case_settings(self) -> dict[str, str]:
        """How the share matches names: its own settings, else [global]'s, else the defaults."""
        survey = self.context.survey
        if survey is None:
            return {}
        share = self.context.share(self.options.share).get("params") or {}
        globals_ = survey.samba.get("globals") or {}
        return {
            name: str(share.get(name, globals_.get(name, default)))
            for name, default in CASE_PARAMETERS.items()
        }


def scaling_table(series: dict[str, SeriesResult], counts: list[int]) -> list[dict[str, Any]]:
    """One row per file count: mean seconds per listing, and per single lookup or create."""
    rows = []
    for count in counts:
        row: dict[str, Any] = {"files": count}
        for operation in OPERATION_LABELS:
            key = "list_seconds" if operation == "list" else f"{operation}_seconds_each"
            found = series.get(f"{operation}/{count}")
            counted = found.counted if found else []
            values = [r.seconds if operation == "list" else r.seconds / (r.operations or 1) for r in counted]
            row[key] = sum(values) / len(values) if values else None
        rows.append(row)
    return rows
