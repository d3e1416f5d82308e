"""Plays every module of a corpus with a policy file and compares with clang's default.

    python -m mlgo_env.evaluate --problem=inlining --policy=policy.json --corpus=DIR \\
        [--workers=N | --scheduler=ADDRESS|local[:N]] [--remote=unix:PATH] [--modules=a,b,...]

Prints one row per module (default bytes, policy bytes, reward), then the mean of the
per-module rewards, and ends with exactly one line

    total: default N bytes, policy M bytes, change +X.XX%

where N and M are the summed executable-section bytes the reward uses: N is the plain
(default) compile of each module, M the compile that followed the policy. A module
without any inlining decision counts its default bytes on both sides.

With --scheduler each module is a task on a Dask cluster (mlgo_env.cluster); the corpus
must be at the same path on every worker. A module that fails (on every worker it was
tried on) is listed once as `failed: MODULE: reason`, left out of the totals, and the
exit code is 3.

Before those two lines it prints the baselines on the same modules, each with its total
and mean per-module reward (mlgo_env.training.baselines): the default, constant shifts of
clang's margin (--baseline-shifts, in cost units), the best of them marked (chosen on the
evaluated modules: an optimistic baseline), and no optional inline (every decision
refused). They cost one evaluation each, less where a module's episode replays an
earlier one; --no-baselines skips them.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from . import baselines as bl
from .. import episodes as ep
from ..cluster import Failure, Progress, TaskFailed, add_arguments, open_runner
from ..cluster.tasks import evaluate_task
from ..policies.policy import PolicyError, check_compatible, load_policy
from .training_setup import SUPPORTED_PROBLEMS, env_factory, split_modules


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m mlgo_env.evaluate", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--problem", required=True)
    p.add_argument("--policy", required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--remote")
    p.add_argument("--cache-dir")
    p.add_argument("--modules", help="comma-separated subset of the corpus")
    p.add_argument("--split", choices=("all", "training", "validation"), default="all",
                   help="only the modules the policy's trainer used for training, or only "
                        "those it held out (its seed and validation share, from the policy's "
                        "metadata)")
    add_arguments(p)
    p.add_argument("--baseline-shifts", default=",".join(f"{s:g}" for s in bl.DEFAULT_SHIFTS),
                   help="constant margin shifts (cost units) to report beside the policy "
                        "(default: %(default)s)")
    p.add_argument("--no-baselines", action="store_true",
                   help="report the policy against the default alone (no baseline episodes)")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    a = parse_args(argv)
    try:
        if a.problem not in SUPPORTED_PROBLEMS:
            raise ValueError(f"evaluate supports {', '.join(SUPPORTED_PROBLEMS)}, not "
                             f"'{a.problem}'")
        policy = load_policy(a.policy)
        shifts = [] if a.no_baselines else bl.parse_shifts(a.baseline_shifts)
        modules = ep.corpus_modules(a.corpus)
        if a.modules:
            wanted = a.modules.split(",")
            unknown = [m for m in wanted if m not in set(modules)]
            if unknown:
                raise ValueError(f"not in the corpus: {', '.join(unknown)}")
            modules = wanted
        if a.split != "all":
            meta = policy.metadata
            if "seed" not in meta or "validation_share" not in meta:
                raise ValueError(f"policy '{a.policy}' does not record the split it was "
                                 "trained with (metadata 'seed', 'validation_share')")
            train, val = split_modules(modules, float(meta["validation_share"]), int(meta["seed"]))
            modules = val if a.split == "validation" else train
        if a.scheduler and a.remote:
            raise ValueError("--scheduler runs environments on the cluster's workers; "
                             "--remote names a server: give one of them")
        make = env_factory(a.problem, a.corpus, a.remote, a.cache_dir)
        with open_runner(a.scheduler, make, max(1, a.workers), a.corpus) as pool:
            available = pool.observation_features() + ["inlining_default"]
            check_compatible(policy, a.problem, available)
            outcomes = pool.map(evaluate_task, [(m, policy) for m in modules], modules,
                                progress=Progress("episodes"))
            if not pool.local:
                print("tasks per worker: " + ", ".join(
                    f"{w} {n}" for w, n in sorted(pool.stats.per_worker.items())),
                    file=sys.stderr)
            evaluation = None
            played = [r.module for r in outcomes if not isinstance(r, Failure)]
            if not a.no_baselines and played:
                try:
                    evaluation = bl.evaluate(pool, policy, played, available, shifts)
                except TaskFailed as e:
                    print(f"evaluate: baselines left out: {e}", file=sys.stderr)
                else:
                    print(f"evaluate: baselines: {evaluation.played} episodes played, "
                          f"{evaluation.replayed} replayed", file=sys.stderr)
    except (ValueError, PolicyError, FileNotFoundError) as e:
        print(f"evaluate: error: {e}", file=sys.stderr)
        return 2
    results = [r for r in outcomes if not isinstance(r, Failure)]
    failures = [r for r in outcomes if isinstance(r, Failure)]
    if not results:
        print("evaluate: error: every module failed: " + "; ".join(map(str, failures)),
              file=sys.stderr)
        return 2
    width = max(len(r.module) for r in results)
    print(f"{'module':<{width}}  {'default':>10}  {'policy':>10}  {'reward':>9}")
    for r in results:
        print(f"{r.module:<{width}}  {r.default_score:>10.0f}  {r.policy_score:>10.0f}  "
              f"{r.reward:>+9.5f}")
    for f in failures:
        print(f"failed: {f}")
    if evaluation is not None:
        print("\n".join(bl.report(evaluation)))
    s = ep.summarise(results)
    print(f"mean per-module reward: {s['reward_mean']:+.5f} over {len(results)} modules "
          f"(p10 {s['reward_p10']:+.4f}, median {s['reward_p50']:+.4f}, p90 {s['reward_p90']:+.4f})")
    print(f"total: default {s['default_total']:.0f} bytes, policy {s['policy_total']:.0f} bytes, "
          f"change {s['total_change'] * 100:+.2f}%")
    return 3 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
