"""The client settings catalog: what each setting does and which OS versions honour it.

The knowledge is data (resources/client/settings.json); this module only reads it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sambatune.client.osinfo import GENERATIONS, WINDOWS_GENERATIONS
from sambatune.packaged import resource

#: "reconnect": the SMB client reads it for new connections only (a share mounted again).
RESTART_KINDS = ("none", "reconnect", "adapter-restart", "service-restart", "reboot")
#: How an apply compares a limit it may only raise with what the machine holds:
#: "number" (the value itself), "third-number" (the largest of three, as in
#: net.ipv4.tcp_rmem), "bits" (a bit mask: the needed bits are ORed in, the others kept).
RAISE_COMPARISONS = ("number", "third-number", "bits")


@dataclass(frozen=True)
class Honour:
    honoured: bool
    evidence: str


@dataclass(frozen=True)
class RaiseOnly:
    """A setting an apply may only raise (see :data:`RAISE_COMPARISONS`)."""

    compare: str
    #: "bits": the bits SambaTune needs set.
    bits: int = 0
    #: "bits": what an absent value means (the documented default).
    absent_means: int | None = None


@dataclass(frozen=True)
class CatalogEntry:
    id: str
    title: str
    platform: str
    setting: dict[str, Any]
    what: str
    restart: str
    restart_note: str
    generations: dict[str, Honour]
    sources: tuple[str, ...]
    #: Set when an apply may only raise this setting, never lower it.
    raise_only: RaiseOnly | None = None
    #: False: shown and restorable, but no plan may set it any more.
    planned: bool = True

    def honour(self, generation: str) -> Honour:
        found = self.generations.get(generation)
        if found is None:
            return Honour(False, f"Not a setting of this operating system ({generation}).")
        return found


@lru_cache(maxsize=1)
def load_catalog() -> dict[str, CatalogEntry]:
    from sambatune.client.smb_client_catalog import ENTRIES
    from sambatune.client.windows_catalog import ENTRIES as WINDOWS_ENTRIES

    data = json.loads(resource("client", "settings.json").read_text(encoding="utf-8"))
    entries: dict[str, CatalogEntry] = {}
    for raw in [*data["settings"], *ENTRIES, *WINDOWS_ENTRIES]:
        if raw["id"] in entries:
            raise ValueError(f"Two client catalog entries are named {raw['id']!r}.")
        entries[raw["id"]] = CatalogEntry(
            id=raw["id"],
            title=raw["title"],
            platform=raw["platform"],
            setting=dict(raw["setting"]),
            what=raw["what"],
            restart=raw["restart"],
            restart_note=raw.get("restart_note", ""),
            generations={
                gen: Honour(bool(v["honoured"]), str(v["evidence"])) for gen, v in raw["generations"].items()
            },
            sources=tuple(raw.get("sources") or ()),
            raise_only=RaiseOnly(
                compare=str(raw["raise_only"]["compare"]),
                bits=int(raw["raise_only"].get("bits", 0)),
                absent_means=raw["raise_only"].get("absent_means"),
            )
            if raw.get("raise_only")
            else None,
            planned=bool(raw.get("planned", True)),
        )
    return entries


def entry(entry_id: str) -> CatalogEntry:
    return load_catalog()[entry_id]


def entries_for(platform: str) -> list[CatalogEntry]:
    return [e for e in load_catalog().values() if e.platform == platform]


def catalog_problems() -> list[str]:
    """Everything incomplete in the catalog (the test suite demands an empty list)."""
    problems = []
    for item in load_catalog().values():
        for field_name in ("title", "what", "restart_note"):
            if not getattr(item, field_name).strip():
                problems.append(f"{item.id}: empty {field_name}")
        if item.restart not in RESTART_KINDS:
            problems.append(f"{item.id}: restart {item.restart!r} is not one of {RESTART_KINDS}")
        if not item.sources:
            problems.append(f"{item.id}: no sources")
        wanted = WINDOWS_GENERATIONS if item.platform == "windows" else (item.platform,)
        if item.platform not in ("windows", "linux", "macos"):
            problems.append(f"{item.id}: unknown platform {item.platform!r}")
        for generation in wanted:
            honour = item.generations.get(generation)
            if honour is None:
                problems.append(f"{item.id}: no honoured/ignored label for {generation}")
            elif not honour.evidence.strip():
                problems.append(f"{item.id}: no evidence for {generation}")
        for generation in item.generations:
            if generation not in GENERATIONS:
                problems.append(f"{item.id}: unknown generation {generation!r}")
        if "kind" not in item.setting:
            problems.append(f"{item.id}: setting has no kind")
        rule = item.raise_only
        if rule is not None:
            if rule.compare not in RAISE_COMPARISONS:
                problems.append(
                    f"{item.id}: raise_only compares {rule.compare!r}, not one of {RAISE_COMPARISONS}"
                )
            if (rule.compare == "bits") != (rule.bits > 0):
                problems.append(f"{item.id}: raise_only needs bits exactly when it compares bits")
    return problems


_PLACEHOLDER_KEYS = {
    # Tcpip\Parameters\Interfaces\{GUID}: one key per interface.
    "{interface_key}": re.compile(
        r"hkey_local_machine\\system\\currentcontrolset\\services\\tcpip\\parameters\\"
        r"interfaces\\\{[0-9a-f\-]{36}\}"
    ),
    # Class\NetTrans\000n: one key per TCP/IP-to-adapter binding on Windows 9x.
    "{nettrans_key}": re.compile(
        r"hkey_local_machine\\system\\currentcontrolset\\services\\class\\nettrans\\\d{4}"
    ),
}


#: The address field that names a setting of each SMB-client kind.
_ADDRESS_FIELD = {
    "mount-option": "option",
    "conf-key": "key",
    "defaults": "key",
    "smb-client-config": "name",
}


def is_catalogued(kind: str, **address: str) -> bool:
    """Whether a setting is one SambaTune knows, and so one a plan may write.

    A plan is a file: whoever applies it with administrator rights should not be
    able to write anything else through it.
    """
    return find_entry(kind, **address) is not None


def find_entry(kind: str, **address: str) -> CatalogEntry | None:
    """The catalog entry of the setting at this address, or None."""
    for item in load_catalog().values():
        setting = item.setting
        if setting.get("kind") != kind:
            continue
        if kind == "registry":
            if setting["name"].lower() != address.get("name", "").lower():
                continue
            key = address.get("key", "").lower()
            pattern = _PLACEHOLDER_KEYS.get(setting["key"])
            if pattern.fullmatch(key) if pattern else setting["key"].lower() == key:
                return item
        elif kind == "sysctl":
            if setting["name"] == address.get("name"):
                return item
        elif kind == "adapter-property":
            # Registry names ignore case, and drivers spell the standardized keywords
            # differently (*NumRssQueues, *NumRSSQueues).
            if setting["keyword"].casefold() == address.get("keyword", "").casefold():
                return item
        elif kind in _ADDRESS_FIELD:
            field_name = _ADDRESS_FIELD[kind]
            if setting[field_name] == address.get(field_name):
                return item
        else:
            return item
    return None
