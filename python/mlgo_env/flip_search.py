"""Counterfactual search for single decisions worth changing (a diagnosis tool:
scripts/flip_census.py).

For a module, the default trajectory is played once, recording each decision's
features; then, for a sample of its decisions, the episode is replayed answering the
default everywhere except that one decision, which is flipped. Everything before the flip
is the default, so the flipped decision saw exactly the recorded features. A flip whose
episode scores a positive reward is an example of "deviate here"; how many there are,
and where, says how much room a policy has around the default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from . import episodes as ep
from .policy import Policy


@dataclass
class Flip:
    module: str
    step: int
    features: np.ndarray   # raw feature row (policy feature order)
    default: int           # the default's decision there
    reward: float          # the episode's reward with that one decision flipped


class _Recorder:
    """Answers the default and records each step's raw feature row."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.rows: list[np.ndarray] = []
        self.defaults: list[int] = []

    def __call__(self, obs: Any, info: dict) -> int:
        self.rows.append(self.policy.features_of(obs, info))
        self.defaults.append(int(info["default_action"]))
        return self.defaults[-1]


def _flipper(step: int):
    count = [0]

    def decide(obs: Any, info: dict) -> int:
        d = int(info["default_action"])
        i = count[0]
        count[0] += 1
        return 1 - d if i == step else d
    return decide


def search(pool: ep.EpisodePool, policy: Policy, modules: Sequence[str],
           flips_per_module: int, rng: np.random.Generator) -> list[Flip]:
    """Plays each module's default once, then up to `flips_per_module` single flips."""
    recorders = [_Recorder(policy) for _ in modules]
    pool.play([(m, r) for m, r in zip(modules, recorders)])
    jobs, where = [], []
    for m, r in zip(modules, recorders):
        n = len(r.defaults)
        for step in sorted(rng.choice(n, size=min(n, flips_per_module), replace=False)):
            jobs.append((m, _flipper(int(step))))
            where.append((m, r, int(step)))
    results = pool.play(jobs)
    return [Flip(m, step, r.rows[step], r.defaults[step], res.reward)
            for (m, r, step), res in zip(where, results)]
