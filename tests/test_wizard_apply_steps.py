"""The wizard's list of safe-apply steps shows every step, however long its message."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from sambatune.conf.apply import ApplyStep, StepState
from sambatune.ui.wizard.views import MeasureView
from screenshots import Screenshot

LONG_PATH = "/srv/samba/" + "/".join(f"department-{n:02d}-archive" for n in range(8)) + "/smb.conf"


def test_a_long_step_wraps_and_the_last_step_stays_in_sight(qtbot: QtBot, screenshot: Screenshot) -> None:
    """Issue 31: at 1180x780 the list scrolled sideways and its scroll bar hid the last
    step."""
    view = MeasureView()
    qtbot.addWidget(view)
    view.resize(660, 600)
    view.show()
    view.begin("Applying", "--- a\n+++ b\n")
    steps = [
        (ApplyStep.UPLOAD, "1354 bytes"),
        (ApplyStep.TESTPARM, "accepted"),
        (ApplyStep.BACKUP, f"{LONG_PATH}.20261204T234056.186729Z-0976ba69"),
        (ApplyStep.INSTALL, "the new version is live"),
        (ApplyStep.RESTART, "needed for socket options: SO_RCVBUF=8192 SO_SNDBUF=8192 -> (default)"),
        (
            ApplyStep.HEALTH,
            "smbd answers on port 445 and lists the shares: " + ", ".join(f"s{n}" for n in range(40)),
        ),
    ]
    for step, message in steps:
        view.apply_step(step, StepState.DONE, message)
    qtbot.wait(50)
    steps_list = view.steps
    assert not steps_list.horizontalScrollBar().isVisible()
    viewport = steps_list.viewport().rect()
    for row in range(steps_list.count()):
        shown = steps_list.visualItemRect(steps_list.item(row))
        assert viewport.contains(shown), (row, shown, viewport)
    # The long ones wrapped: taller than a single line.
    line = steps_list.fontMetrics().height()
    assert steps_list.visualItemRect(steps_list.item(2)).height() > 1.5 * line
    screenshot(view, "wizard-apply-steps-long")
