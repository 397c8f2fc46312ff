"""Every rule the advisor runs, found by itself and put in one order.

A rule is a small pure function of the inputs (configuration, server facts,
measurements, parameter knowledge) that yields findings with its own id. Rules that
compute are ``@rule`` functions in the modules of this package; toggles and missing
measurements are entries of resources/advisor/rules.json. Nothing lists them one by one:
adding a rule is adding the function (or the entry) and its test.

The order is the order of equally severe findings: by topic, as :data:`TOPICS` gives it;
within a topic, the data entries first (in the file's order: plain switches read first),
then the computed rules, module by module in name order, each in the order it is written.
"""

from __future__ import annotations

from sambatune.advisor.rule import Rule
from sambatune.advisor.rule_data import load_rule_data
from sambatune.advisor.rules.measure import missing_measurement
from sambatune.advisor.rules.toggles import toggle
from sambatune.packaged import package_modules

#: The topics, in the order their findings show among findings of the same severity.
TOPICS = (
    "logging",
    "sockets",
    "durability",
    "locking",
    "filenames",
    "macos",
    "io",
    "protocol",
    "clients",
    "smb1",
    "removed",
    "network",
    "measure",
)


def _computed_rules() -> list[Rule]:
    found: list[Rule] = []
    for module in package_modules(__name__, __path__):
        # A module's own rules, in the order it defines them (not rules it imports).
        found += [
            value
            for value in vars(module).values()
            if isinstance(value, Rule) and getattr(value.judge, "__module__", None) == module.__name__
        ]
    return found


def _all_rules() -> tuple[Rule, ...]:
    data = load_rule_data()
    entries = [toggle(rule_id) for rule_id in data.toggles]
    entries += [missing_measurement(rule_id) for rule_id in data.missing_measurements]
    rules = entries + _computed_rules()
    strays = sorted({r.topic for r in rules} - set(TOPICS))
    if strays:
        raise ValueError(f"advisor rules with a topic not in TOPICS: {strays}")
    # sorted() is stable: within a topic the order above stays.
    return tuple(sorted(rules, key=lambda r: TOPICS.index(r.topic)))


RULES: tuple[Rule, ...] = _all_rules()

RULE_IDS = tuple(r.id for r in RULES)


def rule_by_id(rule_id: str) -> Rule:
    for candidate in RULES:
        if candidate.id == rule_id:
            return candidate
    raise KeyError(rule_id)
