"""JSON for a dataclass that is its fields, written and read once instead of in every class."""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, Union

from sambatune.errors import InvalidInput

SelfT = TypeVar("SelfT", bound="StoredFields")


class FieldsAsJson:
    """``to_json()`` for a dataclass whose JSON object is exactly its fields: names in
    the order declared; a value with a ``to_json`` of its own gives that, a list or tuple
    a list of such values, anything else stays as it is (plain data, fit for JSON). A
    class that only adds keys adds them to ``super().to_json()``; one whose JSON renames,
    leaves out or converts a field writes its own.
    """

    def to_json(self) -> dict[str, Any]:
        return {f.name: _as_json(getattr(self, f.name)) for f in dataclasses.fields(self)}  # type: ignore[arg-type]


class StoredFields(FieldsAsJson):
    """A dataclass SambaTune writes as its fields and reads back: ``from_json()`` reads
    what ``to_json`` wrote by the fields' declared types.

    It is for JSON SambaTune wrote itself (its files, a record kept by an older version):
    a key that is missing, or null where the type has no None, takes the field's default,
    so fields added later read from old files; keys it does not know are left alone. A
    required field missing, or a value of another type, is :class:`InvalidInput` naming
    the field; a class may say what it is in messages with ``JSON_NAME`` ("a server").
    """

    @classmethod
    def from_json(cls: type[SelfT], data: Any) -> SelfT:
        what = getattr(cls, "JSON_NAME", f"a {cls.__name__} record")
        if not isinstance(data, Mapping):
            raise InvalidInput(f"{what} is a JSON object, not {_json_type(data)}")
        hints = _field_types(cls)
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            if not f.init:
                continue
            value = data.get(f.name)
            hint = hints[f.name]
            if value is None and not _allows_none(hint):
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                    raise InvalidInput(f"{what} needs {f.name!r}")
                continue
            values[f.name] = _from_json(hint, value, f.name)
        return cls(**values)


def _as_json(value: Any) -> Any:
    to_json = getattr(value, "to_json", None)
    if to_json is not None:
        return to_json()
    if isinstance(value, (list, tuple)):
        return [_as_json(item) for item in value]
    return value


_TYPES: dict[type, dict[str, Any]] = {}


def _field_types(cls: type) -> dict[str, Any]:
    """The fields' types, resolved once per class (the annotations are strings)."""
    found = _TYPES.get(cls)
    if found is None:
        found = _TYPES[cls] = typing.get_type_hints(cls)
    return found


def _allows_none(hint: Any) -> bool:
    return hint is Any or (_is_union(hint) and type(None) in typing.get_args(hint))


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (Union, types.UnionType)


#: What a JSON value is, in words for a message.
_JSON_TYPES = {
    bool: "true/false",
    int: "a number",
    float: "a number",
    str: "text",
    list: "a list",
    dict: "an object",
}


def _json_type(value: Any) -> str:
    return "null" if value is None else _JSON_TYPES.get(type(value), type(value).__name__)


#: The JSON values a field of each plain type takes (a bool is no number here), and
#: what the field is said to be when it gets another.
_PLAIN: dict[type, tuple[tuple[type, ...], str]] = {
    str: ((str,), "text"),
    int: ((int,), "a whole number"),
    float: ((int, float), "a number"),
    bool: ((bool,), "true or false"),
}


def _from_json(hint: Any, value: Any, where: str) -> Any:
    if hint is Any:
        return value
    if _is_union(hint):
        if value is None:
            return None
        arms = [arm for arm in typing.get_args(hint) if arm is not type(None)]
        if len(arms) != 1:
            raise TypeError(f"{where}: only X | None converts from JSON, not {hint}")
        return _from_json(arms[0], value, where)
    origin = typing.get_origin(hint)
    if origin in (list, tuple):
        if not isinstance(value, list):
            raise InvalidInput(f"{where} must be a list, not {_json_type(value)}")
        args = typing.get_args(hint)
        item = args[0] if args else Any
        items = [_from_json(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
        return items if origin is list else tuple(items)
    if origin is dict or hint is dict:
        if not isinstance(value, Mapping):
            raise InvalidInput(f"{where} must be an object, not {_json_type(value)}")
        return dict(value)
    if origin is Literal:
        if value not in typing.get_args(hint):
            raise InvalidInput(
                f"{where} must be one of {list(typing.get_args(hint))}, not {str(value)[:40]!r}"
            )
        return value
    if hint is int and isinstance(value, float) and value.is_integer():
        return int(value)  # 1500.0, as some JSON writers give a whole number
    if hint in _PLAIN:
        accepted, expected = _PLAIN[hint]
        if not isinstance(value, accepted) or (hint is not bool and isinstance(value, bool)):
            raise InvalidInput(f"{where} must be {expected}, not {_json_type(value)}")
        return hint(value)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return hint(value)
        except ValueError:
            raise InvalidInput(f"{where} cannot be {str(value)[:40]!r}") from None
    reader = getattr(hint, "from_json", None)
    if reader is not None:
        return reader(value)
    raise TypeError(f"{where}: no JSON conversion for {hint}")
