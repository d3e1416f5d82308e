"""Trains a register-allocation (eviction) policy (``--problem=regalloc``): a method
(mlgo_env.training.methods, --method; es: behavioural cloning of the default from a trace,
then antithetic ES on the static cost) searches on fit modules, and the result is chosen
on held-out training modules against the one-number baselines.

    python -m mlgo_env.train --problem=regalloc --corpus=DIR --output=policy.json \\
        --minutes=20 [--workers=2 | --scheduler=ADDRESS|local[:N]] [--seed=0]

1. The corpus is split by a seeded hash of module names (--validation-share, as for
   inlining); validation modules are played once, after the budget, to report.
2. `mlgo-env trace --problem=regalloc` records the default's decisions (the host's emulation
   of clang's eviction advisor) on a sample of the corpus (--trace-sampling-rate; --trace
   reuses one; at most CLONE_DECISIONS decisions per module are kept). The training
   modules that decided anything are cut, by a seeded shuffle, into *check* modules
   (--check-modules, among those with at most --check-max-decisions traced decisions, to
   bound the time a check takes; with --check-packages only modules of those packages
   check, and no module of them is fitted or searched) and *fit* modules (the rest).
3. The method's fit (es: cloning, and the anchored start) on the fit modules' decisions.
4. The search: each round plays the method's candidates on --batch-modules fit modules
   (the same modules for every candidate of a round; fit modules with more than
   MAX_DECISIONS traced decisions are left out to bound a round), scored by
   ``(1 - --total-weight) * mean per-module reward + --total-weight * total reduction``
   (the reward: 1 - policy cost / default cost, the environment's regalloc reward). Every
   CHECK_EVERY rounds, and at the end, the current point is scored on the check modules.
5. Selection on the check modules: the fit's policies and the search's points against the
   default (score 0), the emulation and the one-number policies
   (mlgo_env.training.regalloc_baselines). A learned policy is chosen only when it beats
   all of them there; otherwise the best of the baselines is, and the log says so (when
   that is the default itself, which no policy file can express, the file holds the
   best-scoring policy-file candidate and its metadata says ``"chosen": "default"``).

Writes OUTPUT (a version-3 policy, decision "argmax-masked"), what the method writes (es:
OUTPUT.clone.json), OUTPUT.history.json and OUTPUT.trace.log (+ .csv). The minutes budget
covers everything before the validation, which runs after it.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .. import episodes as ep
from ..cluster import TaskFailed, TaskRunner
from ..cluster.trace import run_trace
from ..cluster.tasks import evaluate_task
from ..policies.policy import Policy, save_policy
from . import methods
from . import regalloc_anchor as ra
from . import regalloc_baselines as rbl
from . import regalloc_cloning as rc
from .module_sets import package_of
from .search import objective
from .training_setup import find_mlgo_env, training_split

#: at most this many traced decisions per module are loaded (for cloning)
CLONE_DECISIONS = 2000
#: the search plays fit modules with at most this many traced decisions
MAX_DECISIONS = 1500
#: the current point is checked every this many search rounds
CHECK_EVERY = 4


@dataclass
class Candidate:
    """A policy scored on the check modules (policy None: the default)."""

    name: str
    policy: Policy | None
    check: float
    summary: dict[str, float]
    learned: bool


class RegallocTrainer:
    """One regalloc training run: `run` does it all, with the method it holds
    (mlgo_env.training.methods) fitting the start and proposing what to play. Not
    thread-safe."""

    problem = "regalloc"
    #: its defaults of the common options
    option_defaults = {"check_modules": 12}

    @staticmethod
    def add_arguments(group: Any) -> None:
        """The regalloc trainer's options (besides the common ones and the method's)."""
        group.add_argument("--batch-modules", type=int, default=6,
                           help="fit modules each search round plays")
        group.add_argument("--check-max-decisions", type=int, default=0,
                           help="check modules have at most this many traced decisions (0: "
                                f"{MAX_DECISIONS}, as the searched ones); hot modules are "
                                "the big ones")

    def __init__(self, args: argparse.Namespace, runner: TaskRunner | None = None) -> None:
        self.args = args
        self.method = methods.method_class(args.problem, args.method)(args)
        self.runner = runner
        self.rng = np.random.default_rng(args.seed)
        self.start = time.monotonic()
        self.deadline = self.start + args.minutes * 60.0
        self.history: list[dict[str, Any]] = []
        self.played = 0
        self.episode_seconds = 0.0

    def log(self, text: str) -> None:
        if not self.args.quiet:
            print(f"[{time.monotonic() - self.start:7.1f}s] {text}", flush=True)

    def left(self) -> float:
        return self.deadline - time.monotonic()

    # -- episodes -------------------------------------------------------------------------
    def play(self, policies: Sequence[Policy], modules: Sequence[str]
             ) -> list[list[ep.EpisodeResult]]:
        """Every policy on every module, all as one batch of tasks; results per policy in
        module order. Raises TaskFailed naming the modules that failed."""
        jobs = [(m, p) for p in policies for m in modules]
        t = time.monotonic()
        outcomes = self.runner.map(evaluate_task, jobs, [m for m, _ in jobs])
        failed = [o for o in outcomes if not isinstance(o, ep.EpisodeResult)]
        if failed:
            raise TaskFailed(failed)
        self.played += len(jobs)
        self.episode_seconds += time.monotonic() - t
        n = len(modules)
        return [outcomes[i * n:(i + 1) * n] for i in range(len(policies))]

    def score(self, results: Sequence[ep.EpisodeResult]) -> float:
        return objective(results, self.args.total_weight)

    # -- phases ---------------------------------------------------------------------------
    def trace(self) -> str:
        a = self.args
        if a.trace:
            return a.trace
        path = a.output + ".trace.log"
        t = time.monotonic()
        self.log(f"tracing the default on {a.trace_sampling_rate:.0%} of the corpus -> {path}")
        summary = run_trace(self.runner, find_mlgo_env(a.mlgo_env), "regalloc", a.corpus, path,
                            a.seed, a.trace_sampling_rate, a.cache_dir)
        self.log(f"trace: {summary.observations} decisions of {summary.modules} modules in "
                 f"{time.monotonic() - t:.0f} s")
        return path

    def split_decisions(self, trace: str, train: list[str]
                        ) -> tuple[rc.Decisions, rc.Decisions, dict[str, int]]:
        """(fit decisions, check decisions, traced decisions per training module). Check
        modules: traced training modules with at most --check-max-decisions decisions, of
        --check-packages when given (whose modules are then never fitted or searched), a
        seeded sample of --check-modules of them."""
        a = self.args
        d = rc.load_decisions(trace, train, CLONE_DECISIONS, self.rng)
        counts = dict(d.counts)
        packages = {p for p in a.check_packages.split(",") if p}
        unknown = packages - {package_of(m) for m in train}
        if unknown:
            raise ValueError(f"--check-packages: the corpus has no training module of "
                             f"{', '.join(sorted(unknown))}")
        limit = a.check_max_decisions or MAX_DECISIONS
        pool = sorted(m for m in train if 0 < counts.get(m, 0) <= limit
                      and (not packages or package_of(m) in packages))
        fitting = sorted(m for m in train if 0 < counts.get(m, 0) <= MAX_DECISIONS
                         and package_of(m) not in packages)
        if (len(pool) < 1 or len(fitting) < 2) if packages else len(pool) < 3:
            raise ValueError(f"the trace holds decisions of {len(pool)} training module(s) "
                             f"that may check and {len(fitting)} that may be searched within "
                             "the decision limits; at least 3 are needed, one of them to check "
                             "(raise --trace-sampling-rate?)")
        pick = np.random.default_rng([a.seed, 1])
        order = [pool[i] for i in pick.permutation(len(pool))]
        share = len(order) if packages else max(1, len(order) // 3)
        check = set(order[:max(1, min(a.check_modules, share))])
        in_check = np.asarray([m in check for m in d.modules], dtype=bool)
        in_packages = np.asarray([package_of(m) in packages for m in d.modules], dtype=bool)
        return d.subset(~in_check & ~in_packages), d.subset(in_check), counts

    def reference(self, check: list[str]) -> list[Candidate]:
        """The default, the one-number policies, the emulation and the method's fitted
        policies (es: the clone, the anchored start) on the check modules."""
        fitted = self.method.learned_starts()
        named = rbl.one_number_policies() + [("emulation", ra.emulation_policy())] + fitted
        learned = {name for name, _ in fitted}
        table = self.play([p for _, p in named], check)
        out = [Candidate("default", None, 0.0,
                         ep.summarise(rbl.default_results(table[0])), False)]
        for (name, policy), results in zip(named, table):
            out.append(Candidate(name, policy, self.score(results), ep.summarise(results),
                                 name in learned))
        for c in out:
            self.log_candidate(c)
        return out

    def log_candidate(self, c: Candidate) -> None:
        s = c.summary
        self.log(f"check: {c.name:<26} score {c.check:+.5f}, total change "
                 f"{s['total_change'] * 100:+.2f}%, mean per-module reward {s['reward_mean']:+.5f}")
        self.history.append({"phase": "check", "name": c.name, "score": c.check, **s})

    def search(self, search: list[str], check: list[str], check_seconds: float
               ) -> list[Candidate]:
        """The method's rounds until the budget (keeping time for a last check) or
        --rounds; the current point is checked every CHECK_EVERY rounds and at the end."""
        a, m = self.args, self.method
        found: list[Candidate] = []
        round_seconds = 0.0
        while not a.rounds or m.rounds() < a.rounds:
            if self.left() < round_seconds + check_seconds:
                break
            t = time.monotonic()
            batch = [search[i] for i in self.rng.permutation(len(search))[:a.batch_modules]]
            candidates = m.propose(self.rng)
            if not candidates:
                break
            table = self.play([m.policy(c) for c in candidates], batch)
            scores = [self.score(r) for r in table]
            m.tell(candidates, scores)
            round_seconds = time.monotonic() - t
            self.history.append({"phase": "es", "round": m.rounds(), "scores": scores,
                                 "move": m.moved, "seconds": round_seconds})
            self.log(f"ES round {m.rounds()}: {len(batch)} modules, candidates "
                     f"{min(scores):+.5f}..{max(scores):+.5f} (mean {np.mean(scores):+.5f}), "
                     f"moved {m.moved:.4f} in {round_seconds:.0f} s")
            if m.rounds() % CHECK_EVERY == 0:
                found.append(self.check_point(check))
        if m.rounds() % CHECK_EVERY and m.rounds():
            found.append(self.check_point(check))
        return found

    def check_point(self, check: list[str]) -> Candidate:
        m = self.method
        policy = m.policy(m.incumbent()[0])
        policy.metadata["es_round"] = m.rounds()
        (results,) = self.play([policy], check)
        c = Candidate(f"ES round {m.rounds()}", policy, self.score(results),
                      ep.summarise(results), True)
        self.log_candidate(c)
        return c

    def run(self) -> int:
        a = self.args
        train, val = training_split(a, self.log)
        fit, held, counts = self.split_decisions(self.trace(), train)
        check = sorted(set(held.modules))
        search = sorted(m for m in set(fit.modules) if counts[m] <= MAX_DECISIONS)
        self.log(f"cloning on {len(set(fit.modules))} training modules; ES on the {len(search)} "
                 f"of them with at most {MAX_DECISIONS} decisions, check on {len(check)}")
        self.method.fit(self, (fit, held))
        t = time.monotonic()
        candidates = self.reference(check)
        # every candidate but the default played the check modules once
        check_seconds = (time.monotonic() - t) / (len(candidates) - 1)
        candidates += self.search(search, check, check_seconds)
        chosen, note = choose(candidates)
        self.log(note)
        return self.finish(chosen, note, train, val, search, check)

    def finish(self, chosen: Candidate, note: str, train: list[str], val: list[str],
               search: list[str], check: list[str]) -> int:
        a = self.args
        policy = chosen.policy
        assert policy is not None
        policy.metadata.update({
            "chosen": chosen.name,
            "selection": note, "check_score": chosen.check, "trained_minutes": a.minutes,
            "seed": a.seed, "validation_share": a.validation_share,
            "corpus": os.path.abspath(a.corpus), "training_modules": len(train),
            "validation_modules": len(val), "search_modules": len(search),
            "check_modules": len(check), "total_weight": a.total_weight,
            "episodes": self.played})
        self.log(f"validating the chosen policy on the {len(val)} held-out modules")
        (results,) = self.play([policy], val)
        s = ep.summarise(results)
        policy.metadata["validation"] = s
        self.history.append({"phase": "validation", **s})
        self.log(f"validation ({len(val)} modules never trained on): default "
                 f"{s['default_total']:.1f}, policy {s['policy_total']:.1f}, change "
                 f"{s['total_change'] * 100:+.2f}%, mean per-module reward "
                 f"{s['reward_mean']:+.5f}")
        save_policy(policy, a.output)
        with open(a.output + ".history.json", "w", encoding="utf-8") as f:
            json.dump(self.history, f, indent=1)
        self.log(f"{self.played} episodes ({self.played / max(self.episode_seconds, 1e-9):.2f}/s "
                 f"while playing); wrote {a.output}")
        return 0


def choose(candidates: Sequence[Candidate]) -> tuple[Candidate, str]:
    """The learned candidate scoring best on the check modules when it beats the default
    and every one-number policy there; else the best of those. Returns it and a sentence
    saying which and why. A default choice is carried by the best policy-file candidate
    (its `name` stays "default")."""
    learned = [c for c in candidates if c.learned]
    references = [c for c in candidates if not c.learned]
    best_ref = max(references, key=lambda c: c.check)
    best_learned = max(learned, key=lambda c: c.check) if learned else None
    if best_learned is not None and best_learned.check > best_ref.check:
        return best_learned, (f"chosen: {best_learned.name} (check score "
                              f"{best_learned.check:+.5f}; best reference {best_ref.name} "
                              f"{best_ref.check:+.5f})")
    what = (f"no learned policy beat the default and the one-number policies on the check "
            f"modules (best learned: {best_learned.name} {best_learned.check:+.5f}); "
            if best_learned else "no learned policy; ")
    if best_ref.policy is not None:
        return best_ref, what + f"returning the best of those: {best_ref.name} ({best_ref.check:+.5f})"
    carrier = max((c for c in candidates if c.policy is not None), key=lambda c: c.check)
    chosen = Candidate("default", carrier.policy, best_ref.check, best_ref.summary, False)
    return chosen, what + ("the best of those is the default itself, which no policy file "
                           f"expresses: the file holds the best policy-file candidate, "
                           f"{carrier.name} ({carrier.check:+.5f}); deploy no policy to get "
                           "the default")
