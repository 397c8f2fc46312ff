"""JSON for a dataclass that is its fields, written once instead of in every class."""

from __future__ import annotations

import dataclasses
from typing import Any


class FieldsAsJson:
    """``to_json()`` for a dataclass whose JSON object is exactly its fields: names in
    the order declared, values as they are (plain data, already fit for JSON). A class
    whose JSON renames, leaves out or converts a field writes its own."""

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]
