"""The HTML report: one file, nothing fetched from elsewhere, and the numbers in it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from bench_sessions import record_sessions
from sambatune.bench.bottleneck_inputs import figures_from_results, figures_from_sessions
from sambatune.bench.comparison import compare_sessions
from sambatune.bench.html_report import render_report
from sambatune.bench.results_db import ResultsDatabase
from sambatune.bench.svg_chart import Chart, ChartSeries, nice_ticks, render
from sambatune.units import format_rate


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += attrs


def parsed(text: str) -> Tags:
    tags = Tags()
    tags.feed(text)
    return tags


def test_report_is_self_contained_and_has_the_numbers() -> None:
    database = ResultsDatabase()
    ids = record_sessions(database)
    sessions = [database.load(i) for i in (ids.before, ids.after, ids.disk, ids.smb_client, ids.sockbuf)]
    html = render_report(sessions, generated_at="2026-11-23T10:00:00+00:00")

    # Nothing from elsewhere: no scripts, no links, no external images, fonts or styles.
    lowered = html.lower()
    for forbidden in ("http:", "https:", "//cdn", "<script", "<link", "<img", "<iframe", "@import", "url("):
        assert forbidden not in lowered, forbidden
    tags = parsed(html)
    assert not [value for name, value in tags.attributes if name in ("src", "href") and value]
    assert tags.tags.count("svg") >= 5  # samples per session, the runs overlay, the buffer curve

    # The per-run table in the book's columns, with the exact figures.
    for header in ("Size in bytes", "Time (s)", "Bytes/s", "Bits/s", "% of link"):
        assert f"<th>{header}</th>" in html
    assert "142,000,000" in html  # run 1 before: 71 MB/s for 2 s
    assert "224,800,000" in html  # run 4 after: 112.4 MB/s for 2 s
    before, after = sessions[0], sessions[1]
    comparison = compare_sessions(before, after)
    assert comparison.comparison.verdict == "better"
    from html import escape

    assert escape(comparison.comparison.sentence) in html
    assert "95% confidence interval of the difference" in html
    assert "-  socket options = SO_RCVBUF=8192 SO_SNDBUF=8192" in html
    stats = after.result.summary.stats()
    assert stats is not None and format_rate(stats.mean) in html
    # The smb.conf each session was measured with, and the survey facts.
    assert "socket options = SO_RCVBUF=8192" in html and "workgroup = OFFICE" in html
    assert "Xeon E-2224" in html and "4.17.12-Debian" in html and "192.0.2.10/24" in html
    # The bottleneck table from the layers recorded with the newest smb.conf (the
    # session before the change ran with another one and is left out).
    figures = figures_from_sessions(sessions)
    assert figures.sources["network"] == after.id
    report = figures.report()
    assert f"Limit: {report.limiting}" in html
    assert "Layer" in html and "file operations" in html
    assert escape(figures.basis()) in html and f"session {before.id}" not in figures.basis()
    assert "<h2>Bottleneck (" in html  # one server: not named again

    # Two servers: a table each, never one table from both.
    other = record_sessions(database, server="admin@files2:22")
    both = render_report(
        [*sessions, database.load(other.after), database.load(other.disk)],
        generated_at="2026-11-23T10:00:00+00:00",
    )
    assert "<h2>Bottleneck of admin@files1:22 (" in both
    assert "<h2>Bottleneck of admin@files2:22 (" in both
    # Socket-buffer curve on a log axis with the autotuned line.
    assert "autotuned (no size set)" in html and "log scale" in html


def test_bottleneck_figures_come_from_the_newest_sessions() -> None:
    database = ResultsDatabase()
    ids = record_sessions(database)
    results = [database.load(i).result for i in (ids.before, ids.after, ids.disk, ids.smb_client)]
    figures = figures_from_results(results)
    assert figures.network == pytest.approx(111.82e6, rel=1e-3)
    assert figures.sources["network"] == ids.after
    assert figures.disk_read is not None and figures.disk_read > 180e6
    assert figures.smb is not None and figures.sources["SMB"] == ids.smb_client
    assert figures.file_ops is not None and figures.link_bits == 1e9
    report = figures.report()
    assert report.limiting == "network"
    assert figures_from_results([]).report().limiting == "unknown"


def test_charts_draw_finite_points_and_say_when_there_are_none() -> None:
    assert nice_ticks(0, 113e6)[-1] >= 113e6
    assert nice_ticks(0, 0)[0] == 0
    empty = render(Chart("Nothing", "x", "y"))
    assert "No samples to draw." in empty
    svg = render(
        Chart(
            "Curve",
            "size",
            "rate",
            log_x=True,
            series=[ChartSeries("a", [(4096, 1.0), (8192, float("nan")), (16384, 3.0)], markers=True)],
        )
    )
    assert svg.count("<circle") == 2 and "nan" not in svg.lower()
    assert re.search(r"<svg[^>]*width=\"760\"", svg)


def test_results_export_html_from_the_command_line(tmp_path: Path) -> None:
    database = ResultsDatabase()
    ids = record_sessions(database)
    target = tmp_path / "report.html"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sambatune",
            "results",
            "export",
            str(ids.before),
            str(ids.after),
            "--format",
            "html",
            "-o",
            str(target),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
    )
    assert done.returncode == 0, done.stderr
    text = target.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "Before and after" in text
    assert f"Session {ids.before} (before) against session {ids.after} (after)" in text
