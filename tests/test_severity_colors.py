"""Severities look the same on every page, can be read on white, and a note that asks
for nothing does not look like a suggestion that asks for an action."""

from __future__ import annotations

import colorsys
import typing

import pytest

from sambatune.advisor.findings import SEVERITIES
from sambatune.conf.lint import Severity
from sambatune.ui.severity import OTHER_SEVERITY_COLOR, SEVERITY_COLORS


def _luminance(color: str) -> float:
    """WCAG 2 relative luminance of a #rrggbb colour."""
    channels = [int(color[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def test_every_severity_the_app_gives_has_its_colour() -> None:
    given = set(SEVERITIES) | set(typing.get_args(Severity))
    assert given <= set(SEVERITY_COLORS)


@pytest.mark.parametrize("color", [*SEVERITY_COLORS.values(), OTHER_SEVERITY_COLOR])
def test_each_colour_reads_on_white_at_wcag_aa(color: str) -> None:
    assert (1.05) / (_luminance(color) + 0.05) >= 4.5


def _saturation(color: str) -> float:
    return colorsys.rgb_to_hsv(*(int(color[i : i + 2], 16) / 255 for i in (1, 3, 5)))[1]


def test_a_note_is_grey_and_everything_that_asks_for_action_is_coloured() -> None:
    """Once info was a blue a shade off the suggestions' blue: only the marker told them apart."""
    assert _saturation(SEVERITY_COLORS["info"]) < 0.2
    assert all(_saturation(color) > 0.5 for severity, color in SEVERITY_COLORS.items() if severity != "info")
