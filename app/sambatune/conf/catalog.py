"""The parameters one Samba version knows: names, types, scope, defaults, synonyms, status.

A :class:`ParameterCatalog` is built from the server's own ``testparm`` (see
:mod:`sambatune.conf.catalog_build`) or loaded from a snapshot made the same way
and shipped under ``resources/parameters/catalog-MAJOR.MINOR.json``. Parameters
that older releases had and this one lacks come from ``removed.json``.

Records are NamedTuples, not dataclasses: the CLI loads a catalog on every
``sambatune conf`` run, and importing dataclasses alone costs about 10 ms there.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterator, Mapping
from typing import Any, Literal, NamedTuple

from sambatune.conf.knowledge import RemovedParameter, removed_parameters, version_tuple
from sambatune.conf.syntax import name_key
from sambatune.errors import InvalidInput

ParameterType = Literal[
    "boolean",
    "boolean-rev",
    "integer",
    "bytes",
    "octal",
    "enum",
    "string",
    "ustring",
    "char",
    "list",
    "cmdlist",
]
Scope = Literal["global", "share"]
Status = Literal["current", "deprecated", "removed", "unknown"]
Origin = Literal["bundled", "live", "cache"]
#: Where a catalog's parameters were read, for people.
ORIGIN_TEXT: dict[str, str] = {
    "live": "from its testparm",
    "cache": "from its testparm, cached",
    "bundled": "bundled with SambaTune",
}

CATALOG_SCHEMA = 1
_BUNDLED_PREFIX = "catalog-"


class Synonym(NamedTuple):
    name: str
    inverse: bool  # True: the same switch with the opposite meaning (writable = not read only)


class Parameter(NamedTuple):
    """One parameter as this Samba version defines it."""

    name: str  # canonical, exactly as testparm prints it
    type: ParameterType
    scope: Scope  # "global": only in [global]; "share": in a share, or in [global] as default
    default: str | None  # as `testparm -sv` prints it on an empty smb.conf; None if unknown
    synonyms: tuple[Synonym, ...] = ()
    deprecated: bool = False
    enum_values: tuple[str, ...] = ()  # every spelling Samba accepts, in its own order
    # name_key(spelling) -> what testparm prints for it (the first spelling of its value)
    enum_print: Mapping[str, str] = {}

    @property
    def status(self) -> Status:
        return "deprecated" if self.deprecated else "current"

    @property
    def enum_choices(self) -> list[str]:
        """The distinct values an enum takes, as testparm prints them, in Samba's order."""
        printed = [self.enum_print.get(name_key(spelling), spelling) for spelling in self.enum_values]
        return list(dict.fromkeys(printed))

    @property
    def enum_aliases(self) -> dict[str, str]:
        """The other spellings an enum accepts -> the value testparm prints for each.

        ``SMB3_11`` -> ``SMB3``, ``SMB2_10`` -> ``SMB2``, ``CORE+`` -> ``COREPLUS`` for the
        protocol parameters (lib/param/param_table.c enum_protocol); together with
        :attr:`enum_choices` these are every value Samba takes.
        """
        printed = {name_key(choice) for choice in self.enum_choices}
        aliases: dict[str, str] = {}
        seen: set[str] = set()
        for spelling in self.enum_values:
            key = name_key(spelling)
            if key in printed or key in seen:
                continue
            seen.add(key)
            aliases[spelling] = self.enum_print.get(key, spelling)
        return aliases

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type, "scope": self.scope, "default": self.default}
        if self.synonyms:
            data["synonyms"] = [[synonym.name, synonym.inverse] for synonym in self.synonyms]
        if self.deprecated:
            data["deprecated"] = True
        if self.enum_values:
            data["enum"] = list(self.enum_values)
            data["enum_print"] = dict(self.enum_print)
        return data

    @classmethod
    def from_json(cls, name: str, data: Mapping[str, Any]) -> Parameter:
        return cls(
            name=name,
            type=data["type"],
            scope=data["scope"],
            default=data.get("default"),
            synonyms=tuple(Synonym(str(n), bool(inv)) for n, inv in data.get("synonyms", ())),
            deprecated=bool(data.get("deprecated", False)),
            enum_values=tuple(data.get("enum", ())),
            enum_print=dict(data.get("enum_print", {})),
        )


class Lookup(NamedTuple):
    """What a written name means: the parameter, and whether it was a synonym of it."""

    parameter: Parameter
    synonym: str | None  # the synonym used, when not the canonical name
    inverse: bool  # the synonym means the opposite boolean


class ParameterCatalog:
    """The parameters of one Samba version, looked up the way Samba looks them up.

    ``lookup()`` ignores case and whitespace like Samba (``Max XMIT`` is
    ``max xmit``) and resolves synonyms. ``version`` is the Samba version the
    catalog answers for; ``base_version`` the one its data was taken from (they
    differ when a bundled snapshot stands in for a version we have no snapshot of;
    removals recorded in removed.json are applied up to ``version``).
    """

    def __init__(
        self,
        parameters: Mapping[str, Parameter],
        version_text: str,
        *,
        origin: Origin,
        version: tuple[int, int, int] | None = None,
        source: str = "",
    ) -> None:
        self.version_text = version_text
        self.base_version = version_tuple(_numeric(version_text))
        self.version = version or self.base_version
        self.origin = origin
        self.source = source
        removed = {
            name: info for name, info in removed_parameters().items() if info.removed_in <= self.version
        }
        self._removed = removed
        self._all = parameters
        self._parameters = {name: parameter for name, parameter in parameters.items() if name not in removed}
        keys: dict[str, Lookup] = {}
        for parameter in self._parameters.values():
            keys[name_key(parameter.name)] = Lookup(parameter, None, False)
            for synonym in parameter.synonyms:
                keys[name_key(synonym.name)] = Lookup(parameter, synonym.name, synonym.inverse)
        self._keys = keys
        self._removed_keys = {name_key(name): info for name, info in removed.items()}

    def origin_text(self, computer: str) -> str:
        """Which Samba's parameters these are and where they were read: ``computer`` is
        the machine whose testparm a live or cached catalog came from."""
        origin = ORIGIN_TEXT.get(self.origin, self.origin)
        where = origin if self.origin == "bundled" else f"{computer}, {origin}"
        return f"parameters of Samba {self.version_label} ({where})"

    # -- identity -------------------------------------------------------------------
    @property
    def version_label(self) -> str:
        """``4.17.12-Debian``, or ``4.19 (from the 4.17.12 catalog)`` for a stand-in."""
        if self.version[:2] == self.base_version[:2]:
            return self.version_text
        wanted = ".".join(str(part) for part in self.version)
        return f"{wanted} (using the {self.version_text} catalog)"

    @property
    def exact(self) -> bool:
        """Was this catalog made from the very release series it answers for?"""
        return self.version[:2] == self.base_version[:2]

    # -- lookups -------------------------------------------------------------------
    def lookup(self, name: str) -> Lookup | None:
        """The parameter ``name`` means in this version, or None (unknown, removed, parametric)."""
        return self._keys.get(name_key(name))

    def lookup_key(self, key: str) -> Lookup | None:
        """:meth:`lookup` for a name already passed through :func:`name_key`."""
        return self._keys.get(key)

    def get(self, name: str) -> Parameter | None:
        found = self._keys.get(name_key(name))
        return found.parameter if found else None

    def removed(self, name: str) -> RemovedParameter | None:
        """Removal facts when ``name`` is a parameter this version no longer has."""
        return self._removed_keys.get(name_key(name))

    def status(self, name: str) -> Status:
        found = self.lookup(name)
        if found is not None:
            return found.parameter.status
        return "removed" if self.removed(name) else "unknown"

    def suggest(self, name: str, limit: int = 3) -> list[str]:
        """Known names close to ``name`` (for "did you mean"), best first."""
        import difflib

        wanted = " ".join(name.lower().split())
        candidates = {parameter.name.lower(): parameter.name for parameter in self}
        for parameter in self:
            for synonym in parameter.synonyms:
                candidates.setdefault(synonym.name.lower(), synonym.name)
        squeezed = {key.replace(" ", ""): key for key in candidates}
        close = difflib.get_close_matches(wanted, list(candidates), n=limit, cutoff=0.75)
        for key in difflib.get_close_matches(wanted.replace(" ", ""), list(squeezed), n=limit, cutoff=0.75):
            if squeezed[key] not in close:
                close.append(squeezed[key])
        return [candidates[key] for key in close[:limit]]

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._parameters.values())

    def __len__(self) -> int:
        return len(self._parameters)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.lookup(name) is not None

    @property
    def parameters(self) -> Mapping[str, Parameter]:
        return self._parameters

    @property
    def removed_parameters(self) -> Mapping[str, RemovedParameter]:
        return self._removed

    # -- stand-ins and serialisation --------------------------------------------------
    def for_version(self, version: tuple[int, int, int]) -> ParameterCatalog:
        """This catalog's data answering for another version (removals applied up to it)."""
        return ParameterCatalog(
            self._all, self.version_text, origin=self.origin, version=version, source=self.source
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": CATALOG_SCHEMA,
            "samba_version": self.version_text,
            "source": self.source,
            "parameters": {name: self._parameters[name].to_json() for name in sorted(self._parameters)},
        }

    @classmethod
    def from_json(
        cls,
        data: Mapping[str, Any],
        *,
        origin: Origin,
        version: tuple[int, int, int] | None = None,
    ) -> ParameterCatalog:
        if data.get("schema") != CATALOG_SCHEMA:
            raise InvalidInput(f"Unsupported parameter catalog schema {data.get('schema')!r}.")
        parameters = {name: Parameter.from_json(name, entry) for name, entry in data["parameters"].items()}
        return cls(
            parameters, data["samba_version"], origin=origin, version=version, source=data.get("source", "")
        )


def _numeric(version_text: str) -> str:
    digits = []
    for part in version_text.replace("-", ".").split("."):
        if not part.isdigit():
            break
        digits.append(part)
    return ".".join(digits) or "0"


# -- the bundled snapshots ---------------------------------------------------------------


def bundled_versions() -> list[tuple[int, int]]:
    """The (major, minor) releases we ship a catalog snapshot for, oldest first."""
    from sambatune.packaged import list_resources

    found = []
    for name in list_resources("parameters"):
        if name.startswith(_BUNDLED_PREFIX) and name.endswith(".json"):
            major, _, minor = name[len(_BUNDLED_PREFIX) : -len(".json")].partition(".")
            if major.isdigit() and minor.isdigit():
                found.append((int(major), int(minor)))
    return sorted(found)


def load_bundled(version: tuple[int, int, int] | str | None = None) -> ParameterCatalog:
    """The shipped snapshot for ``version``: its own series, else the closest older one.

    Without a version, the newest snapshot. A stand-in answers for the version asked
    (``catalog.exact`` is False) with the removals we know applied.
    """
    wanted = version_tuple(version) if isinstance(version, str) else version
    available = bundled_versions()
    if not available:
        raise InvalidInput("No parameter catalog is bundled with this installation.")
    if wanted is None:
        chosen = available[-1]
    else:
        older = [series for series in available if series <= wanted[:2]]
        chosen = older[-1] if older else available[0]
    return _bundled(chosen, wanted)


@functools.lru_cache(maxsize=8)
def _bundled(series: tuple[int, int], version: tuple[int, int, int] | None) -> ParameterCatalog:
    """Read once per process: a catalog is never changed after it is made, and the
    editor, lint, the advisor and each fleet host ask for one again and again."""
    return ParameterCatalog.from_json(_read_bundled(series), origin="bundled", version=version)


def _read_bundled(series: tuple[int, int]) -> dict[str, Any]:
    from sambatune.packaged import read_resource

    data: dict[str, Any] = json.loads(
        read_resource("parameters", f"{_BUNDLED_PREFIX}{series[0]}.{series[1]}.json")
    )
    return data


# -- the per-version cache in the user's data directory ---------------------------------------


def cache_dir() -> str:
    from sambatune.appdirs import data_dir

    path = os.path.join(str(data_dir()), "catalogs")
    os.makedirs(path, exist_ok=True)
    return path


def _cache_file(version_text: str) -> str:
    safe = "".join(c if c.isalnum() or c in ".-_" else "_" for c in version_text)
    return os.path.join(cache_dir(), f"catalog-{safe}.json")


def load_cached(version_text: str) -> ParameterCatalog | None:
    """The catalog built earlier from a server running exactly ``version_text``."""
    try:
        with open(_cache_file(version_text), "rb") as handle:
            data = json.loads(handle.read())
        return ParameterCatalog.from_json(data, origin="cache")
    except (OSError, ValueError, KeyError, InvalidInput):
        return None


def cached_catalog_for(version: tuple[int, int, int]) -> ParameterCatalog | None:
    """A catalog built earlier from a server of the same release series as ``version``.

    The exact release when it was seen, else the closest one of the series.
    """
    try:
        names = os.listdir(cache_dir())
    except OSError:
        return None
    candidates = []
    for name in names:
        if name.startswith("catalog-") and name.endswith(".json"):
            text = name[len("catalog-") : -len(".json")]
            found = version_tuple(_numeric(text))
            if found[:2] == version[:2]:
                candidates.append((abs(found[2] - version[2]), text))
    for _, text in sorted(candidates):
        catalog = load_cached(text)
        if catalog is not None:
            return catalog.for_version(version) if catalog.version != version else catalog
    return None


def save_cached(catalog: ParameterCatalog) -> str:
    """Keep a built catalog for next time; returns the file it went to."""
    from sambatune.remote.local import write_local_file_atomic

    path = _cache_file(catalog.version_text)
    write_local_file_atomic(path, json.dumps(catalog.to_json()).encode("utf-8"))
    return path


def local_testparm() -> str | None:
    """The testparm on this computer's PATH (and the usual sbin places), if any."""
    directories = [*os.environ.get("PATH", "").split(os.pathsep), "/usr/sbin", "/usr/local/sbin"]
    for directory in directories:
        candidate = os.path.join(directory or ".", "testparm")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _local_index_file() -> str:
    return os.path.join(cache_dir(), "local-testparm.json")


def cached_local_catalog() -> ParameterCatalog | None:
    """The catalog of this computer's testparm if it was built before, without running it.

    The index remembers which version the testparm binary (path, size, mtime)
    reported, so the hot path of the CLI needs no subprocess.
    """
    binary = local_testparm()
    if binary is None:
        return None
    try:
        stat = os.stat(binary)
        with open(_local_index_file(), "rb") as handle:
            index = json.loads(handle.read())
    except (OSError, ValueError):
        return None
    if (
        index.get("path") != binary
        or index.get("size") != stat.st_size
        or (index.get("mtime_ns") != stat.st_mtime_ns)
    ):
        return None
    version_text = index.get("version_text")
    return load_cached(version_text) if isinstance(version_text, str) else None


def remember_local_catalog(binary: str, catalog: ParameterCatalog) -> None:
    from sambatune.remote.local import write_local_file_atomic

    stat = os.stat(binary)
    index = {
        "path": binary,
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "version_text": catalog.version_text,
    }
    write_local_file_atomic(_local_index_file(), json.dumps(index).encode("utf-8"))
