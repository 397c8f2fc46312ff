"""A rollout's report: per host when it was planned, changed, judged and put back, and
the timeline of every step, as text for a terminal and as one self-contained HTML file."""

from __future__ import annotations

import html
from collections.abc import Sequence

from sambatune.conf.activation import Activation
from sambatune.fleet.rollout_store import HostRecord, HostState, RolloutRecord


def _role(host: HostRecord) -> str:
    if host.wave is None:
        return "-"
    return "canary" if host.wave == 0 else f"wave {host.wave}"


def _time(stamp: str | None) -> str:
    # The records keep ISO 8601 in UTC; the table shows the time of day, the date once.
    return stamp[11:19] if stamp else "-"


def verdict_text(host: HostRecord) -> str:
    if host.verdict is None:
        return "-" if host.wave != 0 else "not measured"
    return str(host.verdict.get("overall"))


def host_rows(record: RolloutRecord) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = [
        ("HOST", "ROLE", "STATE", "LIVE", "ACTIVATION", "PLANNED", "APPLIED", "VERDICT", "RESTORED")
    ]
    for host in record.hosts:
        rows.append(
            (
                host.name,
                _role(host),
                host.state.value,
                host.live.value,
                activation_text(host),
                _time(host.planned_at),
                _time(host.applied_at),
                verdict_text(host),
                _time(host.restored_at),
            )
        )
    return rows


def activation_text(host: HostRecord) -> str:
    """How the host takes the change: reload, reload (new connections only), restart."""
    if host.state is HostState.IN_LINE or host.activation is None:
        return "-"
    if host.activation == "none":
        return "none (smbd not running)"
    if host.restart_reasons:
        return "restart"
    if any(c.get("activation") == Activation.NEW_CONNECTIONS for c in host.changes):
        return "reload (new connections)"
    return "reload"


def table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    )


def report_text(record: RolloutRecord) -> str:
    lines = [
        f"Rollout {record.id}: {record.status.value}" + (f" ({record.reason})" if record.reason else ""),
        f"Change: {'; '.join(record.edits)}",
        f"Started {record.created_at}" + (f", ended {record.finished_at}" if record.finished_at else ""),
        "",
        table(host_rows(record)),
    ]
    # What went wrong where; the others' messages only repeat the table.
    troubled = (HostState.FAILED, HostState.NOT_RESTORED, HostState.LEFT_OUT)
    notes = [f"{h.name}: {h.message}" for h in record.hosts if h.message and h.state in troubled]
    if notes:
        lines += ["", *notes]
    lines += ["", "Timeline (UTC):"]
    for entry in record.timeline:
        where = f"{entry.host}: " if entry.host else ""
        lines.append(
            f"  {entry.at[11:19]}  {where}{entry.what}" + (f": {entry.message}" if entry.message else "")
        )
    return "\n".join(lines)


def report_html(record: RolloutRecord) -> str:
    def cells(row: Sequence[str], tag: str) -> str:
        return "<tr>" + "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in row) + "</tr>"

    rows = host_rows(record)
    hosts = cells(rows[0], "th") + "".join(cells(r, "td") for r in rows[1:])
    timeline = "".join(cells((e.at, e.host or "", e.what, e.message), "td") for e in record.timeline)
    diffs = "".join(
        f"<h3>{html.escape(h.name)}</h3><pre>{html.escape(h.diff)}</pre>" for h in record.hosts if h.diff
    )
    ended = f", ended {html.escape(record.finished_at)}" if record.finished_at else ""
    title = f"SambaTune rollout {record.id}: {record.status.value}"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
td, th {{ border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }}
pre {{ background: #f6f6f6; padding: 0.6em; overflow-x: auto; }}
</style></head><body>
<h1>{html.escape(title)}</h1>
<p>{html.escape(record.reason)}</p>
<p>Change: <code>{html.escape("; ".join(record.edits))}</code><br>
Started {html.escape(record.created_at)}{ended}</p>
<h2>Hosts</h2><table>{hosts}</table>
<h2>Timeline (UTC)</h2><table>{cells(("At", "Host", "What", "Message"), "th")}{timeline}</table>
<h2>What the change does to each file</h2>{diffs}
</body></html>
"""
