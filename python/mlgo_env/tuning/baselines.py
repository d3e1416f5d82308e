"""The one-number inlining policies a learned one is judged against, on the same modules.

- the default: clang's own decisions (the shift 0 margin policy);
- constant shifts: clang's margin moved by ``b`` cost units everywhere
  (:mod:`mlgo_env.policies.margin_policy` with no shape feature): ``+b`` inlines every call
  site the default refused whose margin is above ``-b``, ``-b`` refuses every inlined one
  whose margin is below ``b``;
- no optional inline: every decision clang asks about refused (answer 0 always; calls
  clang inlines without asking, e.g. always-inline ones, stay inlined).

Evaluating them costs episodes; :func:`evaluate` plays them through a
:class:`~mlgo_env.training.replay.ReplayCache`, default first, so a baseline (or the policy)
that decides as an already played trajectory on a module is replayed, not compiled.
Picking the best shift on the modules it is reported on is selection on the test set:
the report says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .. import episodes as ep
from ..policies.margin_policy import MarginSpace
from ..policies.policy import Policy
from .replay import ReplayCache

#: the shifts evaluate plays unless told otherwise (cost units; one instruction is 5)
DEFAULT_SHIFTS = (-40.0, -20.0, -10.0, 10.0, 20.0, 40.0)
#: a shift below any margin clang computes: every decision refused
_REFUSE_ALL = -1e30


def parse_shifts(text: str) -> list[float]:
    """``"-40,-20,10"`` -> [-40.0, -20.0, 10.0]; ValueError naming a bad entry."""
    shifts = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            value = float(part)
        except ValueError:
            raise ValueError(f"--baseline-shifts: '{part}' is not a number") from None
        if not np.isfinite(value) or value == 0:
            raise ValueError(f"--baseline-shifts: {part} is not a finite non-zero shift "
                             "(shift 0 is the default, always reported)")
        shifts.append(value)
    return shifts


def shift_policy(problem: str, shift: float) -> Policy:
    """clang's margin moved by `shift` cost units (0: exactly the default)."""
    space = MarginSpace(problem, [], np.zeros(0), np.ones(0), anchored=True)
    return space.policy(np.array([shift]), {"baseline": f"constant shift {shift:+g}"})


def no_inline_policy(problem: str) -> Policy:
    """Refuses every decision (answers 0)."""
    policy = shift_policy(problem, _REFUSE_ALL)
    policy.metadata = {"baseline": "no optional inline"}
    return policy


@dataclass
class Baseline:
    name: str
    results: list[ep.EpisodeResult]

    @property
    def summary(self) -> dict[str, float]:
        return ep.summarise(self.results)


@dataclass
class Evaluation:
    policy: list[ep.EpisodeResult]
    default: Baseline
    shifts: list[Baseline]
    no_inline: Baseline
    played: int      # episodes compiled
    replayed: int    # episodes answered from recorded trajectories

    def best_shift(self) -> Baseline | None:
        """The shift with the smallest total (None without shifts)."""
        if not self.shifts:
            return None
        return min(self.shifts, key=lambda b: b.summary["policy_total"])


def evaluate(pool: ep.EpisodePool, policy: Policy, modules: Sequence[str],
             names: Sequence[str], shifts: Sequence[float]) -> Evaluation:
    """Plays the default, `policy`, every shift and no-optional-inline on `modules` (in
    that order, each replayed where an earlier trajectory covers it). `names`: the
    features an observation offers (plus ``inlining_default``)."""
    cache = ReplayCache(list(dict.fromkeys(names)))
    played = 0

    def run(p: Policy) -> list[ep.EpisodeResult]:
        nonlocal played
        (results,), fresh = cache.evaluate(pool, [p], modules)
        played += len(fresh)
        return results

    default = Baseline("default", run(shift_policy(policy.problem, 0.0)))
    learned = run(policy)
    shifted = [Baseline(f"constant shift {s:+g}", run(shift_policy(policy.problem, s)))
               for s in shifts]
    refuse = Baseline("no optional inline", run(no_inline_policy(policy.problem)))
    total = len(modules) * (3 + len(shifts))
    return Evaluation(learned, default, shifted, refuse, played, total - played)


def report(evaluation: Evaluation) -> list[str]:
    """One line per baseline: total bytes, change against the default, mean reward."""
    rows = [evaluation.default, *evaluation.shifts, evaluation.no_inline]
    best = evaluation.best_shift()
    width = max(len(b.name) for b in rows)
    lines = ["baselines on the same modules:"]
    for b in rows:
        s = b.summary
        mark = ("  <- best constant shift (chosen on these modules: an optimistic baseline)"
                if b is best else "")
        lines.append(f"  {b.name:<{width}}  total {s['policy_total']:.0f} bytes, change "
                     f"{s['total_change'] * 100:+.2f}%, mean per-module reward "
                     f"{s['reward_mean']:+.5f}{mark}")
    return lines
