"""One converter for the JSON that is a dataclass's fields, both ways, and no class that
writes the same thing again by hand."""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

from sambatune.errors import InvalidInput
from sambatune.json_fields import StoredFields
from sambatune.states import LiveState

APP = Path(__file__).resolve().parents[1] / "app" / "sambatune"


@dataclass(frozen=True)
class _Inner(StoredFields):
    name: str


@dataclass(frozen=True)
class _Example(StoredFields):
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


@dataclass
class _Stored(StoredFields):
    name: str
    port: int | None
    rate: float = 1.5
    on: bool = False
    tags: list[str] = field(default_factory=list)
    state: LiveState = LiveState.NEW
    shape: Literal["round", "square"] = "round"
    extra: dict[str, Any] = field(default_factory=dict)

    JSON_NAME = "a thing"


def test_what_to_json_wrote_reads_back_the_same() -> None:
    inners = (_Inner("y"), _Inner("z"))
    example = _Example(3, LiveState.OLD, ("b", "c"), _Inner("x"), inners)
    assert _Example.from_json(example.to_json()) == example
    stored = _Stored("nas", 22, 2, True, ["a"], LiveState.NEW, "square", {"k": [1]})
    again = _Stored.from_json(json.loads(json.dumps(stored.to_json())))
    assert again == stored and type(again.rate) is float and isinstance(again.state, LiveState)


def test_a_missing_or_null_value_takes_the_default_and_unknown_keys_are_left() -> None:
    """Files written before a field existed, or with null where a newer one writes a value."""
    assert _Stored.from_json({"name": "nas", "rate": None, "added_later": 1}) == _Stored("nas", None)
    assert _Example.from_json({"zeta": 1, "alpha": "new", "inners": None}).inners == ()
    # A whole number some JSON writer gave as 22.0 is still a whole number.
    assert _Stored.from_json({"name": "nas", "port": 22.0}).port == 22


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ("nas", "a thing is a JSON object, not text"),
        ({"port": 1}, "a thing needs 'name'"),
        ({"name": 5, "port": 1}, "name must be text, not a number"),
        ({"name": "n", "port": "22"}, "port must be a whole number, not text"),
        ({"name": "n", "port": True}, "port must be a whole number, not true/false"),
        ({"name": "n", "port": 22.5}, "port must be a whole number, not a number"),
        ({"name": "n", "port": 1, "on": "no"}, "on must be true or false, not text"),
        ({"name": "n", "port": 1, "rate": "fast"}, "rate must be a number, not text"),
        ({"name": "n", "port": 1, "tags": "a"}, "tags must be a list, not text"),
        ({"name": "n", "port": 1, "tags": ["a", 2]}, "tags[1] must be text, not a number"),
        ({"name": "n", "port": 1, "state": "melted"}, "state cannot be 'melted'"),
        ({"name": "n", "port": 1, "shape": "oval"}, "shape must be one of ['round', 'square']"),
        ({"name": "n", "port": 1, "extra": []}, "extra must be an object, not a list"),
    ],
)
def test_a_damaged_value_is_one_clear_refusal_naming_the_field(data: Any, words: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        _Stored.from_json(data)
    assert words in caught.value.message


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


def _readable(hint: Any) -> bool:
    """Can ``from_json`` convert a field of this type (the rules of json_fields)?"""
    import enum
    import types
    import typing

    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any or hint in (str, int, float, bool, dict) or origin in (dict, Literal):
        return True
    if origin in (typing.Union, types.UnionType):
        arms = [a for a in args if a is not type(None)]
        return len(arms) == 1 and _readable(arms[0])
    if origin in (list, tuple):
        return not args or ((args[-1] is Ellipsis or len(args) == 1) and _readable(args[0]))
    return (isinstance(hint, type) and issubclass(hint, enum.Enum)) or hasattr(hint, "from_json")


def test_every_class_that_reads_its_fields_back_can() -> None:
    """A type only imported for the type checker, or one with no JSON form, would fail
    only when a file is read: find it now."""
    import importlib
    import pkgutil
    import typing

    import sambatune

    for module in pkgutil.walk_packages(sambatune.__path__, "sambatune."):
        if not module.name.startswith(("sambatune.ui", "sambatune.frozen", "sambatune.__main__")):
            importlib.import_module(module.name)
    classes, todo = [], list(StoredFields.__subclasses__())
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if cls.__module__.startswith("sambatune."):
            classes.append(cls)
    assert len(classes) >= 9
    for cls in classes:
        for name, hint in typing.get_type_hints(cls).items():
            assert _readable(hint), f"{cls.__name__}.{name}: {hint}"
