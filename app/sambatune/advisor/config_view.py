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

GLOBAL = "global"

_TRUE = {"yes", "true", "1", "on", "enabled"}
_FALSE = {"no", "false", "0", "off", "disabled"}
_BYTE_SUFFIX = {"k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4, "p": 1024**5}


def fold(name: str) -> str:
    """How Samba compares parameter names: case and every blank ignored."""
    return "".join(name.split()).lower()


def canonical_section(name: str) -> str:
    lowered = " ".join(name.split()).lower()
    return GLOBAL if lowered in (GLOBAL, "globals") else lowered


def as_bool(value: str | None) -> bool | None:
    """smb.conf's spellings of a boolean; None for anything else (``Auto``, empty)."""
    if value is None:
        return None
    word = value.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    return None


def as_bytes(value: str | None) -> int | None:
    """A byte value as smb.conf reads it: a number with an optional K/M/G (1024-based)."""
    if value is None:
        return None
    text = value.strip().lower()
    factor = 1
    if text and text[-1] in _BYTE_SUFFIX:
        factor = _BYTE_SUFFIX[text[-1]]
        text = text[:-1].strip()
    return int(text) * factor if text.isdigit() else None


def same_value(a: str, b: str) -> bool:
    """Equal as smb.conf means them: booleans by meaning, other words ignoring case."""
    left, right = as_bool(a), as_bool(b)
    if left is not None and right is not None:
        return left == right
    return " ".join(a.split()).lower() == " ".join(b.split()).lower()


def name_list(value: str | None) -> list[str]:
    """A ``/``-separated pattern list (hide files, veto files) as its patterns."""
    return [part for part in (value or "").split("/") if part.strip()]


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

    def value(self, section: str, name: str) -> str | None:
        """What is in effect for ``name`` in ``section``: its own setting, else [global]'s."""
        section = canonical_section(section)
        for level in ((section, GLOBAL) if section != GLOBAL else (GLOBAL,)):
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
        if name in self.explicit.get(GLOBAL, {}):
            return GLOBAL
        return None
