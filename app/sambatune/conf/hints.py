"""One short line about a parameter line, for an editor to show after it.

``default No · SMB1 only · classic advice obsolete``: what this Samba version's
catalog says (the default, or that the value *is* the default; deprecated;
removed; unknown) and what our own notes say (SMB1 only, the classic tuning advice
about it is obsolete). Hints are short on purpose; the full story is
:func:`sambatune.conf.explain.explain`.
"""

from __future__ import annotations

import re

from sambatune.conf.catalog import Parameter, ParameterCatalog
from sambatune.conf.knowledge import explanations
from sambatune.conf.normalize import testparm_form
from sambatune.conf.syntax import name_key
from sambatune.conf.values import SIZE_UNITS, boolean_text, parse_boolean

SEPARATOR = " · "
MAX_DEFAULT = 28  # longer defaults are cut with an ellipsis
_SIZE_UNITS = (("G", 1024**3), ("M", 1024**2), ("K", 1024))
_CACHE_LIMIT = 20000
_DIALECT = re.compile(r"SMB\d_\d\d")  # SMB2_10: a dialect by number, not a short name


def _dialect(parameter: Parameter, printed: str | None) -> str | None:
    """The numbered dialect a protocol enum's short name stands for (SMB2 -> SMB2_10).

    lib/param/param_table.c enum_protocol lists SMB2 and SMB3 first for their values, so
    testparm prints them instead of the dialect numbers.
    """
    if printed is None or _DIALECT.fullmatch(printed):
        return None
    for spelling, meaning in parameter.enum_aliases.items():
        if meaning == printed and _DIALECT.fullmatch(spelling):
            return spelling
    return None


def _short(text: str) -> str:
    return text if len(text) <= MAX_DEFAULT else text[: MAX_DEFAULT - 1] + "…"


def _size(text: str) -> str:
    """``8388608`` -> ``8M``: a byte count as Samba also accepts it, when it divides evenly."""
    if text.isdigit():
        number = int(text)
        for suffix, unit in _SIZE_UNITS:
            if number >= unit and number % unit == 0:
                return f"{number // unit}{suffix}"
    return text


class ParameterHints:
    """Hints for the parameter lines of files read by ``catalog``'s Samba version."""

    def __init__(self, catalog: ParameterCatalog) -> None:
        self.catalog = catalog
        self.version = ".".join(str(part) for part in catalog.version[:2])
        self._cache: dict[tuple[str, str], str] = {}
        ours = explanations()
        self._smb1 = {name for name, entry in ours.items() if entry["applies_to"] == "smb1"}
        self._obsolete = {
            name
            for name, entry in ours.items()
            if any(item["verdict"] == "obsolete" for item in entry["classic_advice"])
        }

    def hint(self, written_name: str, value: str) -> str:
        """The hint for ``written_name = value`` (any spelling; value as Samba reads it)."""
        key = (name_key(written_name), value)
        found = self._cache.get(key)
        if found is None:
            if len(self._cache) > _CACHE_LIMIT:
                self._cache.clear()
            found = self._cache[key] = self._make(written_name, value)
        return found

    def _make(self, written_name: str, value: str) -> str:
        catalog = self.catalog
        lookup = catalog.lookup(written_name)
        if lookup is None:
            if ":" in written_name:
                return ""  # a module's own option (vfs_module:option): not in the catalog
            removed = catalog.removed(written_name)
            if removed is not None:
                instead = f"{SEPARATOR}use {removed.replacement}" if removed.replacement else ""
                return f"removed in Samba {removed.removed_in_text}{SEPARATOR}ignored{instead}"
            return f"unknown to Samba {self.version}{SEPARATOR}ignored"
        parameter = lookup.parameter
        parts = []
        if lookup.synonym is not None:
            parts.append(f"means {parameter.name}" + (", inverted" if lookup.inverse else ""))
        parts.append(self._default(parameter, value, lookup.inverse))
        if parameter.type == "enum":
            stands_for = _dialect(parameter, testparm_form(parameter, value))
            if stands_for is not None and name_key(value) != name_key(stands_for):
                parts.append(f"{value.strip()} means {stands_for}")
        if parameter.deprecated:
            parts.append("deprecated")
        if parameter.name in self._smb1:
            parts.append("SMB1 only")
        if parameter.name in self._obsolete:
            parts.append("classic advice obsolete")
        return SEPARATOR.join(part for part in parts if part)

    @staticmethod
    def _default(parameter: Parameter, value: str, inverse: bool) -> str:
        default = parameter.default
        if default is None:
            return ""
        if inverse:
            flag = parse_boolean(default)
            default = default if flag is None else boolean_text(not flag)
            form = None if parse_boolean(value) is None else boolean_text(bool(parse_boolean(value)))
        else:
            form = testparm_form(parameter, value)
        if form is not None and form == default:
            return "the default"
        if parameter.name in SIZE_UNITS:
            default = f"{default} {SIZE_UNITS[parameter.name]}"
        elif parameter.type == "bytes":
            default = _size(default)
        if parameter.type == "enum":
            stands_for = _dialect(parameter, default)
            if stands_for is not None:
                default = f"{default} = {stands_for}"
        return f"default {_short(default)}" if default else "default empty"
