"""Before and after: two sessions of the same test, compared run by run and config by config.

The method changes ONE thing between two sessions. So besides the significance test,
the comparison shows what changed in smb.conf between them (the recorded bytes), and
says so plainly when more than one line did, or when the test itself was run
differently (another size, direction, share) and the figures cannot be set side by side.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from sambatune.bench.records import BYTES
from sambatune.bench.results_db import StoredSession
from sambatune.bench.statistics import Comparison, compare
from sambatune.errors import InvalidInput

#: Parameters that may differ between sessions without making them incomparable.
IGNORED_PARAMETERS = frozenset({"runs", "warmup"})


@dataclass
class SessionComparison:
    before: StoredSession
    after: StoredSession
    series: str
    comparison: Comparison
    config_diff: list[str] = field(default_factory=list)
    changed_lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "before_session": self.before.id,
            "after_session": self.after.id,
            "test": self.after.result.test,
            "series": self.series,
            "comparison": self.comparison.to_json(),
            "verdict": self.comparison.verdict,
            "sentence": self.comparison.sentence,
            "smb_conf_diff": self.config_diff,
            "changed_lines": self.changed_lines,
            "warnings": self.warnings,
        }


def compare_sessions(
    before: StoredSession, after: StoredSession, series: str | None = None
) -> SessionComparison:
    if before.result.test != after.result.test:
        raise InvalidInput(
            f"Session {before.id} is a {before.result.test} test and session {after.id} "
            f"a {after.result.test} test: only the same test can be compared."
        )
    name = series or after.result.primary
    missing = [s.id for s in (before, after) if name not in s.result.series]
    if missing:
        raise InvalidInput(
            f"Series '{name}' is not in session {missing[0]}.",
            details="Series there: "
            + ", ".join((before if missing[0] == before.id else after).result.series),
        )
    old, new = before.result.series[name], after.result.series[name]
    comparison = compare(
        old.values(),
        new.values(),
        higher_is_better=True,
        unit="bytes/s" if new.unit == BYTES else "ops/s",
    )
    result = SessionComparison(before, after, name, comparison)
    result.config_diff, result.changed_lines = config_changes(before.smb_conf, after.smb_conf)
    result.warnings = comparability_warnings(before, after, result.changed_lines)
    return result


def config_changes(before: bytes | None, after: bytes | None) -> tuple[list[str], list[str]]:
    """The unified diff of the two recorded smb.conf files, and its changed setting lines."""
    if before is None or after is None:
        return [], []
    old = before.decode("utf-8", "replace").splitlines()
    new = after.decode("utf-8", "replace").splitlines()
    diff = list(difflib.unified_diff(old, new, "before/smb.conf", "after/smb.conf", lineterm=""))
    changed = [
        line
        for line in diff
        if line[:1] in "+-"
        and not line.startswith(("+++", "---"))
        and line[1:].strip()
        and not line[1:].lstrip().startswith(("#", ";"))
    ]
    return diff, changed


def comparability_warnings(
    before: StoredSession, after: StoredSession, changed_lines: list[str]
) -> list[str]:
    warnings = []
    if before.server != after.server:
        warnings.append(f"The sessions ran against different servers ({before.server}, {after.server}).")
    old_params = {k: v for k, v in before.result.parameters.items() if k not in IGNORED_PARAMETERS}
    new_params = {k: v for k, v in after.result.parameters.items() if k not in IGNORED_PARAMETERS}
    differing = sorted(
        k for k in old_params.keys() | new_params.keys() if old_params.get(k) != new_params.get(k)
    )
    if differing:
        warnings.append(
            "The test itself was run differently ("
            + ", ".join(f"{k}: {old_params.get(k)!r} -> {new_params.get(k)!r}" for k in differing)
            + "); the change in figures may come from that."
        )
    if before.result.through_mounted_share and after.result.through_mounted_share:
        pass  # this computer's own client on both sides: no server's smb.conf takes part
    elif before.smb_conf is None or after.smb_conf is None:
        warnings.append("smb.conf was not recorded for both sessions, so what changed is unknown.")
    else:
        settings = {line[1:].split("=")[0].strip().lower() for line in changed_lines}
        if len(settings) > 1:
            warnings.append(
                f"{len(settings)} settings changed in smb.conf between the sessions; the method "
                "changes one at a time, so the difference cannot be pinned on any one of them."
            )
    return warnings
