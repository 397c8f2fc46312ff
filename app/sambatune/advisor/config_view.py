"""smb.conf as the advisor reads it: what the file sets, and what is in effect.

Two plain mappings, ``{section: {canonical name: value}}`` with ``"global"`` for
[global]: ``explicit`` is what the file sets (``sambatune conf effective FILE --json``
prints this shape), ``effective`` is every parameter with its default filled in
(``testparm -sv``). testparm lists a share only with what differs from [global], so
a share's effective value falls back to the global one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from sambatune.conf.syntax import is_global_section, name_key, section_key
from sambatune.conf.values import parse_boolean, parse_bytes, split_name_array

GLOBAL = "global"

# The rules read values with the conf engine's parsers (sambatune.conf.values), which
# follow Samba's C code, so the advisor and lint cannot disagree about what a line means.


def fold(name: str) -> str:
    """How Samba compares parameter names (strwicmp): case and blanks ignored."""
    return name_key(name)


def canonical_section(name: str) -> str:
    """A section's key as Samba finds it again: any spelling of global is global; a share
    by its lower-cased name, blanks kept (``[ a ]`` is not ``[a]`` to Samba)."""
    return GLOBAL if is_global_section(name) else section_key(name)


def as_bool(value: str | None) -> bool | None:
    """A boolean as Samba reads it (yes/no, true/false, on/off, 1/0); None for anything else
    (``Auto``, ``enabled``, empty), which Samba refuses for a boolean parameter."""
    return None if value is None else parse_boolean(value)


def as_bytes(value: str | None) -> int | None:
    """A size as Samba reads it: digits with an optional K/M/G/T/P, at most 2 GiB - 1."""
    return None if value is None else parse_bytes(value)


def same_value(a: str, b: str) -> bool:
    """Equal as Samba means them: booleans by meaning, other words as Samba compares enum
    values (case and blanks ignored)."""
    left, right = parse_boolean(a), parse_boolean(b)
    if left is not None and right is not None:
        return left == right
    return name_key(a) == name_key(b)


def name_list(value: str | None) -> list[str]:
    """A ``/``-separated pattern list (hide files, veto files) as Samba splits it."""
    return split_name_array(value or "")


def _normalise(data: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
    result: dict[str, dict[str, str]] = {}
    for section, parameters in data.items():
        target = result.setdefault(canonical_section(section), {})
        for name, value in parameters.items():
            target[" ".join(name.split()).lower()] = str(value)
    return result


@dataclass(frozen=True)
class ConfigView:
    explicit: Mapping[str, Mapping[str, str]]
    effective: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: The file the mappings describe, for evidence texts.
    path: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "explicit", _normalise(self.explicit))
        object.__setattr__(self, "effective", _normalise(self.effective))

    def sections(self) -> list[str]:
        """[global] first, then the shares in the order the file has them."""
        names = [GLOBAL]
        for source in (self.explicit, self.effective):
            names += [s for s in source if s not in names]
        return names

    def shares(self) -> list[str]:
        return [s for s in self.sections() if s != GLOBAL]

    def set_in(self, name: str) -> list[tuple[str, str]]:
        """Every (section, value) where the file itself sets ``name``."""
        wanted = fold(name)
        found = []
        for section in self.sections():
            for parameter, value in self.explicit.get(section, {}).items():
                if fold(parameter) == wanted:
                    found.append((section, value))
        return found

    def explicit_value(self, section: str, name: str) -> str | None:
        """The value the file sets in this very section (no inheritance)."""
        return self.explicit.get(canonical_section(section), {}).get(name)

    def own_value(self, section: str, name: str) -> str | None:
        """The value this section has apart from [global]'s: set in it, or shown for it by
        testparm (a share defined above a late [global] keeps the defaults of its time)."""
        section = canonical_section(section)
        for source in (self.explicit, self.effective):
            if name in source.get(section, {}):
                return source[section][name]
        return None

    def value(self, section: str, name: str) -> str | None:
        """What is in effect for ``name`` in ``section``: its own setting, else [global]'s."""
        section = canonical_section(section)
        for level in (section, GLOBAL) if section != GLOBAL else (GLOBAL,):
            for source in (self.explicit, self.effective):
                if name in source.get(level, {}):
                    return source[level][name]
        return None

    def global_value(self, name: str) -> str | None:
        return self.value(GLOBAL, name)

    def first_value(self, section: str, *names: str) -> tuple[str, str] | None:
        """(name, value) of the first of ``names`` that has a value (renamed parameters)."""
        for name in names:
            found = self.value(section, name)
            if found is not None:
                return name, found
        return None

    def where_set(self, section: str, name: str) -> str | None:
        """The section whose line gives ``section`` its value: itself, [global], or None
        when nothing in the file sets it (the default is in effect)."""
        section = canonical_section(section)
        if name in self.explicit.get(section, {}):
            return section
        if section != GLOBAL and name in self.effective.get(section, {}):
            return None  # a value of its own no line sets: above a late [global], say
        if name in self.explicit.get(GLOBAL, {}):
            return GLOBAL
        return None
