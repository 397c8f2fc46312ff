"""What the canary's before/after measurement says, strictly enough to roll on.

The wizard's verdict leaves the decision to the admin; a rollout decides by itself,
so it asks more of the numbers. With the quick test's few runs a busy server gave both
misfires: a change that could not matter came out "better" at p = 0.02, and writes
98.5 % slower came out "no real difference" because the runs before varied so much
that nothing was significant. So each figure (reads, writes) is judged on its own:

- significant, and the rank test agrees wherever it has the runs to decide: a real
  change, better or worse;
- not significant, and the 95 % interval of the difference stays within ``NOISE_LIMIT``
  of the figure before: no real difference;
- anything else: the runs cannot tell. The rollout then halts, as for a slower canary:
  an effect nobody can judge is not rolled out to every server.

Before anything changes, the plan copies a small file through the canary's share the
way the measurement will (the server's smbclient, at an address that smbd serves: with
``bind interfaces only`` that may not be loopback), so a canary that cannot be measured
refuses the rollout instead of halting it after the first change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import comb

from sambatune.bench.context import collect_context
from sambatune.bench.runner import Method
from sambatune.bench.smb import SmbBenchmark, SmbOptions
from sambatune.bench.statistics import Comparison
from sambatune.cancellation import CancelToken
from sambatune.errors import Cancelled, SambaTuneError
from sambatune.remote.transport import Transport
from sambatune.units import format_percent

#: The largest change (either way, relative to before) a "no real difference" may hide.
NOISE_LIMIT = 0.10
CANNOT_JUDGE = "cannot judge"
#: Outcomes that halt a rollout.
HALTS = frozenset({"worse", "mixed", CANNOT_JUDGE})


@dataclass(frozen=True)
class FigureJudgement:
    label: str  # "writes", "reads"
    outcome: str  # better, worse, no real difference, cannot judge
    sentence: str


@dataclass(frozen=True)
class CanaryJudgement:
    outcome: str  # better, worse, mixed, no real difference, cannot judge
    figures: tuple[FigureJudgement, ...]

    @property
    def halts(self) -> bool:
        return self.outcome in HALTS

    def sentence(self) -> str:
        """Each figure, named: 'writes: worse: ...; reads: no real difference: ...'."""
        return " ".join(f"{f.label.capitalize()}: {f.sentence}" for f in self.figures)


def judge_figure(label: str, comparison: Comparison) -> FigureJudgement:
    if comparison.verdict == "too few runs":
        return FigureJudgement(label, CANNOT_JUDGE, comparison.sentence)
    rank_decides = _rank_test_can_decide(comparison)
    rank_significant = comparison.p_value_mw is not None and comparison.p_value_mw < comparison.alpha
    if rank_decides and rank_significant != comparison.significant:
        return FigureJudgement(
            label, CANNOT_JUDGE, f"{comparison.sentence} The two tests disagree, so the runs cannot tell."
        )
    if comparison.significant:
        return FigureJudgement(label, comparison.verdict, comparison.sentence)
    reach = _widest_relative(comparison)
    if reach is None or reach > NOISE_LIMIT:
        width = f"±{format_percent(reach)}" if reach is not None else "an unknown amount"
        return FigureJudgement(
            label,
            CANNOT_JUDGE,
            f"{comparison.sentence} But the runs vary so much that a change of {width} could "
            f"hide in them (more than {format_percent(NOISE_LIMIT)}): they cannot tell.",
        )
    return FigureJudgement(label, "no real difference", comparison.sentence)


def judge_canary(figures: Sequence[tuple[str, Comparison]]) -> CanaryJudgement:
    judged = tuple(judge_figure(label, comparison) for label, comparison in figures)
    outcomes = {f.outcome for f in judged}
    if not judged:
        outcome = CANNOT_JUDGE
    elif "worse" in outcomes:
        outcome = "mixed" if "better" in outcomes else "worse"
    elif CANNOT_JUDGE in outcomes:
        outcome = CANNOT_JUDGE
    elif "better" in outcomes:
        outcome = "better"
    else:
        outcome = "no real difference"
    return CanaryJudgement(outcome, judged)


#: The plan's copy through the canary's share: enough to prove the way, nothing to measure.
CHECK_SIZE = 64 << 10


def check_measurable(
    transport: Transport, config_path: str, share: str, cancel: CancelToken | None = None
) -> str | None:
    """Why the canary's share cannot be measured (one small put and get there, as the
    measurement does them), or None when it can."""
    where = f"[{share}]"
    try:
        context = collect_context(transport, config_path=config_path, cancel=cancel)
        where = f"[{share}] at {context.smb_address()}, port {context.smb_port()},"
        options = SmbOptions(share=share, size=CHECK_SIZE, ceilings=False)
        SmbBenchmark(transport, Method(runs=1, warmup=0), options, context=context, cancel=cancel).run()
    except Cancelled:
        raise
    except SambaTuneError as error:
        return f"the canary's share {where} cannot be measured from the server: {error.message}"
    return None


def _widest_relative(comparison: Comparison) -> float | None:
    """How far from zero the 95 % interval of the difference reaches, relative to before."""
    low, high = comparison.diff_ci95_low, comparison.diff_ci95_high
    if low is None or high is None or not comparison.mean_before:
        return None
    return max(abs(low), abs(high)) / abs(comparison.mean_before)


def _rank_test_can_decide(comparison: Comparison) -> bool:
    """Mann-Whitney can reach p < alpha only with enough runs (5 and 5 can; 3 and 3 cannot)."""
    before, after = comparison.before.n, comparison.after.n
    # The smallest two-sided exact p: every run of one side above every run of the other.
    return 2 / comb(before + after, before) < comparison.alpha
