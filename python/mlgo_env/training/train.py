"""Trains an inlining-for-size policy (``--problem=inlining``; --problem=regalloc runs
mlgo_env.training.regalloc_train): a method (mlgo_env.training.methods, --method) starts
from behavioural cloning of clang's default on a default trace and searches from there;
the result is judged against the one-number baselines on modules it never searched.

    python -m mlgo_env.train --problem=inlining --corpus=DIR --output=policy.json \\
        --minutes=20 [--method=es] [--workers=2 | --scheduler=ADDRESS|local[:N]] [--seed=0]

1. The corpus is split by a seeded hash of module names (--validation-share); the
   validation modules are played once, at the end, to report.
2. `mlgo-env trace` records the default's decisions on a sample of the corpus
   (--trace-sampling-rate); the method's fit clones them (the warm start).
3. Every candidate the method proposes is scored on the same fixed training modules that
   make decisions (--search-modules), by a blend of the mean per-module reward (1 - policy
   bytes / default bytes) and the total reduction (--total-weight). Episodes whose
   decisions a recorded trajectory already covers are replayed, not compiled
   (mlgo_env.tuning.replay), so only modules whose decisions change cost a compile. A round
   whose candidates were all replays compiled nothing: the method widens its step.
4. Each new incumbent is also scored on other training modules (--check-modules); the
   incumbent scoring best there is the learned result. It must then beat, on those check
   modules, clang's margin moved by each constant of --baseline-shifts and "no optional
   inline" (mlgo_env.tuning.baselines), by more than one standard error of the per-module
   differences of its score and the best baseline's (mlgo_env.training.selection), and by
   as much on a quarter of the searched packages' deciding training modules, held out of
   the search (a policy that learned its search modules rather than their packages fails
   there); otherwise that baseline is the result and the log says so. Validation modules
   are never used to choose.

Writes OUTPUT (the policy JSON, see mlgo_env.policies.policy), what the method writes
(es: OUTPUT.warmstart.json), OUTPUT.ckpt.npz (--resume continues from it), OUTPUT.png
(learning curve), OUTPUT.history.json (its last rows: the check-module selection and the
time breakdown: trace, fitting, compiling, replaying, selection, evaluation, other) and
OUTPUT.trace.log (+ .csv). The minutes budget covers everything before the final
validation, which runs after it; --rounds also bounds the search by a number of rounds
(for a seed, a run whose budget is not reached then chooses the same policy wherever its
episodes run).

--scheduler runs the trace shards and the episodes as tasks on a Dask cluster
(mlgo_env.cluster; the corpus at the same path on every worker); the search itself, the
checkpoint and the outputs stay in this process, so --resume works after a cluster restart.
A resumed run rebuilds its replay cache from the trace: rounds that replayed before the
interruption compile again.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from typing import Any, Sequence

import numpy as np

from .. import episodes as ep
from ..cluster import TaskRunner, open_runner
from ..cluster.trace import run_trace
from ..policies.policy import Policy, PolicyError, policy_from_json, policy_to_json, save_policy
from ..trace_log import Trace, TraceError, read_trace
from ..tuning.replay import ReplayCache, seed_from_trace
from . import methods
from . import train_args
from . import train_report as report
from .module_sets import choose_modules
from .regalloc_train import RegallocTrainer
from .search import objective
from .selection import Selection
from .tolerant import TolerantPlayer
from .training_setup import (check_placement, env_factory, find_mlgo_env,
                             refuse_evaluation_corpus, scratch_dir, training_split)

#: share of the searched packages' deciding training modules held out of the search, on
#: which a learned policy must also beat the best baseline to be chosen
HOLDOUT_SHARE = 0.25
#: a progress line and a checkpoint at most this often (and at each new incumbent)
REPORT_SECONDS = 15.0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The options of an inlining or regalloc run (mlgo_env.training.train_args)."""
    return train_args.parse(argv, TRAINERS)[0]


class Trainer:
    """One inlining training run: `run` does it all, with the method it holds
    (mlgo_env.training.methods) proposing what to score."""

    problem = "inlining"
    option_defaults: dict[str, Any] = {}

    @staticmethod
    def add_arguments(group: Any) -> None:
        """The inlining trainer's options (besides the common ones and the method's)."""
        group.add_argument("--search-modules", type=int, default=200,
                           help="training modules every candidate is scored on")
        group.add_argument("--baseline-shifts", default="-40,-20,-10,10,20,40",
                           help="constant margin shifts (cost units) the chosen policy must "
                                "beat on the check modules (with no optional inline); '' for "
                                "none")
        group.add_argument("--resume", action="store_true",
                           help="continue from OUTPUT.ckpt.npz")

    def __init__(self, args: argparse.Namespace, runner: TaskRunner | None = None) -> None:
        self.args = args
        self.method = methods.method_class(args.problem, args.method)(args)
        self.runner = runner  # where episodes and the trace run (main() opens it)
        self.rng = np.random.default_rng(args.seed)
        self.clock = report.Clock()
        self.deadline = self.clock.start + args.minutes * 60.0
        self.history: list[dict[str, Any]] = []
        # {"iteration", "u", "score", "check", "policy" (its JSON)}
        self.incumbents: list[dict[str, Any]] = []
        self.last_compiled = 0  # episodes the last `score` compiled

    def log(self, text: str) -> None:
        if not self.args.quiet:
            print(f"[{self.clock.elapsed():7.1f}s] {text}", flush=True)

    # -- phases -------------------------------------------------------------------------
    def trace(self) -> tuple[Trace, str]:
        """The default trace (made unless --trace names one) and its CSV path."""
        a = self.args
        path = a.trace or a.output + ".trace.log"
        if not a.trace and not (a.resume and os.path.exists(path + ".csv")):
            t = time.monotonic()
            self.log(f"tracing the default policy on {a.trace_sampling_rate:.0%} of the "
                     f"corpus -> {path}")
            run_trace(self.runner, find_mlgo_env(a.mlgo_env), a.problem, a.corpus, path,
                      a.seed, a.trace_sampling_rate, a.cache_dir)
            self.clock.times["trace"] = time.monotonic() - t
        return read_trace(path), path + ".csv"

    def score(self, pool: ep.EpisodePool, cache: ReplayCache, vectors: Sequence[np.ndarray],
              modules: Sequence[str], phase: str | None = None
              ) -> tuple[list[float], list[list[ep.EpisodeResult]]]:
        """Scores of search vectors on `modules` (replays where possible); the time is
        booked to `phase` ("selection": scoring on the check modules), else to compiling
        and replaying. `last_compiled` counts the episodes it compiled."""
        table, played = cache.evaluate(pool, [self.method.policy(u) for u in vectors],
                                       modules)
        self.last_compiled = len(played)
        self.clock.account(played, len(vectors) * len(modules) - len(played),
                           cache.last_seconds[1], cache.last_seconds[0], phase)
        return [objective(r, self.args.total_weight) for r in table], table

    def choose_modules(self, cache: ReplayCache, train: list[str]
                       ) -> tuple[list[str], list[str]]:
        """(search, check) for this run (mlgo_env.training.module_sets); `holdout` (the
        selection's second test) is kept on the trainer."""
        a = self.args
        sets = choose_modules(cache.trajectories, train, a.seed, a.search_modules,
                              a.check_modules, {p for p in a.check_packages.split(",") if p},
                              HOLDOUT_SHARE)
        self.holdout = sets.holdout
        return sets.search, sets.check

    def run(self) -> int:
        a = self.args
        train, val = training_split(a, self.log)
        ckpt = a.output + ".ckpt.npz"
        state = report.load_checkpoint(ckpt) if a.resume and os.path.exists(ckpt) else None
        trace, csv_path = self.trace()
        if state and state.get("method") != a.method:
            raise ValueError(f"checkpoint '{ckpt}' is not of --method={a.method}")
        if state:
            self.method.load(state["method_state"])
            self.rng.bit_generator.state = state["rng"]
            self.log(f"resuming from {ckpt} at round {state['iteration']}")
        else:
            self.method.fit(self, (trace, set(train)))
        cache = ReplayCache(trace.feature_names)
        seed_from_trace(cache, trace, csv_path, train)
        search, check = self.choose_modules(cache, train)
        self.log(f"search on {len(search)} training modules, check on {len(check)}, "
                 f"{len(self.holdout)} of the searched packages held out for the selection")
        with contextlib.nullcontext(TolerantPlayer(self.runner, self.log)) as pool:
            best = self.search(pool, cache, search, check, ckpt, state)
            best = Selection(a, self.clock, self.log, self.history).against_baselines(
                pool, cache, best, check, self.holdout)
            self.log("validating the chosen policy on the held-out modules")
            t = time.monotonic()
            val_results = pool.play([(m, ep.policy_decider(best)) for m in val])
            self.clock.account(val_results, 0, time.monotonic() - t, 0.0, "evaluation")
            failed = pool.failures
        if failed:
            self.log(f"{failed} episode(s) failed and were scored as twice the default size "
                     f"({len(pool.failed_modules)} module(s): "
                     f"{', '.join(sorted(pool.failed_modules)[:5])})")
        self.finish(best, val_results, train, val, search, check)
        return 0

    def search(self, pool: ep.EpisodePool, cache: ReplayCache, search: list[str],
               check: list[str], ckpt: str, state: dict[str, Any] | None) -> Policy:
        """The method's rounds until the deadline or --rounds (at least one round, however
        little budget the trace and the fit left); returns the incumbent best on `check`."""
        a, m = self.args, self.method
        if state:
            iteration, self.incumbents = state["iteration"], state["incumbents"]
            self.history = state["history"]
        else:
            iteration = 0
            self.start_search(pool, cache, search, check)
        last, first, shown = 0.0, iteration + 1, -np.inf
        while iteration < first or (time.monotonic() + last < self.deadline
                                    and (not a.rounds or iteration < a.rounds)):
            t = time.monotonic()
            candidates = m.propose(self.rng)
            if not candidates:
                break
            iteration += 1
            scores, table = self.score(pool, cache, candidates, search)
            idle = self.last_compiled == 0
            row = self.record_round(iteration, pool, cache, candidates, scores, table, check)
            if idle:  # nothing compiled: a wider step
                self.clock.idle_rounds += 1
                row["idle"] = True
                m.widen()
            # Rounds of replays take milliseconds: report and checkpoint every few seconds.
            if "check_score" in row or time.monotonic() - shown >= REPORT_SECONDS:
                shown = time.monotonic()
                self.log(report.progress_line(row, row["best"], self.clock))
                self.checkpoint(ckpt, iteration)
            last = time.monotonic() - t
        self.checkpoint(ckpt, iteration)
        chosen = max(self.incumbents, key=lambda c: (c["check"], c["iteration"]))
        self.log(f"chosen among the incumbents: round {chosen['iteration']} (search "
                 f"{chosen['score']:+.5f}, check {chosen['check']:+.5f}); "
                 f"{len(self.incumbents)} incumbents")
        self.chosen = chosen
        return policy_from_json(chosen["policy"], "incumbent")

    def start_search(self, pool: ep.EpisodePool, cache: ReplayCache, search: list[str],
                     check: list[str]) -> None:
        """Scores the fit's vector (the first incumbent) on the search and check modules."""
        u, _ = self.method.incumbent()
        (score,), _ = self.score(pool, cache, [u], search)
        self.method.start(score)
        (check_score,), _ = self.score(pool, cache, [u], check, phase="selection")
        self.incumbents.append({"iteration": 0, "u": u.tolist(), "score": score,
                                "check": check_score,
                                "policy": policy_to_json(self.method.policy(u))})
        self.history.append({"phase": "warm", "score": score, "check_score": check_score,
                             "iteration": 0})
        self.log(f"warm start: score {score:+.5f} on the search modules, "
                 f"{check_score:+.5f} on the check modules")

    def record_round(self, iteration: int, pool: ep.EpisodePool, cache: ReplayCache,
                     cands: list[np.ndarray], scores: list[float],
                     table: list[list[ep.EpisodeResult]], check: list[str]) -> dict[str, Any]:
        """Tells the method a scored round and records it: a new incumbent is also scored
        on the check modules. Returns the history row (also appended)."""
        top = int(np.argmax(scores))
        rewards = np.asarray([r.reward for r in table[top]])
        row = {"phase": "search", "iteration": iteration, "score": scores[top],
               "reward_mean": float(rewards.mean()), **_quantiles(rewards),
               "total_change": ep.summarise(table[top])["total_change"],
               "seconds": self.clock.elapsed()}
        row["compiled"], row["replayed"] = self.clock.played, self.clock.replayed
        if self.method.tell(cands, scores):
            u, score = self.method.incumbent()
            (row["check_score"],), _ = self.score(pool, cache, [u], check, phase="selection")
            self.incumbents.append({"iteration": iteration, "u": u.tolist(), "score": score,
                                    "check": row["check_score"],
                                    "policy": policy_to_json(self.method.policy(u))})
        row["best"], row["sigma"] = self.method.incumbent()[1], self.method.step_size()
        self.history.append(row)
        return row

    def checkpoint(self, path: str, iteration: int) -> None:
        """Everything --resume needs (the replay cache is rebuilt from the trace)."""
        state = {"method": self.args.method, "method_state": self.method.state(),
                 "iteration": iteration, "incumbents": self.incumbents,
                 "history": self.history, "rng": self.rng.bit_generator.state}
        report.save_checkpoint(path, state)

    def finish(self, best: Policy, val_results: list[ep.EpisodeResult], train: list[str],
               val: list[str], search: list[str], check: list[str]) -> None:
        """Writes the policy, history and curve, and reports the validation result."""
        a = self.args
        summary = ep.summarise(val_results)
        best.metadata.update({
            "trained_minutes": a.minutes, "seed": a.seed,
            "validation_share": a.validation_share, "corpus": os.path.abspath(a.corpus),
            "training_modules": len(train), "validation_modules": len(val),
            "search_modules": len(search), "check_modules": len(check),
            "chosen_round": self.chosen["iteration"], "search_score": self.chosen["score"],
            "check_score": self.chosen["check"], "total_weight": a.total_weight,
            "validation": summary, "episodes": self.clock.played,
            "replayed": self.clock.replayed, "explored": self.clock.explored,
            "idle_rounds": self.clock.idle_rounds, "time": self.clock.breakdown()})
        save_policy(best, a.output)
        self.history.append({"phase": "validation", **summary})
        self.history.append({"phase": "time", **self.clock.breakdown(),
                             "compiled": self.clock.played, "replayed": self.clock.replayed,
                             "explored": self.clock.explored,
                             "idle_rounds": self.clock.idle_rounds})
        report.write_history(a.output + ".history.json", self.history)
        report.plot(a.output + ".png", self.history)
        self.log(f"validation ({len(val)} modules never trained on): default "
                 f"{summary['default_total']:.0f} bytes, policy {summary['policy_total']:.0f} "
                 f"bytes, change {summary['total_change'] * 100:+.2f}%, mean per-module reward "
                 f"{summary['reward_mean']:+.5f}")
        rate = self.clock.played / self.clock.elapsed()
        self.log(f"{self.clock.played} episodes compiled ({rate:.2f}/s overall; "
                 f"{self.clock.explored} by exploration), {self.clock.replayed} replayed, "
                 f"{self.clock.idle_rounds} idle rounds; wrote {a.output}")
        self.log(self.clock.breakdown_line())


def _quantiles(rewards: np.ndarray) -> dict[str, float]:
    return {k: float(np.quantile(rewards, q)) for k, q in (("p10", 0.1), ("p50", 0.5),
                                                           ("p90", 0.9))}


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m mlgo_env.train``: the problem's trainer with the chosen method."""
    first = argparse.ArgumentParser(add_help=False)
    first.add_argument("--corpus")
    known = first.parse_known_args(argv)[0]
    if known.corpus:
        try:
            refuse_evaluation_corpus(known.corpus)
        except ValueError as e:
            print(f"train: error: {e}", file=sys.stderr)
            return 2
    args = parse_args(argv)
    try:
        check_placement(args.scheduler, args.remote)
        trainer = TRAINERS[args.problem](args)
        log = None if args.quiet else trainer.log
        make_env = env_factory(args.problem, args.corpus, args.remote, args.cache_dir,
                               scratch_dir(None, args.remote))
        with open_runner(args.scheduler, make_env, args.workers, args.corpus, log) as runner:
            trainer.runner = runner
            return trainer.run()
    except (ValueError, PolicyError, FileNotFoundError, RuntimeError, TraceError) as e:
        print(f"train: error: {e}", file=sys.stderr)
        return 2


#: the trainer of each problem (its methods: mlgo_env.training.methods)
TRAINERS = {Trainer.problem: Trainer, RegallocTrainer.problem: RegallocTrainer}


if __name__ == "__main__":
    sys.exit(main())
