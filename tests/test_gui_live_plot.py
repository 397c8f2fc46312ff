"""The live plot: each run its own colour, warm-ups dashed and lighter in theirs (not
one grey for all: two series' warm-ups must be told apart), counted runs numbered
after their warm-ups."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from sambatune.bench.events import Sample
from sambatune.ui.bench.live_plot import COLORS, WARMUP_ALPHA, LivePlot


def test_warm_ups_keep_their_colour_dashed_and_lighter(qtbot: QtBot) -> None:
    plot = LivePlot()
    qtbot.addWidget(plot)
    plot.clear("Large files")
    for series, label in (("write", "Write"), ("read", "Read")):
        for attempt in (1, 2):
            plot.run_started(series, attempt, attempt == 1, label)
            for step in range(1, 4):
                plot.add(Sample(series, attempt, step * 0.5, step * 10**6, 2e6 + attempt))
    plot.finish()
    pens = {key: line.curve.opts["pen"] for key, line in plot.lines.items()}
    assert list(pens) == [("write", 1), ("write", 2), ("read", 1), ("read", 2)]
    colours = [pen.color() for pen in pens.values()]
    assert len({c.name() for c in colours}) == 4  # no two runs share a colour
    for key, pen in pens.items():
        warm = key[1] == 1
        assert (pen.style() == Qt.PenStyle.DashLine) is warm
        assert pen.color().alpha() == (WARMUP_ALPHA if warm else 255)
    assert pens[("read", 1)].color().name() == COLORS[2]
    legend = plot.legend.text()
    assert "Write: " in legend and "warm-up 1" in legend and "run 1" in legend
    assert f"color:{COLORS[2]}" in legend
