""" "Before and after" on the "Tune this computer" page, clicked as an admin would.

The plan is made by the page for this Linux, from an fstab whose cifs mount point is a
temporary directory: that directory is the "mounted share" the tests run through (the
bench classes do plain file I/O on a mounted path). Sizes and runs are small.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from sambatune.bench.results_db import ResultsDatabase
from sambatune.client.backups import BackupStore
from sambatune.client.cifs_mounts import EtcPaths
from sambatune.client.linux_system import LinuxSystem
from sambatune.client.system import system_for
from sambatune.ui.client.tuning_page import ClientTuningPage
from sambatune.ui.tasks import TaskRunner
from sambatune.wizard.client_check import CheckStore
from screenshots import Screenshot


@pytest.fixture
def runner() -> Iterator[TaskRunner]:
    tasks = TaskRunner()
    yield tasks
    assert tasks.shutdown(20000)


@pytest.fixture
def share(tmp_path: Path) -> Path:
    mount = tmp_path / "mnt" / "data"
    mount.mkdir(parents=True)
    return mount


@pytest.fixture
def etc(tmp_path: Path, share: Path) -> Path:
    folder = tmp_path / "etc"
    folder.mkdir()
    # An SMB1-era rsize: the plan removes it and links the large-file test to this mount.
    (folder / "fstab").write_text(
        f"//nas.example/data {share} cifs credentials=/etc/nas.cred,rsize=65536 0 0\n"
    )
    return folder


def open_page(qtbot: QtBot, runner: TaskRunner, etc: Path, tmp_path: Path) -> ClientTuningPage:
    page = ClientTuningPage(
        runner,
        # This computer reads the test's fstab; a profile is the profile.
        system_factory=lambda profile: (
            system_for(profile)
            if profile
            else LinuxSystem(sysctl_dir=tmp_path / "sysctl.d", etc=EtcPaths.under(etc))
        ),
        store=BackupStore(tmp_path / "backups"),
    )
    qtbot.addWidget(page)
    page.resize(1180, 780)
    page.show()
    qtbot.waitUntil(lambda: not page.busy and page.system is not None, timeout=30000)
    return page


def make_plan(qtbot: QtBot, page: ClientTuningPage) -> None:
    page.inputs.bandwidth.edit.setText("1gbit")
    page.inputs.rtt.edit.setText("1ms")
    with qtbot.waitSignal(page.plan_shown, timeout=60000):
        page.inputs.plan_button.click()
    qtbot.waitUntil(lambda: not page.busy, timeout=30000)


def small(page: ClientTuningPage) -> None:
    """A 1 MiB file, two runs, no warm-up: seconds, not a minute; the test bed's "share"
    is a local folder (no cifs in its kernel), measured knowingly."""
    page.check_box.runs.setValue(2)
    page.check_box.method.update(warmup=0, size=1 << 20)
    page.check_box.any_directory.setChecked(True)


def shot(qtbot: QtBot, screenshot: Screenshot, page: ClientTuningPage, name: str) -> None:
    qtbot.wait(150)
    screenshot(page, name)


def test_measure_before_then_after_shows_the_verdict_and_survives_a_new_page(
    qtbot: QtBot, runner: TaskRunner, etc: Path, share: Path, tmp_path: Path, screenshot: Screenshot
) -> None:
    page = open_page(qtbot, runner, etc, tmp_path)
    box = page.check_box
    assert not box.isVisible()  # no plan yet
    make_plan(qtbot, page)
    assert box.isVisible()
    # The plan's link names the mount point: the path is filled in, the large-file test chosen.
    assert box.path.text() == str(share)
    assert box.test.currentData() == "smb-client"
    assert box.before_button.isEnabled() and not box.after_button.isEnabled()
    assert "Measure before first" in box.after_button.toolTip()
    shot(qtbot, screenshot, page, "client-check-planned")
    small(page)

    # The test bed's kernel has no cifs: its "share" is a folder on a local disk, which the
    # check refuses (a plan for the SMB client shows nothing there) until it is ticked.
    box.any_directory.setChecked(False)
    box.before_button.click()
    qtbot.waitUntil(lambda: not page.busy and box.message.isVisible(), timeout=10000)
    assert f"{share} is on " in box.message.text() and "not on an SMB share" in box.message.text()
    assert CheckStore().load(page.plan.id if page.plan else "") is None
    box.any_directory.setChecked(True)

    with qtbot.waitSignal(box.measured, timeout=60000):
        box.before_button.click()
        # While it runs: nothing else starts, on the box or on the page.
        assert page.busy and not box.before_button.isEnabled() and not page.apply_button.isEnabled()
        assert not page.inputs.plan_button.isEnabled() and box.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: not page.busy, timeout=10000)
    assert "Before: write" in box.status.text() and "Measure after" in box.status.text()
    assert box.after_button.isEnabled() and box.before_button.text() == "Measure before again"
    assert sorted(share.iterdir()) == []
    shot(qtbot, screenshot, page, "client-check-before")

    # Another path for the after run would compare two shares: the button says so.
    box.path.setText(str(tmp_path))
    assert not box.after_button.isEnabled() and "repeats the before one" in box.after_button.toolTip()
    box.path.setText(str(share))
    assert box.after_button.isEnabled()

    # Leaving the page (or the app) between the two: a new page brings the plan back.
    plan_id = page.plan.id if page.plan else ""
    page.close()
    page.deleteLater()
    again = open_page(qtbot, runner, etc, tmp_path)
    qtbot.waitUntil(lambda: again.plan is not None and again.plan.id == plan_id, timeout=10000)
    box = again.check_box
    qtbot.waitUntil(lambda: box.after_button.isEnabled(), timeout=10000)
    assert "is back" in again.notice.text() and "Before: write" in box.status.text()
    assert again.inputs.bandwidth.edit.text() and again.inputs.rtt.edit.text()
    shot(qtbot, screenshot, again, "client-check-resumed")

    with qtbot.waitSignal(box.measured, timeout=60000):
        box.after_button.click()
    qtbot.waitUntil(lambda: not again.busy, timeout=10000)
    assert box.verdict.isVisible()
    verdict = box.verdict.text()
    assert any(word in verdict for word in ("Better.", "Worse.", "Mixed.", "No real difference."))
    assert "write" in verdict and "read" in verdict and "p " in verdict
    assert "Welch's t-test" in box.verdict.toolTip()
    assert "After: write" in box.status.text()
    assert sorted(share.iterdir()) == []
    shot(qtbot, screenshot, again, "client-check-verdict")

    stored = CheckStore().load(plan_id)
    assert stored is not None and stored.before and stored.after and stored.verdict
    notes = {ResultsDatabase().load(r.session_id).note for r in (stored.before, stored.after)}
    assert notes == {
        f"client plan {plan_id}: before (sambatune client check)",
        f"client plan {plan_id}: after (sambatune client check)",
    }


def test_cancel_mid_run_records_nothing_and_leaves_the_share_clean(
    qtbot: QtBot, runner: TaskRunner, etc: Path, share: Path, tmp_path: Path, screenshot: Screenshot
) -> None:
    page = open_page(qtbot, runner, etc, tmp_path)
    make_plan(qtbot, page)
    box = page.check_box
    # Many files, so the run is surely still going when Cancel is pressed.
    box.test.setCurrentIndex(box.test.findData("files"))
    box.runs.setValue(2)
    box.method.update(warmup=0, size=1, count=50000)
    box.any_directory.setChecked(True)  # the test bed's "share" is a local folder
    box.before_button.click()
    qtbot.waitUntil(lambda: any(share.iterdir()) and box.progress_label.text() != "", timeout=30000)
    qtbot.waitUntil(lambda: any(next(share.iterdir()).iterdir()), timeout=30000)
    shot(qtbot, screenshot, page, "client-check-running")
    box.cancel_button.click()
    assert "Cancelling" in box.progress_label.text()
    qtbot.waitUntil(lambda: not page.busy, timeout=60000)
    assert sorted(share.iterdir()) == []
    assert "Cancelled" in box.message.text() and box.message.isVisible()
    assert box.before_button.isEnabled() and not box.after_button.isEnabled()
    assert page.plan is not None and CheckStore().load(page.plan.id) is None
    assert ResultsDatabase().sessions() == []


def test_a_plan_for_another_system_has_no_before_and_after(
    qtbot: QtBot, runner: TaskRunner, etc: Path, tmp_path: Path
) -> None:
    page = open_page(qtbot, runner, etc, tmp_path)
    page.profile.setCurrentIndex(page.profile.findData("macos"))
    qtbot.waitUntil(lambda: not page.busy, timeout=30000)
    make_plan(qtbot, page)
    assert page.plan is not None and any(c.measure for c in page.plan.changes)
    # Measured here, a Mac plan's test would measure this computer, not the Mac.
    assert not page.check_box.isVisible()
