"""The benchmarks on record, as the advisor's measurements.

A session counts only if it ran against exactly the smb.conf being judged (matched by
hash): a figure measured under other settings says nothing about these.
"""

from __future__ import annotations

from dataclasses import replace

from sambatune.advisor.measurements import (
    THROUGHPUT_KINDS,
    ListingRate,
    Measurements,
    MetadataRate,
    SecurityCost,
    Throughput,
    ThroughputSummary,
)
from sambatune.bench.bottleneck_inputs import (
    TEST_NAMES,
    BottleneckFigures,
    figures_from_sessions,
    sessions_with_config,
)
from sambatune.bench.results_db import ResultsDatabase, StoredSession


def recorded_measurements(
    database: ResultsDatabase, server: str, smb_conf: bytes
) -> tuple[Measurements, list[int]]:
    """What the advisor can judge from the benchmarks on record: the newest figure of each
    layer from ``server``'s sessions that ran with exactly this smb.conf (the wizard's own
    measurements among them), and the sessions they came from.

    Sessions run with another smb.conf measured other settings and are left out, as the
    Bottleneck view leaves them out.
    """
    security, listing, extra_used = _security_and_listing(database, server, smb_conf)
    sessions = sessions_with_config(database, server, smb_conf)
    if not sessions:
        return Measurements(security=security, listing=listing), sorted(extra_used)
    chosen = {s.id for s in sessions}
    read = figures_from_sessions(sessions, "read", chosen)
    write = figures_from_sessions(sessions, "write", chosen)
    used: set[int] = set()

    def source(figures: BottleneckFigures, key: str) -> str:
        session_id = figures.sources[key]
        assert session_id is not None
        used.add(session_id)
        facts = figures.sessions.get(session_id)
        what = f"{TEST_NAMES.get(facts.test, facts.test)} " if facts else ""
        return f"{what}session {session_id}, run with this smb.conf"

    def measured(value: float | None, figures: BottleneckFigures, key: str) -> Throughput | None:
        return Throughput(value, source(figures, key)) if value is not None else None

    throughput = ThroughputSummary(
        disk_read=measured(read.disk_read, read, "disk read"),
        disk_write=measured(write.disk_write, write, "disk write"),
        network=(measured(read.network, read, "network") or measured(write.network, write, "network")),
        smb_read=measured(read.smb, read, "SMB"),
        smb_write=measured(write.smb, write, "SMB"),
    )
    metadata = (
        MetadataRate(read.file_ops, source(read, "file operations")) if read.file_ops is not None else None
    )
    return (
        Measurements(throughput=throughput, metadata=metadata, security=security, listing=listing),
        sorted(used | extra_used),
    )


def _security_and_listing(
    database: ResultsDatabase, server: str, smb_conf: bytes
) -> tuple[tuple[SecurityCost, ...], ListingRate | None, set[int]]:
    """The newest session comparison (``bench smb-client --security``) and the newest
    small-file listing that ran against exactly this smb.conf."""
    used: set[int] = set()
    security: tuple[SecurityCost, ...] = ()
    compared = sessions_with_config(database, server, smb_conf, tests=("smb-client",), limit=10)
    newest = next((s for s in compared if s.result.extra.get("security_cost")), None)
    if newest is not None:
        used.add(newest.id)
        source = f"SMB test from this computer, session {newest.id}, run with this smb.conf"
        security = tuple(
            SecurityCost(
                str(row["operation"]),
                str(row["mode"]),
                str(row["baseline"]),
                float(row["change"]),
                bool(row["significant"]),
                source,
            )
            for row in newest.result.extra["security_cost"]
        )
    listing = None
    small = sessions_with_config(database, server, smb_conf, tests=("small-files",), limit=1)
    if small:
        listing = _listing(small[0])
        if listing is not None:
            used.add(small[0].id)
    return security, listing, used


def _listing(session: StoredSession) -> ListingRate | None:
    series = session.result.series.get("list")
    stats = series.stats() if series is not None else None
    if stats is None or not stats.mean:
        return None
    parameters = session.result.parameters
    return ListingRate(
        share=str(parameters.get("share") or parameters.get("path") or "?"),
        files=int(parameters.get("count") or 0) or 1,
        lists_per_second=stats.mean,
        source=f"small-file test, session {session.id}, run with this smb.conf",
    )


def with_recorded(given: Measurements, recorded: Measurements) -> Measurements:
    """``given`` (figures the admin passed) filled in with ``recorded`` where it has none."""
    throughput = given.throughput
    for kind in THROUGHPUT_KINDS:
        if getattr(throughput, kind) is None and getattr(recorded.throughput, kind) is not None:
            throughput = replace(throughput, **{kind: getattr(recorded.throughput, kind)})
    return replace(
        given,
        throughput=throughput,
        metadata=given.metadata or recorded.metadata,
        dirscale=given.dirscale or recorded.dirscale,
        client_window=given.client_window or recorded.client_window,
        path=given.path or recorded.path,
        security=given.security or recorded.security,
        listing=given.listing or recorded.listing,
    )
