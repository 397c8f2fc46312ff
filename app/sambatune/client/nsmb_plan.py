"""macOS SMB client plan (nsmb.conf); filled in below."""

from __future__ import annotations

from sambatune.client.plan import PlannedChange
from sambatune.client.planner import PlanContext


def plan_nsmb(ctx: PlanContext) -> list[PlannedChange]:
    return []
