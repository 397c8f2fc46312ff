"""Before against after, for every series the wizard's test measured, and what to do.

Each series (the copy into the share, the copy back) is compared on its own with the
significance test of :mod:`sambatune.bench.statistics`; the verdict sums them up and
recommends keeping or reverting. The admin decides; the recommendation says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from sambatune.bench.comparison import SessionComparison, compare_sessions
from sambatune.bench.results_db import StoredSession

Overall = Literal["better", "worse", "mixed", "no real difference", "too few runs"]
Recommendation = Literal["keep", "revert", "either"]

RECOMMENDATIONS: dict[str, tuple[Recommendation, str]] = {
    "better": ("keep", "The change made this test measurably faster and nothing slower: keep it."),
    "worse": ("revert", "The change made this test measurably slower: revert it."),
    "mixed": (
        "revert",
        "The change made one direction faster and the other slower. Unless your users "
        "mostly do the faster one, revert it.",
    ),
    "no real difference": (
        "either",
        "With this test the change made no difference beyond the normal run-to-run spread. "
        "Keep it if the finding's other reasons matter to you (for example less disk used by "
        "logs, or safer data); otherwise revert it to stay where you were.",
    ),
    "too few runs": ("either", "There were too few runs to tell; measure with more runs."),
}


def decision_order(recommendation: str) -> tuple[str, str]:
    """The two decisions, the one to offer first first: keep unless the measurement says
    revert. "either" keeps first, as its explanation reads: the finding's own reasons
    still hold when the test shows no difference."""
    return ("revert", "keep") if recommendation == "revert" else ("keep", "revert")


@dataclass(frozen=True)
class Verdict:
    overall: Overall
    recommendation: Recommendation
    explanation: str
    comparisons: tuple[SessionComparison, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "overall": self.overall,
            "recommendation": self.recommendation,
            "explanation": self.explanation,
            "series": [
                {
                    "series": c.series,
                    "label": c.after.result.series[c.series].label,
                    "verdict": c.comparison.verdict,
                    "sentence": c.comparison.sentence,
                    "mean_before": c.comparison.mean_before,
                    "mean_after": c.comparison.mean_after,
                    "relative_change": c.comparison.relative_change,
                    "p_value": c.comparison.p_value,
                    "significant": c.comparison.significant,
                    "warnings": c.warnings,
                    "changed_lines": c.changed_lines,
                }
                for c in self.comparisons
            ],
        }


def judge(before: StoredSession, after: StoredSession) -> Verdict:
    names = [name for name in after.result.series if name in before.result.series]
    comparisons = tuple(compare_sessions(before, after, name) for name in names)
    verdicts = {c.comparison.verdict for c in comparisons}
    overall: Overall
    if not comparisons or "too few runs" in verdicts:
        overall = "too few runs"
    elif "better" in verdicts and "worse" in verdicts:
        overall = "mixed"
    elif "better" in verdicts:
        overall = "better"
    elif "worse" in verdicts:
        overall = "worse"
    else:
        overall = "no real difference"
    recommendation, explanation = RECOMMENDATIONS[overall]
    return Verdict(overall, recommendation, explanation, comparisons)
