"""Run the rules over one set of inputs: the advice for a server, most urgent first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sambatune.advisor.findings import SEVERITIES, Finding, sort_findings
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.knowledge import version_text
from sambatune.advisor.rule import Rule
from sambatune.advisor.rules import RULES


@dataclass(frozen=True)
class Advice:
    findings: tuple[Finding, ...]
    target: str
    config_path: str | None
    samba_version: str | None
    #: How the version was judged ("Samba 4.17.12", or the fallback when unknown).
    judged_as: str
    inputs: AdvisorInput

    def counts(self) -> dict[str, int]:
        return {severity: sum(1 for f in self.findings if f.severity == severity) for severity in SEVERITIES}

    def by_id(self, rule_id: str) -> list[Finding]:
        return [f for f in self.findings if f.id == rule_id]

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": True,
            "target": self.target,
            "config_path": self.config_path,
            "samba_version": self.samba_version,
            "judged_as": self.judged_as,
            "counts": self.counts(),
            "findings": [f.to_json() for f in self.findings],
            "measurements": self.inputs.measurements.to_json(),
            "recorded_sessions": list(self.inputs.recorded_sessions),
        }


def advise(inputs: AdvisorInput, rules: Sequence[Rule] = RULES) -> Advice:
    """Every rule's findings for these inputs, sorted by severity (stable within one)."""
    findings: list[Finding] = []
    for each in rules:
        findings += each(inputs)
    version = inputs.server.samba_version
    return Advice(
        findings=tuple(sort_findings(findings)),
        target=inputs.server.label,
        config_path=inputs.config.path,
        samba_version=version_text(version) if version else None,
        judged_as=inputs.version_label(),
        inputs=inputs,
    )
