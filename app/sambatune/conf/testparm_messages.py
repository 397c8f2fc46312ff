"""Which lines of an smb.conf testparm's complaints are about.

testparm names the value or the parameter it refused, never the line:
``set_variable_helper(maybe): value is not boolean!``,
``WARNING: Ignoring invalid value 'SMB9' for parameter 'server min protocol'``,
``Invalid octal number create mask``, ``Unable to copy service - source not found: x``.
:func:`locate_messages` finds the lines that set that parameter or value, so an
editor can show the complaint where the problem is. A message that names nothing
(``Error loading services.``) stays without a line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import NamedTuple

from sambatune.conf.catalog import ParameterCatalog
from sambatune.conf.document import PARAMETER, SmbConfDocument
from sambatune.conf.syntax import name_key


class LocatedMessage(NamedTuple):
    message: str
    lines: tuple[int, ...]  # 1-based lines it is about; empty when it names nothing we found


_HELPER = re.compile(r"set_variable_helper\((?P<value>.*)\): value is not (?P<what>.+?)!?$")
_INVALID = re.compile(r"[Ii]gnoring invalid (?:list )?value '(?P<value>.*)' for parameter '(?P<name>[^']+)'")
_OCTAL = re.compile(r"Invalid octal number (?P<name>.+?)\s*$")
_COPY = re.compile(r"Unable to copy service - source not found: (?P<value>.+?)\s*$")
_UNKNOWN = re.compile(r"(?:Unknown parameter encountered|Ignoring unknown parameter):? \"(?P<name>[^\"]+)\"")
_KIND_FOR = {"boolean": ("boolean", "boolean-rev"), "a valid size specifier": ("bytes",)}


def _identity(name: str, catalog: ParameterCatalog) -> str:
    lookup = catalog.lookup(name)
    return lookup.parameter.name if lookup is not None else name_key(name)


def locate_messages(
    document: SmbConfDocument,
    catalog: ParameterCatalog,
    messages: Iterable[str],
) -> list[LocatedMessage]:
    """Each message with the lines of ``document`` it is about (synonyms count)."""
    settings = [
        (index + 1, row[1], row[2] or "")
        for index, row in enumerate(document.rows)
        if not isinstance(row, str) and row[0] == PARAMETER
    ]
    located = []
    for message in messages:
        text = message.strip()
        matcher = _matcher(text, catalog)
        lines: tuple[int, ...] = ()
        if matcher is not None:
            lines = tuple(line for line, name, value in settings if matcher(name, value))
        located.append(LocatedMessage(text, lines))
    return located


def _matcher(text: str, catalog: ParameterCatalog) -> Callable[[str, str], bool] | None:
    found = _HELPER.search(text)
    if found:
        value = found.group("value")
        kinds = _KIND_FOR.get(found.group("what").strip())

        def helper(name: str, written: str) -> bool:
            if written != value:
                return False
            if kinds is None:
                return True
            lookup = catalog.lookup(name)
            return lookup is not None and (
                lookup.parameter.type in kinds or (kinds[0] == "boolean" and lookup.inverse)
            )

        return helper
    found = _INVALID.search(text)
    if found:
        wanted, value = _identity(found.group("name"), catalog), found.group("value")
        return lambda name, written: _identity(name, catalog) == wanted and value in written
    found = _OCTAL.search(text)
    if found:
        wanted = _identity(found.group("name"), catalog)
        return lambda name, written: _identity(name, catalog) == wanted
    found = _COPY.search(text)
    if found:
        source = found.group("value")
        return lambda name, written: name_key(name) == "copy" and written == source
    found = _UNKNOWN.search(text)
    if found:
        wanted = name_key(found.group("name"))
        return lambda name, written: name_key(name) == wanted
    return None
