"""Trains an inlining-for-size policy: behavioural cloning of clang's default on a default
trace, then an evolution-strategies search, judged on held-out modules.
(--problem=regalloc runs mlgo_env.training.regalloc_train, with options of its own.)

    python -m mlgo_env.train --problem=inlining --corpus=DIR --output=policy.json \\
        --minutes=20 [--workers=2 | --scheduler=ADDRESS|local[:N]] [--remote=unix:PATH] [--seed=0]

1. The corpus is split by a seeded hash of module names (--validation-share); the
   validation modules are played once, at the end, to report.
2. `mlgo-env trace` records the default's decisions on a sample of the corpus
   (--trace-sampling-rate). The policy is a margin policy (mlgo_env.policies.margin_policy):
   inline iff m + shift + w.z > 0, in clang's cost units, m being clang's margin
   max(threshold, 1) - cost_estimate clamped to the default's side of the boundary
   (--no-anchor: unclamped); the warm start fits shift and w to the training modules'
   traced decisions.
3. Every candidate is scored on the same fixed training modules that make decisions
   (--search-modules), by a blend of the mean per-module reward (1 - policy bytes /
   default bytes) and the total reduction (--total-weight). Episodes whose decisions a
   recorded trajectory already covers are replayed, not compiled (mlgo_env.tuning.replay), so
   only modules whose decisions change cost a compile. The candidates:
   --method=classifier (the default): single flips of the search modules' default
   trajectories (mlgo_env.training.flip_search) label "deviating here shrinks the module"; a
   small network learns it (mlgo_env.policies.flip_classifier) and the policy is the default
   XOR the classifier; its output bias is tried at several flip rates (--flip-rates),
   then an elitist ES with mirrored perturbations (mlgo_env.training.search) tunes its output
   layer (mlgo_env.training.train_network). --method=imitation: the same network imitating
   the per-module best trajectories of a greedy search over grouped flips (every call site
   of one callee flipped together; mlgo_env.tuning.inlining_search, train_imitation).
   --method=residual: the best constant shift on the search modules, then a network that
   moves clang's margin from there, imitating grouped-flip searches that start from that
   shift (mlgo_env.policies.residual_policy, mlgo_env.training.train_residual).
   --method=coordinate / --method=es search (shift, w) of the margin policy
   (mlgo_env.training.train_margin).
   A round whose candidates were all replays compiled nothing: the search then explores
   (a wider step; for the network methods also a batch of new counterfactual episodes,
   mlgo_env.training.exploration, and a refit once the labels grew).
4. Each new incumbent is also scored on other training modules (--check-modules); the
   incumbent scoring best there is the learned result. It must then beat, on those check
   modules, clang's margin moved by each constant of --baseline-shifts and "no optional
   inline" (mlgo_env.tuning.baselines), by more than --selection-z standard errors of
   the per-module differences of its score and the best baseline's (a margin a handful of
   modules cannot make), and by as much on the searched packages' held-out modules
   (--holdout-share of their deciding training modules, never searched nor explored: a
   network that learned its search modules rather than their packages fails there);
   otherwise that baseline is the result and the log says so. Validation modules are
   never used to choose.

Writes OUTPUT (the policy JSON, see mlgo_env.policies.policy), OUTPUT.warmstart.json,
OUTPUT.ckpt.npz (--resume continues from it), OUTPUT.png (learning curve),
OUTPUT.history.json (its last rows: the check-module selection and the time breakdown:
trace, fitting, compiling, replaying, selection, evaluation, other) and OUTPUT.trace.log
(+ .csv). The minutes budget covers everything
before the final validation, which runs after it; --rounds also bounds the search by a
number of rounds (for a seed, a run whose budget is not reached then chooses the same policy
wherever its episodes run).

--scheduler runs the trace shards and the episodes as tasks on a Dask cluster
(mlgo_env.cluster; the corpus at the same path on every worker); the search itself, the
checkpoint and the outputs stay in this process, so --resume works after a cluster restart.
A resumed run rebuilds its replay cache from the trace: rounds that replayed before the
interruption compile again, so it may explore (and so label) at other rounds than an
uninterrupted run.
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
from . import train_report as report
from ..cluster import TaskRunner, open_runner
from ..cluster.trace import run_trace
from ..policies.margin_policy import MarginSpace, fit_margin_cv, make_space, space_of
from ..policies.policy import Policy, PolicyError, policy_from_json, save_policy
from .module_sets import choose_modules
from ..tuning.replay import ReplayCache, seed_from_trace
from .search import CoordinateSearch, ElitistES, objective
from .selection import Selection
from .train_args import parse_args as _parse_args
from .train_imitation import ImitationMethod
from .train_margin import MarginMethod
from .train_network import NetworkMethod
from .train_residual import ResidualMethod
from ..trace_log import Trace, read_trace
from .tolerant import TolerantPlayer
from .training_setup import (check_placement, env_factory, find_mlgo_env,
                             refuse_evaluation_corpus, scratch_dir, split_modules)


def parse_args(argv: Sequence[str] | None):
    return _parse_args(argv, __doc__)


class Trainer(NetworkMethod, ImitationMethod, ResidualMethod, MarginMethod, Selection):
    """State of one training run; `run` does it all."""

    def __init__(self, args: argparse.Namespace, runner: TaskRunner | None = None) -> None:
        self.args = args
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

    def warm_start(self, trace: Trace, train: set[str]) -> tuple[MarginSpace, np.ndarray]:
        """Behavioural cloning of the default on the training modules' decisions."""
        t = time.monotonic()
        keep = np.asarray([c in train for c in trace.contexts], dtype=bool)
        if not keep.any():
            raise ValueError("the default trace holds no decision of a training module "
                             "(raise --trace-sampling-rate?)")
        rows, labels = trace.rows[keep], trace.actions[keep]
        shape = [s for s in self.args.shape.split(",") if s]
        groups = [c for c, k in zip(trace.contexts, keep) if k]
        fits = {}
        for anchored in (False, True):  # the plain margin rule, then the anchored one
            space = make_space(self.args.problem, trace.feature_names, rows, shape, anchored)
            cols = [trace.feature_names.index(f) for f in space.features]
            fits[anchored] = fit_margin_cv(space, rows[:, cols], labels, groups)
        self.clock.times["fitting"] += time.monotonic() - t
        (plain, _), (fit, ridge) = fits[False], fits[self.args.anchor]
        if not self.args.anchor:
            space = make_space(self.args.problem, trace.feature_names, rows, shape, False)
        self.log(f"behavioural cloning: {len(labels)} decisions of {len(set(groups))} "
                 f"training modules; the margin rule agrees on {plain.agreement:.2%}, the "
                 f"{'anchored ' if self.args.anchor else ''}warm start on {fit.agreement:.2%} "
                 f"(shift {fit.u[0]:+.2f}, |w| {np.linalg.norm(fit.u[1:]):.2f}, ridge {ridge:g})")
        warm = space.policy(fit.u, {"cloning_agreement": fit.agreement,
                                    "margin_rule_agreement": plain.agreement,
                                    "cloning_decisions": int(len(labels))})
        save_policy(warm, self.args.output + ".warmstart.json")
        return space, fit.u

    def score(self, pool: ep.EpisodePool, cache: ReplayCache, space: MarginSpace,
              vectors: Sequence[np.ndarray], modules: Sequence[str],
              phase: str | None = None) -> tuple[list[float], list[list[ep.EpisodeResult]]]:
        """Scores of search vectors on `modules` (replays where possible); the time is
        booked to `phase` ("selection": scoring on the check modules), else to compiling
        and replaying. `last_compiled` counts the episodes it compiled."""
        table, played = cache.evaluate(pool, [space.policy(u) for u in vectors], modules)
        self.last_compiled = len(played)
        self.clock.account(played, len(vectors) * len(modules) - len(played),
                           cache.last_seconds[1], cache.last_seconds[0], phase)
        return [objective(r, self.args.total_weight) for r in table], table

    def choose_modules(self, cache: ReplayCache, train: list[str]
                       ) -> tuple[list[str], list[str]]:
        """(search, check) for this run (mlgo_env.training.module_sets); `fresh` (what
        exploration may add) and `holdout` (the selection's second test) are kept on the
        trainer."""
        a = self.args
        sets = choose_modules(cache.trajectories, train, a.seed, a.search_modules,
                              a.check_modules, {p for p in a.check_packages.split(",") if p},
                              a.holdout_share)
        self.fresh, self.holdout = sets.fresh, sets.holdout
        return sets.search, sets.check

    def run(self) -> int:
        a = self.args
        if a.problem != "inlining":  # regalloc never gets here (main dispatches it)
            raise ValueError(f"training supports inlining and regalloc, not '{a.problem}'")
        modules = ep.corpus_modules(a.corpus)
        train, val = split_modules(modules, a.validation_share, a.seed)
        if not train or not val:
            raise ValueError(f"corpus has {len(modules)} modules: too few to split into "
                             "training and validation")
        if not os.access(os.path.dirname(os.path.abspath(a.output)), os.W_OK):
            raise ValueError(f"cannot write the policy into '{os.path.dirname(a.output)}'")
        self.log(f"{len(modules)} modules: {len(train)} training, {len(val)} validation")
        ckpt = a.output + ".ckpt.npz"
        state = report.load_checkpoint(ckpt) if a.resume and os.path.exists(ckpt) else None
        trace, csv_path = self.trace()
        if state and state.get("method", "coordinate") != a.method:
            raise ValueError(f"checkpoint '{ckpt}' is of --method={state.get('method', 'coordinate')}")
        if state and a.method in ("classifier", "imitation", "residual"):
            space, u0 = None, None
            self.rng.bit_generator.state = state["rng"]
            self.log(f"resuming from {ckpt} at round {state['iteration']}")
        elif state:
            space, u0 = space_of(policy_from_json(state["warm"], f"checkpoint '{ckpt}'"))
            self.rng.bit_generator.state = state["rng"]
            self.log(f"resuming from {ckpt} at round {state['iteration']}")
        else:
            space, u0 = self.warm_start(trace, set(train))
        cache = ReplayCache(trace.feature_names)
        seed_from_trace(cache, trace, csv_path, train)
        search, check = self.choose_modules(cache, train)
        self.log(f"search on {len(search)} training modules, check on {len(check)}, "
                 f"{len(self.holdout)} of the searched packages held out for the selection")
        with contextlib.nullcontext(TolerantPlayer(self.runner, self.log)) as pool:
            if a.method in ("classifier", "imitation", "residual"):
                best = self.network(pool, cache, search, check, val, self.fresh, ckpt, state)
            else:
                best = self.margin_search(pool, cache, space, u0, search, check, val, ckpt,
                                          state)
            best = self.against_baselines(pool, cache, best, check, self.holdout)
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

    def more_rounds(self, iteration: int) -> bool:
        """False once --rounds search rounds are done."""
        return not self.args.rounds or iteration < self.args.rounds

    def env_factory(self) -> Any:
        a = self.args
        # Grouped flips name a callee by its IR2Vec embedding (train_imitation).
        vocab = "default" if a.method in ("imitation", "residual") else None
        return env_factory(a.problem, a.corpus, a.remote, a.cache_dir,
                           scratch_dir(a.temp_dir, a.remote), vocab)

    def record_round(self, es: CoordinateSearch | ElitistES, iteration: int,
                     pool: ep.EpisodePool, cache: ReplayCache, cspace: Any,
                     cands: list[np.ndarray], scores: list[float],
                     table: list[list[ep.EpisodeResult]], check: list[str], val: list[str],
                     floor: float | None = None) -> dict[str, Any]:
        """Tells `es` a scored round and records it: a new incumbent scoring above `floor`
        (default: the default policy's score, self.s0) is also scored on the check modules,
        and validation runs every --validate-every rounds. Returns the history row (also
        appended)."""
        floor = self.s0 if floor is None else floor
        top = int(np.argmax(scores))
        rewards = np.asarray([r.reward for r in table[top]])
        row = {"phase": "search", "iteration": iteration, "score": scores[top],
               "reward_mean": float(rewards.mean()), **_quantiles(rewards),
               "total_change": ep.summarise(table[top])["total_change"],
               "seconds": self.clock.elapsed()}
        row["compiled"], row["replayed"] = self.clock.played, self.clock.replayed
        if es.tell(cands, scores) and es.score > floor:
            (row["check_score"],), _ = self.score(pool, cache, cspace, [es.u], check,
                                                  phase="selection")
            self.incumbents.append({"iteration": iteration, "u": es.u.tolist(),
                                    "score": es.score, "check": row["check_score"],
                                    "policy": cspace.policy(es.u).to_json()})
        row["best"], row["sigma"] = es.score, float(np.mean(es.sigma))
        if self.args.validate_every and iteration % self.args.validate_every == 0:
            t = time.monotonic()
            played = pool.play([(m, ep.policy_decider(cspace.policy(es.u))) for m in val])
            self.clock.account(played, 0, time.monotonic() - t, 0.0, "evaluation")
            v = ep.summarise(played)
            row["validation_reward_mean"] = v["reward_mean"]
            row["validation_change"] = v["total_change"]
        self.history.append(row)
        return row

    def checkpoint(self, path: str, es: CoordinateSearch | ElitistES, iteration: int,
                   warm: Policy) -> None:
        """Everything --resume needs (the replay cache is rebuilt from the trace; a flip
        classifier's flips are in OUTPUT.flips.npz)."""
        state = {"es": es.state(), "iteration": iteration, "incumbents": self.incumbents,
                 "history": self.history, "rng": self.rng.bit_generator.state,
                 "warm": warm.to_json(), "method": self.args.method,
                 "base_shift": self.base_shift}
        if getattr(self, "u_fit", None) is not None:
            state["u_fit"] = np.asarray(self.u_fit).tolist()
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
    problem = argparse.ArgumentParser(add_help=False)
    problem.add_argument("--problem")
    problem.add_argument("--corpus")
    known = problem.parse_known_args(argv)[0]
    if known.corpus:
        try:
            refuse_evaluation_corpus(known.corpus)
        except ValueError as e:
            print(f"train: error: {e}", file=sys.stderr)
            return 2
    if known.problem == "regalloc":
        from .regalloc_train import main as train_regalloc  # its own trainer and options
        return train_regalloc(argv)
    args = parse_args(argv)
    try:
        check_placement(args.scheduler, args.remote)
        trainer = Trainer(args)
        log = None if args.quiet else trainer.log
        with open_runner(args.scheduler, trainer.env_factory(), args.workers, args.corpus,
                         log) as runner:
            trainer.runner = runner
            return trainer.run()
    except (ValueError, PolicyError, FileNotFoundError, RuntimeError) as e:
        print(f"train: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
