"""The tuning wizard from the command line, and discarding a wizard.

``sambatune wizard start|next|keep|revert|discard`` drive the same state machine and
store as the GUI (:class:`TuningWizard`, :class:`WizardStore`), against the real sshd
and smbd test bed, with the quick measurement of ``test_wizard``.
"""

from __future__ import annotations

import pytest

from sambatune.errors import InvalidInput
from sambatune.remote.local import LocalTransport
from sambatune.wizard.machine import DISCARD, DONE, SURVEY, TuningWizard
from sambatune.wizard.measure import MeasureSpec
from sambatune.wizard.store import WizardStore

QUICK = dict(size=4 << 20, runs=3, warmup=1)


def test_a_wizard_can_be_discarded_without_a_connection() -> None:
    store = WizardStore()
    wizard = TuningWizard.start(store, LocalTransport(), MeasureSpec(share="bench", **QUICK),  # type: ignore[arg-type]
                                config_path="/nowhere/smb.conf")
    other = TuningWizard.start(store, LocalTransport(), MeasureSpec(share="bench", **QUICK),  # type: ignore[arg-type]
                               config_path="/nowhere/smb.conf")
    assert wizard.stage == SURVEY
    assert {s.id for s in store.summaries(unfinished=True)} == {wizard.id, other.id}

    step = wizard.discard()  # the GUI's button calls it with no arguments
    assert step.step == DISCARD and step.data["reason"] == "discarded"
    assert step.data["stage"] == SURVEY and "left_live" not in step.data
    assert wizard.stage == DONE and wizard.discarded and wizard.finished
    other.discard("the wrong share")

    again = TuningWizard.resume(WizardStore(), wizard.id)
    assert again.stage == DONE and again.record.finished_at is not None
    assert [s.step for s in again.record.steps] == ["connect", DISCARD]
    assert TuningWizard.resume(store, other.id).record.steps[-1].data["reason"] == "the wrong share"
    assert store.summaries(unfinished=True) == []
    assert [s.last_step for s in store.summaries()] == [DISCARD, DISCARD]
    with pytest.raises(InvalidInput, match="ended already"):
        again.discard()
    with pytest.raises(InvalidInput, match="not at"):
        again.run_survey(LocalTransport())
