"""One judge for every toggle: a switch set away from its default, described by an entry
of resources/advisor/rules.json (see resources/advisor/README.md)."""

from __future__ import annotations

from collections.abc import Iterator

from sambatune.advisor.conditions import SECTION_CONDITIONS
from sambatune.advisor.config_view import GLOBAL, as_bool
from sambatune.advisor.findings import VERSION, Evidence, Finding
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.protocols import smb1_reason
from sambatune.advisor.rule import Rule, back_to_default
from sambatune.advisor.rule_data import RuleData, Toggle, load_rule_data


def where(section: str) -> str:
    return "every share that does not set it itself" if section == GLOBAL else f"[{section}]"


def _lines(inputs: AdvisorInput, entry: Toggle, parameter: str) -> list[tuple[str, str]]:
    if entry.global_only:
        # Only [global]'s own line: a share's line is another rule's business, or none.
        value = inputs.config.explicit_value(GLOBAL, parameter)
        return [] if value is None else [(GLOBAL, value)]
    return inputs.config.set_in(parameter)


def _finding(
    data: RuleData, entry: Toggle, inputs: AdvisorInput, parameter: str, section: str, value: str
) -> Finding:
    fields = {
        "section": section,
        "where": where(section),
        "parameter": parameter,
        "value": value,
        "version_label": inputs.version_label(),
        "smb1_reason": smb1_reason(inputs),
    }
    evidence = [Evidence.setting(section, parameter, value)]
    for extra in entry.extra_evidence:
        if extra.version is not None:
            evidence.append(Evidence(VERSION, data.render(extra.version, fields)))
        elif extra.setting is not None:
            shown = inputs.config.value(section, extra.setting)
            if shown:
                evidence.append(Evidence.setting(section, extra.setting, shown, note=extra.note))
    cited = inputs.sources(parameter, *entry.sources_from)
    return Finding(
        id=entry.id,
        severity=entry.severity,
        title=data.render(entry.title, fields),
        subject=section,
        evidence=tuple(evidence),
        change=(
            back_to_default(inputs, section, parameter, entry.to_default)
            if entry.to_default is not None
            else None
        ),
        expected_effect=data.render(entry.expected_effect, fields),
        effect_source=data.render(entry.effect_source, fields),
        risk=data.render(entry.risk, fields),
        applies_to_version=data.render(entry.applies_to_version, fields),
        parameters=(parameter, *entry.see_also),
        sources=cited + tuple(s for s in entry.sources if s not in cited),
    )


def _judge(data: RuleData, entry: Toggle, inputs: AdvisorInput) -> Iterator[Finding]:
    if entry.min_version is not None and not inputs.at_least(entry.min_version):
        return  # before that release the line restates the default of its day
    for parameter in entry.parameters:
        for section, value in _lines(inputs, entry, parameter):
            # Auto, enabled and the like are no boolean to Samba: never a toggle's business.
            if as_bool(value) is not entry.fires_when:
                continue
            if not all(SECTION_CONDITIONS[name](inputs, section) for name in entry.requires):
                continue
            if any(SECTION_CONDITIONS[name](inputs, section) for name in entry.unless):
                continue
            yield _finding(data, entry, inputs, parameter, section, value)


def toggle(rule_id: str) -> Rule:
    """The rule of the toggle entry ``rule_id``."""
    data = load_rule_data()
    entry = data.toggles[rule_id]
    return Rule(entry.id, entry.topic, lambda inputs: _judge(data, entry, inputs))
