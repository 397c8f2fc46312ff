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
class _Inner(FieldsAsJson):
    name: str


@dataclass(frozen=True)
class _Example(FieldsAsJson):
    zeta: int
    alpha: LiveState
    nested: tuple[str, ...] = ("a",)
    inner: _Inner | None = None
    inners: tuple[_Inner, ...] = ()


def test_the_fields_in_their_order_and_their_values_as_they_are() -> None:
    data = _Example(3, LiveState.NEW).to_json()
    assert list(data) == ["zeta", "alpha", "nested", "inner", "inners"]
    assert data == {"zeta": 3, "alpha": "new", "nested": ["a"], "inner": None, "inners": []}
    assert data["alpha"] is LiveState.NEW


def test_a_value_with_its_own_json_gives_that_in_lists_too() -> None:
    data = _Example(1, LiveState.NEW, inner=_Inner("x"), inners=(_Inner("y"), _Inner("z"))).to_json()
    assert data["inner"] == {"name": "x"}
    assert data["inners"] == [{"name": "y"}, {"name": "z"}]


def _fields(cls: ast.ClassDef) -> list[str]:
    return [
        statement.target.id
        for statement in cls.body
        if isinstance(statement, ast.AnnAssign)
        and isinstance(statement.target, ast.Name)
        and "ClassVar" not in ast.unparse(statement.annotation)
    ]


def _field_of(node: ast.expr) -> str | None:
    """The field of ``self`` a value converts the way FieldsAsJson does, or None:
    ``self.a``, ``self.a.to_json()``, ``... if self.a else None``, ``list(self.a)``,
    ``[x.to_json() for x in self.a]``."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to_json":
        return _field_of(node.func.value) if not node.args else None
    if isinstance(node, ast.IfExp) and isinstance(node.orelse, ast.Constant) and node.orelse.value is None:
        return _field_of(node.body)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "list":
        return _field_of(node.args[0]) if len(node.args) == 1 else None
    if isinstance(node, ast.ListComp) and len(node.generators) == 1 and not node.generators[0].ifs:
        loop, item = node.generators[0], node.elt
        if (
            isinstance(item, ast.Call)
            and isinstance(item.func, ast.Attribute)
            and item.func.attr == "to_json"
            and not item.args
            and ast.dump(item.func.value) == ast.dump(loop.target)
        ):
            return _field_of(loop.iter)
    return None


def _hand_written_field_copies() -> list[str]:
    """Classes whose to_json is ``{"a": self.a, "b": self.b.to_json(), ...}`` over all
    their fields: what FieldsAsJson writes."""
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
                    (key.value, _field_of(item))
                    for key, item in zip(value.keys, value.values, strict=True)
                    if isinstance(key, ast.Constant)
                ]
                names = [key for key, attr in pairs if key == attr]
                if len(names) == len(value.keys) and names == _fields(cls):
                    found.append(f"{path.relative_to(APP)}:{cls.name}")
    return found


def test_no_class_writes_its_fields_out_by_hand() -> None:
    assert _hand_written_field_copies() == []
