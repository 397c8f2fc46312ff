"""A table's item where a test expects one (QTableWidget.item() is None for an empty cell)."""

from __future__ import annotations

from PySide6.QtWidgets import QTableWidget, QTableWidgetItem


def item_at(table: QTableWidget, row: int, column: int) -> QTableWidgetItem:
    item = table.item(row, column)
    assert item is not None, f"{table.objectName() or 'the table'} has no item at ({row}, {column})"
    return item
