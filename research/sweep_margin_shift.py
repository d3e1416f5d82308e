#!/usr/bin/env python3
"""Diagnosis: does moving clang's -Oz inlining boundary globally shrink code?

Plays the margin policies "inline iff m + b > 0" (mlgo_env.policies.margin_policy) for a few
shifts b in cost units (b = 0 is the default: m is clang's margin max(threshold, 1) -
cost_estimate clamped to the default's side of the boundary; with --plain it is not
clamped, and b = -0.5 is the plain rule "cost < max(1, threshold)") on a fixed, seeded sample of *training*
modules that make inlining decisions (the validation split of `mlgo_env.train` with the
same seed and share is left out), and prints the total-bytes change and the mean
per-module reward of each against clang's default.

    PYTHONPATH=python research/sweep_margin_shift.py --corpus=DIR --trace=TRACE \\
        [--modules=150] [--shifts=-40,-20,-10,-5,5,10,20,40] [--workers=2] [--seed=0]

TRACE is a default trace of the corpus (`mlgo-env trace`, its CSV beside it); modules it
covers have their default trajectory replayed instead of compiled.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from mlgo_env import episodes as ep
from mlgo_env.policies.margin_policy import make_space
from mlgo_env.tuning.replay import ReplayCache, seed_from_trace
from mlgo_env.trace_log import read_trace
from mlgo_env.training.training_setup import env_factory, split_modules


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True)
    p.add_argument("--trace", required=True)
    p.add_argument("--modules", type=int, default=150)
    p.add_argument("--shifts", default="-40,-20,-10,-5,5,10,20,40")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--validation-share", type=float, default=0.2)
    p.add_argument("--cache-dir")
    p.add_argument("--plain", action="store_true", help="the unanchored margin")
    a = p.parse_args()
    train, _ = split_modules(ep.corpus_modules(a.corpus), a.validation_share, a.seed)
    trace = read_trace(a.trace)
    cache = ReplayCache(trace.feature_names)
    seed_from_trace(cache, trace, a.trace + ".csv", train)
    deciding = sorted(m for m, ts in cache.trajectories.items() if len(ts[0].actions))
    rng = np.random.default_rng(a.seed)
    sample = [deciding[i] for i in rng.permutation(len(deciding))[:a.modules]]
    space = make_space("inlining", trace.feature_names, trace.rows, (), not a.plain)
    print(f"{len(sample)} training modules with decisions (of {len(deciding)} traced)")
    print(f"{'shift':>7}  {'total change':>12}  {'mean reward':>11}  {'improved':>8}  "
          f"{'worse':>5}  {'seconds':>7}")
    with ep.EpisodePool(env_factory("inlining", a.corpus, None, a.cache_dir), a.workers) as pool:
        for b in [-0.5 if a.plain else 0.0] + [float(s) for s in a.shifts.split(",")]:
            t = time.monotonic()
            (results,), _ = cache.evaluate(pool, [space.policy(np.array([b]))], sample)
            s = ep.summarise(results)
            r = np.asarray([x.reward for x in results])
            print(f"{b:>+7.1f}  {s['total_change'] * 100:>+11.2f}%  {s['reward_mean']:>+11.5f}  "
                  f"{int((r > 0).sum()):>8}  {int((r < 0).sum()):>5}  "
                  f"{time.monotonic() - t:>7.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
