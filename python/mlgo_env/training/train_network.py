"""The trainer's network methods (--method=classifier, imitation and residual): a flip
classifier over every traced feature (mlgo_env.policies.flip_classifier) fitted on
counterfactual labels, its output bias tried at several flip rates, then an elitist ES
on its output layer scored on the search modules.

The labels: --method=classifier, single flips of the search modules' default
trajectories (label: the flip shrank its module); --method=imitation, the per-module
best trajectories a greedy search of grouped flips found (label: that decision differs
from clang's default; mlgo_env.tuning.inlining_search).

A round whose candidates were all replays compiled nothing: the search explores then
(a wider ES step and a batch of new counterfactual episodes: new flips, new training
modules, new grouped searches), and the network is refitted once the labels grew by
--refit-growth, the ES restarting from the refitted network's flip rates.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import episodes as ep
from . import train_report as report
from ..policies import flip_classifier as fc
from ..policies.flip_classifier import space_of as classifier_space_of
from ..policies.policy import Policy, policy_from_json
from ..policies.residual_policy import space_of as residual_space_of
from .exploration import Explorer
from .flip_search import FlipSet, collect as collect_flips
from ..tuning.replay import ReplayCache
from .search import ElitistES


@dataclass
class _Network:
    """The network method's moving parts (a refit replaces the network and the ES)."""

    labels: FlipSet
    labels_path: str
    default_rows: np.ndarray  # the search modules' default trajectories, cache order
    cspace: Any
    u_fit: np.ndarray
    es: ElitistES
    iteration: int
    fitted_on: int            # labels the network was fitted on
    since_fit: int = 0        # labels added since


class NetworkMethod:
    """Mixed into mlgo_env.training.train.Trainer (uses its args, clock, log, score,
    record_round, checkpoint)."""

    def network(self, pool: ep.EpisodePool, cache: ReplayCache, search: list[str],
                check: list[str], val: list[str], fresh: list[str], ckpt: str,
                state: dict[str, Any] | None) -> Policy:
        """Labels -> network -> rates -> ES (exploring when idle) until the deadline;
        returns the incumbent best on `check` (the default, flipping nothing, is the first
        incumbent)."""
        a = self.args
        n = self.network_start(pool, cache, search, check, val, state)
        explorer = self.make_explorer(cache, search, fresh, n.labels)
        last, shown, exhausted = 0.0, -np.inf, False
        while time.monotonic() + last < self.deadline and self.more_rounds(n.iteration):
            t = time.monotonic()
            n.iteration += 1
            cands = n.es.propose(self.rng)
            scores, table = self.score(pool, cache, n.cspace, cands, search)
            idle = self.last_compiled == 0
            row = self.record_round(n.es, n.iteration, pool, cache, n.cspace, cands, scores,
                                    table, check, val)
            if idle:
                self.clock.idle_rounds += 1
                new, exhausted = self.explore(pool, explorer, n.es, exhausted)
                if new is not None and len(new.rewards):
                    row["explored"] = int(len(new.rewards))
                    self.add_labels(n, new)
                if n.since_fit >= a.refit_growth * n.fitted_on + 1:
                    self.refit(n, pool, cache, search, check, val)
            if "check_score" in row or time.monotonic() - shown >= a.report_seconds:
                shown = time.monotonic()
                self.log(report.progress_line(row, n.es.score, self.clock))
                self.checkpoint(ckpt, n.es, n.iteration, self.warm)
            last = time.monotonic() - t
        self.checkpoint(ckpt, n.es, n.iteration, self.warm)
        return self.network_result(n, cache, search)

    def network_start(self, pool: ep.EpisodePool, cache: ReplayCache, search: list[str],
                      check: list[str], val: list[str], state: dict[str, Any] | None
                      ) -> "_Network":
        """The labels, the fitted network, the first incumbent and the ES (or all of it
        from a checkpoint)."""
        a = self.args
        labels_path = a.output + ".flips.npz"
        if state:
            labels = FlipSet.load(labels_path)
            self.base_shift = state.get("base_shift")
        else:
            labels = self.collect_labels(pool, cache, search)
            labels.save(labels_path)
        # The trace's default trajectories (the oldest the cache holds, before any play;
        # the cache drops its oldest past 64 per module).
        default_rows = np.concatenate([cache.trajectories[m][-1].rows for m in search])
        residual = a.method == "residual"
        if state:
            warm = policy_from_json(state["warm"], "checkpoint")
            cspace, _ = residual_space_of(warm) if residual else classifier_space_of(warm)
            u_fit = np.asarray(state["u_fit"], float)
        else:
            cspace, u_fit = self.fit_network(labels)
        rows = default_rows[:, [cache.names.index(f) for f in cspace.features]]
        if state:
            iteration, self.incumbents = state["iteration"], state["incumbents"]
            self.history = state["history"]
            scale = float(np.std(cspace.residual(u_fit, rows) if residual
                                 else cspace.logits(u_fit, rows))) or 1.0
            es = ElitistES(u_fit.copy(), np.ones(u_fit.size), pairs=a.pairs,
                           sigma_min=0.01 * scale, sigma_max=2.0 * scale)
            es.load(state["es"])
            self.sigma0 = np.full(u_fit.size, 0.15 * scale)
            self.s0 = float(self.incumbents[0]["score"])
        else:
            never = u_fit.copy()
            never[-1] = -1e6  # flips nothing anywhere: the default
            if residual:  # the network silent: the base constant shift
                never = self.residual_base(cspace, u_fit)
            self.s0 = -np.inf
            (self.s0,), _ = self.score(pool, cache, cspace, [never], search)
            (c0,), _ = self.score(pool, cache, cspace, [never], check, phase="selection")
            base = ({"baseline": f"constant shift {self.base_shift:+g}"} if residual
                    else None)
            self.incumbents.append({"iteration": 0, "u": never.tolist(), "score": self.s0,
                                    "check": c0,
                                    "policy": cspace.policy(never, base).to_json()})
            self.history.append({"phase": "warm", "score": self.s0, "check_score": c0,
                                 "iteration": 0})
            iteration = 1
            es = self.start_es(pool, cache, cspace, u_fit, rows, search, check, val, iteration)
        self.u_fit, self.warm = u_fit, cspace.policy(u_fit)
        return _Network(labels, labels_path, default_rows, cspace, u_fit, es, iteration,
                        len(labels.rewards))

    def add_labels(self, n: "_Network", new: FlipSet) -> None:
        """Explored labels join the set (imitation: a module's labels are its latest
        best trajectory's) and the file."""
        if self.args.method in ("imitation", "residual"):
            n.labels = n.labels.drop(set(new.modules))
        n.labels = n.labels.extend(new)
        n.labels.save(n.labels_path)
        n.since_fit += len(new.rewards)

    def refit(self, n: "_Network", pool: ep.EpisodePool, cache: ReplayCache,
              search: list[str], check: list[str], val: list[str]) -> None:
        """A new network on the grown labels; the ES restarts from its flip rates."""
        n.fitted_on, n.since_fit = len(n.labels.rewards), 0
        n.cspace, n.u_fit = self.fit_network(n.labels)
        rows = n.default_rows[:, [cache.names.index(f) for f in n.cspace.features]]
        self.u_fit, self.warm = n.u_fit, n.cspace.policy(n.u_fit)
        n.iteration += 1
        n.es = self.start_es(pool, cache, n.cspace, n.u_fit, rows, search, check, val,
                             n.iteration)

    def network_result(self, n: "_Network", cache: ReplayCache, search: list[str]) -> Policy:
        """The incumbent best on the check modules, with its flip rate and labels noted."""
        chosen = max(self.incumbents, key=lambda c: (c["check"], -c["iteration"]))
        self.log(f"chosen among the incumbents: round {chosen['iteration']} (search "
                 f"{chosen['score']:+.5f}, check {chosen['check']:+.5f}); "
                 f"{len(self.incumbents)} incumbents")
        self.chosen = chosen
        policy = policy_from_json(chosen["policy"], "incumbent")
        prows = n.default_rows[:, [cache.names.index(f) for f in policy.features]]
        flipped = policy.decisions(prows) != prows[:, policy.features.index("inlining_default")]
        policy.metadata["search_flip_rate"] = float(flipped.mean())
        policy.metadata["labels"] = {"method": self.args.method,
                                     "collected": int(len(n.labels.rewards)),
                                     "positive": int((n.labels.rewards > 0).sum())}
        return policy

    def fit_network(self, labels: FlipSet) -> tuple[Any, np.ndarray]:
        """The flip classifier fitted on `labels` (positive: reward > 0, weighted by how
        much the label's episode changed its module)."""
        a = self.args
        if a.method == "residual":
            return self.fit_residual(labels)
        t = time.monotonic()
        y = (labels.rewards > 0).astype(float)
        fitted = fc.fit(a.problem, labels.names, labels.rows, y,
                        fc.label_weights(labels.rewards), hidden=a.hidden,
                        l2=a.l2, seed=a.seed)
        self.clock.times["fitting"] += time.monotonic() - t
        logits = fitted.space.logits(fitted.u, labels.rows[:, [labels.names.index(f)
                                                               for f in fitted.space.features]])
        if not len(y):
            self.log("network fitted on no label: it flips at random (the rates decide)")
            return fitted.space, fitted.u
        top = np.argsort(-logits)[:max(1, len(logits) // 10)]
        self.log(f"network fitted on {len(y)} labels of {len(set(labels.modules))} modules, "
                 f"{int(y.sum())} positive ({y.mean():.1%}); on its own labels the top tenth "
                 f"has {np.mean(labels.rewards[top] > 0):.0%} positive")
        return fitted.space, fitted.u

    def start_es(self, pool: ep.EpisodePool, cache: ReplayCache, cspace: Any,
                 u_fit: np.ndarray, rows: np.ndarray, search: list[str], check: list[str],
                 val: list[str], iteration: int) -> ElitistES:
        """Scores the fitted network at each --flip-rates output bias; returns an ES
        starting from the best of them (even when it loses to the default: only
        candidates beating the default on the search modules become incumbents)."""
        a = self.args
        if a.method == "residual":
            return self.start_residual_es(pool, cache, cspace, u_fit, rows, search, check,
                                          val, iteration)
        rates = [float(r) for r in a.flip_rates.split(",") if r]
        cands = []
        for r in rates:
            u = u_fit.copy()
            u[-1] = fc.bias_for_rate(cspace, u_fit, rows, r)
            cands.append(u)
        scale = float(np.std(cspace.logits(u_fit, rows))) or 1.0
        return self.es_from_best(pool, cache, cspace, cands, [f"flip rate {r:.2%}" for r in rates],
                                 np.full(u_fit.size, 0.15 * scale), 0.01 * scale, 2.0 * scale,
                                 search, check, val, iteration)

    def es_from_best(self, pool: ep.EpisodePool, cache: ReplayCache, cspace: Any,
                     cands: list[np.ndarray], labels: list[str], sigma0: np.ndarray,
                     sigma_min: float, sigma_max: float, search: list[str], check: list[str],
                     val: list[str], iteration: int) -> ElitistES:
        """Scores the starting candidates on the search modules (a log line each, under
        its label); `sigma0` becomes the starting step exploration widens to; returns an
        ES from the best candidate, that round recorded."""
        scores, table = self.score(pool, cache, cspace, cands, search)
        for label, sc, res in zip(labels, scores, table):
            summ = ep.summarise(res)
            self.log(f"  {label}: score {sc:+.5f} (mean reward "
                     f"{summ['reward_mean']:+.5f}, total {summ['total_change'] * 100:+.2f}%)")
        self.sigma0 = sigma0
        k = int(np.argmax(scores))
        es = ElitistES(cands[k].copy(), sigma0.copy(), pairs=self.args.pairs,
                       sigma_min=sigma_min, sigma_max=sigma_max, score=float(scores[k]) - 1e-12)
        row = self.record_round(es, iteration, pool, cache, cspace, cands, scores, table,
                                check, val)
        self.log(report.progress_line(row, es.score, self.clock))
        return es

    def explore(self, pool: ep.EpisodePool, explorer: Any, es: ElitistES,
                exhausted: bool) -> tuple[FlipSet | None, bool]:
        """After a round of replays only: a wider ES step (four times, at least the
        starting step) and a batch of new counterfactual episodes. Returns the new labels
        and whether the explorer has run dry."""
        es.sigma = np.minimum(np.maximum(es.sigma * 4.0, self.sigma0), es.sigma_max)
        if exhausted:
            return None, True
        t = time.monotonic()
        batch = self.args.explore_batch or 4 * pool.slots
        new, compiled = explorer.step(pool, batch)
        wall = time.monotonic() - t
        self.clock.account(compiled, 0, wall)
        self.clock.explored += len(compiled)
        if new is None:
            self.log("exploration: nothing left to explore (every candidate flip and "
                     "training module played); only wider ES steps from now on")
            return None, True
        return new, False

    # -- labels -----------------------------------------------------------------------
    def collect_labels(self, pool: ep.EpisodePool, cache: ReplayCache,
                       search: list[str]) -> FlipSet:
        if self.args.method == "residual":
            self.base_shift = self.choose_base_shift(pool, cache, search)
        if self.args.method in ("imitation", "residual"):
            return self.collect_imitation(pool, cache, search)
        return self.collect_flips(pool, {m: cache.trajectories[m][-1].rows for m in search},
                                  cache.names, search)

    def make_explorer(self, cache: ReplayCache, search: list[str], fresh: list[str],
                      labels: FlipSet) -> Any:
        if self.args.method in ("imitation", "residual"):
            return self.imitation_explorer(cache, search, fresh)
        # Its own generator: the trainer's stream (checkpointed) stays that of a run
        # that never explored, and a resumed run rebuilds the same queue order.
        rng = np.random.default_rng([self.args.seed, 2])
        return Explorer(self.args.problem, cache, search, fresh, labels, rng)

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
        flips = collect_flips(pool, trajectories, names, search, self.rng,
                              a.flips_per_module, stop, batch=8 * pool.slots,
                              on_batch=progress)
        wall = time.monotonic() - now
        self.clock.played += len(flips.rewards)
        self.clock.times["compiling"] += wall
        self.history.append({"phase": "flips", "flips": int(len(flips.rewards)),
                             "shrinking": int((flips.rewards > 0).sum()), "seconds": wall})
        self.log(f"{len(flips.rewards)} single flips of {len(set(flips.modules))} modules, "
                 f"{int((flips.rewards > 0).sum())} shrink their module")
        return flips
