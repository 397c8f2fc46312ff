"""The read-only tables SambaTune shows figures in."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget

SelectionMode = QAbstractItemView.SelectionMode


def read_only_table(
    headers: Sequence[str], name: str = "", *, select: SelectionMode | None = None
) -> QTableWidget:
    """A table of results: column headers, no row numbers, nothing editable, columns as wide
    as their contents with the last one taking the rest. ``select``: rows are picked whole,
    in this mode; None leaves Qt's default (cells, one at a time)."""
    table = QTableWidget(0, len(headers))
    if name:
        table.setObjectName(name)
    table.setHorizontalHeaderLabels(list(headers))
    table.verticalHeader().hide()
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    if select is not None:
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(select)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setStretchLastSection(True)
    return table
