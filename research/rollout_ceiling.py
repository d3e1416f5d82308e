#!/usr/bin/env python3
"""Diagnosis: how much smaller can inlining decisions tailor-made for each module make it?

No policy is learned: every module gets its own decisions, found by rollout improvement.
Each pass walks the module's decisions in order; at decision k it plays the current
trajectory's first k decisions, the other answer at k, then the current trajectory's
remaining answers (clang's default past its end), and keeps the change when the module
shrinks. A pass costs one compile per decision. Whatever a policy reading per-call-site
features achieves on modules it never saw, these per-module searches are the yardstick:
a generalising policy can hardly do better than decisions fitted to each module.

Modules: a seeded sample of the *training* split (`mlgo_env.train`'s split with the same
seed and share; validation modules are never played) among those that make between 1 and
`--max-decisions` decisions.

    PYTHONPATH=python research/rollout_ceiling.py --corpus=DIR [--modules=200] \
        [--max-decisions=150] [--passes=1] [--cache-dir=D]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

import numpy as np

from mlgo_env import episodes as ep
from mlgo_env.training.training_setup import env_factory

from diagnosis import add_diagnosis_arguments, training_sample


class Sequence:
    """Answers `actions` in order, deviating at `flip` (if any), clang's default past the
    end; records what it answered and clang's default at each step."""

    def __init__(self, actions: list[int], flip: int | None) -> None:
        self.actions, self.flip = actions, flip
        self.played: list[int] = []

    def __call__(self, obs, info: dict) -> int:
        i = len(self.played)
        default = int(info["default_action"])
        action = self.actions[i] if i < len(self.actions) else default
        if i == self.flip:
            action = 1 - action
        self.played.append(action)
        return action


@dataclass
class Module:
    name: str
    default_bytes: float
    bytes: float
    reward: float
    actions: list[int]
    cursor: int = 0            # the next decision of the current pass to try
    kept: int = 0              # changes kept, over all passes


def rollout_pass(pool: ep.EpisodePool, modules: list[Module], report) -> int:
    """One pass over every module's decisions; returns the episodes played."""
    for m in modules:
        m.cursor = 0
    played = 0
    while True:
        active = [m for m in modules if m.cursor < len(m.actions)]
        if not active:
            return played
        deciders = [Sequence(m.actions, m.cursor) for m in active]
        results = pool.play([(m.name, d) for m, d in zip(active, deciders)])
        played += len(active)
        for m, d, r in zip(active, deciders, results):
            if r.reward > m.reward + 1e-12:
                m.actions, m.reward, m.bytes = d.played, r.reward, r.policy_score
                m.kept += 1
            m.cursor += 1
        report(played, len(active))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True)
    p.add_argument("--modules", type=int, default=200)
    p.add_argument("--max-decisions", type=int, default=150)
    p.add_argument("--passes", type=int, default=1)
    p.add_argument("--sample", type=int, default=600,
                   help="training modules played once with the default to find those "
                        "that make decisions")
    add_diagnosis_arguments(p)
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    sample = training_sample(a.corpus, a.validation_share, a.seed, a.sample, rng)
    start = time.perf_counter()
    with ep.EpisodePool(env_factory("inlining", a.corpus, None, a.cache_dir), a.workers) as pool:
        deciders = [Sequence([], None) for _ in sample]
        results = pool.play(list(zip(sample, deciders)))
        modules = [Module(n, r.default_score, r.default_score, 0.0, d.played)
                   for n, r, d in zip(sample, results, deciders)
                   if 1 <= len(d.played) <= a.max_decisions][:a.modules]
        if not modules:
            print("no module of the sample makes between 1 and --max-decisions decisions")
            return 1
        print(f"{len(modules)} training modules with 1-{a.max_decisions} decisions "
              f"({sum(len(m.actions) for m in modules)} in all), of {len(sample)} played",
              flush=True)

        def report(played: int, active: int, last=[0.0]) -> None:
            if time.perf_counter() - last[0] < 30 and active:
                return
            last[0] = time.perf_counter()
            d = sum(m.default_bytes for m in modules)
            b = sum(m.bytes for m in modules)
            print(f"  {played} episodes, {active} modules still searching, "
                  f"{time.perf_counter() - start:.0f} s: total {b / d - 1:+.3%}", flush=True)

        for k in range(a.passes):
            played = rollout_pass(pool, modules, report)
            d = sum(m.default_bytes for m in modules)
            b = sum(m.bytes for m in modules)
            rewards = np.asarray([m.reward for m in modules])
            print(f"pass {k + 1}: {played} episodes; {d:.0f} -> {b:.0f} bytes "
                  f"({b / d - 1:+.2%}); mean per-module reward {rewards.mean():+.4f}; "
                  f"{int((rewards > 0).sum())} of {len(modules)} modules smaller; "
                  f"{sum(m.kept for m in modules)} changes kept; "
                  f"{time.perf_counter() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
