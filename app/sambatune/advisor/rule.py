"""A rule: a stable id, a topic, and a pure function from the inputs to findings."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sambatune.advisor.config_view import GLOBAL, same_value
from sambatune.advisor.findings import ConfigChange, Finding
from sambatune.advisor.inputs import AdvisorInput

Judge = Callable[[AdvisorInput], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    id: str
    topic: str
    judge: Judge

    def __call__(self, inputs: AdvisorInput) -> list[Finding]:
        findings = list(self.judge(inputs))
        strays = [f.id for f in findings if f.id != self.id]
        if strays:
            raise AssertionError(f"rule {self.id} made findings with other ids: {strays}")
        return findings


def rule(rule_id: str, topic: str) -> Callable[[Judge], Rule]:
    """Turn a judging function into a :class:`Rule`; one in a module of ``advisor/rules``
    runs by itself (``rules.RULES`` finds it)."""

    def wrap(judge: Judge) -> Rule:
        return Rule(rule_id, topic, judge)

    return wrap


def back_to_default(inputs: AdvisorInput, section: str, name: str, default: str) -> ConfigChange:
    """The change that gives ``section`` the default ``name`` again.

    Usually that is removing the line; but in a share whose [global] sets another value,
    removing it would inherit that value, so the default is set explicitly instead.
    """
    if section != GLOBAL:
        inherited = inputs.config.explicit_value(GLOBAL, name)
        if inherited is not None and not same_value(inherited, default):
            return ConfigChange(section, name, "set", default)
    return ConfigChange(section, name, "unset")
