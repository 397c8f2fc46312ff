"""A client tuning plan: every setting looked at, what it holds, what to do, and why.

A plan is data. It is printed with ``sambatune client plan --json``, saved to a file,
shown by the GUI (current value, recommended value, reason, honoured/ignored label,
diff) and handed to ``sambatune client apply PLAN.json``. Items that are only
labels (a setting this Windows ignores) carry ``action = "none"``.
"""

from __future__ import annotations

import datetime as _dt
import typing
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

from sambatune.client.catalog import RESTART_KINDS
from sambatune.client.minimums import minimum_text, raise_rule
from sambatune.client.nics import NetworkInterface
from sambatune.client.osinfo import OsInfo
from sambatune.client.regfile import RegFile, RegKeyBlock
from sambatune.client.regvalue import RegValue
from sambatune.client.settings import (
    Observed,
    RegistryValueRef,
    SettingRef,
    SettingValue,
    ValueState,
    display_value,
    ref_from_json,
    value_from_json,
    value_to_json,
)
from sambatune.client.window import WindowSizing, size_window
from sambatune.errors import InvalidInput
from sambatune.json_fields import FieldsAsJson

PLAN_KIND = "sambatune-client-plan"
PLAN_VERSION = 1
#: What a plan does with a setting: write ``recommended``, make it absent, leave it as it
#: is after looking (fine already), or nothing (a label only: ignored on this OS, or not
#: SambaTune's to change).
PlanAction = Literal["set", "delete", "keep", "none"]
ACTIONS: tuple[PlanAction, ...] = typing.get_args(PlanAction)


@dataclass(frozen=True)
class MeasureLink(FieldsAsJson):
    """The measurement from this computer that shows what a change does: run it before the
    apply and again after (and after the share is mounted again), same test, same path.

    SMB-client settings act on the operating system's own client, so the test goes
    through the mounted share (``--path``), never through SambaTune's own SMB client,
    which none of these settings touch."""

    #: "smb-client" (large-file write and read) or "files" (many small files).
    test: str
    path: str
    why: str

    @property
    def command(self) -> str:
        import shlex

        return shlex.join(["sambatune", "bench", self.test, "--path", self.path])

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "command": self.command}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MeasureLink:
        return cls(str(data["test"]), str(data["path"]), str(data.get("why", "")))


@dataclass
class PlannedChange:
    id: str
    catalog_id: str
    title: str
    ref: SettingRef | None
    current: Observed
    action: PlanAction
    recommended: SettingValue | None
    honoured: bool
    honoured_note: str
    restart: str
    restart_note: str
    reason: str
    what: str
    operations: list[str] = field(default_factory=list)
    alternative: str = ""
    sources: tuple[str, ...] = ()
    #: How to see the effect from this computer, before and after (SMB-client items).
    measure: MeasureLink | None = None

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise InvalidInput(f"Unknown plan action {self.action!r}.")
        if self.restart not in RESTART_KINDS:
            raise InvalidInput(f"Unknown restart kind {self.restart!r}.")
        if self.action in ("set", "delete") and self.ref is None:
            raise InvalidInput(f"{self.id}: a change needs a setting to change.")
        if self.action == "set" and self.recommended is None:
            raise InvalidInput(f"{self.id}: 'set' needs a value.")

    @property
    def changes_something(self) -> bool:
        return self.action in ("set", "delete")

    @property
    def target(self) -> SettingValue | None:
        """The value the setting will hold (None = absent) if the change is applied."""
        return self.recommended if self.action == "set" else None

    @property
    def at_least(self) -> bool:
        """True when the target is a minimum: the apply raises a lower value to it and
        leaves a higher one as it is (the catalog's ``raise_only`` settings)."""
        return self.action == "set" and raise_rule(self.ref) is not None

    def target_display(self) -> str:
        """The target as people read it; for another machine, stated as the minimum it is."""
        rule = raise_rule(self.ref) if self.action == "set" else None
        if rule is not None and self.current.state == ValueState.UNKNOWN:
            return minimum_text(rule, self.target)
        return display_value(self.target)

    def diff(self) -> dict[str, str] | None:
        if not self.changes_something:
            return None
        return {
            "setting": self.ref.label() if self.ref else self.title,
            "before": self.current.display(),
            "after": self.target_display(),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "catalog_id": self.catalog_id,
            "title": self.title,
            "setting": self.ref.to_json() if self.ref else None,
            "current": self.current.to_json(),
            "action": self.action,
            "recommended": value_to_json(self.recommended),
            "recommended_display": self.target_display()
            if self.action == "set"
            else ("(absent)" if self.action == "delete" else ""),
            "at_least": self.at_least,
            "honoured": self.honoured,
            "label": "honoured" if self.honoured else "ignored",
            "honoured_note": self.honoured_note,
            "restart": self.restart,
            "restart_note": self.restart_note,
            "reason": self.reason,
            "what": self.what,
            "operations": list(self.operations),
            "alternative": self.alternative,
            "sources": list(self.sources),
            "measure": self.measure.to_json() if self.measure else None,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PlannedChange:
        if not isinstance(data, dict):
            raise InvalidInput("A plan item is not a JSON object.")
        for name, kind in (("honoured", bool), ("sources", list), ("operations", list)):
            if name in data and data[name] is not None and not isinstance(data[name], kind):
                raise InvalidInput(
                    f"A plan item is damaged: its {name} is {type(data[name]).__name__}, not {kind.__name__}."
                )
        try:
            return cls(
                id=str(data["id"]),
                catalog_id=str(data.get("catalog_id", "")),
                title=str(data["title"]),
                ref=ref_from_json(data["setting"]) if data.get("setting") else None,
                current=Observed.from_json(data["current"]),
                action=_plan_action(data["action"]),
                recommended=value_from_json(data.get("recommended")),
                honoured=bool(data["honoured"]),
                honoured_note=str(data.get("honoured_note", "")),
                restart=str(data.get("restart", "none")),
                restart_note=str(data.get("restart_note", "")),
                reason=str(data.get("reason", "")),
                what=str(data.get("what", "")),
                operations=[str(o) for o in data.get("operations") or []],
                alternative=str(data.get("alternative", "")),
                sources=tuple(data.get("sources") or ()),
                measure=MeasureLink.from_json(data["measure"]) if data.get("measure") else None,
            )
        except KeyError as exc:
            raise InvalidInput(f"A plan item lacks {exc.args[0]!r}.") from exc
        except (TypeError, AttributeError, ValueError, OverflowError) as exc:
            raise InvalidInput(f"A plan item is damaged: {exc}.") from exc


def _plan_action(value: Any) -> PlanAction:
    for action in ACTIONS:
        if value == action:
            return action
    raise InvalidInput(
        f"A plan item is damaged: its action {str(value)[:40]!r} is none of {', '.join(ACTIONS)}."
    )


_RESTART_ORDER = {kind: rank for rank, kind in enumerate(RESTART_KINDS)}


@dataclass
class RegistryPlan:
    """The registry part of a Windows plan: each value to set or delete, from what, and why."""

    os: OsInfo
    changes: list[PlannedChange]

    def reg_file(self, version: int | None = None) -> RegFile | None:
        """The changes as a .reg file to import on that machine (None if there are none).

        REGEDIT4 for Windows 9x (the only format its regedit reads), version 5 otherwise.
        """
        if not self.changes:
            return None
        if version is None:
            version = 4 if self.os.generation == "win9x" else 5
        return registry_changes_as_reg(
            [(c.ref, c.target) for c in self.changes if isinstance(c.ref, RegistryValueRef)],
            version,
        )

    def to_json(self) -> list[dict[str, Any]]:
        return [
            {
                "key": c.ref.key,
                "name": c.ref.name,
                "before": c.current.display(),
                "after": display_value(c.target),
                "honoured": c.honoured,
                "restart": c.restart,
                "reason": c.reason,
            }
            for c in self.changes
            if isinstance(c.ref, RegistryValueRef)
        ]


@dataclass
class ClientPlan:
    os: OsInfo
    changes: list[PlannedChange]
    window: WindowSizing | None = None
    interface: NetworkInterface | None = None
    measurements: dict[str, Any] = field(default_factory=dict)
    mtu: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: Commands to run after the apply for the changes to take effect (unmount and mount
    #: a share again); the apply lists them, it does not run them.
    after_apply: list[str] = field(default_factory=list)
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    created: str = field(
        default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    )

    def actionable(self) -> list[PlannedChange]:
        return [c for c in self.changes if c.changes_something]

    def restart_needed(self) -> str:
        """The heaviest restart any change needs ("none" if nothing changes)."""
        kinds = [c.restart for c in self.actionable()] or ["none"]
        return max(kinds, key=lambda k: _RESTART_ORDER[k])

    def registry_plan(self) -> RegistryPlan:
        return RegistryPlan(self.os, [c for c in self.actionable() if isinstance(c.ref, RegistryValueRef)])

    def reg_file(self, version: int | None = None) -> RegFile | None:
        return self.registry_plan().reg_file(version)

    def diff(self) -> list[dict[str, str]]:
        return [d for d in (c.diff() for c in self.changes) if d is not None]

    def to_json(self) -> dict[str, Any]:
        reg = self.reg_file()
        return {
            "kind": PLAN_KIND,
            "version": PLAN_VERSION,
            "id": self.id,
            "created": self.created,
            "os": self.os.to_json(),
            "interface": self.interface.to_json() if self.interface else None,
            "measurements": self.measurements,
            "window": self.window.to_json() if self.window else None,
            "mtu": self.mtu,
            "changes": [c.to_json() for c in self.changes],
            "diff": self.diff(),
            "restart_needed": self.restart_needed(),
            "registry_plan": self.registry_plan().to_json() if self.os.is_windows else None,
            "reg_file": reg.text().replace("\r\n", "\n") if reg else None,
            "reg_file_format": ("REGEDIT4" if reg.version == 4 else "Windows Registry Editor Version 5.00")
            if reg
            else None,
            "notes": list(self.notes),
            "warnings": list(self.warnings),
            "after_apply": list(self.after_apply),
        }

    @classmethod
    def from_json(cls, data: Any) -> ClientPlan:
        if not isinstance(data, dict) or data.get("kind") != PLAN_KIND:
            raise InvalidInput(
                "This file is not a SambaTune client plan.",
                details="Make one: sambatune client plan ... --json > plan.json",
            )
        if data.get("version") != PLAN_VERSION:
            raise InvalidInput(f"Plan format version {data.get('version')} is not supported.")
        try:
            return cls._from_checked(data)
        except InvalidInput:
            raise
        except KeyError as exc:
            raise InvalidInput(f"The plan is damaged: it lacks {exc.args[0]!r}.") from exc
        except (TypeError, AttributeError, ValueError, OverflowError) as exc:
            raise InvalidInput(f"The plan is damaged: {exc}.") from exc

    @classmethod
    def _from_checked(cls, data: dict[str, Any]) -> ClientPlan:
        for name, kind in (("changes", list), ("window", dict), ("os", dict), ("measurements", dict)):
            if data.get(name) is not None and not isinstance(data[name], kind):
                raise InvalidInput(
                    f"The plan is damaged: {name} is {type(data[name]).__name__}, not {kind.__name__}."
                )
        window = data.get("window")
        return cls(
            os=OsInfo.from_json(data["os"]),
            changes=[PlannedChange.from_json(c) for c in data.get("changes") or []],
            window=size_window(window["bandwidth_bps"], window["rtt_seconds"], window.get("current_window"))
            if window
            else None,
            interface=NetworkInterface.from_json(data["interface"]) if data.get("interface") else None,
            measurements=dict(data.get("measurements") or {}),
            mtu=dict(data.get("mtu") or {}),
            notes=list(data.get("notes") or []),
            warnings=list(data.get("warnings") or []),
            after_apply=[str(c) for c in data.get("after_apply") or []],
            id=str(data.get("id") or uuid.uuid4().hex[:12]),
            created=str(data.get("created") or ""),
        )


def registry_changes_as_reg(
    items: list[tuple[RegistryValueRef, SettingValue | None]],
    version: int,
    deleted_keys: set[str] | None = None,
) -> RegFile:
    """Group (value, new content) pairs by key into a .reg file; None content = ``"Name"=-``.

    ``deleted_keys`` become ``[-KEY]`` blocks instead: keys that did not exist before and
    must not exist after. A value in one of them, or in a key below one, needs no line.
    """
    regfile = RegFile(version)
    blocks: dict[str, RegKeyBlock] = {}
    doomed = {key.lower(): key for key in deleted_keys or ()}
    for ref, value in items:
        lowered = ref.key.lower()
        gone = next((key for key in doomed if lowered == key or lowered.startswith(key + "\\")), None)
        if gone is not None:
            if gone not in blocks:
                blocks[gone] = RegKeyBlock(doomed[gone], delete=True)
                regfile.blocks.append(blocks[gone])
            continue
        block = blocks.get(lowered)
        if block is None:
            block = blocks[lowered] = RegKeyBlock(ref.key)
            regfile.blocks.append(block)
        if value is not None and not isinstance(value, RegValue):
            raise InvalidInput(f"{ref.label()}: a registry value is needed, not {value!r}.")
        block.values.append((ref.name, value))
    return regfile
