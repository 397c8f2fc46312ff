"""Reading what testparm prints: ``--show-all-parameters``, the ``-s`` dump, ``-V``.

Formats (Samba 4.x, source3/utils/testparm.c and lib/param/loadparm.c):

- ``--show-all-parameters``: ``[local]`` then ``[global]``, and one line per
  parameter ``name=P_TYPE,[enum1|enum2|...,]FLAGS[ (synonyms...)]`` where the
  parenthesis is ``(synonyms: a, b[i])`` on a canonical name (``[i]`` marks an
  inverse synonym) or ``(synonym of X)`` / ``(inverse synonym of X)`` on an alias.
- the dump (``-s``, ``-sv``): ``[section]`` lines and ``\\tname = value`` lines.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from sambatune.conf.syntax import section_key

TYPE_NAMES = {
    "P_BOOL": "boolean",
    "P_BOOLREV": "boolean-rev",
    "P_INTEGER": "integer",
    "P_BYTES": "bytes",
    "P_OCTAL": "octal",
    "P_ENUM": "enum",
    "P_STRING": "string",
    "P_USTRING": "ustring",
    "P_CHAR": "char",
    "P_LIST": "list",
    "P_CMDLIST": "cmdlist",
}
_ALIAS_OF = re.compile(r"\s*\((inverse )?synonym of (.+)\)\s*$")
_SYNONYMS = re.compile(r"\s*\(synonyms: (.*)\)\s*$")
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


class ListedParameter(NamedTuple):
    """One line of ``--show-all-parameters``."""

    name: str
    type: str  # one of TYPE_NAMES' values
    scope: str  # "share" ([local]) or "global"
    enum_values: tuple[str, ...]
    flags: tuple[str, ...]
    alias_of: str | None  # for a synonym: the canonical name
    inverse: bool  # for a synonym: True when it means the opposite boolean


def parse_show_all(text: str) -> list[ListedParameter]:
    """Every line of ``testparm --show-all-parameters``; raises ValueError on garbage."""
    found: list[ListedParameter] = []
    scope: str | None = None
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line:
            continue
        if line in ("[local]", "[global]"):
            scope = "share" if line == "[local]" else "global"
            continue
        if scope is None or "=" not in line:
            raise ValueError(f"unexpected line in testparm --show-all-parameters: {line!r}")
        name, _, rest = line.partition("=")
        alias_of = None
        inverse = False
        match = _ALIAS_OF.search(rest)
        if match:
            alias_of, inverse = match.group(2).strip(), bool(match.group(1))
            rest = rest[: match.start()]
        else:
            match = _SYNONYMS.search(rest)
            if match:
                rest = rest[: match.start()]
        parts = rest.split(",")
        type_code = parts[0].strip()
        if type_code not in TYPE_NAMES:
            raise ValueError(f"unknown parameter type {type_code!r} in {line!r}")
        enum_values: tuple[str, ...] = ()
        flag_parts = parts[1:]
        if type_code == "P_ENUM" and flag_parts:
            enum_values = tuple(flag_parts[0].split("|"))
            flag_parts = flag_parts[1:]
        flags = tuple(part.strip() for part in flag_parts if part.strip())
        found.append(
            ListedParameter(name.strip(), TYPE_NAMES[type_code], scope, enum_values, flags, alias_of, inverse)
        )
    return found


def parse_dump(text: str) -> list[tuple[str, dict[str, str]]]:
    """The sections of a testparm dump in order, each with its exact name and settings.

    Names and values are kept exactly as printed (a value may be empty). A section
    printed twice (never, in practice) would appear twice.
    """
    sections: list[tuple[str, dict[str, str]]] = []
    current: dict[str, str] | None = None
    for line in text.split("\n"):
        if line.startswith("\t") and current is not None:
            name, equals, value = line[1:].partition(" = ")
            if not equals and line[1:].endswith(" ="):
                name, value = line[1:-2], ""
            current[name] = value
        elif line.startswith("[") and line.endswith("]"):
            current = {}
            sections.append((line[1:-1], current))
    return sections


def dump_by_section(text: str) -> dict[str, dict[str, str]]:
    """The dump as ``{section key: {parameter: value}}``: each section under the key Samba
    finds it by (:func:`section_key`), its settings exactly as printed."""
    merged: dict[str, dict[str, str]] = {}
    for name, settings in parse_dump(text):
        merged.setdefault(section_key(name), {}).update(settings)
    return merged


def parse_version(text: str) -> tuple[str, tuple[int, int, int]]:
    """``Version 4.17.12-Debian`` -> ("4.17.12-Debian", (4, 17, 12)); ValueError otherwise."""
    match = _VERSION.search(text)
    if not match:
        raise ValueError(f"no Samba version in {text.strip()!r}")
    full = text.strip()
    if full.lower().startswith("version "):
        full = full[len("version ") :].strip()
    return full, (int(match[1]), int(match[2]), int(match[3]))
