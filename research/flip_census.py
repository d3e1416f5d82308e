#!/usr/bin/env python3
"""Diagnosis: how often does deviating from clang's -Oz inlining decision at one call site
shrink the module, and where (by clang's margin max(threshold, 1) - cost_estimate)?

Plays, on a seeded sample of *training* modules (the split of `mlgo_env.train` with the
same seed and share; validation modules are left out), the default once, then up to
`--flips` episodes per module that follow the default except at one random decision
(research/flip_search.py), and tabulates the rewards of those single flips.

    PYTHONPATH=python research/flip_census.py --corpus=DIR [--modules=160] [--flips=8]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from mlgo_env import episodes as ep
from mlgo_env.policies.policy import Layer, Policy
from mlgo_env.training.training_setup import env_factory

from diagnosis import add_diagnosis_arguments, training_sample
from flip_search import search

FEATURES = ["threshold", "cost_estimate", "callee_users", "is_multiple_blocks"]
BANDS = {0: [(-1e9, -200), (-200, -60), (-60, -15), (-15, 0.5)],   # refused: inline it
         1: [(0.5, 40), (40, 1000), (1000, 1e9)]}                  # inlined: refuse it


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True)
    p.add_argument("--modules", type=int, default=160)
    p.add_argument("--flips", type=int, default=8)
    add_diagnosis_arguments(p)
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    sample = training_sample(a.corpus, a.validation_share, a.seed, a.modules, rng)
    # A placeholder policy: flip_search records its features and answers the default.
    recorder = Policy("inlining", FEATURES, np.zeros(4), np.ones(4),
                      [Layer(np.zeros((4, 1)), np.zeros(1), "linear")], {}, ["identity"] * 4)
    with ep.EpisodePool(env_factory("inlining", a.corpus, None, a.cache_dir), a.workers) as pool:
        flips = search(pool, recorder, sample, a.flips, rng)
    if not flips:
        print("no module of the sample makes a decision")
        return 1
    rows = np.stack([f.features for f in flips])
    default = np.asarray([f.default for f in flips])
    reward = np.asarray([f.reward for f in flips])
    margin = np.maximum(rows[:, 0], 1.0) - rows[:, 1]
    print(f"{len(flips)} single flips on {len(sample)} training modules: "
          f"{int((reward > 0).sum())} shrink their module, {int((reward < 0).sum())} grow it")
    print(f"{'flip':<14} {'margin band':<18} {'n':>5} {'shrink':>6} {'same':>5} {'mean reward':>11}")
    for d, bands in BANDS.items():
        for lo, hi in bands:
            s = (default == d) & (margin > lo) & (margin <= hi)
            if s.any():
                print(f"{'inline it' if d == 0 else 'refuse it':<14} {f'({lo:g}, {hi:g}]':<18} "
                      f"{int(s.sum()):>5} {int((reward[s] > 0).sum()):>6} "
                      f"{int((reward[s] == 0).sum()):>5} {reward[s].mean():>+11.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
