"""What signing and encryption cost, at a glance: one row per session kind.

``SMB from this computer`` with sessions to compare runs the same test once in a plain,
a signed and an encrypted session. The Run tab's notes say it in sentences among
everything else; this view puts the answer side by side: what each session really
negotiated (from the server's own session list when it could be read, else this
computer's side, and the row says which), its mean write and read rates, and how each
compares with the first session (the baseline), calling a difference real only when
Welch's test does. The core's sentences follow under the table, and each cell's tooltip
holds the one it comes from.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QTableWidgetItem, QVBoxLayout, QWidget

from sambatune.bench.records import BenchResult
from sambatune.bench.smb_security import describe, mismatch
from sambatune.remote.smb_sessions import SmbSession
from sambatune.ui.tables import read_only_table
from sambatune.units import format_percent, format_rate

OPERATIONS = ("write", "read")
COLUMNS = ["Session", "Negotiated", "Write", "Read"]
WAITING = (
    "What signing and encryption cost on this server: choose <b>SMB from this computer</b>, "
    "check <b>plain</b>, <b>signed</b> and <b>encrypted</b> under <b>Compare sessions</b> "
    "(a user is needed) and press Run. The same test then runs in one session of each kind "
    "and the answer appears here."
)


@dataclass(frozen=True)
class Cell:
    text: str
    tip: str = ""


def has_comparison(result: BenchResult) -> bool:
    return result.test == "smb-client" and bool(result.parameters.get("security"))


def _modes(result: BenchResult) -> list[str]:
    return [str(m) for m in result.parameters.get("security") or []]


def _server(entry: dict[str, Any]) -> SmbSession | None:
    return SmbSession.from_json(entry["server"]) if entry.get("server") else None


def sentence(mode: str, entry: dict[str, Any]) -> str:
    """The core's own sentence for what ``mode`` negotiated (as the result's notes hold it)."""
    return describe(mode, entry.get("client") or {}, _server(entry), str(entry.get("server_not_read") or ""))


def negotiated(mode: str, entry: dict[str, Any]) -> Cell:
    """What the session got, one fact a line; the core's full sentence as the tip."""
    facts = entry.get("client") or {}
    server = _server(entry)
    if server is not None:
        signed = bool(server.signing) and server.signing_degree != "partial"
        lines = [server.dialect or "dialect not reported"]
        if signed:
            lines.append(f"signed with {server.signing}")
        elif server.encryption:
            # Not "not signed": encryption authenticates every message, signing would repeat it.
            lines.append("authenticated by its encryption")
        else:
            # SMB 3.1.1 signs the logon of every session: said, so "not signed" is not doubted.
            lines.append("not signed" + (" (only its logon)" if server.signing_degree == "partial" else ""))
        lines.append(f"encrypted with {server.encryption}" if server.encryption else "not encrypted")
    else:
        lines = [
            f"SMB {facts.get('dialect')}",
            f"signed with {facts.get('signing_algorithm')}" if facts.get("signing") else "not signed",
            f"encrypted with {facts.get('cipher')}" if facts.get("encryption") else "not encrypted",
            "(this computer's side)",
        ]
    tip = sentence(mode, entry)
    warning = mismatch(mode, server)
    if warning:
        lines[0] = f"⚠ {lines[0]}"
        tip += f"\n{warning}"
    return Cell("\n".join(lines), tip)


def rate(result: BenchResult, operation: str, mode: str) -> Cell:
    """The mean rate, then how it compares with the baseline session's."""
    series = result.series.get(f"{operation}-{mode}")
    stats = series.stats() if series is not None else None
    if stats is None:
        return Cell("–", f"No {operation}s in this session.")
    figure = format_rate(stats.mean)
    runs = f"mean of {stats.n} counted run{'s' if stats.n != 1 else ''}"
    if mode == _modes(result)[0]:
        return Cell(f"{figure}\nthe baseline", f"{runs}; the other sessions are compared with this one.")
    cost = next(
        (
            c
            for c in result.extra.get("security_cost") or []
            if c.get("mode") == mode and c.get("operation") == operation
        ),
        None,
    )
    if cost is None:
        return Cell(f"{figure}\nnot compared", f"{runs}; at least 2 counted runs each are needed to compare.")
    change = float(cost.get("change") or 0.0)
    verdict = (
        f"{format_percent(abs(change), 0)} {'slower' if change < 0 else 'faster'}"
        if cost.get("significant")
        else "no clear difference"
    )
    return Cell(f"{figure}\n{verdict}\np = {float(cost['p_value']):.3f}", f"{runs}. {cost.get('text', '')}")


def comparison_rows(result: BenchResult) -> list[list[Cell]]:
    security = result.extra.get("security") or {}
    rows = []
    for mode in _modes(result):
        entry = security.get(mode) or {}
        rows.append(
            [
                Cell(mode),
                negotiated(mode, entry) if entry else Cell("–", "This session did not run."),
                *(rate(result, operation, mode) for operation in OPERATIONS),
            ]
        )
    return rows


def caption(result: BenchResult) -> str:
    security = result.extra.get("security") or {}
    from_server = [entry.get("server") is not None for entry in security.values()]
    source = (
        "What each one negotiated is what the server's own session list (smbstatus) shows."
        if from_server and all(from_server)
        else "The server's session list could not name every session: a row marked "
        "<i>this computer's side</i> shows what this computer negotiated (the sentences below say why)."
    )
    baseline = _modes(result)[0]
    session = f" (session {result.session_id})" if result.session_id is not None else ""
    return (
        f"<b>Signing and encryption compared</b>{session}: the same test ran in one session "
        f"of each kind, on {escape(result.target)}, same share and file size. {source} Each rate "
        f"is compared with the {baseline} session's: a difference counts only when Welch's test "
        "says it is real (p below 0.05); otherwise it is within the runs' own spread."
    )


def sentences(result: BenchResult) -> list[str]:
    """The result's notes behind the table, as the core wrote them: what each session got
    (and where the server gave another than asked), each cost, and where SambaTune's own
    client was the limit, which makes a cost the client's rather than the server's."""
    security = result.extra.get("security") or {}
    said = []
    for mode in _modes(result):
        entry = security.get(mode)
        if entry:
            said.append(sentence(mode, entry))
            warning = mismatch(mode, _server(entry))
            if warning:
                said.append(warning)
    said += [str(c.get("text", "")) for c in result.extra.get("security_cost") or []]
    labels = tuple(f"{series.label}:" for series in result.series.values())
    said += [note for note in result.notes if note.startswith(labels)]
    return said


def is_warning(result: BenchResult, text: str) -> bool:
    """A sentence that qualifies the figures: the server gave another session than asked,
    or this computer's client, not the server, set the pace."""
    security = result.extra.get("security") or {}
    mismatches = {mismatch(mode, _server(entry)) for mode, entry in security.items()}
    labels = tuple(f"{series.label}:" for series in result.series.values())
    return text in mismatches or text.startswith(labels)


def status_figures(result: BenchResult) -> str:
    """The status line's figures for a comparison: each session's read (else write) rate."""
    operation = "read" if any(n.startswith("read-") for n in result.series) else "write"
    parts = []
    for mode in _modes(result):
        series = result.series.get(f"{operation}-{mode}")
        stats = series.stats() if series is not None else None
        if stats is not None:
            parts.append(f"{mode} {operation} {format_rate(stats.mean)}")
    return ", ".join(parts)


class SecurityTable(QWidget):
    """The comparison of the newest SMB test that compared sessions on this page."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("securityView")
        self.result: BenchResult | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        self.caption = QLabel(WAITING)
        self.caption.setObjectName("securityCaption")
        self.caption.setWordWrap(True)
        layout.addWidget(self.caption)
        self.table = read_only_table(COLUMNS, "securityTable")
        self.table.setWordWrap(False)  # each cell's lines are its own, not wrapped
        self.table.hide()
        layout.addWidget(self.table)
        self.details = QLabel()
        self.details.setObjectName("securityDetails")
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setStyleSheet("color: #1e5a8c;")
        layout.addWidget(self.details)
        layout.addStretch(1)

    def show_result(self, result: BenchResult) -> None:
        if not has_comparison(result):
            return
        self.result = result
        self.caption.setText(caption(result))
        rows = comparison_rows(result)
        self.table.setRowCount(len(rows))
        for row, cells in enumerate(rows):
            for column, cell in enumerate(cells):
                item = QTableWidgetItem(cell.text)
                item.setToolTip(cell.tip)
                if column >= 2:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
                else:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
                self.table.setItem(row, column, item)
        self.table.resizeColumnsToContents()
        self.table.resizeRowsToContents()
        # As tall as its rows: three rows need no scroll bar, nor the space of thirty.
        header = self.table.horizontalHeader().sizeHint().height()
        rows_height = sum(self.table.rowHeight(r) for r in range(len(rows)))
        self.table.setFixedHeight(header + rows_height + 2 * self.table.frameWidth())
        self.table.show()
        self.details.setText(
            "<br>".join(
                f"{'⚠' if is_warning(result, said) else 'ℹ'} {escape(said)}" for said in sentences(result)
            )
        )
