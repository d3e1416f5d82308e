"""Trains a register-allocation (eviction) policy: behavioural cloning of the default from a
trace, then antithetic ES on the static cost, chosen on held-out training modules.

    python -m mlgo_env.train --problem=regalloc --corpus=DIR --output=policy.json \\
        --minutes=20 [--workers=2 | --scheduler=ADDRESS|local[:N]] [--seed=0]

1. The corpus is split by a seeded hash of module names (--validation-share, as for
   inlining); validation modules are played once, after the budget, to report.
2. `mlgo-env trace --problem=regalloc` records the default's decisions (the host's emulation
   of clang's eviction advisor) on a sample of the corpus (--trace-sampling-rate; --trace
   reuses one). The training modules that decided anything are cut, by a seeded shuffle,
   into *check* modules (--check-modules, among those with at most --check-max-decisions
   traced decisions, to bound the time a check takes; with --check-packages only modules
   of those packages check, and no module of them is fitted or searched) and *fit*
   modules (the rest).
3. Cloning (mlgo_env.training.regalloc_cloning): a per-candidate scoring network (every
   per-candidate feature and progress, standardised, --hidden tanh units, one logit per
   candidate) fitted by masked-softmax cross-entropy to the fit modules' decisions (at most
   --clone-decisions per module). It starts exactly at the "lowest use_def_density" rule
   (one unit monotone in it, the others silent) and keeps the step whose agreement with
   the default is highest on a fifth of the fit modules (early stopping). Its agreement is
   reported on the check modules' decisions, which it never saw.
4. The start (--start). ``emulation`` (the default): the clone anchored on the host's
   emulation of the default (mlgo_env.training.regalloc_anchor): one more input, the
   ``host-emulation-v2`` feature, with a bonus that keeps the emulation's choice except on
   --departures of the fit decisions (where the clone disagrees most); the emulation is
   exact wherever the observation shows the spill weights, the clone is not. ``clone``:
   the clone itself.
   ES (mlgo_env.training.antithetic_es) over all the start's parameters: each round plays
   --pairs mirrored perturbations on --batch-modules fit modules (the same modules for
   every candidate of a round; fit modules with more than --max-decisions traced
   decisions are left out to bound a round), scored by
   ``(1 - --total-weight) * mean per-module reward + --total-weight * total reduction``
   (the reward: 1 - policy cost / default cost, the environment's regalloc reward).
   From an anchored start the perturbation scale is narrowed until perturbed starts stay
   within twice --departures of the emulation. Every --check-every rounds, and at the
   end, the current point is scored on the check modules.
5. Selection on the check modules: the clone, the anchored start and the ES points
   against the default (score 0), the emulation and the one-number policies
   (mlgo_env.training.regalloc_baselines). A learned
   policy is chosen only when it beats all of them there; otherwise the best of the
   baselines is, and the log says so (when that is the default itself, which no policy file
   can express, the file holds the best-scoring policy-file candidate and its metadata
   says ``"chosen": "default"``).

Writes OUTPUT (a version-3 policy, decision "argmax-masked"), OUTPUT.clone.json,
OUTPUT.history.json and OUTPUT.trace.log (+ .csv). The minutes budget covers everything
before the validation, which runs after it (--no-validation skips it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .. import episodes as ep
from ..cluster import TaskFailed, TaskRunner, open_runner
from ..cluster.trace import run_trace
from ..cluster.tasks import evaluate_task
from ..policies.policy import Policy, PolicyError, save_policy
from ..trace_log import TraceError
from . import regalloc_anchor as ra
from . import regalloc_args
from . import regalloc_baselines as rbl
from . import regalloc_cloning as rc
from .antithetic_es import AntitheticES
from .module_sets import package_of
from .search import objective
from .training_setup import (check_placement, env_factory, find_mlgo_env, scratch_dir,
                             split_modules)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The trainer's options (mlgo_env.training.regalloc_args), this module's doc as help."""
    return regalloc_args.parse(argv, __doc__)


@dataclass
class Candidate:
    """A policy scored on the check modules (policy None: the default)."""

    name: str
    policy: Policy | None
    check: float
    summary: dict[str, float]
    learned: bool


class RegallocTrainer:
    """State of one run; `run` does it all. Not thread-safe."""

    def __init__(self, args: argparse.Namespace, runner: TaskRunner) -> None:
        self.args = args
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
        d = rc.load_decisions(trace, train, a.clone_decisions, self.rng)
        counts = dict(d.counts)
        packages = {p for p in a.check_packages.split(",") if p}
        unknown = packages - {package_of(m) for m in train}
        if unknown:
            raise ValueError(f"--check-packages: the corpus has no training module of "
                             f"{', '.join(sorted(unknown))}")
        limit = a.check_max_decisions or a.max_decisions
        pool = sorted(m for m in train if 0 < counts.get(m, 0) <= limit
                      and (not packages or package_of(m) in packages))
        fitting = sorted(m for m in train if 0 < counts.get(m, 0) <= a.max_decisions
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

    def clone(self, fit: rc.Decisions, held: rc.Decisions) -> Policy:
        """Cloning on the fit modules' decisions: a fifth of those modules (seeded) choose
        when to stop; agreement is then reported on the check modules' decisions."""
        a = self.args
        t = time.monotonic()
        names = sorted(set(fit.modules))
        stop = set(names[i] for i in np.random.default_rng([a.seed, 2]).permutation(
            len(names))[:max(1, len(names) // 5)]) if len(names) > 1 else set()
        in_stop = np.asarray([m in stop for m in fit.modules], dtype=bool)
        budget = time.monotonic() + max(10.0, 0.15 * self.left())
        result = rc.fit(fit.subset(~in_stop), a.hidden, self.rng, steps=a.clone_steps,
                        deadline=lambda: time.monotonic() > budget, held=fit.subset(in_stop))
        held_agreement = rc.agreement(result.policy, held)
        rule = rbl.one_number_policy("", "use_def_density", -1.0)
        result.policy.metadata.update({
            "cloning_decisions": len(fit), "cloning_agreement": rc.agreement(result.policy, fit),
            "cloning_steps": result.steps, "check_decisions": len(held),
            "check_agreement": held_agreement,
            "check_agreement_lowest_use_def_density": rc.agreement(rule, held)})
        m = result.policy.metadata
        self.log(f"behavioural cloning: {len(fit)} decisions of {len(names)} fit modules "
                 f"({len(stop)} of them to stop on), best at step {result.steps} "
                 f"({time.monotonic() - t:.0f} s); agrees with the default on "
                 f"{m['cloning_agreement']:.2%} of the fit decisions and on "
                 f"{held_agreement:.2%} of {len(held)} decisions of {len(set(held.modules))} "
                 f"held-out check modules (the lowest-use_def_density rule: "
                 f"{m['check_agreement_lowest_use_def_density']:.2%})")
        save_policy(result.policy, self.args.output + ".clone.json")
        return result.policy

    def anchor(self, clone: Policy, fit: rc.Decisions, held: rc.Decisions,
               scale: float) -> tuple[Policy, float]:
        """The clone anchored on the emulation (regalloc_anchor), departing from it on
        --departures of the fit decisions, and its ES perturbation scale (`scale` narrowed
        by ra.calibrated_scale); logs its agreement with the emulation on the fit and the
        check modules' decisions."""
        a = self.args
        start, bonus = ra.anchored(clone, fit, a.departures)
        fit = ra.with_emulation(fit)   # one copy of the fit rows, for both uses below
        held_agreement = rc.agreement(start, ra.with_emulation(held))
        start.metadata["anchor_check_agreement"] = held_agreement
        self.log(f"anchored on the emulation: bonus {bonus:.4f}, agrees with it on "
                 f"{rc.agreement(start, fit):.2%} of the fit decisions and "
                 f"{held_agreement:.2%} of the check modules' decisions")
        scale = ra.calibrated_scale(start, fit, scale, a.departures, self.rng)
        self.log(f"ES perturbation scale {scale:.5f} (calibrated: perturbed starts depart "
                 f"from the emulation on at most {2 * a.departures:.1%} of the fit decisions "
                 "on average)")
        return start, scale

    def reference(self, clone: Policy, start: Policy | None, check: list[str]
                  ) -> list[Candidate]:
        """The default, the one-number policies, the emulation, the clone and the ES start
        (when not the clone) on the check modules."""
        named = rbl.one_number_policies() + [("emulation", ra.emulation_policy()),
                                             ("clone", clone)]
        if start is not None:
            named.append(("anchored start", start))
        learned = {"clone", "anchored start"}
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

    def es(self, clone: Policy, search: list[str], check: list[str],
           check_seconds: float, scale: float) -> list[Candidate]:
        """ES rounds from `clone` (the start) with perturbations of `scale` until the
        budget (keeping time for a last check) or --rounds."""
        a = self.args
        theta0 = clone.flat()
        es = AntitheticES(theta0.copy(), scale, scale * a.step, a.pairs)
        found: list[Candidate] = []
        round_seconds = 0.0
        while not a.rounds or es.rounds < a.rounds:
            if self.left() < round_seconds + check_seconds:
                break
            t = time.monotonic()
            batch = [search[i] for i in self.rng.permutation(len(search))[:a.batch_modules]]
            candidates = es.propose(self.rng)
            table = self.play([clone.with_flat(c) for c in candidates], batch)
            scores = [self.score(r) for r in table]
            moved = es.tell(scores)
            round_seconds = time.monotonic() - t
            self.history.append({"phase": "es", "round": es.rounds, "scores": scores,
                                 "move": moved, "seconds": round_seconds})
            self.log(f"ES round {es.rounds}: {len(batch)} modules, candidates "
                     f"{min(scores):+.5f}..{max(scores):+.5f} (mean {np.mean(scores):+.5f}), "
                     f"moved {moved:.4f} in {round_seconds:.0f} s")
            if es.rounds % a.check_every == 0:
                found.append(self.check_point(clone, es, check))
        if es.rounds % a.check_every and es.rounds:
            found.append(self.check_point(clone, es, check))
        return found

    def check_point(self, clone: Policy, es: AntitheticES, check: list[str]) -> Candidate:
        policy = clone.with_flat(es.theta)
        policy.metadata["es_round"] = es.rounds
        (results,) = self.play([policy], check)
        c = Candidate(f"ES round {es.rounds}", policy, self.score(results),
                      ep.summarise(results), True)
        self.log_candidate(c)
        return c

    def run(self) -> int:
        a = self.args
        modules = ep.corpus_modules(a.corpus)
        train, val = split_modules(modules, a.validation_share, a.seed)
        if not train or not val:
            raise ValueError(f"corpus has {len(modules)} modules: too few to split into "
                             "training and validation")
        if not os.access(os.path.dirname(os.path.abspath(a.output)), os.W_OK):
            raise ValueError(f"cannot write the policy into '{os.path.dirname(a.output)}'")
        self.log(f"{len(modules)} modules: {len(train)} training, {len(val)} validation")
        fit, held, counts = self.split_decisions(self.trace(), train)
        check = sorted(set(held.modules))
        search = sorted(m for m in set(fit.modules) if counts[m] <= a.max_decisions)
        self.log(f"cloning on {len(set(fit.modules))} training modules; ES on the {len(search)} "
                 f"of them with at most {a.max_decisions} decisions, check on {len(check)}")
        clone = self.clone(fit, held)
        scale = float(np.sqrt(np.mean(clone.flat() ** 2))) * a.sigma
        start = None
        if a.start == "emulation":
            start, scale = self.anchor(clone, fit, held, scale)
        t = time.monotonic()
        candidates = self.reference(clone, start, check)
        # every candidate but the default played the check modules once
        check_seconds = (time.monotonic() - t) / (len(candidates) - 1)
        candidates += self.es(start or clone, search, check, check_seconds, scale)
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
        if not a.no_validation:
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


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        check_placement(args.scheduler, args.remote)
        make = env_factory("regalloc", args.corpus, args.remote, args.cache_dir,
                           scratch_dir(args.temp_dir, args.remote))
        with open_runner(args.scheduler, make, args.workers, args.corpus) as runner:
            return RegallocTrainer(args, runner).run()
    except (ValueError, PolicyError, FileNotFoundError, RuntimeError, TraceError) as e:
        print(f"train: error: {e}", file=sys.stderr)
        return 2
