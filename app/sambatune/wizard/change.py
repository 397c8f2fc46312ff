"""A finding's proposed smb.conf change as an edit of the live file's exact bytes.

The edit goes through the smb.conf engine (:mod:`sambatune.conf.edits`), which touches
only the lines it must, so the diff an admin approves is the change and nothing else.
"""

from __future__ import annotations

from typing import Any

from sambatune.advisor.findings import ConfigChange
from sambatune.conf.catalog import ParameterCatalog
from sambatune.conf.document import SmbConfDocument
from sambatune.conf.edits import set_parameter, unset_parameter
from sambatune.errors import InvalidInput


def change_from_json(data: dict[str, Any]) -> ConfigChange:
    """The :class:`ConfigChange` that :meth:`ConfigChange.to_json` wrote."""
    if data.get("kind") != ConfigChange.kind:
        raise InvalidInput("Only smb.conf changes can be applied by the wizard.")
    return ConfigChange(
        section=str(data["section"]), parameter=str(data["parameter"]),
        action=str(data["action"]), value=data.get("value"),
        also=tuple(change_from_json({"kind": ConfigChange.kind, **edit})
                   for edit in data.get("also") or ()),
    )


def apply_change(live: bytes, change: ConfigChange, path: str,
                 catalog: ParameterCatalog | None = None) -> bytes:
    """The file ``live`` with ``change`` (and the edits that belong to it) made."""
    document = SmbConfDocument(live, path)
    for edit in (change, *change.also):
        if edit.action == "set":
            assert edit.value is not None
            set_parameter(document, edit.section, edit.parameter, edit.value, catalog)
        else:
            unset_parameter(document, edit.section, edit.parameter, catalog)
    candidate = document.render()
    if candidate == live:
        raise InvalidInput(
            f"{path} already has this change ({change.describe()}).",
            details="The setting may come from an included file, which the wizard does not edit.")
    return candidate
