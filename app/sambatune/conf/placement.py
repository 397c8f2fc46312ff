"""Edits made where Samba reads them, and checked by reading the result as Samba does.

:mod:`sambatune.conf.edits` changes lines of one file. Samba reads that file together
with the files it includes, and an include that opens a share leaves Samba inside
that share when it comes back (Unraid's and OpenMediaVault's ``[global]`` ends with
``include = .../shares.conf``). So every edit here:

1. reads the file with its includes (:func:`effective_view`) to learn which include
   lines open a section: a new line goes above those, never below where Samba would
   read it in someone else's share;
2. makes the edit on a copy and reads the copy again: the section must get the value
   asked for from the line written (or, for an unset, no longer set the parameter
   itself). Otherwise the file is left as it was and :class:`EditRefused` says, in one
   line, why and which file to edit instead: a later line or included file that wins,
   a share defined in an included file, a global-only parameter in a share, a value
   Samba sets on its own.

Names this Samba version does not know are written but not checked: the reader
cannot tell where an unknown name takes effect.
"""

from __future__ import annotations

from typing import NamedTuple

from sambatune.conf.catalog import ParameterCatalog
from sambatune.conf.document import SECTION, SmbConfDocument
from sambatune.conf.edits import (
    LineChange,
    add_section,
    rename_section,
    set_parameter,
    unset_parameter,
)
from sambatune.conf.effective import (
    EffectiveConfig,
    IncludeLink,
    IncludeReader,
    Setting,
    effective_view,
)
from sambatune.conf.syntax import is_global_section, section_key
from sambatune.errors import InvalidInput


class EditRefused(InvalidInput):
    """An edit Samba would not read as asked; the file was not changed."""


def _label(document: SmbConfDocument) -> str:
    return document.path or "<document>"


class IncludeLines(NamedTuple):
    """1-based lines of a document's include lines, by what the reader knows of them."""

    opening: set[int]  # read, and it (or a file it includes) opens a section
    unread: set[int]  # not read (missing now, a %-macro, unreadable): it may open one


def include_lines(document: SmbConfDocument, view: EffectiveConfig) -> IncludeLines:
    """Which of ``document``'s includes open a section, and which the reader could not read.

    A followed include opens one when it, or a file it includes, has a section header.
    An include that was not read may open one; Samba reads the lines after it in the
    same section when it does not, so only new lines go above it.
    """
    links: dict[str, list[IncludeLink]] = {}
    for link in view.includes:
        links.setdefault(link.origin.file, []).append(link)
    opening: dict[int, bool] = {}

    def opens(link: IncludeLink, depth: int) -> bool:
        if link.status != "followed" or link.document is None or depth > 100:
            return False
        included = link.document
        if any(not isinstance(row, str) and row[0] == SECTION for row in included.rows):
            return True
        return any(opens(inner, depth + 1) for inner in links.get(_label(included), ()))

    unread = set()
    for link in links.get(_label(document), []):
        opening[link.origin.line] = opening.get(link.origin.line, False) or opens(link, 0)
        if link.status not in ("followed", "registry"):
            unread.add(link.origin.line)
    return IncludeLines({line for line, opens_one in opening.items() if opens_one}, unread)


def _where(setting: Setting) -> str:
    return f"{setting.file} line {setting.line}"


class _Edit:
    """One edit, tried on a copy, checked, then made on the document."""

    def __init__(
        self,
        document: SmbConfDocument,
        catalog: ParameterCatalog | None,
        read_include: IncludeReader | None,
    ) -> None:
        self.document = document
        self.catalog = catalog
        self.read_include = read_include
        self.view = effective_view(document, catalog, read_include=read_include) if catalog else None
        lines = include_lines(document, self.view) if self.view else None
        self.barriers: set[int] = lines.opening if lines else set()
        self.unread: set[int] | None = lines.unread if lines else None

    def read(self, document: SmbConfDocument) -> EffectiveConfig:
        assert self.catalog is not None
        return effective_view(document, self.catalog, read_include=self.read_include)

    def elsewhere(self, section: str) -> str | None:
        """Where a share this file does not define is defined (an included file), if it is."""
        if self.view is None or is_global_section(section):
            return None
        found = self.view.section(section)
        if found is None or not found.headers:
            return None
        label = _label(self.document)
        if any(origin.file == label for origin in found.headers):
            return None
        origin = found.headers[0]
        return f"{origin.file} line {origin.line}"

    def refuse_elsewhere(self, section: str, advice: str) -> None:
        where = self.elsewhere(section)
        if where is not None:
            raise EditRefused(f"[{section}] is defined in {where}, a file this one includes: {advice}.")

    def keep(self, changes: list[LineChange]) -> list[LineChange]:
        """Make the checked copy's changes on the document (the same lines, in order)."""
        for change in changes:
            self.document.replace_lines(change.first, change.removed, change.inserted)
        return changes


def _known(catalog: ParameterCatalog, name: str) -> bool:
    return ":" not in name and catalog.lookup(name) is not None


def _canonical(catalog: ParameterCatalog, name: str) -> str:
    lookup = catalog.lookup(name)
    return lookup.parameter.name if lookup else name


def _global_only_in_share(catalog: ParameterCatalog, section: str, name: str) -> bool:
    lookup = catalog.lookup(name)
    return lookup is not None and lookup.parameter.scope == "global" and not is_global_section(section)


def placed_set(
    document: SmbConfDocument,
    section: str,
    name: str,
    value: str,
    catalog: ParameterCatalog | None,
    read_include: IncludeReader | None = None,
) -> list[LineChange]:
    """:func:`set_parameter` where Samba reads it, checked; :class:`EditRefused` if it would not count."""
    edit = _Edit(document, catalog, read_include)
    if catalog is None:
        return set_parameter(document, section, name, value)
    _refuse_registry(edit)
    if _global_only_in_share(catalog, section, name):
        raise EditRefused(
            f"{_canonical(catalog, name)!r} only works in [global]: Samba ignores it in [{section}]."
        )
    edit.refuse_elsewhere(section, f"set {name} in that file, not in {_label(document)}")
    trial = document.copy()
    changes = set_parameter(trial, section, name, value, catalog, barriers=edit.barriers, unread=edit.unread)
    if _known(catalog, name):
        _check_set(edit.read(trial), trial, section, name, value, catalog, changes)
    return edit.keep(changes)


def _written_lines(changes: list[LineChange]) -> set[int]:
    lines: set[int] = set()
    for change in changes:
        lines.update(range(change.first, change.first + len(change.inserted)))
    return lines


def _check_set(
    view: EffectiveConfig,
    document: SmbConfDocument,
    section: str,
    name: str,
    value: str,
    catalog: ParameterCatalog,
    changes: list[LineChange],
) -> None:
    canonical = _canonical(catalog, name)
    shown = f"{canonical} = {value.strip()}"
    label = _label(document)
    ours = _written_lines(changes)
    try:
        resolved = view.resolve(section, canonical)
    except KeyError:
        resolved = None
    if resolved is not None and resolved.source == "samba":
        forced = (view.section(section) or view.global_section).forced.get(canonical)
        reason = f" ({forced.reason})" if forced else ""
        raise EditRefused(
            f"{shown} would not take effect in [{section}]: Samba sets {canonical} itself there{reason}."
        )
    setting = resolved.setting if resolved is not None else None
    if setting is not None and setting.file == label and setting.line in ours:
        return
    if setting is not None and resolved is not None and resolved.source == "set":
        raise EditRefused(
            f"{shown} would not take effect in [{section}]: Samba reads "
            f"{setting.written_name} = {setting.written_value} later, in {_where(setting)}; "
            "edit that line instead."
        )
    # Our line landed somewhere Samba reads in another section.
    for other in view.sections.values():
        for mine in other.own_settings().values():
            if mine.file == label and mine.line in ours:
                raise EditRefused(
                    f"{shown} would not take effect in [{section}]: Samba would read the new line "
                    f"in [{other.name}]."
                )
    for ignored in view.ignored:
        if ignored.origin.file == label and ignored.origin.line in ours:
            raise EditRefused(
                f"{shown} would not take effect: Samba ignores the new line ({ignored.reason})."
            )
    raise EditRefused(f"{shown} would not take effect in [{section}] as SambaTune reads the file.")


def _refuse_registry(edit: _Edit) -> None:
    origin = edit.view.registry_backend if edit.view is not None else None
    if origin is not None:
        raise EditRefused(
            f"{origin.file} line {origin.line} sets config backend = registry: Samba reads its "
            "settings from the registry, not from this file (change them with net conf setparm)."
        )


def placed_unset(
    document: SmbConfDocument,
    section: str,
    name: str,
    catalog: ParameterCatalog | None,
    read_include: IncludeReader | None = None,
) -> list[LineChange]:
    """:func:`unset_parameter` where Samba reads it; refused when an included file would
    still set the parameter in that section (its file and line named)."""
    edit = _Edit(document, catalog, read_include)
    if catalog is None:
        return unset_parameter(document, section, name)
    _refuse_registry(edit)
    edit.refuse_elsewhere(section, f"unset {name} in that file, not in {_label(document)}")
    trial = document.copy()
    changes = unset_parameter(trial, section, name, catalog, barriers=edit.barriers)
    if _known(catalog, name):
        view = edit.read(trial)
        canonical = _canonical(catalog, name)
        found = view.section(section)
        # A global-only name in a share is ignored there: nothing to check.
        setting = None
        if found is not None and not _global_only_in_share(catalog, section, name):
            setting = found.settings.get(canonical)
        if setting is not None:
            raise EditRefused(
                f"[{section}] would still set {canonical}: Samba reads "
                f"{setting.written_name} = {setting.written_value} in {_where(setting)}; "
                "edit that line instead."
            )
    return edit.keep(changes)


def placed_add_section(
    document: SmbConfDocument,
    name: str,
    catalog: ParameterCatalog | None,
    read_include: IncludeReader | None = None,
) -> list[LineChange]:
    """:func:`add_section`, refused when an included file already defines the share."""
    edit = _Edit(document, catalog, read_include)
    edit.refuse_elsewhere(name, "the share already exists")
    return add_section(document, name)


def placed_rename_section(
    document: SmbConfDocument,
    old: str,
    new: str,
    catalog: ParameterCatalog | None,
    read_include: IncludeReader | None = None,
) -> list[LineChange]:
    """:func:`rename_section`, refused when an included file defines the new name (the two
    would merge) or holds the share being renamed."""
    edit = _Edit(document, catalog, read_include)
    if section_key(new) != section_key(old):
        edit.refuse_elsewhere(new, f"renaming [{old}] to it would merge the two shares")
    edit.refuse_elsewhere(old, "rename it in that file")
    return rename_section(document, old, new)
