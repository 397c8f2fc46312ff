"""Keep the garbage collector off the heap that existed before a benchmark run.

A full collection walks every live object with the GIL held, in whichever thread
happens to allocate: measured 90 ms with 150,000 objects (the test process), a
freeze a person sees and a gap in the samples. What is alive when a run starts
(modules, widgets, the session) outlives the run, so it is frozen out of collection
(``gc.freeze``) until the last run of this process ends; objects made during the run
are still collected as usual. Called from the GUI thread only.
"""

from __future__ import annotations

import gc

_runs = 0


def run_started() -> None:
    global _runs
    _runs += 1
    gc.freeze()


def run_ended() -> None:
    global _runs
    _runs = max(0, _runs - 1)
    if _runs == 0:
        gc.unfreeze()
