"""One converter for the JSON that is a dataclass's fields, and no class that writes the
same thing again by hand."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from sambatune.json_fields import FieldsAsJson
from sambatune.states import LiveState

APP = Path(__file__).resolve().parents[1] / "app" / "sambatune"


@dataclass(frozen=True)
class _Example(FieldsAsJson):
    zeta: int
    alpha: LiveState
    nested: tuple[str, ...] = ("a",)


def test_the_fields_in_their_order_and_their_values_as_they_are() -> None:
    data = _Example(3, LiveState.NEW).to_json()
    assert list(data) == ["zeta", "alpha", "nested"]
    assert data == {"zeta": 3, "alpha": "new", "nested": ("a",)}
    assert data["alpha"] is LiveState.NEW


def _fields(cls: ast.ClassDef) -> list[str]:
    return [
        statement.target.id
        for statement in cls.body
        if isinstance(statement, ast.AnnAssign)
        and isinstance(statement.target, ast.Name)
        and "ClassVar" not in ast.unparse(statement.annotation)
    ]


def _hand_written_field_copies() -> list[str]:
    """Classes whose to_json is ``{"a": self.a, "b": self.b, ...}`` over all their fields."""
    found = []
    for path in sorted(APP.rglob("*.py")):
        for cls in ast.walk(ast.parse(path.read_text())):
            if not isinstance(cls, ast.ClassDef):
                continue
            for method in cls.body:
                if not (isinstance(method, ast.FunctionDef) and method.name == "to_json"):
                    continue
                body = [s for s in method.body if not isinstance(s, ast.Expr)]
                if len(body) != 1 or not isinstance(body[0], ast.Return):
                    continue
                value = body[0].value
                if not isinstance(value, ast.Dict):
                    continue
                pairs = [
                    (key.value, item.attr)
                    for key, item in zip(value.keys, value.values, strict=True)
                    if isinstance(key, ast.Constant)
                    and isinstance(item, ast.Attribute)
                    and isinstance(item.value, ast.Name)
                    and item.value.id == "self"
                ]
                names = [key for key, attr in pairs if key == attr]
                if len(names) == len(value.keys) and names == _fields(cls):
                    found.append(f"{path.relative_to(APP)}:{cls.name}")
    return found


def test_no_class_writes_its_fields_out_by_hand() -> None:
    assert _hand_written_field_copies() == []
