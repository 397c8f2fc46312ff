"""JSON for a dataclass that is its fields, written once instead of in every class."""

from __future__ import annotations

import dataclasses
from typing import Any


class FieldsAsJson:
    """``to_json()`` for a dataclass whose JSON object is exactly its fields: names in
    the order declared; a value with a ``to_json`` of its own gives that, a list or tuple
    a list of such values, anything else stays as it is (plain data, fit for JSON). A
    class that only adds keys adds them to ``super().to_json()``; one whose JSON renames,
    leaves out or converts a field writes its own."""

    def to_json(self) -> dict[str, Any]:
        return {f.name: _as_json(getattr(self, f.name)) for f in dataclasses.fields(self)}  # type: ignore[arg-type]


def _as_json(value: Any) -> Any:
    to_json = getattr(value, "to_json", None)
    if to_json is not None:
        return to_json()
    if isinstance(value, (list, tuple)):
        return [_as_json(item) for item in value]
    return value
