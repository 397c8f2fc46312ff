"""The advisor's knowledge kept as data: resources/advisor/rules.json and its schema.

Rules that only notice a parameter switched away from its default, or a measurement
nobody gave, differ in their facts and words, not in their logic. Those facts live in
the data file (resources/advisor/README.md describes it); the two generic judges in
``advisor.rules.toggles`` and ``advisor.rules.measure`` turn each entry into findings.

The file is checked when it is loaded, and a broken one is refused as a whole: a rule
that half works (a misspelt parameter that never matches, a placeholder that raises at
the first finding) would fail silently on someone's server instead of in the tests.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from string import Formatter
from typing import Any

from sambatune.advisor.conditions import MEASURED, SECTION_CONDITIONS
from sambatune.advisor.config_view import same_value
from sambatune.advisor.findings import SEVERITIES
from sambatune.advisor.knowledge import Version, parse_version
from sambatune.conf.catalog import ParameterCatalog, load_bundled
from sambatune.packaged import read_resource

SCHEMA = 1
RESOURCE = ("advisor", "rules.json")

#: Placeholders a toggle's texts may use, besides the snippets.
TOGGLE_PLACEHOLDERS = frozenset({"section", "where", "parameter", "value", "version_label", "smb1_reason"})

_TOP = {"schema": True, "snippets": True, "toggles": True, "missing_measurements": True}
# Field name -> whether an entry must have it.
TOGGLE_FIELDS = {
    "id": True,
    "topic": True,
    "severity": True,
    "parameters": True,
    "fires_when": True,
    "sections": False,
    "min_version": False,
    "requires": False,
    "unless": False,
    "change": True,
    "title": True,
    "extra_evidence": False,
    "expected_effect": True,
    "effect_source": True,
    "risk": True,
    "applies_to_version": False,
    "see_also": False,
    "sources_from": False,
    "sources": False,
}
MEASUREMENT_FIELDS = {
    "id": True,
    "topic": True,
    "severity": True,
    "measurement": True,
    "subject": True,
    "evidence": True,
    "title": True,
    "expected_effect": True,
    "effect_source": True,
    "risk": True,
}
#: The texts every finding shows; they must not be empty.
_REQUIRED_TEXTS = ("title", "expected_effect", "effect_source", "risk")
FIRES_WHEN = {"yes": True, "no": False}
SECTIONS = ("all", "global")


class RuleDataError(ValueError):
    """The rule data does not follow its schema; ``problems`` lists every breach."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        listed = "\n".join(f"  - {p}" for p in problems)
        super().__init__(
            f"resources/advisor/rules.json does not follow its schema "
            f"(resources/advisor/README.md):\n{listed}"
        )


@dataclass(frozen=True)
class ExtraEvidence:
    """One more piece of evidence: a setting in effect in the section, shown only when
    it is set, or a version sentence."""

    setting: str | None = None
    note: str = ""
    version: str | None = None


@dataclass(frozen=True)
class Toggle:
    id: str
    topic: str
    severity: str
    parameters: tuple[str, ...]
    fires_when: bool
    global_only: bool
    min_version: Version | None
    requires: tuple[str, ...]
    unless: tuple[str, ...]
    #: The value the change restores; None when the finding proposes no change.
    to_default: str | None
    title: str
    extra_evidence: tuple[ExtraEvidence, ...]
    expected_effect: str
    effect_source: str
    risk: str
    applies_to_version: str
    see_also: tuple[str, ...]
    sources_from: tuple[str, ...]
    sources: tuple[str, ...]


@dataclass(frozen=True)
class MissingMeasurement:
    id: str
    topic: str
    severity: str
    measurement: str
    subject: str
    evidence: str
    title: str
    expected_effect: str
    effect_source: str
    risk: str


@dataclass(frozen=True)
class RuleData:
    snippets: Mapping[str, str]
    toggles: Mapping[str, Toggle]
    missing_measurements: Mapping[str, MissingMeasurement]

    def render(self, template: str, fields: Mapping[str, str] | None = None) -> str:
        return template.format_map({**self.snippets, **(fields or {})})

    def ids(self) -> list[str]:
        return [*self.toggles, *self.missing_measurements]


# --- the schema check --------------------------------------------------------------------


def _is_names(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v for v in value)


def _template_problems(where: str, text: object, allowed: frozenset[str]) -> list[str]:
    if not isinstance(text, str):
        return [f"{where} is not a string"]
    try:
        parsed = list(Formatter().parse(text))
    except ValueError as error:
        return [f"{where}: {error} (write a literal brace as {{{{ or }}}})"]
    found = []
    for _literal, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in allowed:
            found.append(f"{where}: unknown placeholder {{{name}}}; known: {', '.join(sorted(allowed))}")
        elif spec or conversion:
            found.append(f"{where}: placeholder {{{name}}} takes no conversion or format")
    return found


def _catalog_problems(where: str, name: str, catalog: ParameterCatalog) -> list[str]:
    known = catalog.get(name)
    if known is None:
        return [f"{where}: {name!r} is not a parameter of the bundled catalog"]
    if known.name != name:
        # The rules match some names exactly as testparm spells them.
        return [f"{where}: write {name!r} as the catalog spells it, {known.name!r}"]
    return []


def _fields_problems(label: str, entry: Mapping[str, Any], fields: Mapping[str, bool]) -> list[str]:
    found = [f"{label}: unknown field {key!r}" for key in entry if key not in fields]
    found += [
        f"{label}: missing field {key!r}" for key, required in fields.items() if required and key not in entry
    ]
    return found


def _common_problems(label: str, entry: Mapping[str, Any], allowed: frozenset[str]) -> list[str]:
    found = []
    for key in ("id", "topic"):
        if key in entry and not (isinstance(entry[key], str) and entry[key].strip()):
            found.append(f"{label}: {key} must be a non-empty string")
    if "severity" in entry and entry["severity"] not in SEVERITIES:
        found.append(f"{label}: severity {entry['severity']!r} is not one of {SEVERITIES}")
    for key in (*_REQUIRED_TEXTS, "applies_to_version"):
        if key not in entry:
            continue
        found += _template_problems(f"{label}.{key}", entry[key], allowed)
        text = entry[key]
        if key in _REQUIRED_TEXTS and isinstance(text, str) and (not text or text != text.strip()):
            found.append(f"{label}.{key} is empty or starts or ends with blanks")
    return found


def _toggle_problems(
    label: str, entry: Mapping[str, Any], allowed: frozenset[str], catalog: ParameterCatalog
) -> list[str]:
    found = _fields_problems(label, entry, TOGGLE_FIELDS)
    found += _common_problems(label, entry, allowed)
    parameters = entry.get("parameters")
    if "parameters" in entry and not (_is_names(parameters) and parameters):
        found.append(f"{label}: parameters must be a non-empty list of names")
        parameters = []
    for name in parameters or ():
        found += _catalog_problems(f"{label}.parameters", name, catalog)
    if "fires_when" in entry and entry["fires_when"] not in list(FIRES_WHEN):
        found.append(f"{label}: fires_when {entry['fires_when']!r} is not one of {tuple(FIRES_WHEN)}")
    if entry.get("sections", "all") not in SECTIONS:
        found.append(f"{label}: sections {entry['sections']!r} is not one of {SECTIONS}")
    if "min_version" in entry:
        try:
            parse_version(entry["min_version"])
        except (ValueError, AttributeError):
            found.append(f"{label}: min_version {entry['min_version']!r} is not three numbers like 4.5.0")
    for key in ("requires", "unless"):
        names = entry.get(key, [])
        if not _is_names(names):
            found.append(f"{label}: {key} must be a list of condition names")
            continue
        found += [
            f"{label}.{key}: unknown condition {name!r}; known: {', '.join(sorted(SECTION_CONDITIONS))}"
            for name in names
            if name not in SECTION_CONDITIONS
        ]
    found += _change_problems(label, entry.get("change"), parameters or [], catalog)
    evidence = entry.get("extra_evidence", [])
    if not isinstance(evidence, list):
        found.append(f"{label}: extra_evidence must be a list")
        evidence = []
    for index, item in enumerate(evidence):
        where = f"{label}.extra_evidence[{index}]"
        if isinstance(item, dict) and set(item) in ({"setting", "note"}, {"setting"}):
            if not isinstance(item["setting"], str) or not isinstance(item.get("note", ""), str):
                found.append(f"{where}: setting and note must be strings")
            else:
                found += _catalog_problems(where, item["setting"], catalog)
        elif isinstance(item, dict) and set(item) == {"version"}:
            found += _template_problems(where, item["version"], allowed)
        else:
            found.append(f'{where} must be {{"setting": NAME, "note": TEXT}} or {{"version": TEXT}}')
    for key in ("see_also", "sources_from", "sources"):
        names = entry.get(key, [])
        if not _is_names(names):
            found.append(f"{label}: {key} must be a list of non-empty strings")
        elif key != "sources":
            for name in names:
                found += _catalog_problems(f"{label}.{key}", name, catalog)
    return found


def _change_problems(
    label: str, change: object, parameters: list[str], catalog: ParameterCatalog
) -> list[str]:
    if change is None:
        return []
    if (
        not isinstance(change, dict)
        or set(change) != {"to_default"}
        or not isinstance(change["to_default"], str)
    ):
        return [f'{label}: change must be null or {{"to_default": VALUE}}']
    found = []
    for name in parameters:
        known = catalog.get(name)
        if known is None or known.default is None:
            continue
        if not same_value(change["to_default"], known.default):
            found.append(
                f"{label}: to_default {change['to_default']!r} is not the default of "
                f"{name!r}, which the bundled catalog gives as {known.default!r}"
            )
    return found


def _measurement_problems(label: str, entry: Mapping[str, Any], allowed: frozenset[str]) -> list[str]:
    found = _fields_problems(label, entry, MEASUREMENT_FIELDS)
    found += _common_problems(label, entry, allowed)
    if "measurement" in entry and entry["measurement"] not in list(MEASURED):
        found.append(
            f"{label}: unknown measurement {entry['measurement']!r}; known: {', '.join(sorted(MEASURED))}"
        )
    for key in ("subject", "evidence"):
        if key in entry and not (isinstance(entry[key], str) and entry[key].strip()):
            found.append(f"{label}: {key} must be a non-empty string")
    if "evidence" in entry:
        found += _template_problems(f"{label}.evidence", entry["evidence"], allowed)
    return found


def _snippet_problems(snippets: object) -> list[str]:
    if not isinstance(snippets, dict):
        return ["snippets must be an object of name -> text"]
    found = []
    for name, text in snippets.items():
        if not name.isidentifier() or name in TOGGLE_PLACEHOLDERS:
            found.append(f"snippets: {name!r} is not a usable placeholder name")
        # A snippet is pasted as it is, so a brace in it would never be filled in.
        if not isinstance(text, str) or not text.strip() or "{" in text or "}" in text:
            found.append(f"snippets.{name} must be non-empty text without braces")
    return found


def problems(data: object, catalog: ParameterCatalog | None = None) -> list[str]:
    """Every way ``data`` breaks the schema (empty: it is sound). ``catalog`` defaults to
    the newest bundled one, whose names and defaults the entries must agree with."""
    if not isinstance(data, dict):
        return ["the document is not a JSON object"]
    found = _fields_problems("document", data, _TOP)
    if "schema" in data and data["schema"] != SCHEMA:
        found.append(f"schema {data['schema']!r} is not {SCHEMA}")
    snippets = data.get("snippets", {})
    found += _snippet_problems(snippets)
    names = frozenset(snippets) if isinstance(snippets, dict) else frozenset()
    catalog = catalog or load_bundled()
    ids: list[str] = []
    for key in ("toggles", "missing_measurements"):
        entries = data.get(key, [])
        if not isinstance(entries, list):
            found.append(f"{key} must be a list")
            continue
        for index, entry in enumerate(entries):
            if not isinstance(entry, dict):
                found.append(f"{key}[{index}] is not an object")
                continue
            label = entry["id"] if isinstance(entry.get("id"), str) else f"{key}[{index}]"
            if key == "toggles":
                found += _toggle_problems(label, entry, names | TOGGLE_PLACEHOLDERS, catalog)
            else:
                found += _measurement_problems(label, entry, names)
            if isinstance(entry.get("id"), str):
                ids.append(entry["id"])
    found += [
        f"{rule_id}: the id is used more than once"
        for rule_id in sorted({i for i in ids if ids.count(i) > 1})
    ]
    return found


# --- loading -----------------------------------------------------------------------------


def _toggle(entry: Mapping[str, Any]) -> Toggle:
    change = entry["change"]
    return Toggle(
        id=entry["id"],
        topic=entry["topic"],
        severity=entry["severity"],
        parameters=tuple(entry["parameters"]),
        fires_when=FIRES_WHEN[entry["fires_when"]],
        global_only=entry.get("sections", "all") == "global",
        min_version=parse_version(entry["min_version"]) if "min_version" in entry else None,
        requires=tuple(entry.get("requires", ())),
        unless=tuple(entry.get("unless", ())),
        to_default=change["to_default"] if change is not None else None,
        title=entry["title"],
        extra_evidence=tuple(ExtraEvidence(**item) for item in entry.get("extra_evidence", ())),
        expected_effect=entry["expected_effect"],
        effect_source=entry["effect_source"],
        risk=entry["risk"],
        applies_to_version=entry.get("applies_to_version", ""),
        see_also=tuple(entry.get("see_also", ())),
        sources_from=tuple(entry.get("sources_from", ())),
        sources=tuple(entry.get("sources", ())),
    )


def parse_rule_data(data: object, catalog: ParameterCatalog | None = None) -> RuleData:
    """The rule data in ``data``; :class:`RuleDataError` when it breaks the schema."""
    found = problems(data, catalog)
    if found:
        raise RuleDataError(found)
    assert isinstance(data, dict)
    return RuleData(
        snippets=dict(data["snippets"]),
        toggles={entry["id"]: _toggle(entry) for entry in data["toggles"]},
        missing_measurements={
            entry["id"]: MissingMeasurement(**entry) for entry in data["missing_measurements"]
        },
    )


def read_document() -> Any:
    return json.loads(read_resource(*RESOURCE))


@cache
def load_rule_data() -> RuleData:
    return parse_rule_data(read_document())
