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
   recorded trajectory already covers are replayed, not compiled (mlgo_env.training.replay), so
   only modules whose decisions change cost a compile. The candidates:
   --method=classifier (the default): single flips of the search modules' default
   trajectories (mlgo_env.training.flip_search) label "deviating here shrinks the module"; a
   small network learns it (mlgo_env.policies.flip_classifier) and the policy is the default
   XOR the classifier; its output bias is tried at several flip rates (--flip-rates),
   then an elitist ES with mirrored perturbations (mlgo_env.training.search) tunes its output
   layer. --method=coordinate / --method=es search (shift, w) of the margin policy.
4. Each new incumbent is also scored on other training modules (--check-modules); the
   incumbent scoring best there is the result. Validation modules are never used to
   choose.

Writes OUTPUT (the policy JSON, see mlgo_env.policies.policy), OUTPUT.warmstart.json,
OUTPUT.ckpt.npz (--resume continues from it), OUTPUT.png (learning curve),
OUTPUT.history.json and OUTPUT.trace.log (+ .csv). The minutes budget covers everything
before the final validation, which runs after it; --rounds also bounds the search by a
number of rounds (for a seed, a run whose budget is not reached then chooses the same policy
wherever its episodes run).

--scheduler runs the trace shards and the episodes as tasks on a Dask cluster
(mlgo_env.cluster; the corpus at the same path on every worker); the search itself, the
checkpoint and the outputs stay in this process, so --resume works after a cluster restart.
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
from ..policies import flip_classifier as fc
from ..cluster import TaskRunner, add_arguments as add_cluster_arguments, open_runner
from ..cluster.trace import run_trace
from ..policies.flip_classifier import space_of as classifier_space_of
from .flip_search import FlipSet, collect as collect_flips
from ..policies.margin_policy import DEFAULT_SHAPE, MarginSpace, fit_margin_cv, make_space, space_of
from ..policies.policy import Policy, PolicyError, policy_from_json, save_policy
from .replay import ReplayCache, seed_from_trace
from .search import CoordinateSearch, ElitistES, objective
from ..trace_log import Trace, read_trace
from .training_setup import env_factory, find_mlgo_env, split_modules


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m mlgo_env.train", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--problem", required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--output", required=True, help="the policy JSON to write")
    p.add_argument("--minutes", type=float, required=True, help="training budget")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    p.add_argument("--remote", help="unix:PATH or HOST:PORT of an mlgo-env server")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--validation-share", type=float, default=0.2)
    p.add_argument("--shape", default=",".join(DEFAULT_SHAPE),
                   help="comma-separated shape features of the margin policy")
    p.add_argument("--no-anchor", dest="anchor", action="store_false",
                   help="search the plain margin rule, not the margin anchored to clang's "
                        "decision (mlgo_env.policies.margin_policy)")
    p.add_argument("--sigma", type=float, default=10.0,
                   help="typical initial step, in clang cost units (5 = one instruction)")
    p.add_argument("--method", choices=("classifier", "coordinate", "es"), default="classifier",
                   help="classifier: a flip classifier learned from single-flip counterfactuals, "
                        "then ES on its output layer (mlgo_env.policies.flip_classifier); coordinate: "
                        "one margin coordinate up/down per round; es: mirrored Gaussian pairs "
                        "plus a gradient step on the margin policy (mlgo_env.training.search)")
    p.add_argument("--flip-share", type=float, default=0.6,
                   help="classifier: share of the budget left after the trace spent collecting "
                        "single flips of the search modules' default trajectories")
    p.add_argument("--flips-per-module", type=int, default=40,
                   help="classifier: at most this many single flips per search module")
    p.add_argument("--hidden", type=int, default=8, help="classifier: tanh hidden units")
    p.add_argument("--l2", type=float, default=1e-2, help="classifier: weight decay")
    p.add_argument("--flip-rates", default="0.001,0.0025,0.005,0.01,0.02",
                   help="classifier: the output biases tried first flip these shares of the "
                        "search modules' default decisions")
    p.add_argument("--pairs", type=int, default=4, help="es: mirrored pairs per round")
    p.add_argument("--total-weight", type=float, default=0.5,
                   help="weight of the total-bytes reduction in the score (the rest: the "
                        "mean per-module reward)")
    p.add_argument("--search-modules", type=int, default=200)
    p.add_argument("--check-modules", type=int, default=100)
    p.add_argument("--validate-every", type=int, default=0,
                   help="also report the incumbent on the validation modules every K rounds "
                        "(report only, never used to choose; 0: at the end only)")
    p.add_argument("--report-seconds", type=float, default=15.0,
                   help="progress line and checkpoint at most this often (and at each new "
                        "incumbent)")
    p.add_argument("--trace", help="reuse this default trace (its CSV beside it)")
    p.add_argument("--trace-sampling-rate", type=float, default=0.5)
    p.add_argument("--cache-dir")
    p.add_argument("--temp-dir", help="compilers' scratch directory (default /dev/shm if "
                                      "writable)")
    p.add_argument("--mlgo-env", help="the mlgo-env executable (for the trace)")
    p.add_argument("--resume", action="store_true", help="continue from OUTPUT.ckpt.npz")
    p.add_argument("--rounds", type=int, default=0,
                   help="stop the search after this many rounds (0: when the budget ends)")
    add_cluster_arguments(p)
    p.add_argument("--quiet", action="store_true")
    return p.parse_args(argv)


class Trainer:
    """State of one training run; `run` does it all."""

    def __init__(self, args: argparse.Namespace, runner: TaskRunner | None = None) -> None:
        self.args = args
        self.runner = runner  # where episodes and the trace run (main() opens it)
        self.rng = np.random.default_rng(args.seed)
        self.clock = report.Clock()
        self.deadline = self.clock.start + args.minutes * 60.0
        self.history: list[dict[str, Any]] = []
        self.incumbents: list[dict[str, Any]] = []  # {"iteration", "u", "score", "check"}

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
        self.clock.times["cloning"] = time.monotonic() - t
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
              vectors: Sequence[np.ndarray], modules: Sequence[str]
              ) -> tuple[list[float], list[list[ep.EpisodeResult]]]:
        """Scores of search vectors on `modules` (replays where possible)."""
        t = time.monotonic()
        table, played = cache.evaluate(pool, [space.policy(u) for u in vectors], modules)
        self.clock.account(played, len(vectors) * len(modules) - len(played),
                           time.monotonic() - t)
        return [objective(r, self.args.total_weight) for r in table], table

    def choose_modules(self, cache: ReplayCache, train: list[str]
                       ) -> tuple[list[str], list[str]]:
        """(search, check): disjoint fixed sets of training modules the trace saw decide."""
        deciding = sorted(m for m in train if any(
            len(t.actions) for t in cache.trajectories.get(m, ())))
        if not deciding:
            raise ValueError("no training module in the trace makes an inlining decision")
        # Its own generator: the same sets when a run is resumed.
        pick = np.random.default_rng([self.args.seed, 1])
        order = [deciding[i] for i in pick.permutation(len(deciding))]
        a = self.args
        n_check = min(a.check_modules, len(order) // 3)
        n_search = min(a.search_modules, len(order) - n_check)
        return order[:n_search], order[n_search:n_search + n_check]

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
        if state and a.method == "classifier":
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
        self.log(f"search on {len(search)} training modules, check on {len(check)}")
        with contextlib.nullcontext(self.runner) as pool:
            if a.method == "classifier":
                best = self.classifier(pool, cache, trace, search, check, val, ckpt, state)
            else:
                best = self.search(pool, cache, space, u0, search, check, val, ckpt, state)
            self.log("validating the chosen policy on the held-out modules")
            t = time.monotonic()
            val_results = pool.play([(m, ep.policy_decider(best)) for m in val])
            self.clock.account(val_results, 0, time.monotonic() - t)
        self.finish(best, val_results, train, val, search, check)
        return 0

    def more_rounds(self, iteration: int) -> bool:
        """False once --rounds search rounds are done."""
        return not self.args.rounds or iteration < self.args.rounds

    def env_factory(self) -> Any:
        a = self.args
        temp = a.temp_dir
        if temp is None and not a.remote and os.access("/dev/shm", os.W_OK):
            temp = "/dev/shm"
        return env_factory(a.problem, a.corpus, a.remote, a.cache_dir, temp)

    def search(self, pool: ep.EpisodePool, cache: ReplayCache, space: MarginSpace,
               u0: np.ndarray, search: list[str], check: list[str], val: list[str],
               ckpt: str, state: dict[str, Any] | None) -> Policy:
        """Search rounds until the deadline; returns the incumbent best on `check`."""
        a = self.args
        sigma = np.full(u0.size, a.sigma)
        es = (CoordinateSearch(u0.copy(), sigma) if a.method == "coordinate"
              else ElitistES(u0.copy(), sigma, pairs=a.pairs))
        if state:
            es.load(state["es"])
            iteration, self.incumbents = state["iteration"], state["incumbents"]
            self.history = state["history"]
        else:
            iteration = 0
            self.start_search(es, pool, cache, space, search, check)
        last, first, shown = 0.0, iteration + 1, -np.inf
        # At least one round, however little budget the trace and cloning left.
        while iteration < first or (time.monotonic() + last < self.deadline
                                    and self.more_rounds(iteration)):
            t = time.monotonic()
            iteration += 1
            row = self.search_round(es, iteration, pool, cache, space, search, check, val)
            # Rounds of replays take milliseconds: report and checkpoint every few seconds.
            if "check_score" in row or time.monotonic() - shown >= a.report_seconds:
                shown = time.monotonic()
                self.log(report.progress_line(row, es.score, self.clock))
                self.checkpoint(ckpt, es, iteration, space.policy(u0))
            last = time.monotonic() - t
        self.checkpoint(ckpt, es, iteration, space.policy(u0))
        chosen = max(self.incumbents, key=lambda c: (c["check"], c["iteration"]))
        self.log(f"chosen: the incumbent of round {chosen['iteration']} (search "
                 f"{chosen['score']:+.5f}, check {chosen['check']:+.5f}); "
                 f"{len(self.incumbents)} incumbents")
        self.chosen = chosen
        return space.policy(np.asarray(chosen["u"]))

    # -- the flip classifier (--method=classifier) ---------------------------------------
    def classifier(self, pool: ep.EpisodePool, cache: ReplayCache, trace: Trace,
                   search: list[str], check: list[str], val: list[str], ckpt: str,
                   state: dict[str, Any] | None) -> Policy:
        """Single flips of the search modules' default trajectories -> a flip classifier
        -> its output bias and an ES on its output layer, scored on the search modules;
        returns the incumbent best on `check` (the default, flipping nothing, is the first
        incumbent)."""
        a = self.args
        flips_path = a.output + ".flips.npz"
        # The trace's default trajectories (the oldest the cache holds, before any play).
        defaults = {m: cache.trajectories[m][-1].rows for m in search}
        if state:
            flips = FlipSet.load(flips_path)
            cspace, _ = classifier_space_of(policy_from_json(state["warm"], "checkpoint"))
        else:
            flips = self.collect_flips(pool, defaults, cache.names, search)
            flips.save(flips_path)
            cspace = None
        if not len(flips.rewards) or not (flips.rewards > 0).any():
            self.log("no single flip shrank its module: the policy is the default")
        t = time.monotonic()
        labels = (flips.rewards > 0).astype(float)
        # Weighted by how much each flip changed its module: the classifier is asked for
        # the flips whose expected reward is positive, not merely likely to be.
        weights = np.abs(flips.rewards) + 1e-3
        if cspace is None:
            fitted = fc.fit(a.problem, flips.names, flips.rows, labels, weights,
                            hidden=a.hidden, l2=a.l2, seed=a.seed)
            cspace, u_fit = fitted.space, fitted.u
        else:
            u_fit = np.asarray(state["u_fit"], float)
        self.clock.times["cloning"] += time.monotonic() - t
        rows = np.concatenate([defaults[m] for m in search])
        cols = [cache.names.index(f) for f in cspace.features]
        rows = rows[:, cols]
        logits = cspace.logits(u_fit, flips.rows[:, [flips.names.index(f) for f in cspace.features]])
        top = np.argsort(-logits)[:max(1, len(logits) // 10)]
        self.log(f"flip classifier: {len(flips.rewards)} single flips of {len(set(flips.modules))} "
                 f"modules, {int(labels.sum())} shrink ({labels.mean():.1%}); on its own "
                 f"training flips the top tenth has {np.mean(flips.rewards[top] > 0):.0%} "
                 f"shrinking, mean reward {np.mean(flips.rewards[top]):+.4f}")
        scale = float(np.std(cspace.logits(u_fit, rows))) or 1.0
        never = u_fit.copy()
        never[-1] = -1e6  # flips nothing anywhere: the default
        self.s0 = -np.inf
        if state:
            iteration, self.incumbents = state["iteration"], state["incumbents"]
            self.history = state["history"]
            es = ElitistES(never.copy(), np.ones(never.size), pairs=a.pairs,
                           sigma_min=0.01 * scale, sigma_max=2.0 * scale)
            es.load(state["es"])
            self.s0 = float(self.incumbents[0]["score"])
        else:
            iteration = 0
            # The first incumbent: flip nothing (exactly the default).
            (s0,), _ = self.score(pool, cache, cspace, [never], search)
            self.s0 = s0
            (c0,), _ = self.score(pool, cache, cspace, [never], check)
            self.incumbents.append({"iteration": 0, "u": never.tolist(), "score": s0,
                                    "check": c0})
            self.history.append({"phase": "warm", "score": s0, "check_score": c0,
                                 "iteration": 0})
            # Output biases flipping given shares of the search modules' decisions.
            rates = [float(r) for r in a.flip_rates.split(",") if r]
            cands = []
            for r in rates:
                u = u_fit.copy()
                u[-1] = fc.bias_for_rate(cspace, u_fit, rows, r)
                cands.append(u)
            scores, table = self.score(pool, cache, cspace, cands, search)
            for r, sc, res in zip(rates, scores, table):
                summ = ep.summarise(res)
                self.log(f"  flip rate {r:.2%}: score {sc:+.5f} (mean reward "
                         f"{summ['reward_mean']:+.5f}, total {summ['total_change'] * 100:+.2f}%)")
            sigma = np.full(never.size, 0.15 * scale)
            # The ES starts from the best output bias even when it loses to the default;
            # only candidates beating the default on the search modules become incumbents.
            k = int(np.argmax(scores))
            es = ElitistES(cands[k].copy(), sigma, pairs=a.pairs, sigma_min=0.01 * scale,
                           sigma_max=2.0 * scale, score=float(scores[k]) - 1e-12)
            iteration = 1
            row = self.record_round(es, iteration, pool, cache, cspace, cands, scores,
                                        table, check, val)
            self.log(report.progress_line(row, es.score, self.clock))
        self.u_fit = u_fit
        warm = cspace.policy(u_fit)
        last, shown = 0.0, -np.inf
        while time.monotonic() + last < self.deadline and self.more_rounds(iteration):
            t = time.monotonic()
            iteration += 1
            cands = es.propose(self.rng)
            scores, table = self.score(pool, cache, cspace, cands, search)
            row = self.record_round(es, iteration, pool, cache, cspace, cands, scores,
                                        table, check, val)
            if "check_score" in row or time.monotonic() - shown >= a.report_seconds:
                shown = time.monotonic()
                self.log(report.progress_line(row, es.score, self.clock))
                self.checkpoint(ckpt, es, iteration, warm)
            last = time.monotonic() - t
        self.checkpoint(ckpt, es, iteration, warm)
        chosen = max(self.incumbents, key=lambda c: (c["check"], -c["iteration"]))
        self.log(f"chosen: the incumbent of round {chosen['iteration']} (search "
                 f"{chosen['score']:+.5f}, check {chosen['check']:+.5f}); "
                 f"{len(self.incumbents)} incumbents")
        self.chosen = chosen
        policy = cspace.policy(np.asarray(chosen["u"]))
        flipped = policy.decisions(rows) != rows[:, cspace.features.index("inlining_default")]
        policy.metadata["search_flip_rate"] = float(flipped.mean())
        policy.metadata["flips"] = {"collected": int(len(flips.rewards)),
                                    "shrinking": int(labels.sum())}
        return policy

    def collect_flips(self, pool: ep.EpisodePool, trajectories: dict[str, np.ndarray],
                      names: list[str], search: list[str]) -> FlipSet:
        a = self.args
        now = time.monotonic()
        stop = now + a.flip_share * max(self.deadline - now, 0.0)
        self.log(f"collecting single flips of {len(search)} search modules' default "
                 f"trajectories for {stop - now:.0f}s")
        seen = {"t": now}

        def progress(done: int, total: int) -> None:
            if time.monotonic() - seen["t"] >= a.report_seconds:
                seen["t"] = time.monotonic()
                self.log(f"  {done} of {total} single flips played "
                         f"({done / (time.monotonic() - now):.2f}/s)")
        t = time.monotonic()
        flips = collect_flips(pool, trajectories, names, search, self.rng,
                              a.flips_per_module, stop, batch=8 * pool.slots,
                              on_batch=progress)
        wall = time.monotonic() - t
        self.clock.played += len(flips.rewards)
        self.clock.times["episodes"] += wall
        self.clock.times["flips"] = wall
        self.history.append({"phase": "flips", "flips": int(len(flips.rewards)),
                             "shrinking": int((flips.rewards > 0).sum()), "seconds": wall})
        return flips

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
        if es.tell(cands, scores) and es.score > floor:
            (row["check_score"],), _ = self.score(pool, cache, cspace, [es.u], check)
            self.incumbents.append({"iteration": iteration, "u": es.u.tolist(),
                                    "score": es.score, "check": row["check_score"]})
        row["best"], row["sigma"] = es.score, float(np.mean(es.sigma))
        if self.args.validate_every and iteration % self.args.validate_every == 0:
            v = ep.summarise(pool.play([(m, ep.policy_decider(cspace.policy(es.u)))
                                        for m in val]))
            row["validation_reward_mean"] = v["reward_mean"]
            row["validation_change"] = v["total_change"]
        self.history.append(row)
        return row

    def start_search(self, es: CoordinateSearch | ElitistES, pool: ep.EpisodePool,
                     cache: ReplayCache, space: MarginSpace, search: list[str],
                     check: list[str]) -> None:
        """Scores the warm start (the first incumbent) on the search and check modules."""
        (es.score,), _ = self.score(pool, cache, space, [es.u], search)
        (check_score,), _ = self.score(pool, cache, space, [es.u], check)
        self.incumbents.append({"iteration": 0, "u": es.u.tolist(), "score": es.score,
                                "check": check_score})
        self.history.append({"phase": "warm", "score": es.score, "check_score": check_score,
                             "iteration": 0})
        self.log(f"warm start: score {es.score:+.5f} on the search modules, "
                 f"{check_score:+.5f} on the check modules")

    def search_round(self, es: CoordinateSearch | ElitistES, iteration: int,
                     pool: ep.EpisodePool, cache: ReplayCache, space: MarginSpace,
                     search: list[str], check: list[str], val: list[str]) -> dict[str, Any]:
        """One round: propose, score on the search modules, tell; a new incumbent is also
        scored on the check modules. Returns the round's history row (also appended)."""
        candidates = es.propose(self.rng)
        scores, table = self.score(pool, cache, space, candidates, search)
        return self.record_round(es, iteration, pool, cache, space, candidates, scores,
                                     table, check, val, floor=-np.inf)

    def checkpoint(self, path: str, es: CoordinateSearch | ElitistES, iteration: int,
                   warm: Policy) -> None:
        """Everything --resume needs (the replay cache is rebuilt from the trace; a flip
        classifier's flips are in OUTPUT.flips.npz)."""
        state = {"es": es.state(), "iteration": iteration, "incumbents": self.incumbents,
                 "history": self.history, "rng": self.rng.bit_generator.state,
                 "warm": warm.to_json(), "method": self.args.method}
        if hasattr(self, "u_fit"):
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
            "replayed": self.clock.replayed})
        save_policy(best, a.output)
        self.history.append({"phase": "validation", **summary})
        report.write_history(a.output + ".history.json", self.history)
        report.plot(a.output + ".png", self.history)
        self.log(f"validation ({len(val)} modules never trained on): default "
                 f"{summary['default_total']:.0f} bytes, policy {summary['policy_total']:.0f} "
                 f"bytes, change {summary['total_change'] * 100:+.2f}%, mean per-module reward "
                 f"{summary['reward_mean']:+.5f}")
        self.log(f"{self.clock.played} episodes played ({self.clock.played / self.clock.elapsed():.2f}"
                 f"/s overall), {self.clock.replayed} replayed; wrote {a.output}")


def _quantiles(rewards: np.ndarray) -> dict[str, float]:
    return {k: float(np.quantile(rewards, q)) for k, q in (("p10", 0.1), ("p50", 0.5),
                                                           ("p90", 0.9))}


def main(argv: Sequence[str] | None = None) -> int:
    problem = argparse.ArgumentParser(add_help=False)
    problem.add_argument("--problem")
    if problem.parse_known_args(argv)[0].problem == "regalloc":
        from .regalloc_train import main as train_regalloc  # its own trainer and options
        return train_regalloc(argv)
    args = parse_args(argv)
    try:
        if args.scheduler and args.remote:
            raise ValueError("--scheduler runs environments on the cluster's workers; "
                             "--remote names a server: give one of them")
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
