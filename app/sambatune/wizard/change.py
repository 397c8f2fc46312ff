"""A finding's proposed smb.conf change as an edit of the live file's exact bytes.

The edit goes through the smb.conf engine (:mod:`sambatune.conf.edits`), which touches
only the lines it must, so the diff an admin approves is the change and nothing else.
"""

from __future__ import annotations

from typing import Any

from sambatune.advisor.config_view import ConfigView, as_bool, canonical_section
from sambatune.advisor.findings import ConfigChange
from sambatune.conf.activation import Activation, classify_parameter
from sambatune.conf.catalog import ParameterCatalog
from sambatune.conf.document import SmbConfDocument
from sambatune.conf.effective import IncludeReader
from sambatune.conf.placement import placed_set, placed_unset
from sambatune.errors import InvalidInput


def change_from_json(data: dict[str, Any]) -> ConfigChange:
    """The :class:`ConfigChange` that :meth:`ConfigChange.to_json` wrote."""
    if data.get("kind") != ConfigChange.kind:
        raise InvalidInput("Only smb.conf changes can be applied by the wizard.")
    return ConfigChange.from_json(data)


def apply_change(
    live: bytes,
    change: ConfigChange,
    path: str,
    catalog: ParameterCatalog | None = None,
    read_include: IncludeReader | None = None,
) -> bytes:
    """The file ``live`` with ``change`` (and the edits that belong to it) made where
    Samba reads them; :class:`~sambatune.conf.placement.EditRefused` if Samba would not."""
    document = SmbConfDocument(live, path)
    for edit in (change, *change.also):
        if edit.action == "set":
            assert edit.value is not None
            placed_set(document, edit.section, edit.parameter, edit.value, catalog, read_include)
        else:
            placed_unset(document, edit.section, edit.parameter, catalog, read_include)
    candidate = document.render()
    if candidate == live:
        raise InvalidInput(
            f"{path} already has this change ({change.describe()}).",
            details="The setting may come from an included file, which the wizard does not edit.",
        )
    return candidate


_ORDER = {Activation.RELOAD: 0, Activation.NEW_CONNECTIONS: 1, Activation.RESTART: 2}


def change_activation(change: dict[str, Any], config: ConfigView, sessions: int | None) -> dict[str, Any]:
    """When smbd would apply a finding's change, and how many sessions are open now.

    The strictest of its edits decides: one edit that needs a restart makes the whole
    change need one.
    """
    binds = as_bool(config.global_value("bind interfaces only")) is True
    worst, why = Activation.RELOAD, ""
    for edit in (change, *(change.get("also") or [])):
        section = canonical_section(str(edit["section"]))
        name = " ".join(str(edit["parameter"]).split()).lower()
        old = config.explicit_value(section, name)
        new = edit.get("value") if edit.get("action") == "set" else None
        activation, reason = classify_parameter(section, name, old, new, binds)
        if _ORDER[activation] >= _ORDER[worst]:
            worst, why = activation, reason
    return {"activation": worst.value, "why": why, "sessions": sessions}


def needs_restart(activation: dict[str, Any] | None) -> bool:
    """Whether a change with this activation (a finding's ``activation``) restarts smbd."""
    return bool(activation and activation.get("activation") == Activation.RESTART.value)


def activation_sentence(activation: dict[str, Any] | None) -> str:
    """The risk line's second half: reload or restart, and who is connected."""
    if not activation:
        return ""
    sessions = activation.get("sessions")
    open_now = (
        "no session is open now"
        if sessions == 0
        else f"{sessions} session(s) are open now"
        if sessions is not None
        else "how many sessions are open is not known"
    )
    how = activation.get("activation")
    if how == Activation.RESTART.value:
        return (
            f"Needs a restart of smbd, which disconnects every client ({open_now}): {activation.get('why')}."
        )
    if how == Activation.NEW_CONNECTIONS.value:
        return (
            f"A reload applies it to clients that connect afterwards; connected ones "
            f"keep the old value until they reconnect ({open_now})."
        )
    return f"A reload applies it; nobody is disconnected ({open_now})."
