"""The one test a wizard measures with, before and after every change.

The wizard's question is "did this smb.conf change make Samba faster?", so the test
goes through smbd: smbclient on the server copies a file into the share and back
(:class:`sambatune.bench.smb.SmbBenchmark`). Running on the server's loopback keeps the
network out of the figures, so what changes between two measurements is Samba. The same
options are used for every measurement of one wizard; only the password is never stored.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from sambatune.bench.context import collect_context
from sambatune.bench.events import BenchEvent
from sambatune.bench.records import BenchResult
from sambatune.bench.results_db import ResultsDatabase
from sambatune.bench.runner import Method
from sambatune.bench.smb import GET, PUT, SmbBenchmark, SmbOptions
from sambatune.cancellation import CancelToken
from sambatune.errors import InvalidInput
from sambatune.remote.survey import Survey
from sambatune.remote.transport import Transport
from sambatune.units import format_bytes

#: Big enough that a copy takes a noticeable time on a LAN, small enough for a coffee break.
DEFAULT_SIZE = 64 << 20


@dataclass(frozen=True)
class MeasureSpec:
    share: str
    size: int = DEFAULT_SIZE
    runs: int = 5
    warmup: int = 1
    operations: tuple[str, ...] = (PUT, GET)
    #: An account for the share; None for a guest session.
    user: str | None = None
    password: str | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.share:
            raise InvalidInput("Which share should the wizard measure? Give a share name.")
        if self.runs < 2:
            raise InvalidInput(
                f"The wizard needs at least 2 counted runs per measurement, not {self.runs}.",
                "A before/after comparison needs the run-to-run spread, which one run cannot show.",
            )
        Method(runs=self.runs, warmup=self.warmup)
        SmbOptions(share=self.share, size=self.size, operations=self.operations)

    @property
    def needs_password(self) -> bool:
        return bool(self.user) and self.password is None

    def with_password(self, password: str | None) -> MeasureSpec:
        return replace(self, password=password)

    def describe(self) -> str:
        who = f"as {self.user}" if self.user else "as guest"
        return (
            f"smbclient on the server copies a {format_bytes(self.size)} file into [{self.share}] "
            f"and back ({who}): {self.warmup} warm-up and {self.runs} counted runs"
        )

    def to_json(self) -> dict[str, Any]:
        """Everything but the password, which is asked again when a wizard resumes."""
        return {
            "test": "smb",
            "share": self.share,
            "size": self.size,
            "runs": self.runs,
            "warmup": self.warmup,
            "operations": list(self.operations),
            "user": self.user,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MeasureSpec:
        return cls(
            share=str(data["share"]),
            size=int(data["size"]),
            runs=int(data["runs"]),
            warmup=int(data["warmup"]),
            operations=tuple(data["operations"]),
            user=data.get("user") or None,
        )


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
    options = SmbOptions(
        share=spec.share,
        size=spec.size,
        operations=spec.operations,
        user=spec.user,
        password=spec.password,
        ceilings=False,
    )
    benchmark = SmbBenchmark(
        transport, Method(runs=spec.runs, warmup=spec.warmup), options, context=context, cancel=cancel
    )
    result = benchmark.run(on_event)
    database.save(result, context, note=note)
    return result
