"""The advisor's rule data (resources/advisor/rules.json): the shipped file follows its
schema, every check of the schema fires on a document that breaks it, every entry runs
exactly once, and the generic judges read the details the rule table does not show."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sambatune.advisor.conditions import MEASURED, SECTION_CONDITIONS
from sambatune.advisor.rule_data import (
    MEASUREMENT_FIELDS,
    TOGGLE_FIELDS,
    TOGGLE_PLACEHOLDERS,
    MissingMeasurement,
    RuleDataError,
    Toggle,
    load_rule_data,
    parse_rule_data,
    problems,
    read_document,
)
from sambatune.advisor.rules import RULE_IDS, RULES
from test_advisor_rules import conf, run

README = Path(__file__).resolve().parent.parent / "resources" / "advisor" / "README.md"

Document = dict[str, Any]


def toggle_entry(document: Document, rule_id: str) -> dict[str, Any]:
    found: dict[str, Any] = next(e for e in document["toggles"] if e["id"] == rule_id)
    return found


def test_the_shipped_rule_data_follows_its_schema() -> None:
    document = read_document()
    assert problems(document) == []
    data = load_rule_data()
    # Every entry of the file is loaded (a new entry needs no count changed here).
    assert len(data.toggles) == len(document["toggles"]) > 0
    assert len(data.missing_measurements) == len(document["missing_measurements"]) > 0


def test_every_data_entry_runs_exactly_once_with_its_own_topic() -> None:
    data = load_rule_data()
    for rule_id in data.ids():
        assert RULE_IDS.count(rule_id) == 1, f"{rule_id} is in RULES {RULE_IDS.count(rule_id)} times"
    topics = {r.id: r.topic for r in RULES}
    entries: list[Toggle | MissingMeasurement] = [*data.toggles.values(), *data.missing_measurements.values()]
    for entry in entries:
        assert topics[entry.id] == entry.topic


def _set(rule_id: str, key: str, value: object) -> Callable[[Document], None]:
    def mutate(document: Document) -> None:
        toggle_entry(document, rule_id)[key] = value

    return mutate


def _drop(rule_id: str, key: str) -> Callable[[Document], None]:
    def mutate(document: Document) -> None:
        del toggle_entry(document, rule_id)[key]

    return mutate


def _measurement(key: str, value: object) -> Callable[[Document], None]:
    def mutate(document: Document) -> None:
        document["missing_measurements"][0][key] = value

    return mutate


def _duplicate(document: Document) -> None:
    document["toggles"].append(dict(document["toggles"][0]))


def _duplicate_across_lists(document: Document) -> None:
    document["missing_measurements"][0]["id"] = document["toggles"][0]["id"]


def _top(key: str, value: object) -> Callable[[Document], None]:
    def mutate(document: Document) -> None:
        document[key] = value

    return mutate


BROKEN = [
    ("unknown field", _set("oplocks-off", "colour", "red"), "oplocks-off: unknown field 'colour'"),
    ("unknown top-level key", _top("rules", []), "document: unknown field 'rules'"),
    ("missing field", _drop("oplocks-off", "risk"), "oplocks-off: missing field 'risk'"),
    ("missing change", _drop("hide-unreadable-on", "change"), "hide-unreadable-on: missing field 'change'"),
    ("bad severity", _set("oplocks-off", "severity", "critical"), "severity 'critical'"),
    ("empty text", _set("oplocks-off", "risk", " "), "oplocks-off.risk is empty"),
    (
        "unknown placeholder",
        _set("oplocks-off", "title", "Caching is off on {share}"),
        "oplocks-off.title: unknown placeholder {share}",
    ),
    ("unbalanced brace", _set("oplocks-off", "title", "oplocks {where"), "oplocks-off.title: expected '}'"),
    (
        "placeholder with a format",
        _set("oplocks-off", "title", "{value!r}"),
        "placeholder {value} takes no conversion",
    ),
    (
        "unknown placeholder in a version text",
        _set("smb1-raw-disabled", "extra_evidence", [{"version": "{smb1}"}]),
        "smb1-raw-disabled.extra_evidence[0]: unknown placeholder {smb1}",
    ),
    (
        "toggle field in a measurement text",
        _measurement("title", "Not judged on {section}"),
        "measure-network-path.title: unknown placeholder {section}",
    ),
    (
        "unknown condition",
        _set("smb1-raw-disabled", "requires", ["smb1-on"]),
        "smb1-raw-disabled.requires: unknown condition 'smb1-on'",
    ),
    (
        "unknown unless",
        _set("strict-sync-off", "unless", ["sync-always"]),
        "strict-sync-off.unless: unknown condition 'sync-always'",
    ),
    (
        "unparseable min_version",
        _set("smb2-leases-off", "min_version", "4.5"),
        "smb2-leases-off: min_version '4.5' is not three numbers",
    ),
    (
        "min_version of another type",
        _set("smb2-leases-off", "min_version", 4),
        "smb2-leases-off: min_version 4 is not three numbers",
    ),
    (
        "to_default not the default",
        _set("oplocks-off", "change", {"to_default": "no"}),
        "oplocks-off: to_default 'no' is not the default of 'oplocks'",
    ),
    (
        "change of an unknown kind",
        _set("oplocks-off", "change", {"set": "yes"}),
        "oplocks-off: change must be null or",
    ),
    (
        "parameter not in the catalog",
        _set("oplocks-off", "parameters", ["oplock"]),
        "oplocks-off.parameters: 'oplock' is not a parameter of the bundled catalog",
    ),
    (
        "parameter by a synonym",
        _set("case-sensitive-in-global", "parameters", ["casesignames"]),
        "write 'casesignames' as the catalog spells it, 'case sensitive'",
    ),
    ("no parameters", _set("oplocks-off", "parameters", []), "parameters must be a non-empty list"),
    (
        "see_also not in the catalog",
        _set("oplocks-off", "see_also", ["veto oplocks"]),
        "oplocks-off.see_also: 'veto oplocks' is not a parameter",
    ),
    (
        "evidence setting not in the catalog",
        _set("oplocks-off", "extra_evidence", [{"setting": "veto oplock", "note": "x"}]),
        "oplocks-off.extra_evidence[0]: 'veto oplock' is not a parameter",
    ),
    (
        "evidence of an unknown shape",
        _set("oplocks-off", "extra_evidence", [{"survey": "x"}]),
        "oplocks-off.extra_evidence[0] must be",
    ),
    ("bad fires_when", _set("oplocks-off", "fires_when", "off"), "fires_when 'off' is not one of"),
    ("bad sections", _set("oplocks-off", "sections", "shares"), "sections 'shares' is not one of"),
    ("duplicate id", _duplicate, "oplocks-off: the id is used more than once"),
    ("duplicate id across the lists", _duplicate_across_lists, "oplocks-off: the id is used more than once"),
    ("unknown measurement", _measurement("measurement", "latency"), "unknown measurement 'latency'"),
    ("unknown measurement field", _measurement("change", None), "unknown field 'change'"),
    (
        "snippet with a placeholder",
        _top("snippets", {"no_latency": "on {section}", "nothing_to_change": "None."}),
        "snippets.no_latency must be non-empty text without braces",
    ),
    (
        "missing snippet",
        _top("snippets", {"no_latency": "Not measured."}),
        "measure-network-path.risk: unknown placeholder {nothing_to_change}",
    ),
    ("another schema", _top("schema", 2), "schema 2 is not 1"),
]


@pytest.mark.parametrize(
    ("mutate", "expected"), [(m, e) for _, m, e in BROKEN], ids=[name for name, _, _ in BROKEN]
)
def test_each_schema_check_fires(mutate: Callable[[Document], None], expected: str) -> None:
    document = read_document()
    mutate(document)
    found = problems(document)
    assert any(expected in problem for problem in found), found
    with pytest.raises(RuleDataError) as caught:
        parse_rule_data(document)
    assert expected in str(caught.value)
    assert "resources/advisor/README.md" in str(caught.value)


def test_a_document_that_is_no_object_is_refused() -> None:
    assert problems([]) == ["the document is not a JSON object"]


def test_the_readme_documents_every_field_placeholder_and_condition() -> None:
    text = re.sub(r"```.*?```", "", README.read_text(encoding="utf-8"), flags=re.DOTALL)
    documented = set(re.findall(r"`([^`\n]+)`", text))
    names = {
        *TOGGLE_FIELDS,
        *MEASUREMENT_FIELDS,
        "schema",
        "snippets",
        "toggles",
        "missing_measurements",
        "to_default",
        *SECTION_CONDITIONS,
        *MEASURED,
        *(f"{{{p}}}" for p in TOGGLE_PLACEHOLDERS),
    }
    assert names <= documented, f"undocumented: {sorted(names - documented)}"


# --- what the generic judges do beyond the rule table -------------------------------------


def test_extra_setting_evidence_appears_only_when_set() -> None:
    [bare] = run("oplocks-off", explicit=conf(db={"oplocks": "no"}))
    assert [e.text for e in bare.evidence] == ["oplocks = no in [db]"]
    [vetoed] = run(
        "oplocks-off", explicit=conf(global_={"veto oplock files": "/*.mdb/"}, db={"oplocks": "no"})
    )
    assert [e.text for e in vetoed.evidence] == [
        "oplocks = no in [db]",
        "veto oplock files = /*.mdb/ in [db] (already excludes these files)",
    ]
    assert vetoed.title == "Clients may not cache files on [db] (oplocks = no)"
    assert vetoed.parameters == ("oplocks", "veto oplock files")


def test_every_watched_parameter_makes_its_own_finding() -> None:
    findings = run(
        "smb1-raw-disabled",
        explicit=conf(global_={"server min protocol": "NT1"}, data={"write raw": "no", "read raw": "no"}),
    )
    assert [f.title.split(" is off")[0] for f in findings] == ["read raw", "write raw"]
    assert all(f.evidence[1].kind == "version" and "NT1" in f.evidence[1].text for f in findings)
    assert findings[0].applies_to_version == findings[0].evidence[1].text


def test_a_global_only_toggle_reads_only_the_global_line() -> None:
    assert run("hostname-lookups-on", explicit=conf(data={"hostname lookups": "yes"})) == []
    [finding] = run("hostname-lookups-on", explicit=conf(global_={"hostname lookups": "yes"}))
    assert finding.sources == ("smb.conf(5) of Samba 4.17.12",)


def test_placeholders_and_snippets_are_filled_in() -> None:
    [leases] = run("smb2-leases-off", explicit=conf(global_={"smb2 leases": "no"}), version=None)
    assert leases.applies_to_version.startswith("On by default since 4.5; an unknown Samba version")
    assert leases.effect_source == load_rule_data().snippets["no_latency"]
    [missing] = run("measure-throughput")
    assert missing.risk == "None: nothing changes until something is measured."
    assert missing.evidence[0].text == "no SMB throughput figure was given to the advisor"
