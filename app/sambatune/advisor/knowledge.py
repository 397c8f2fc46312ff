"""The parameter knowledge under resources/parameters, as the rules consult it.

Rules take versions, SMB1-only status, removals and sources from here, so what the
advisor says and what the parameter explanations say cannot drift apart.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from sambatune.advisor.config_view import fold
from sambatune.packaged import resource

Version = tuple[int, int, int]


def parse_version(text: str) -> Version:
    major, minor, patch = (int(part) for part in text.split("."))
    return major, minor, patch


def version_text(version: Version) -> str:
    return ".".join(str(part) for part in version)


@dataclass(frozen=True)
class RemovedParameter:
    name: str
    removed_in: Version
    note: str
    replacement: str | None
    source: str


@dataclass(frozen=True)
class ParameterKnowledge:
    explanations: Mapping[str, Mapping[str, Any]]
    removed: Mapping[str, Mapping[str, Any]]

    def explained(self, name: str) -> bool:
        return name in self.explanations

    def sources(self, *names: str) -> tuple[str, ...]:
        """The documents behind these parameters' explanations, each once, in order."""
        found: list[str] = []
        for name in names:
            entry = self.explanations.get(name) or {}
            found += [s for s in entry.get("sources", ()) if s not in found]
            gone = self.removed.get(name)
            if gone and gone["source"] not in found:
                found.append(gone["source"])
        return tuple(found)

    def smb1_only(self, name: str) -> bool:
        entry = self.explanations.get(name)
        return entry is not None and entry["applies_to"] == "smb1"

    def smb1_only_names(self) -> list[str]:
        return [name for name in self.explanations if self.smb1_only(name)]

    def removal(self, name: str) -> RemovedParameter | None:
        """The removal record of ``name`` (matched the way Samba matches names)."""
        wanted = fold(name)
        for key, entry in self.removed.items():
            if fold(key) == wanted:
                return RemovedParameter(
                    key,
                    parse_version(entry["removed_in"]),
                    entry["note"],
                    entry["replacement"],
                    entry["source"],
                )
        return None

    def history(self, name: str) -> list[tuple[Version, str]]:
        entry = self.explanations.get(name) or {}
        return [(parse_version(item["version"]), item["change"]) for item in entry.get("history", ())]


def _document(name: str) -> Mapping[str, Mapping[str, Any]]:
    data = json.loads(resource("parameters", name).read_text(encoding="utf-8"))
    parameters: Mapping[str, Mapping[str, Any]] = data["parameters"]
    return parameters


@cache
def load_knowledge() -> ParameterKnowledge:
    return ParameterKnowledge(_document("explanations.json"), _document("removed.json"))
