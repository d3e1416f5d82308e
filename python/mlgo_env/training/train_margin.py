"""The trainer's margin methods (--method=coordinate and --method=es): a search over the
(shift, w) vector of the margin policy (mlgo_env.policies.margin_policy) from the
behavioural-cloning warm start, scored on the search modules.

A round whose candidates were all replays compiled nothing: the step is widened (four
times, at least --sigma) before the next round.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .. import episodes as ep
from . import train_report as report
from ..policies.margin_policy import MarginSpace
from ..policies.policy import Policy, policy_from_json
from ..tuning.replay import ReplayCache
from .search import CoordinateSearch, ElitistES


class MarginMethod:
    """Mixed into mlgo_env.training.train.Trainer (uses its args, clock, log, score,
    record_round, checkpoint)."""

    def margin_search(self, pool: ep.EpisodePool, cache: ReplayCache, space: MarginSpace,
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
            candidates = es.propose(self.rng)
            scores, table = self.score(pool, cache, space, candidates, search)
            idle = self.last_compiled == 0
            row = self.record_round(es, iteration, pool, cache, space, candidates, scores,
                                    table, check, val, floor=-np.inf)
            if idle:  # nothing compiled: a wider step
                self.clock.idle_rounds += 1
                es.sigma = np.minimum(np.maximum(es.sigma * 4.0, a.sigma), es.sigma_max)
            # Rounds of replays take milliseconds: report and checkpoint every few seconds.
            if "check_score" in row or time.monotonic() - shown >= a.report_seconds:
                shown = time.monotonic()
                self.log(report.progress_line(row, es.score, self.clock))
                self.checkpoint(ckpt, es, iteration, space.policy(u0))
            last = time.monotonic() - t
        self.checkpoint(ckpt, es, iteration, space.policy(u0))
        chosen = max(self.incumbents, key=lambda c: (c["check"], c["iteration"]))
        self.log(f"chosen among the incumbents: round {chosen['iteration']} (search "
                 f"{chosen['score']:+.5f}, check {chosen['check']:+.5f}); "
                 f"{len(self.incumbents)} incumbents")
        self.chosen = chosen
        return policy_from_json(chosen["policy"], "incumbent")

    def start_search(self, es: CoordinateSearch | ElitistES, pool: ep.EpisodePool,
                     cache: ReplayCache, space: MarginSpace, search: list[str],
                     check: list[str]) -> None:
        """Scores the warm start (the first incumbent) on the search and check modules."""
        (es.score,), _ = self.score(pool, cache, space, [es.u], search)
        (check_score,), _ = self.score(pool, cache, space, [es.u], check, phase="selection")
        self.incumbents.append({"iteration": 0, "u": es.u.tolist(), "score": es.score,
                                "check": check_score, "policy": space.policy(es.u).to_json()})
        self.history.append({"phase": "warm", "score": es.score, "check_score": check_score,
                             "iteration": 0})
        self.log(f"warm start: score {es.score:+.5f} on the search modules, "
                 f"{check_score:+.5f} on the check modules")
