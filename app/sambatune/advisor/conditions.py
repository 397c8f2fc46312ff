"""The named conditions resources/advisor/rules.json may refer to.

The data file names a condition instead of containing code, so every condition a rule
can depend on is listed here, and the loader refuses a name that is not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from sambatune.advisor.config_view import as_bool
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.protocols import smb1_enabled

#: ``requires`` and ``unless`` of a toggle: asked about one section where the toggle fired.
SectionCondition = Callable[[AdvisorInput, str], bool]
#: ``measurement`` of a missing-measurement rule: True when the figure was given.
Measured = Callable[[AdvisorInput], bool]


def _removing_wakes_sync_always(inputs: AdvisorInput, section: str) -> bool:
    """Would removing this section's strict sync line switch a sync always on? That line
    must go first (sync-always-without-strict-sync says so)."""
    return any(
        inputs.config.where_set(s, "strict sync") == section
        and as_bool(inputs.config.value(s, "sync always")) is True
        for s in inputs.config.sections()
    )


SECTION_CONDITIONS: Mapping[str, SectionCondition] = {
    "smb1-enabled": lambda inputs, _section: smb1_enabled(inputs),
    "removing-wakes-sync-always": _removing_wakes_sync_always,
}


def _smb_throughput_measured(inputs: AdvisorInput) -> bool:
    throughput = inputs.measurements.throughput
    return throughput.smb_read is not None or throughput.smb_write is not None


MEASURED: Mapping[str, Measured] = {
    "network-path": lambda inputs: inputs.measurements.path is not None,
    "client-window": lambda inputs: inputs.measurements.client_window is not None,
    "directory-scaling": lambda inputs: bool(inputs.measurements.dirscale),
    "smb-throughput": _smb_throughput_measured,
}
