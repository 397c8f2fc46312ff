"""What the advisor says: findings, each with its evidence and the one change it proposes.

A finding is a judgement about the server in front of us, not a generic tip: it names
what it saw (a parameter in a section, a survey fact, a measured figure), the single
change that answers it, what that change is expected to do and where that expectation
comes from, and what the change risks. Changes are computed against the configuration
as it is now; after applying one, advise again, because the next finding may change.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sambatune.json_fields import FieldsAsJson

PROBLEM = "problem"
WARNING = "warning"
SUGGESTION = "suggestion"
INFO = "info"

#: Most urgent first; findings are listed in this order.
SEVERITIES = (PROBLEM, WARNING, SUGGESTION, INFO)
SEVERITY_RANK = {name: rank for rank, name in enumerate(SEVERITIES)}

# Where a piece of evidence comes from.
CONFIG = "config"
SURVEY = "survey"
MEASUREMENT = "measurement"
VERSION = "version"
EVIDENCE_KINDS = (CONFIG, SURVEY, MEASUREMENT, VERSION)


@dataclass(frozen=True)
class Evidence:
    kind: str  # one of EVIDENCE_KINDS
    text: str
    section: str | None = None
    parameter: str | None = None
    value: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in EVIDENCE_KINDS:
            raise ValueError(f"unknown evidence kind {self.kind!r}")

    @classmethod
    def setting(cls, section: str, parameter: str, value: str, *, note: str = "") -> Evidence:
        """``parameter = value in [section]`` as the file (or the effective view) has it."""
        text = f"{parameter} = {value} in [{section}]" + (f" ({note})" if note else "")
        return cls(CONFIG, text, section, parameter, value)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "text": self.text}
        if self.parameter is not None:
            data.update(section=self.section, parameter=self.parameter, value=self.value)
        return data


@dataclass(frozen=True)
class ConfigChange:
    """An edit of smb.conf a program can apply: set or remove one parameter in one section.

    ``also`` holds edits that only make sense together with this one (the large-directory
    recipe is four parameters that form one change); applying a part of it is unsafe.
    """

    section: str
    parameter: str
    action: str  # "set" | "unset"
    value: str | None = None
    also: tuple[ConfigChange, ...] = ()

    kind = "smb.conf"

    def __post_init__(self) -> None:
        if self.action not in ("set", "unset"):
            raise ValueError(f"unknown action {self.action!r}")
        if (self.action == "set") != (self.value is not None):
            raise ValueError("a set needs a value and an unset must not have one")

    def describe(self) -> str:
        edits = [self, *self.also]
        return "; ".join(
            f"[{e.section}] {e.parameter} = {e.value}"
            if e.action == "set"
            else f"[{e.section}] remove '{e.parameter}' (back to the default)"
            for e in edits
        )

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ConfigChange:
        """The change :meth:`to_json` wrote."""
        return cls(
            section=str(data["section"]),
            parameter=str(data["parameter"]),
            action=str(data["action"]),
            value=data.get("value"),
            also=tuple(cls.from_json(edit) for edit in data.get("also") or ()),
        )

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "kind": self.kind,
            "section": self.section,
            "parameter": self.parameter,
            "action": self.action,
            "value": self.value,
        }
        if self.also:
            data["also"] = [edit.to_json() for edit in self.also]
        return data


@dataclass(frozen=True)
class ClientChange:
    """A change on the client computer; ``command`` is the SambaTune verb that plans it."""

    setting: str
    description: str
    command: str

    kind = "client"

    def describe(self) -> str:
        return f"{self.description} (plan it with: {self.command})"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "setting": self.setting,
            "description": self.description,
            "command": self.command,
        }


@dataclass(frozen=True)
class HostChange:
    """A change on the server machine outside smb.conf (a NIC, a cable, a kernel setting).

    SambaTune does not apply these itself; ``command`` shows how, when there is one.
    """

    target: str
    description: str
    command: str | None = None

    kind = "server-host"

    def describe(self) -> str:
        return self.description + (f" (for example: {self.command})" if self.command else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "target": self.target,
            "description": self.description,
            "command": self.command,
        }


Change = ConfigChange | ClientChange | HostChange


def describe_change(data: dict[str, Any]) -> str:
    """What a change's JSON (a finding's ``change``) does, in the words of its ``describe``."""
    if data.get("kind") == ConfigChange.kind:
        return ConfigChange.from_json(data).describe()
    if data.get("kind") == ClientChange.kind:
        return ClientChange(
            str(data.get("setting")), str(data.get("description")), str(data.get("command"))
        ).describe()
    return HostChange(str(data.get("target")), str(data.get("description")), data.get("command")).describe()


@dataclass(frozen=True)
class Finding(FieldsAsJson):
    id: str  # the stable id of the rule that made it
    severity: str
    title: str
    #: What the finding is about: "global", a share name, a NIC, "client", "network".
    subject: str
    evidence: tuple[Evidence, ...]
    #: The one change proposed; None when the advice is to measure first.
    change: Change | None
    expected_effect: str
    #: Where the expectation comes from: a measurement (ours or the user's), the 1999
    #: book and whether it still holds, arithmetic, or "not measured".
    effect_source: str
    risk: str
    #: Why the judgement fits this Samba version (empty when the version does not matter).
    applies_to_version: str = ""
    #: Parameters whose explanation (resources/parameters) the reader should see.
    parameters: tuple[str, ...] = ()
    sources: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.severity not in SEVERITY_RANK:
            raise ValueError(f"unknown severity {self.severity!r}")
        if not self.evidence:
            raise ValueError(f"{self.id}: a finding needs evidence")


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Most urgent first; equal severities keep the order the rules produced them in."""
    return sorted(findings, key=lambda f: SEVERITY_RANK[f.severity])
