"""A fleet change as edits, ``[section] name = value``, rendered into each host's own file.

Hosts differ in paths, shares and includes, so a fleet change is never one file
copied everywhere: it is a list of edits, each made by the lossless smb.conf engine
(:mod:`sambatune.conf.edits`) in the host's own bytes, touching only the lines it must.

The same edits describe a host's overlay on a golden smb.conf (the inventory variable
``samba_overlay``, see :func:`overlay_edits`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sambatune.conf.catalog import ParameterCatalog
from sambatune.conf.document import PARAMETER, SECTION, SmbConfDocument
from sambatune.conf.effective import IncludeReader
from sambatune.conf.placement import placed_set, placed_unset
from sambatune.conf.syntax import collapse_blanks, is_global_section
from sambatune.errors import InvalidInput

#: ``[section] name = value``; the section may be left out for [global].
_EDIT = re.compile(r"^\s*(?:\[(?P<section>[^\]]+)\])?\s*(?P<name>[^=\[\]]+?)\s*(?:=\s*(?P<value>.*?))?\s*$")

#: The inventory variable that gives a host's differences from the golden file.
OVERLAY_VARIABLE = "samba_overlay"


@dataclass(frozen=True)
class Edit:
    """Set ``name`` in ``section`` to ``value``, or take it out (``value`` None)."""

    section: str
    name: str
    value: str | None

    @property
    def section_key(self) -> str:
        return "global" if is_global_section(self.section) else self.section

    def describe(self) -> str:
        what = f"[{self.section_key}] {self.name}"
        return f"{what} = {self.value}" if self.value is not None else f"{what} (unset)"

    def to_json(self) -> dict[str, str | None]:
        return {"section": self.section_key, "parameter": self.name, "value": self.value}


def parse_edit(text: str, *, unset: bool = False) -> Edit:
    """``"[global] log level = 1"`` (or with ``unset``, ``"[global] log level"``)."""
    match = _EDIT.match(text)
    if not match or not match["name"].strip():
        raise InvalidInput(f'Not an edit: {text!r}. Write it as "[section] name = value".')
    section = (match["section"] or "global").strip()
    name = collapse_blanks(match["name"].strip())
    value = match["value"]
    if unset:
        if value is not None:
            raise InvalidInput(f'{text!r}: an unset names no value ("[section] name").')
        return Edit(section, name, None)
    if value is None:
        raise InvalidInput(f'{text!r} has no value: write "[section] name = value" (or use --unset).')
    return Edit(section, name, value)


def apply_edits(
    data: bytes,
    path: str,
    edits: Sequence[Edit],
    catalog: ParameterCatalog | None = None,
    read_include: IncludeReader | None = None,
) -> bytes:
    """``data`` with every edit made where Samba reads it, only the lines each must touch
    changed (:mod:`sambatune.conf.placement`; ``read_include`` reads the host's includes).

    An edit Samba would not read as asked (a share or a winning value in an included
    file) raises :class:`~sambatune.conf.placement.EditRefused`, naming the file.
    """
    document = SmbConfDocument(data, path)
    for edit in edits:
        if edit.value is None:
            placed_unset(document, edit.section, edit.name, catalog, read_include)
        else:
            placed_set(document, edit.section, edit.name, edit.value, catalog, read_include)
    return document.render()


def fragment_edits(data: bytes, path: str) -> list[Edit]:
    """Every parameter of an smb.conf fragment as a set edit, in file order."""
    section = "global"
    edits: list[Edit] = []
    for entry in SmbConfDocument(data, path).entries():
        if entry.kind == SECTION:
            section = entry.name
        elif entry.kind == PARAMETER and entry.value is not None:
            edits.append(Edit(section, entry.name, entry.value))
    return edits


def overlay_edits(value: Any, base_dir: Path | None) -> list[Edit]:
    """The edits a host's ``samba_overlay`` makes to the golden file.

    Three spellings, whichever reads best in the inventory:

    - a mapping of sections to settings (YAML: ``samba_overlay: {global: {netbios name:
      FS1}, projects: {path: /srv/p}}``); a setting of ``null`` means "not set here";
    - a list of lines, ``["[global] netbios name = FS1", "[projects] path = /srv/p"]``;
    - a file name (relative to the inventory's folder): an smb.conf fragment whose
      sections and settings are laid over the golden file.
    """
    if value is None or value == "":
        return []
    if isinstance(value, Mapping):
        edits = []
        for section, settings in value.items():
            if not isinstance(settings, Mapping):
                raise InvalidInput(f"{OVERLAY_VARIABLE}: [{section}] must map names to values.")
            for name, setting in settings.items():
                edits.append(Edit(str(section), str(name), None if setting is None else _text(setting)))
        return edits
    if isinstance(value, (list, tuple)):
        return [parse_edit(str(line)) for line in value]
    if isinstance(value, str):
        file = Path(value).expanduser()
        if not file.is_absolute() and base_dir is not None:
            file = base_dir / file
        try:
            return fragment_edits(file.read_bytes(), str(file))
        except OSError as error:
            raise InvalidInput(f"{OVERLAY_VARIABLE}: cannot read {file}: {error.strerror}") from error
    raise InvalidInput(f"{OVERLAY_VARIABLE} must be a mapping, a list of lines or a file name.")


def _text(value: Any) -> str:
    # YAML reads yes/no and numbers as such; smb.conf wants the words back.
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)
