"""What could not be judged yet: one finding per missing kind of measurement.

Rules that need a measurement stay silent without it; these findings say, once per
missing kind, what to measure and which judgements wait for it. Their words are
entries of resources/advisor/rules.json (see resources/advisor/README.md).
"""

from __future__ import annotations

from collections.abc import Iterator

from sambatune.advisor.conditions import MEASURED
from sambatune.advisor.findings import MEASUREMENT, Evidence, Finding
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.rule import Rule
from sambatune.advisor.rule_data import MissingMeasurement, RuleData, load_rule_data


def _judge(data: RuleData, entry: MissingMeasurement, inputs: AdvisorInput) -> Iterator[Finding]:
    if MEASURED[entry.measurement](inputs):
        return
    yield Finding(
        id=entry.id,
        severity=entry.severity,
        title=data.render(entry.title),
        subject=entry.subject,
        evidence=(Evidence(MEASUREMENT, data.render(entry.evidence)),),
        change=None,
        expected_effect=data.render(entry.expected_effect),
        effect_source=data.render(entry.effect_source),
        risk=data.render(entry.risk),
    )


def missing_measurement(rule_id: str) -> Rule:
    """The rule of the missing-measurement entry ``rule_id``."""
    data = load_rule_data()
    entry = data.missing_measurements[rule_id]
    return Rule(entry.id, entry.topic, lambda inputs: _judge(data, entry, inputs))
