#!/usr/bin/env python3
"""Diagnosis: how much would choosing the constant margin shift *per module* gain, and can
the choice be predicted for packages not seen?

Plays clang's margin moved by each of --shifts (mlgo_env.tuning.baselines.shift_policy;
0 is the default) on every module of a corpus that makes inlining decisions, then prints:

- each shift's total change and mean per-module reward (the one-number policies);
- the per-module oracle: every module at its own best shift (a ceiling of module-level
  shift choice, fitted to each module: not a policy);
- leave-one-package-out predictions: for each package, a shift chosen on the *other*
  packages only, scored on the held-out one and summed over packages. "global" picks the
  one shift with the best mean reward elsewhere (what a constant shift learned elsewhere
  gives); "size-bucket" picks, per bucket of the module's call-graph size (``node_count``
  of its first decision, in powers of two), the shift with the best mean reward among
  other packages' modules of that bucket (falling back to global). Both use only what a
  policy sees at a decision, so a positive result here is a policy one could write.

    PYTHONPATH=python /usr/bin/python3 research/shift_oracle.py --corpus=DIR --trace=TRACE \\
        [--shifts=-40,-30,-20,-10,-5,5,10,20] [--workers=2] [--cache-dir=D] [--csv=OUT]

TRACE is a default trace of the corpus with its CSV beside it (e.g. a trainer's
``OUTPUT.trace.log``): its modules' default trajectories are replayed, not compiled, and
its first decision per module gives the module's features. --csv writes the per-module
sizes (one column per shift) for further study.
"""

from __future__ import annotations

import argparse
import csv
import sys

import numpy as np

from mlgo_env import episodes as ep
from mlgo_env.trace_log import read_trace
from mlgo_env.tuning.baselines import shift_policy
from mlgo_env.training.module_sets import package_of
from mlgo_env.tuning.replay import ReplayCache, seed_from_trace
from mlgo_env.training.training_setup import env_factory


def play_shifts(a: argparse.Namespace, trace, modules: list[str],
                shifts: list[float]) -> np.ndarray:
    """[modules, shifts] code sizes in bytes."""
    cache = ReplayCache(trace.feature_names)
    seed_from_trace(cache, trace, a.trace + ".csv", modules)
    sizes = np.zeros((len(modules), len(shifts)))
    with ep.EpisodePool(env_factory("inlining", a.corpus, None, a.cache_dir), a.workers) as pool:
        for j, s in enumerate(shifts):
            (results,), fresh = cache.evaluate(pool, [shift_policy("inlining", s)], modules)
            by_module = {r.module: r.policy_score for r in results}
            sizes[:, j] = [by_module[m] for m in modules]
            print(f"shift {s:+g}: {len(fresh)} compiled", file=sys.stderr, flush=True)
    return sizes


def summary(label: str, chosen: np.ndarray, default: np.ndarray) -> str:
    reward = 1.0 - chosen / default
    return (f"{label:<34} total {chosen.sum() / default.sum() * 100 - 100:+.2f}%  mean reward "
            f"{reward.mean():+.5f}  smaller {int((reward > 0).sum())} / larger "
            f"{int((reward < 0).sum())}")


def leave_one_package_out(sizes: np.ndarray, default: np.ndarray, packages: list[str],
                          buckets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per module, the size under the shift chosen on other packages: globally and per
    size bucket (rewards averaged, so large modules do not decide alone)."""
    reward = 1.0 - sizes / default[:, None]
    pk = np.asarray(packages)
    glob, buck = np.zeros(len(default)), np.zeros(len(default))
    for p in sorted(set(packages)):
        held, rest = pk == p, pk != p
        g = int(np.argmax(reward[rest].mean(axis=0)))
        glob[held] = sizes[held, g]
        for i in np.flatnonzero(held):
            same = rest & (buckets == buckets[i])
            j = int(np.argmax(reward[same].mean(axis=0))) if same.sum() >= 5 else g
            buck[i] = sizes[i, j]
    return glob, buck


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True)
    p.add_argument("--trace", required=True)
    p.add_argument("--shifts", default="-40,-30,-20,-10,-5,5,10,20")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--cache-dir")
    p.add_argument("--csv", help="write per-module sizes here")
    a = p.parse_args()
    trace = read_trace(a.trace)
    first: dict[str, int] = {}
    for i, c in enumerate(trace.contexts):
        first.setdefault(c, i)
    modules = sorted(set(ep.corpus_modules(a.corpus)) & set(first))
    shifts = [0.0] + [float(s) for s in a.shifts.split(",")]
    sizes = play_shifts(a, trace, modules, shifts)
    default = sizes[:, 0]
    node = trace.rows[[first[m] for m in modules], trace.feature_names.index("node_count")]
    buckets = np.floor(np.log2(np.maximum(node, 1))).astype(int)
    packages = [package_of(m) for m in modules]
    print(f"{len(modules)} modules with decisions, {len(set(packages))} packages")
    for j, s in enumerate(shifts):
        print(summary(f"shift {s:+g}", sizes[:, j], default))
    print(summary("per-module oracle (fitted)", sizes.min(axis=1), default))
    glob, buck = leave_one_package_out(sizes, default, packages, buckets)
    print(summary("leave-one-package-out: global", glob, default))
    print(summary("leave-one-package-out: size-bucket", buck, default))
    if a.csv:
        with open(a.csv, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["module", "node_count"] + [f"shift{s:+g}" for s in shifts])
            for m, n, row in zip(modules, node, sizes):
                w.writerow([m, int(n)] + [f"{x:.0f}" for x in row])
    return 0


if __name__ == "__main__":
    sys.exit(main())
