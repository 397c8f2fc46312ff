"""The report charts: run numbers are whole, legend names do not run into each other."""

from __future__ import annotations

import re

from sambatune.bench.svg_chart import Chart, ChartSeries, render


def test_a_run_axis_has_only_whole_run_numbers() -> None:
    chart = Chart(
        "runs",
        "run",
        "throughput",
        whole_x=True,
        series=[ChartSeries("s", [(1, 10.0), (2, 12.0), (3, 11.0)])],
    )
    labels = re.findall(r'text-anchor="middle">([^<]+)</text>', render(chart))
    assert "1.5" not in labels and "2.5" not in labels
    assert {"1", "2", "3"} <= set(labels)


def test_long_legend_names_get_a_row_each() -> None:
    names = [f"session {n} (before: socket options removed, 4 MiB file)" for n in range(3)]
    chart = Chart(
        "runs", "run", "throughput", series=[ChartSeries(name, [(1, 1.0), (2, 2.0)]) for name in names]
    )
    svg = render(chart)
    xs = {float(x) for x in re.findall(r'<rect x="([\d.]+)" y="[\d.]+" width="14"', svg)}
    assert len(xs) == 1, "names were laid side by side and overlapped"
    short = Chart(
        "runs", "run", "throughput", series=[ChartSeries(name, [(1, 1.0)]) for name in ("a", "b", "c")]
    )
    assert len(set(re.findall(r'<rect x="([\d.]+)" y="[\d.]+" width="14"', render(short)))) == 3
