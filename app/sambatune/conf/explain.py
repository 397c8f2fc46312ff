"""Everything we can say about one parameter, for one Samba version.

:func:`explain` merges what the server's catalog says (type, scope, default,
enum values, synonyms, deprecated or removed in this version) with our own
explanation from ``resources/parameters/explanations.json`` when we wrote one, and
judges whether the classic tuning advice about it holds on this version.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sambatune.conf.catalog import ParameterCatalog, Status
from sambatune.conf.knowledge import explanations, removed_parameters, version_tuple
from sambatune.conf.syntax import name_key

SMB1_OFF_BY_DEFAULT = (4, 11, 0)  # server min protocol became SMB2_02


@dataclass(frozen=True)
class Explanation:
    asked: str  # the name as given
    name: str  # canonical name (as asked when unknown)
    samba_version: str  # the catalog's version label
    status: Status  # current, deprecated, removed, unknown (for this version)
    synonym_of: str | None = None  # set when ``asked`` is a synonym
    inverse: bool = False  # the synonym means the opposite boolean
    type: str | None = None
    scope: str | None = None
    default: str | None = None
    values: list[str] = field(default_factory=list)  # enum values, as testparm prints them
    # The enum's other accepted spellings -> the value each means (SMB3_11 -> SMB3).
    aliases: dict[str, str] = field(default_factory=dict)
    synonyms: list[dict[str, Any]] = field(default_factory=list)
    removed_in: str | None = None
    removal_note: str | None = None
    replacement: str | None = None
    suggestions: list[str] = field(default_factory=list)
    # Our own words, when we have them:
    summary: str | None = None
    performance: str | None = None
    when_to_change: str | None = None
    applies_to: str | None = None  # "all" or "smb1"
    history: list[dict[str, str]] = field(default_factory=list)
    later_history: list[dict[str, str]] = field(default_factory=list)  # after this version
    classic_advice: list[dict[str, str]] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    # Our judgement of the classic advice for this version, in one paragraph:
    advice_on_this_version: str = ""

    @property
    def explained(self) -> bool:
        return self.summary is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "asked": self.asked,
            "name": self.name,
            "samba_version": self.samba_version,
            "status": self.status,
            "synonym_of": self.synonym_of,
            "inverse": self.inverse,
            "type": self.type,
            "scope": self.scope,
            "default": self.default,
            "values": self.values,
            "aliases": self.aliases,
            "synonyms": self.synonyms,
            "removed_in": self.removed_in,
            "removal_note": self.removal_note,
            "replacement": self.replacement,
            "suggestions": self.suggestions,
            "explained": self.explained,
            "summary": self.summary,
            "performance": self.performance,
            "when_to_change": self.when_to_change,
            "applies_to": self.applies_to,
            "history": self.history,
            "later_history": self.later_history,
            "classic_advice": self.classic_advice,
            "sources": self.sources,
            "advice_on_this_version": self.advice_on_this_version,
        }


def _our_entry(name: str) -> tuple[str, dict[str, Any]] | None:
    key = name_key(name)
    for canonical, entry in explanations().items():
        if name_key(canonical) == key:
            return canonical, entry
    return None


def explain(name: str, catalog: ParameterCatalog) -> Explanation:
    """What ``catalog``'s Samba version and our notes say about ``name`` (any spelling)."""
    version = catalog.version
    facts: dict[str, Any] = {"asked": name, "samba_version": catalog.version_label}
    lookup = catalog.lookup(name)
    removed = catalog.removed(name)
    if lookup is not None:
        parameter = lookup.parameter
        facts.update(
            name=parameter.name,
            status=parameter.status,
            synonym_of=(parameter.name if lookup.synonym else None),
            inverse=lookup.inverse,
            type=parameter.type,
            scope=parameter.scope,
            default=parameter.default,
            values=parameter.enum_choices,
            aliases=parameter.enum_aliases,
            synonyms=[{"name": s.name, "inverse": s.inverse} for s in parameter.synonyms],
        )
    elif removed is not None:
        facts.update(
            name=removed.name,
            status="removed",
            removed_in=removed.removed_in_text,
            removal_note=removed.note,
            replacement=removed.replacement,
        )
    else:
        later = removed_parameters().get(" ".join(name.lower().split()))
        facts.update(name=" ".join(name.lower().split()), status="unknown", suggestions=catalog.suggest(name))
        if later is not None:  # removed only after this version, yet unknown here
            facts.update(
                removed_in=later.removed_in_text, removal_note=later.note, replacement=later.replacement
            )
    ours = _our_entry(facts["name"])
    if ours is not None:
        _, entry = ours
        history = entry["history"]
        facts.update(
            summary=entry["summary"],
            performance=entry["performance"],
            when_to_change=entry["when_to_change"],
            applies_to=entry["applies_to"],
            history=[h for h in history if version_tuple(h["version"]) <= version],
            later_history=[h for h in history if version_tuple(h["version"]) > version],
            classic_advice=entry["classic_advice"],
            sources=entry["sources"],
        )
    facts["advice_on_this_version"] = _judge(facts, version)
    return Explanation(**facts)


def _judge(facts: dict[str, Any], version: tuple[int, int, int]) -> str:
    label = ".".join(str(part) for part in version)
    status = facts["status"]
    name = facts["name"]
    if status == "removed":
        instead = f" '{facts['replacement']}' does its job today." if facts.get("replacement") else ""
        return (
            f"Samba {label} no longer has '{name}' (removed in {facts['removed_in']}): any "
            f"advice to set it is obsolete here, and the line is ignored. Remove it.{instead}"
        )
    if status == "unknown":
        later = facts.get("later_history") or []
        if later:  # one a later release added, which we explain
            return (
                f"Samba {label} does not know '{name}' yet: it came with Samba {later[0]['version']}. "
                "Here a line setting it is ignored."
            )
        return f"Samba {label} does not know '{name}'; a line setting it is ignored."
    parts = []
    if facts.get("applies_to") == "smb1":
        if version >= SMB1_OFF_BY_DEFAULT:
            parts.append(
                f"It only affects SMB1, which Samba {label} refuses unless server min "
                "protocol is lowered to NT1 or below, so advice about it has no effect "
                "on a default server."
            )
        else:
            parts.append(f"It only affects SMB1, which Samba {label} still accepts by default.")
    if status == "deprecated":
        parts.append(f"'{name}' is deprecated in Samba {label}: it works but will go away.")
    later = facts.get("later_history") or []
    if later:
        changes = "; ".join(f"{item['version']}: {item['change']}" for item in later)
        parts.append(f"Later releases changed it ({changes}); that does not apply to {label} yet.")
    verdicts = [item["verdict"] for item in facts.get("classic_advice") or []]
    if verdicts:
        counted = ", ".join(f"{verdicts.count(v)} {v}" for v in dict.fromkeys(verdicts))
        parts.append(
            f"Classic advice about it, judged for current Samba: {counted} (see each claim's 'today')."
        )
    elif facts.get("summary") is None:
        parts.append("We have no notes of our own on it; the catalog facts above are the server's own.")
    else:
        parts.append(
            f"No classic tuning advice about it is on record; what is said above holds for Samba {label}."
        )
    return " ".join(parts)
