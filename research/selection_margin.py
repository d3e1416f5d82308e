#!/usr/bin/env python3
"""How far a trained inlining policy beat a constant shift on its run's check modules, in
standard errors of the per-module differences (what `train --selection-z` compares).

    PYTHONPATH=python /usr/bin/python3 research/selection_margin.py --policy=OUT \\
        --corpus=DIR --check-packages=P,Q --shift=-20 [--seed=0 --check-modules=40]

OUT is the policy a `python -m mlgo_env.train` run wrote (its OUT.trace.log and .csv
beside it); the check modules are rebuilt exactly as that run chose them (same split,
seed, --check-packages and --check-modules; pass what the run was given).
"""
import argparse
import sys

from mlgo_env import episodes as ep
from mlgo_env.policies.policy import load_policy
from mlgo_env.trace_log import read_trace
from mlgo_env.tuning.baselines import shift_policy
from mlgo_env.training.module_sets import choose_modules
from mlgo_env.tuning.replay import ReplayCache, seed_from_trace
from mlgo_env.training.search import objective, paired_margin
from mlgo_env.training.training_setup import env_factory, split_modules

from diagnosis import add_diagnosis_arguments


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--policy", required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--check-packages", default="")
    p.add_argument("--check-modules", type=int, default=100)
    p.add_argument("--search-modules", type=int, default=200)
    p.add_argument("--shift", type=float, required=True)
    p.add_argument("--total-weight", type=float, default=0.5)
    add_diagnosis_arguments(p)  # --workers, --seed, --validation-share, --cache-dir
    a = p.parse_args()
    train, _ = split_modules(ep.corpus_modules(a.corpus), a.validation_share, a.seed)
    trace = read_trace(a.policy + ".trace.log")
    cache = ReplayCache(trace.feature_names)
    seed_from_trace(cache, trace, a.policy + ".trace.log.csv", train)
    check = choose_modules(cache.trajectories, train, a.seed, a.search_modules,
                           a.check_modules, {x for x in a.check_packages.split(",") if x}).check
    make = env_factory("inlining", a.corpus, None, a.cache_dir, None, None)
    with ep.EpisodePool(make, a.workers) as pool:
        table, _ = cache.evaluate(pool, [load_policy(a.policy),
                                         shift_policy("inlining", a.shift)], check)
    margin, se = paired_margin(table[0], table[1], a.total_weight)
    z = margin / se if se else float("inf")
    print(f"{len(check)} check modules: policy {objective(table[0], a.total_weight):+.5f}, "
          f"constant shift {a.shift:+g} {objective(table[1], a.total_weight):+.5f}; margin "
          f"{margin:+.5f}, standard error {se:.5f}, z {z:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
