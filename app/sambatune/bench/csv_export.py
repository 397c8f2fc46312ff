"""Sessions as CSV: the book's measurement form, one row per run (or per sample)."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import TextIO

from sambatune.bench.results_db import StoredSession

RUN_COLUMNS = (
    "session_id",
    "server",
    "test",
    "started_at",
    "series",
    "series_label",
    "run",
    "attempt",
    "warmup",
    "size_bytes",
    "seconds",
    "bytes_per_s",
    "bits_per_s",
    "percent_of_link",
    "operations",
    "operations_per_s",
    "outlier",
)
SAMPLE_COLUMNS = ("session_id", "series", "attempt", "t", "bytes", "bytes_per_s", "source")


def write_runs_csv(sessions: Iterable[StoredSession], out: TextIO) -> int:
    """Every run of every session, warm-ups flagged; returns the number of rows."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(RUN_COLUMNS)
    rows = 0
    for session in sessions:
        result = session.result
        for series in result.series.values():
            outliers = set(series.outlier_attempts())
            number = 0
            for run in series.runs:
                if not run.warmup:
                    number += 1
                writer.writerow(
                    [
                        session.id,
                        session.server,
                        result.test,
                        result.started_at,
                        series.name,
                        series.label,
                        "" if run.warmup else number,
                        run.attempt,
                        "yes" if run.warmup else "no",
                        _cell(run.bytes),
                        f"{run.seconds:.6f}",
                        _cell(run.bytes_per_s),
                        _cell(run.bits_per_s),
                        _cell(run.percent_of_link),
                        _cell(run.operations),
                        _cell(run.operations_per_s),
                        "yes" if run.attempt in outliers else "no",
                    ]
                )
                rows += 1
    return rows


def write_samples_csv(sessions: Iterable[StoredSession], out: TextIO) -> int:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(SAMPLE_COLUMNS)
    rows = 0
    for session in sessions:
        for sample in session.result.samples:
            writer.writerow(
                [
                    session.id,
                    sample.series,
                    sample.attempt,
                    f"{sample.t:.4f}",
                    sample.bytes,
                    f"{sample.bytes_per_s:.1f}",
                    sample.source,
                ]
            )
            rows += 1
    return rows


def _cell(value: float | int | None) -> str:
    if value is None:
        return ""
    if isinstance(value, int):
        return str(value)
    return f"{value:.3f}"
