"""Plans made on this computer, kept by id so they can be found again.

``sambatune client plan`` and the "Tune this computer" page print a plan's id; the
before/after check (``sambatune client check PLAN_ID``) needs the plan behind it, often
after a reboot or a remount, when nobody has the plan on screen any more. Each plan is
one private JSON file, ``<id>.json``, in the user's data directory; the newest
:data:`KEEP` are kept.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from sambatune import appdirs
from sambatune.client.plan import ClientPlan
from sambatune.errors import InvalidInput

#: Plans are made freely while trying bandwidths and profiles; the older ones go.
KEEP = 100
#: Plan ids are hex from uuid4 (plan.py); anything path-like is refused, not resolved.
_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def default_root() -> Path:
    return appdirs.data_dir() / "client-plans"


def valid_plan_id(plan_id: str) -> str:
    if not _ID.match(plan_id):
        raise InvalidInput(
            f"{plan_id!r} is not a plan id.", details="Plan ids look like 3f2a9c0d41be (see 'client plan')."
        )
    return plan_id


class PlanStore:
    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_root()

    def path_of(self, plan_id: str) -> Path:
        return self.root / f"{valid_plan_id(plan_id)}.json"

    def save(self, plan: ClientPlan) -> Path:
        """Write the plan (again: the same id overwrites); older plans beyond :data:`KEEP`
        go. A before/after check keeps its own copy of its plan, so none is lost to it."""
        from sambatune.remote.local import write_local_file_atomic

        path = self.path_of(plan.id)
        appdirs.private_dir(self.root)
        write_local_file_atomic(
            str(path),
            (json.dumps(plan.to_json(), indent=2) + "\n").encode("utf-8"),
            mode=0o600 if os.name == "posix" else None,
        )
        self._prune(plan.id)
        return path

    def load(self, plan_id: str) -> ClientPlan:
        path = self.path_of(plan_id)
        try:
            raw: Any = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InvalidInput(
                f"No plan {plan_id} is on record on this computer.",
                details=f"Plans made here are kept in {self.root}; give the plan file "
                "(PLAN.json) instead, or make the plan again with 'sambatune client plan'.",
            ) from None
        except (OSError, ValueError) as exc:
            raise InvalidInput(f"Cannot read the plan {path}: {exc}") from exc
        return ClientPlan.from_json(raw)

    def _prune(self, newest: str) -> None:
        try:
            plans = sorted(self.root.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        except OSError:
            return
        for old in plans[KEEP:]:
            if old.stem != newest:
                old.unlink(missing_ok=True)


def load_plan(reference: str, store: PlanStore | None = None) -> ClientPlan:
    """A plan by id (made on this computer) or from a plan file (made elsewhere)."""
    candidate = Path(reference)
    if reference.endswith(".json") or os.sep in reference or (os.altsep and os.altsep in reference):
        try:
            raw = json.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InvalidInput(f"Cannot read the plan {reference}: {exc}") from exc
        return ClientPlan.from_json(raw)
    return (store or PlanStore()).load(reference)
