"""Trains an inlining-for-size policy: behavioural cloning on a default trace, then
antithetic evolution strategies on per-module rewards, judged on held-out modules.

    python -m mlgo_env.train --problem=inlining --corpus=DIR --output=policy.json \\
        --minutes=20 [--workers=2] [--remote=unix:PATH] [--seed=0]

Writes OUTPUT (the policy JSON, see mlgo_env.policy), OUTPUT.warmstart.json (the cloned
policy, before search), OUTPUT.ckpt.npz (resumable with
--resume), OUTPUT.png (learning curve) and OUTPUT.history.json. The minutes budget covers
everything before the final validation (trace, cloning, search); the validation of the
best policy on the held-out modules runs after it and is reported.

The objective is the mean of per-module rewards (1 - policy bytes / default bytes), so
no single large module dominates; the best policy is chosen on a fixed selection subset
of the training modules, never on the validation modules.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, Sequence

import numpy as np

from . import episodes as ep
from . import flip_search
from .learning import (Adam, antithetic_directions, calibrate_sigma, clone, es_gradient,
                       normalise_margin, standardisation)
from .policy import Policy, PolicyError, new_policy, policy_from_json, save_policy
from .trace_log import read_trace
from .training_setup import (SUPPORTED_PROBLEMS, env_factory, find_mlgo_env, run_trace,
                             split_modules)


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
    p.add_argument("--hidden", type=int, default=0,
                   help="tanh hidden units (0: a linear policy, few parameters for ES to search)")
    p.add_argument("--sigma", type=float, default=0.0,
                   help="ES perturbation scale (0: calibrated so a perturbation changes about "
                        "--flip-rate of the traced decisions)")
    p.add_argument("--flip-rate", type=float, default=0.03)
    p.add_argument("--lr", type=float, default=0.05, help="ES Adam step size")
    p.add_argument("--directions", type=int, default=4, help="antithetic pairs per iteration")
    p.add_argument("--batch", type=int, default=16, help="training modules per iteration")
    p.add_argument("--select-modules", type=int, default=32)
    p.add_argument("--select-every", type=int, default=4)
    p.add_argument("--validate-every", type=int, default=0,
                   help="also report the best policy on the validation modules every K "
                        "iterations (report only: never used to choose; 0: at the end only)")
    p.add_argument("--flip-minutes", type=float, default=0.0,
                   help="minutes of counterfactual single-decision search after cloning "
                        "(see mlgo_env.flip_search); 0: none")
    p.add_argument("--flips-per-module", type=int, default=6)
    p.add_argument("--flip-weight", type=float, default=50.0,
                   help="cloning weight of one found improvement, relative to a traced decision")
    p.add_argument("--trace", help="reuse this default trace instead of tracing")
    p.add_argument("--trace-sampling-rate", type=float, default=1.0)
    p.add_argument("--cache-dir")
    p.add_argument("--mlgo-env", help="the mlgo-env executable (for the trace)")
    p.add_argument("--resume", action="store_true", help="continue from OUTPUT.ckpt.npz")
    p.add_argument("--quiet", action="store_true")
    return p.parse_args(argv)


class Trainer:
    """State of one training run; `run` does it all."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.rng = np.random.default_rng(args.seed)
        self.start = time.monotonic()
        self.deadline = self.start + args.minutes * 60.0
        self.history: list[dict[str, Any]] = []
        # "episodes": wall time of evaluation rounds; "clang", "policy": summed over
        # episodes (they overlap across workers); the rest of an episode is host time.
        self.decision_modules: set[str] = set()   # modules known to have decisions
        self.no_decisions: set[str] = set()       # modules known to have none
        self.times = {"episodes": 0.0, "clang": 0.0, "policy": 0.0, "host": 0.0,
                      "trace": 0.0, "cloning": 0.0}
        self.episodes = 0

    def log(self, text: str) -> None:
        if not self.args.quiet:
            print(f"[{time.monotonic() - self.start:7.1f}s] {text}", flush=True)

    # -- phases -------------------------------------------------------------------------
    def warm_start(self, train: list[str]) -> Policy:
        a = self.args
        trace_path = a.trace or a.output + ".trace.log"
        if not a.trace:
            t = time.monotonic()
            self.log(f"tracing the default policy -> {trace_path}")
            run_trace(find_mlgo_env(a.mlgo_env), a.problem, a.corpus, trace_path, a.workers,
                      a.seed, a.trace_sampling_rate, a.cache_dir)
            self.times["trace"] = time.monotonic() - t
        t = time.monotonic()
        trace = read_trace(trace_path)
        keep = np.asarray([c in set(train) for c in trace.contexts], dtype=bool)
        rows, labels = trace.rows[keep], trace.actions[keep]
        if len(labels) == 0:
            raise ValueError("the default trace holds no decision of a training module")
        mean, std = standardisation(rows)
        policy = new_policy(a.problem, trace.feature_names, mean, std, a.hidden, self.rng)
        # Weight the classes equally so the rarer decision is not ignored.
        pos = max(labels.mean(), 1e-6)
        weights = np.where(labels > 0.5, 0.5 / pos, 0.5 / max(1 - pos, 1e-6))
        result = clone(policy, rows, labels, weights, epochs=20, rng=self.rng)
        unweighted = float(((result.policy.logits(rows) > 0) == (labels > 0.5)).mean())
        self.times["cloning"] = time.monotonic() - t
        traced = len({c for c, k in zip(trace.contexts, keep) if k})
        self.log(f"behavioural cloning: {len(labels)} decisions of {traced} training modules, "
                 f"agreement {unweighted:.2%} (loss {result.loss:.4f})")
        result.policy.metadata = {"cloning_agreement": unweighted, "cloning_decisions": len(labels)}
        policy = normalise_margin(result.policy, rows)
        save_policy(policy, a.output + ".warmstart.json")
        self.cloning_data = (rows, labels, weights)
        self.decision_modules = {c for c, k in zip(trace.contexts, keep) if k}
        return policy

    def evaluate(self, pool: ep.EpisodePool, policies: Sequence[Policy], modules: Sequence[str]
                 ) -> list[list[ep.EpisodeResult]]:
        jobs = [(m, ep.policy_decider(p)) for p in policies for m in modules]
        t = time.monotonic()
        results = pool.play(jobs)
        self.no_decisions.update(r.module for r in results if r.steps == 0)
        self.times["episodes"] += time.monotonic() - t
        self.times["policy"] += sum(r.policy_seconds for r in results)
        self.times["clang"] += sum(r.compile_seconds for r in results)
        self.times["host"] += sum(max(r.seconds - r.compile_seconds - r.policy_seconds, 0.0)
                                  for r in results)
        self.episodes += len(results)
        n = len(modules)
        return [results[i * n:(i + 1) * n] for i in range(len(policies))]

    def run(self) -> int:
        a = self.args
        if a.problem not in SUPPORTED_PROBLEMS:
            raise ValueError(f"training supports {', '.join(SUPPORTED_PROBLEMS)}, not "
                             f"'{a.problem}'")
        modules = ep.corpus_modules(a.corpus)
        train, val = split_modules(modules, a.validation_share, a.seed)
        if not train or not val:
            raise ValueError(f"corpus has {len(modules)} modules: too few to split into "
                             "training and validation")
        out_dir = os.path.dirname(os.path.abspath(a.output))
        if not os.access(out_dir, os.W_OK):
            raise ValueError(f"cannot write the policy into '{out_dir}'")
        self.log(f"{len(modules)} modules: {len(train)} training, {len(val)} validation")
        ckpt = a.output + ".ckpt.npz"
        state = self.load_checkpoint(ckpt) if a.resume and os.path.exists(ckpt) else None
        policy = state["policy"] if state else self.warm_start(train)
        # Selection modules: training modules seen making decisions (all, if none were seen).
        candidates = sorted(self.decision_modules) or train
        select = list(self.rng.choice(candidates, size=min(a.select_modules, len(candidates)),
                                      replace=False))
        with ep.EpisodePool(env_factory(a.problem, a.corpus, a.remote, a.cache_dir),
                            a.workers) as pool:
            if not state and a.flip_minutes > 0:
                policy = self.sharpen(pool, policy, train, select)
            best, best_score = self.search(pool, policy, train, select, val, ckpt, state)
            self.log("validating the best policy on the held-out modules")
            val_results = self.evaluate(pool, [best], val)[0]
        summary = ep.summarise(val_results)
        best.metadata.update({
            "trained_minutes": a.minutes, "seed": a.seed,
            "validation_share": a.validation_share, "corpus": os.path.abspath(a.corpus),
            "training_modules": len(train), "validation_modules": len(val),
            "selection_reward_mean": best_score, "validation": summary,
            "episodes": self.episodes})
        save_policy(best, a.output)
        self.history.append({"phase": "validation", **summary})
        self.write_history()
        self.plot()
        self.log(f"validation ({len(val)} modules never trained on): default "
                 f"{summary['default_total']:.0f} bytes, policy {summary['policy_total']:.0f} "
                 f"bytes, change {summary['total_change'] * 100:+.2f}%, mean per-module reward "
                 f"{summary['reward_mean']:+.5f}")
        self.log(f"{self.episodes} episodes, {self.episodes / max(time.monotonic() - self.start, 1e-9):.2f}"
                 f" episodes/s overall; wrote {a.output}")
        return 0

    def sharpen(self, pool: ep.EpisodePool, policy: Policy, train: list[str],
                select: list[str]) -> Policy:
        """Flip search, then a refit with the improvements found, kept only if it does
        better than `policy` on the selection modules."""
        a = self.args
        stop = min(time.monotonic() + a.flip_minutes * 60.0, self.deadline)
        order = [train[i] for i in self.rng.permutation(len(train))]
        flips: list[flip_search.Flip] = []
        at = 0
        while time.monotonic() < stop and at < len(order):
            chunk = order[at:at + 4 * a.workers]
            at += len(chunk)
            t = time.monotonic()
            flips += flip_search.search(pool, policy, chunk, a.flips_per_module, self.rng)
            self.times["episodes"] += time.monotonic() - t
        good = [f for f in flips if f.reward > 0]
        if flips:  # kept for analysis: which single deviations paid off, and where
            np.savez(a.output + ".flips.npz", features=np.stack([f.features for f in flips]),
                     default=np.asarray([f.default for f in flips]),
                     reward=np.asarray([f.reward for f in flips]),
                     module=np.asarray([f.module for f in flips]),
                     names=np.asarray(policy.features))
        self.log(f"flip search: {len(flips)} single flips on {at} modules, {len(good)} improve "
                 f"their module (best {max([f.reward for f in good], default=0):+.4f})")
        if not good:
            return policy
        rows, labels, weights = self.cloning_data
        mean_gain = float(np.mean([f.reward for f in good]))
        rows = np.vstack([rows, np.stack([f.features for f in good])])
        labels = np.concatenate([labels, [1.0 - f.default for f in good]])
        weights = np.concatenate([weights, [a.flip_weight * f.reward / mean_gain for f in good]])
        refit = clone(policy, rows, labels, weights, epochs=20, rng=self.rng).policy
        scores = [ep.summarise(r)["reward_mean"] for r in self.evaluate(pool, [policy, refit], select)]
        self.log(f"refit with the flips: selection reward {scores[1]:+.5f} vs {scores[0]:+.5f}; "
                 f"{'kept' if scores[1] > scores[0] else 'dropped'}")
        self.history.append({"phase": "flips", "found": len(good), "tried": len(flips),
                             "refit_select": scores[1], "warm_select": scores[0]})
        return refit if scores[1] > scores[0] else policy

    def search(self, pool: ep.EpisodePool, policy: Policy, train: list[str],
               select: list[str], val: list[str], ckpt: str, state: dict[str, Any] | None
               ) -> tuple[Policy, float]:
        a = self.args
        theta = policy.flat()
        opt = Adam(theta.size, a.lr)
        iteration = 0
        if state:
            theta, iteration = state["theta"], state["iteration"]
            opt.load(state)
            best, best_score = policy.with_flat(state["best"]), float(state["best_score"])
            self.history = state["history"]
        else:
            best = policy
            best_score = ep.summarise(self.evaluate(pool, [policy], select)[0])["reward_mean"]
            self.history.append({"phase": "select", "iteration": 0, "reward_mean": best_score})
            self.log(f"selection reward of the warm start: {best_score:+.5f}")
        sigma = state["sigma"] if state else a.sigma
        if sigma <= 0:
            rows = self.cloning_data[0] if hasattr(self, "cloning_data") else None
            sigma = (calibrate_sigma(policy, rows[:4000], a.flip_rate, self.rng)
                     if rows is not None and len(rows) else 0.1)
            self.log(f"perturbation scale {sigma:.4f} (changes ~{a.flip_rate:.0%} of decisions)")
        last, first = 0.0, iteration + 1
        # At least one iteration, however little budget the trace and cloning left.
        while iteration < first or time.monotonic() + last < self.deadline:
            t = time.monotonic()
            iteration += 1
            # Modules without any decision score 0 whatever the policy: leave them out once known.
            pool_modules = [m for m in train if m not in self.no_decisions]
            batch = list(self.rng.choice(pool_modules, size=min(a.batch, len(pool_modules)),
                                         replace=False))
            dirs = antithetic_directions(self.rng, a.directions, theta.size)
            candidates = [policy.with_flat(theta + s * sigma * d) for d in dirs for s in (1, -1)]
            results = self.evaluate(pool, candidates, batch)
            means = np.asarray([ep.summarise(r)["reward_mean"] for r in results])
            theta = theta + opt.step(es_gradient(dirs, means[0::2], means[1::2]))
            rewards = np.asarray([r.reward for rs in results for r in rs])
            row = {"phase": "train", "iteration": iteration, "reward_mean": float(rewards.mean()),
                   "p10": float(np.quantile(rewards, 0.1)), "p50": float(np.median(rewards)),
                   "p90": float(np.quantile(rewards, 0.9)), "seconds": time.monotonic() - self.start}
            if iteration % a.select_every == 0:
                current = policy.with_flat(theta)
                score = ep.summarise(self.evaluate(pool, [current], select)[0])["reward_mean"]
                row["select_reward_mean"] = score
                if score > best_score:
                    best, best_score = current, score
            if a.validate_every and iteration % a.validate_every == 0:
                v = ep.summarise(self.evaluate(pool, [best], val)[0])
                row["validation_reward_mean"] = v["reward_mean"]
                row["validation_change"] = v["total_change"]
            self.history.append(row)
            self.progress(row, best_score)
            self.save_checkpoint(ckpt, theta, opt, iteration, best, best_score, sigma)
            last = time.monotonic() - t
        return best, best_score

    # -- reporting and checkpoints --------------------------------------------------------
    def progress(self, row: dict[str, Any], best: float) -> None:
        elapsed = max(time.monotonic() - self.start, 1e-9)
        sel = f" select {row['select_reward_mean']:+.5f}" if "select_reward_mean" in row else ""
        if "validation_change" in row:
            sel += (f" validation: mean {row['validation_reward_mean']:+.5f} total "
                    f"{row['validation_change'] * 100:+.2f}%")
        t = self.times
        spent = (t["clang"] + t["policy"] + t["host"]) or 1e-9
        self.log(f"iter {row['iteration']:4d} reward mean {row['reward_mean']:+.5f} "
                 f"p10/50/90 {row['p10']:+.4f}/{row['p50']:+.4f}/{row['p90']:+.4f}{sel} "
                 f"best {best:+.5f} | {self.episodes / elapsed:.2f} episodes/s | episode time: "
                 f"clang {t['clang'] / spent:.0%} host {t['host'] / spent:.0%} policy "
                 f"{t['policy'] / spent:.0%} | trace {t['trace']:.0f}s cloning {t['cloning']:.0f}s")

    def save_checkpoint(self, path: str, theta: np.ndarray, opt: Adam, iteration: int,
                        best: Policy, best_score: float, sigma: float) -> None:
        tmp = path + ".tmp.npz"
        np.savez(tmp, theta=theta, iteration=iteration, sigma=sigma, best=best.flat(), best_score=best_score,
                 policy=json.dumps(best.to_json()), history=json.dumps(self.history),
                 rng=json.dumps(self.rng.bit_generator.state), **opt.state())
        os.replace(tmp, path)

    def load_checkpoint(self, path: str) -> dict[str, Any]:
        with np.load(path) as z:
            policy = policy_from_json(json.loads(str(z["policy"])), f"checkpoint '{path}'")
            if policy.problem != self.args.problem:
                raise PolicyError(f"checkpoint '{path}' is for problem '{policy.problem}'")
            self.rng.bit_generator.state = json.loads(str(z["rng"]))
            self.log(f"resuming from {path} at iteration {int(z['iteration'])}")
            return {"policy": policy, "theta": z["theta"].copy(), "iteration": int(z["iteration"]),
                    "best": z["best"].copy(), "best_score": float(z["best_score"]),
                    "sigma": float(z["sigma"]),
                    "history": json.loads(str(z["history"])), "adam_m": z["adam_m"].copy(),
                    "adam_v": z["adam_v"].copy(), "adam_t": z["adam_t"]}

    def write_history(self) -> None:
        with open(self.args.output + ".history.json", "w", encoding="utf-8") as f:
            json.dump(self.history, f, indent=1)

    def plot(self) -> None:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        train = [h for h in self.history if h.get("phase") == "train"]
        sel = [h for h in self.history if "select_reward_mean" in h]
        fig, ax = plt.subplots(figsize=(7, 4))
        ax.plot([h["iteration"] for h in train], [h["reward_mean"] for h in train],
                label="training batch: mean per-module reward")
        ax.plot([h["iteration"] for h in sel], [h["select_reward_mean"] for h in sel], "o-",
                label="selection modules")
        ax.axhline(0.0, color="grey", lw=0.8)
        ax.set_xlabel("ES iteration")
        ax.set_ylabel("reward (1 - policy/default bytes)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(self.args.output + ".png", dpi=100)
        plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return Trainer(args).run()
    except (ValueError, PolicyError, FileNotFoundError, RuntimeError) as e:
        print(f"train: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
