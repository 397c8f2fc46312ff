"""The one test a wizard measures with, before and after every change.

The wizard's question is "did this smb.conf change make Samba faster?", so the test
goes through smbd. Two tests can answer it:

- **copy** (``smb``): smbclient on the server copies a file into the share and back
  (:class:`sambatune.bench.smb.SmbBenchmark`). Running on the server's loopback keeps the
  network out of the figures, so what changes between two measurements is Samba.
- **many small files** (``files``): this computer creates, stats, reads, renames, lists
  and deletes N small files on the share with SambaTune's SMB client
  (:class:`sambatune.bench.small_files.SmallFilesBenchmark`). Changes about names,
  directories, locking and durability (case sensitivity, veto files, ``sync always``,
  the Mac modules) cost per file, which a copy of one big file never shows.

``auto`` picks one when the baseline is measured, from the findings the wizard can
apply: the small-file test when most of them are about metadata. The same test and
options are used for every measurement of one wizard; only the password is never stored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sambatune.bench.context import collect_context
from sambatune.bench.events import BenchEvent
from sambatune.bench.records import BenchResult
from sambatune.bench.results_db import ResultsDatabase
from sambatune.bench.runner import Method
from sambatune.bench.small_files import (
    DEFAULT_COUNT,
    OPERATION_NAMES,
    SmallFilesBenchmark,
    SmallFilesOptions,
)
from sambatune.bench.small_files import DEFAULT_SIZE as DEFAULT_FILE_SIZE
from sambatune.bench.smb import GET, PUT, SmbBenchmark, SmbOptions
from sambatune.bench.smb_wire import SmbLogin
from sambatune.cancellation import CancelToken
from sambatune.errors import InvalidInput
from sambatune.json_fields import StoredFields
from sambatune.remote.survey import Survey
from sambatune.remote.transport import Transport
from sambatune.units import format_bytes, format_operations_rate, format_rate

#: Big enough that a copy takes a noticeable time on a LAN, small enough for a coffee break.
DEFAULT_SIZE = 64 << 20
#: The tests a wizard can measure with; AUTO is decided at the baseline.
AUTO, COPY, FILES = "auto", "smb", "files"
TESTS = (AUTO, COPY, FILES)
#: The advisor topics whose changes cost per file, not per byte.
METADATA_TOPICS = frozenset({"filenames", "durability", "locking", "macos"})


@dataclass(frozen=True)
class MeasureSpec(StoredFields):
    share: str
    size: int = DEFAULT_SIZE
    runs: int = 5
    warmup: int = 1
    operations: tuple[str, ...] = (PUT, GET)
    #: An account for the share; None for a guest session.
    user: str | None = None
    password: str | None = field(default=None, repr=False, compare=False)
    #: copy (smb), many small files (files), or auto (decided from the findings).
    test: str = COPY
    #: The small-file test's file count and size.
    files: int = DEFAULT_COUNT
    file_size: int = DEFAULT_FILE_SIZE

    def __post_init__(self) -> None:
        if not self.share:
            raise InvalidInput("Which share should the wizard measure? Give a share name.")
        if self.test not in TESTS:
            raise InvalidInput(f"The wizard measures with {', '.join(TESTS)} (not {self.test}).")
        if self.runs < 2:
            raise InvalidInput(
                f"The wizard needs at least 2 counted runs per measurement, not {self.runs}.",
                "A before/after comparison needs the run-to-run spread, which one run cannot show.",
            )
        Method(runs=self.runs, warmup=self.warmup)
        SmbOptions(share=self.share, size=self.size, operations=self.operations)
        # Checks the count and size (the address is only known when measuring).
        SmallFilesOptions(server="-", share=self.share, count=self.files, size=self.file_size)

    @property
    def needs_password(self) -> bool:
        return bool(self.user) and self.password is None

    def with_password(self, password: str | None) -> MeasureSpec:
        return replace(self, password=password)

    def describe(self) -> str:
        who = f"as {self.user}" if self.user else "as guest"
        runs = f"{self.warmup} warm-up and {self.runs} counted runs"
        if self.test == FILES:
            return (
                f"this computer creates, stats, reads, renames, lists and deletes {self.files:,} "
                f"files of {format_bytes(self.file_size, 0)} in [{self.share}] ({who}): {runs}"
            )
        copy = f"smbclient on the server copies a {format_bytes(self.size)} file into [{self.share}] and back"
        if self.test == AUTO:
            return (
                f"chosen from the findings when the baseline is measured: {copy}, or many small "
                f"files ({self.files:,}) from this computer when most changes are about "
                f"metadata ({who}): {runs}"
            )
        return f"{copy} ({who}): {runs}"

    def chosen_for(self, findings: Sequence[Mapping[str, Any]]) -> MeasureSpec:
        """This spec with ``auto`` decided: small files when most applicable findings are
        about metadata (names, directories, locking, durability, Mac clients)."""
        if self.test != AUTO:
            return self
        topics = [_topic(f) for f in findings if (f.get("change") or {}).get("kind") == "smb.conf"]
        metadata = sum(1 for t in topics if t in METADATA_TOPICS)
        return replace(self, test=FILES if topics and metadata * 2 > len(topics) else COPY)

    def to_json(self) -> dict[str, Any]:
        """Everything but the password, which is asked again when a wizard resumes."""
        data = super().to_json()
        del data["password"]
        return data


def format_mean(series: str, value: float | None) -> str:
    """A wizard measurement's mean: bytes per second for the copy, operations per second
    for the small-file test (whose series are its operations)."""
    if value is None:
        return "–"
    return format_operations_rate(value) if series in OPERATION_NAMES else format_rate(value)


def _topic(finding: Mapping[str, Any]) -> str:
    from sambatune.advisor.rules import rule_by_id

    try:
        return rule_by_id(str(finding.get("id"))).topic
    except KeyError:
        return ""


def measure(
    transport: Transport,
    spec: MeasureSpec,
    *,
    config_path: str,
    survey: Survey | None,
    note: str,
    database: ResultsDatabase,
    cancel: CancelToken | None = None,
    on_event: Callable[[BenchEvent], None] | None = None,
) -> BenchResult:
    """Run the wizard's test by the method and save it as a benchmark session (with the
    exact smb.conf bytes it ran with); the result carries its ``session_id``."""
    if spec.needs_password:
        raise InvalidInput(f"The password of {spec.user} for [{spec.share}] is needed to measure.")
    context = collect_context(transport, config_path=config_path, survey=survey, cancel=cancel)
    method = Method(runs=spec.runs, warmup=spec.warmup)
    if spec.test == FILES:
        known = survey or context.survey
        # The managed smbd's own port: a second instance may listen elsewhere than 445.
        port = known.smb_port() if known is not None else None
        files = SmallFilesOptions(
            server=context.client_smb_address(),
            share=spec.share,
            port=port or 445,
            login=SmbLogin(user=spec.user, password=spec.password),
            count=spec.files,
            size=spec.file_size,
        )
        result = SmallFilesBenchmark(transport, method, files, context=context, cancel=cancel).run(on_event)
        database.save(result, context, note=note)
        return result
    if spec.test != COPY:
        raise InvalidInput("The wizard's test is decided when the baseline is measured.")
    options = SmbOptions(
        share=spec.share,
        size=spec.size,
        operations=spec.operations,
        user=spec.user,
        password=spec.password,
        ceilings=False,
    )
    benchmark = SmbBenchmark(transport, method, options, context=context, cancel=cancel)
    result = benchmark.run(on_event)
    database.save(result, context, note=note)
    return result
