"""Counterfactual search for single decisions worth changing (research/flip_census.py),
and the label sets of the removed network trainers (``OUTPUT.flips.npz``: FlipSet, which
research/label_transfer.py and label_embeddings.py read). Not a script.

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

from mlgo_env import episodes as ep
from mlgo_env.policies.policy import Policy


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


@dataclass
class FlipSet:
    """Counterfactual labels: single flips of default trajectories and their rewards."""

    names: list[str]        # feature order of `rows`
    modules: list[str]
    steps: np.ndarray       # [n] decision index within its module's default trajectory
    rows: np.ndarray        # [n, features] the recorded features at the flipped decision
    defaults: np.ndarray    # [n] the default's decision there
    rewards: np.ndarray     # [n] the episode's reward with that one decision flipped
    module_steps: dict      # module -> number of decisions of its default trajectory

    def save(self, path: str) -> None:
        np.savez(path, names=np.asarray(self.names), modules=np.asarray(self.modules),
                 steps=self.steps, rows=self.rows, defaults=self.defaults,
                 rewards=self.rewards, ms_names=np.asarray(list(self.module_steps)),
                 ms_counts=np.asarray(list(self.module_steps.values()), dtype=np.int64))

    @staticmethod
    def load(path: str) -> "FlipSet":
        d = np.load(path, allow_pickle=False)
        return FlipSet([str(n) for n in d["names"]], [str(m) for m in d["modules"]],
                       d["steps"], d["rows"], d["defaults"], d["rewards"],
                       dict(zip([str(m) for m in d["ms_names"]], d["ms_counts"].tolist())))

    def drop(self, modules: set) -> "FlipSet":
        """The labels of every module but `modules`."""
        keep = np.asarray([m not in modules for m in self.modules], dtype=bool)
        return FlipSet(self.names, [m for m, k in zip(self.modules, keep) if k],
                       self.steps[keep], self.rows[keep], self.defaults[keep],
                       self.rewards[keep],
                       {m: n for m, n in self.module_steps.items() if m not in modules})

    def extend(self, other: "FlipSet") -> "FlipSet":
        if other.names != self.names:
            raise ValueError("flip sets with different features")
        return FlipSet(self.names, self.modules + other.modules,
                       np.concatenate([self.steps, other.steps]),
                       np.concatenate([self.rows, other.rows]),
                       np.concatenate([self.defaults, other.defaults]),
                       np.concatenate([self.rewards, other.rewards]),
                       {**self.module_steps, **other.module_steps})


def candidate_steps(rows: np.ndarray, names: Sequence[str], refuse_floor: float = -200.0
                    ) -> np.ndarray:
    """Decisions worth trying to flip: every inlined call site, and refused ones whose
    margin max(threshold, 1) - cost_estimate is above `refuse_floor` (the census found no
    refused call site below -200 whose inlining shrinks its module)."""
    names = list(names)
    rows = np.asarray(rows, dtype=np.float64)
    if len(rows) == 0:
        return np.zeros(0, dtype=np.int64)
    margin = np.maximum(rows[:, names.index("threshold")], 1.0) - rows[:, names.index("cost_estimate")]
    default = rows[:, names.index("inlining_default")] > 0.5
    return np.flatnonzero(default | (margin > refuse_floor))
