#!/usr/bin/env python3
"""Diagnosis: how much can combinations of grouped inlining flips shrink each module?

Per module, a greedy search accumulates callee groups (mlgo_env.tuning.inlining_search:
every call site of one callee, named by its IR2Vec embedding, flipped together): each
episode tries the module's next untried callee on top of the best set so far and keeps
it when the module shrinks; callees that a kept group brings into the trajectory join
the queue. It stops when every queue is empty or --minutes pass. The result is a
per-module ceiling for policies that deviate from clang per callee: decisions fitted to
each module, not a policy. Beside it, on the same modules, the one-number baselines
(mlgo_env.tuning.baselines: constant shifts of clang's margin, no optional inline).

Modules: a seeded sample of the *training* split (`mlgo_env.train`'s split with the
same seed and share) among those that make between 1 and --max-decisions decisions;
--all-modules samples the whole corpus instead (a development corpus none of whose
modules is trained on).

    PYTHONPATH=python research/group_ceiling.py --corpus=DIR [--modules=60] \
        [--max-decisions=400] [--minutes=5] [--all-modules] [--shift=S] [--cache-dir=D]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from mlgo_env import episodes as ep
from mlgo_env.tuning import baselines as bl
from mlgo_env.tuning import inlining_search as gf
from mlgo_env.training.training_setup import env_factory

from diagnosis import add_diagnosis_arguments, training_sample

EMBEDDINGS = ("callee_embedding", "caller_embedding")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True)
    p.add_argument("--modules", type=int, default=60)
    p.add_argument("--max-decisions", type=int, default=400)
    p.add_argument("--minutes", type=float, default=5.0)
    p.add_argument("--all-modules", action="store_true",
                   help="sample the whole corpus, not its training split")
    p.add_argument("--baseline-shifts", default="-40,-20,-10,10,20,40")
    p.add_argument("--shift", type=float,
                   help="search from clang's margin moved by this constant (a one-number "
                        "policy) instead of from clang's default; a module whose search "
                        "ends above the default counts at the default's size")
    add_diagnosis_arguments(p)
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    if a.all_modules:
        everything = ep.corpus_modules(a.corpus)
        sample = [everything[i] for i in rng.permutation(len(everything))]
    else:
        sample = training_sample(a.corpus, a.validation_share, a.seed, 10**9, rng)
    start = time.perf_counter()
    deadline = start + a.minutes * 60.0
    make = env_factory("inlining", a.corpus, None, a.cache_dir, None, "default")
    with ep.EpisodePool(make, a.workers) as pool:
        names = [n for n in pool.observation_features() if n not in EMBEDDINGS]
        names = list(dict.fromkeys(names + ["inlining_default"]))
        searches, _ = gf.start(pool, sample[:max(a.modules * 2, a.modules + 10)], names,
                               a.shift)
        searches = [s for s in searches if len(s.best.actions) <= a.max_decisions][:a.modules]
        if not searches:
            print("no module of the sample makes between 1 and --max-decisions decisions")
            return 1
        print(f"{len(searches)} modules with 1-{a.max_decisions} decisions "
              f"({sum(len(s.best.actions) for s in searches)} in all, "
              f"{sum(len(s.queue) for s in searches)} distinct callees)", flush=True)
        played, shown = 0, time.perf_counter()
        while time.perf_counter() < deadline:
            results = gf.greedy_round(pool, searches, names)
            if not results:
                break
            played += len(results)
            if time.perf_counter() - shown >= 30:
                shown = time.perf_counter()
                d, b = gf.totals(searches)
                print(f"  {played} episodes, {time.perf_counter() - start:.0f} s: total "
                      f"{b / d - 1:+.3%}, {sum(len(s.queue) for s in searches)} groups "
                      "queued", flush=True)
        if a.shift is not None:  # clang's default is always within reach
            for s in searches:
                if s.reward < 0.0:
                    s.bytes, s.reward = s.default_bytes, 0.0
        d, b = gf.totals(searches)
        left = sum(len(s.queue) for s in searches)
        rewards = np.asarray([s.reward for s in searches])
        print(f"grouped-flip ceiling: {played} episodes; {d:.0f} -> {b:.0f} bytes "
              f"({b / d - 1:+.2%}); mean per-module reward {rewards.mean():+.4f}; "
              f"{int((rewards > 0).sum())} of {len(searches)} modules smaller; "
              f"{sum(s.kept for s in searches)} groups kept; {left} groups untried"
              f"{' (stopped by --minutes)' if left else ''}; "
              f"{time.perf_counter() - start:.0f} s", flush=True)
        modules = [s.module for s in searches]
        evaluation = bl.evaluate(pool, bl.shift_policy("inlining", 0.0), modules, names,
                                 bl.parse_shifts(a.baseline_shifts))
        print("\n".join(bl.report(evaluation)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
