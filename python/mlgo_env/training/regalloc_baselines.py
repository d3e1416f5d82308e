"""The one-number register-allocation (eviction) policies a learned one is judged against.

clang asks, for a live range that found no free register, which of 33 candidates to evict
(index 32: the live range itself, i.e. evict nothing and split or spill it; clang clears
``mask[32]`` when it must evict). A *one-number policy* ranks the allowed candidates by a
single feature and takes the lowest (a version-3 policy file with one identity input, its
weight -1; a NaN value, an unspillable range, is never taken). Each is a rule a compiler
writer might write in one line:

- ``lowest use_def_density``: evict the interference with the smallest spill weight
  (normalised across the candidates), or nothing when the live range itself is the
  lightest. It is the core of LLVM's default eviction rule without its hint and cascade
  refinements;
- ``lowest nr_defs_and_uses``: evict the interference with the fewest defs and uses;
- ``lowest liverange_size``: evict the shortest interference;
- ``first allowed candidate``: the lowest allowed index (all logits equal).

The references reported beside them are *the default* (clang's own eviction advisor: the
plain compile the rewards compare with, change 0 by definition, so it costs no episode)
and *the default's emulation* (``info["default_action"]``, host-emulation-v2, what the
trainer's behavioural cloning imitates; it is a host rule, not a policy file).

Picking the best one-number policy on the modules it is reported on is selection on the
test set (an optimistic baseline): the report says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .. import episodes as ep
from ..cluster import Failure, Progress, TaskFailed, TaskRunner
from ..cluster.tasks import evaluate_task, play_task
from ..policies.policy import Layer, Policy
from ..tuning.baselines import Baseline

#: (name, feature, weight): the one-number policies, lowest value first where weight is -1
ONE_NUMBER = (
    ("lowest use_def_density", "use_def_density", -1.0),
    ("lowest nr_defs_and_uses", "nr_defs_and_uses", -1.0),
    ("lowest liverange_size", "liverange_size", -1.0),
    ("first allowed candidate", "progress", 0.0),
)
DEFAULT_NAME = "default (clang's eviction advisor)"
EMULATION_NAME = "default's emulation (host-emulation-v2)"


def one_number_policy(name: str, feature: str, weight: float) -> Policy:
    """A version-3 regalloc policy scoring each candidate by ``weight * feature``."""
    layer = Layer(np.array([[weight]]), np.zeros(1), "linear")
    return Policy("regalloc", [feature], np.zeros(1), np.ones(1), [layer],
                  {"baseline": name}, ["identity"], None, "argmax-masked", "mask")


def one_number_policies() -> list[tuple[str, Policy]]:
    return [(name, one_number_policy(name, f, w)) for name, f, w in ONE_NUMBER]


@dataclass
class Evaluation:
    default: Baseline
    emulation: Baseline | None
    one_number: list[Baseline]
    played: int

    def best_one_number(self) -> Baseline | None:
        """The one-number policy with the smallest total (None without any)."""
        if not self.one_number:
            return None
        return min(self.one_number, key=lambda b: b.summary["policy_total"])


def default_results(results: Sequence[ep.EpisodeResult]) -> list[ep.EpisodeResult]:
    """The default's own results on the modules of `results` (policy = default, reward 0):
    its score is the plain compile's, which every episode reports."""
    return [ep.EpisodeResult(r.module, 0.0, r.default_score, r.default_score, 0, 0.0, 0.0, 0.0)
            for r in results]


def play_all(runner: TaskRunner, modules: Sequence[str], policy: Policy | None,
             progress: Progress | None = None) -> list[ep.EpisodeResult]:
    """Every module played with `policy` (None: the default's emulation); TaskFailed names
    every module that failed."""
    if policy is None:
        outcomes = runner.map(play_task, [(m, ep.default_decider) for m in modules], modules,
                              progress=progress)
        outcomes = [o if isinstance(o, Failure) else o[0] for o in outcomes]
    else:
        outcomes = runner.map(evaluate_task, [(m, policy) for m in modules], modules,
                              progress=progress)
    failures = [o for o in outcomes if isinstance(o, Failure)]
    if failures:
        raise TaskFailed(failures)
    return list(outcomes)


def evaluate(runner: TaskRunner, played: Sequence[ep.EpisodeResult],
             emulation: bool = True, one_number: bool = True,
             progress: bool = False) -> Evaluation:
    """The baselines on the modules of `played` (a policy's results, in order): the
    default from their default scores, then the emulation and each one-number policy,
    one episode per module each (with `progress`, a progress display per baseline on
    stderr). Blocks on the episodes; raises TaskFailed."""
    modules = [r.module for r in played]

    def shown(name: str) -> Progress | None:
        return Progress(f"episodes of '{name}'") if progress else None

    default = Baseline(DEFAULT_NAME, default_results(played))
    emulated = (Baseline(EMULATION_NAME, play_all(runner, modules, None, shown(EMULATION_NAME)))
                if emulation else None)
    others = [Baseline(name, play_all(runner, modules, p, shown(name)))
              for name, p in (one_number_policies() if one_number else [])]
    count = len(modules) * ((emulated is not None) + len(others))
    return Evaluation(default, emulated, others, count)


def report(evaluation: Evaluation) -> list[str]:
    """One line per baseline: total cost, change against the default, mean reward."""
    rows = [evaluation.default, *([evaluation.emulation] if evaluation.emulation else []),
            *evaluation.one_number]
    best = evaluation.best_one_number()
    width = max(len(b.name) for b in rows)
    lines = ["baselines on the same modules:"]
    for b in rows:
        s = b.summary
        mark = ("  <- best one-number policy (chosen on these modules: an optimistic baseline)"
                if b is best else "")
        lines.append(f"  {b.name:<{width}}  total {s['policy_total']:.1f}, change "
                     f"{s['total_change'] * 100:+.2f}%, mean per-module reward "
                     f"{s['reward_mean']:+.5f}{mark}")
    return lines
