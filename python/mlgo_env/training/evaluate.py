"""Plays every module of a corpus with a policy file and compares with clang's default.

    python -m mlgo_env.evaluate --problem=inlining|regalloc --policy=policy.json --corpus=DIR \\
        [--workers=N | --scheduler=ADDRESS|local[:N]] [--remote=unix:PATH] [--modules=a,b,...]

Prints one row per module (default score, policy score, reward), then the mean of the
per-module rewards, and ends with exactly one line

    total: default N bytes, policy M bytes, change +X.XX%     (inlining)
    total: default N, policy M, change +X.XX%                 (regalloc)

where N and M are the summed scores the reward uses: N is the plain (default) compile of
each module, M the compile that followed the policy. Inlining's score is executable-section
bytes; regalloc's is the static spill/reload cost (4 x reloads + spills + 0.2 x copies,
frequency-weighted, from clang's regalloc remarks), printed with one decimal. A module
without any decision counts its default score on both sides.

With --scheduler each module is a task on a Dask cluster (mlgo_env.cluster); the corpus
must be at the same path on every worker. A module that fails (on every worker it was
tried on) is listed once as `failed: MODULE: reason`, left out of the totals, and the
exit code is 3.

Before those two lines it prints the baselines on the same modules, each with its total
and mean per-module reward. Inlining (mlgo_env.tuning.baselines): the default, constant
shifts of clang's margin (--baseline-shifts, in cost units), the best of them marked
(chosen on the evaluated modules: an optimistic baseline), and no optional inline (every
decision refused); they cost one evaluation each, less where a module's episode replays an
earlier one. Regalloc (mlgo_env.training.regalloc_baselines): the default (free), its
host emulation and the one-number policies (one feature ranks the candidates), the best
of those marked; one evaluation each. --no-baselines skips them.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from ..tuning import baselines as bl
from . import regalloc_baselines as rbl
from .. import episodes as ep
from ..cluster import (Failure, Progress, TaskFailed, TaskRunner, add_arguments,
                       open_runner)
from ..cluster.tasks import evaluate_task
from ..policies.policy import (EMULATION_FEATURE, Policy, PolicyError, check_compatible,
                               load_policy)
from .training_setup import SUPPORTED_PROBLEMS, check_placement, env_factory, split_modules


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
                   help="inlining: constant margin shifts (cost units) to report beside the policy "
                        "(default: %(default)s)")
    p.add_argument("--no-baselines", action="store_true",
                   help="report the policy against the default alone (no baseline episodes)")
    return p.parse_args(argv)


def select_modules(a: argparse.Namespace, policy: Policy) -> list[str]:
    """The modules to evaluate: --modules, or the corpus, cut to --split."""
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
    return modules


def play_baselines(a: argparse.Namespace, pool: TaskRunner, policy: Policy,
                   results: list[ep.EpisodeResult], available: list[str]) -> list[str] | None:
    """The baseline report lines (None when skipped or failed; a failure is said on
    stderr). Inlining: the default, margin shifts, no optional inline; regalloc: the
    default, its emulation and the one-number policies."""
    if a.no_baselines or not results:
        return None
    try:
        if a.problem == "regalloc":
            evaluation = rbl.evaluate(pool, results, progress=True)
            print(f"evaluate: baselines: {evaluation.played} episodes played", file=sys.stderr)
            return rbl.report(evaluation)
        shifts = bl.parse_shifts(a.baseline_shifts)
        inl = bl.evaluate(pool, policy, [r.module for r in results], available, shifts)
    except TaskFailed as e:
        print(f"evaluate: baselines left out: {e}", file=sys.stderr)
        return None
    print(f"evaluate: baselines: {inl.played} episodes played, {inl.replayed} replayed",
          file=sys.stderr)
    return bl.report(inl)


def main(argv: Sequence[str] | None = None) -> int:
    a = parse_args(argv)
    try:
        if a.problem not in SUPPORTED_PROBLEMS:
            raise ValueError(f"evaluate supports {', '.join(SUPPORTED_PROBLEMS)}, not "
                             f"'{a.problem}'")
        check_placement(a.scheduler, a.remote)
        policy = load_policy(a.policy)
        if a.problem == "inlining" and not a.no_baselines:
            bl.parse_shifts(a.baseline_shifts)  # a bad list fails before any episode
        modules = select_modules(a, policy)
        make = env_factory(a.problem, a.corpus, a.remote, a.cache_dir)
        with open_runner(a.scheduler, make, max(1, a.workers), a.corpus) as pool:
            # the features the host adds (from info["default_action"])
            host = ["inlining_default"] if a.problem == "inlining" else [EMULATION_FEATURE]
            available = pool.observation_features() + host
            check_compatible(policy, a.problem, available)
            outcomes = pool.map(evaluate_task, [(m, policy) for m in modules], modules,
                                progress=Progress("episodes"))
            if not pool.local:
                print("tasks per worker: " + ", ".join(
                    f"{w} {n}" for w, n in sorted(pool.stats.per_worker.items())),
                    file=sys.stderr)
            played = [r for r in outcomes if not isinstance(r, Failure)]
            baseline_lines = play_baselines(a, pool, policy, played, available)
    except (ValueError, PolicyError, FileNotFoundError) as e:
        print(f"evaluate: error: {e}", file=sys.stderr)
        return 2
    failures = [r for r in outcomes if isinstance(r, Failure)]
    if not played:
        print("evaluate: error: every module failed: " + "; ".join(map(str, failures)),
              file=sys.stderr)
        return 2
    print("\n".join(summary_lines(a.problem, played, failures, baseline_lines)))
    return 3 if failures else 0


def summary_lines(problem: str, results: list[ep.EpisodeResult], failures: list[Failure],
                  baseline_lines: list[str] | None) -> list[str]:
    """Per-module rows, failures, baselines, the mean per-module reward and the total
    line (inlining: bytes, integers; regalloc: the static cost, one decimal)."""
    unit, digits = (" bytes", 0) if problem == "inlining" else ("", 1)
    width = max(len(r.module) for r in results)
    lines = [f"{'module':<{width}}  {'default':>12}  {'policy':>12}  {'reward':>9}"]
    for r in results:
        lines.append(f"{r.module:<{width}}  {r.default_score:>12.{digits}f}  "
                     f"{r.policy_score:>12.{digits}f}  {r.reward:>+9.5f}")
    lines += [f"failed: {f}" for f in failures]
    lines += baseline_lines or []
    s = ep.summarise(results)
    lines.append(f"mean per-module reward: {s['reward_mean']:+.5f} over {len(results)} modules "
                 f"(p10 {s['reward_p10']:+.4f}, median {s['reward_p50']:+.4f}, "
                 f"p90 {s['reward_p90']:+.4f})")
    lines.append(f"total: default {s['default_total']:.{digits}f}{unit}, policy "
                 f"{s['policy_total']:.{digits}f}{unit}, change {s['total_change'] * 100:+.2f}%")
    return lines


if __name__ == "__main__":
    sys.exit(main())
