"""Windows SMB client plan (SmbClientConfiguration); filled in below."""

from __future__ import annotations

from sambatune.client.plan import PlannedChange
from sambatune.client.planner import PlanContext


def plan_windows_smb_client(ctx: PlanContext) -> list[PlannedChange]:
    return []
