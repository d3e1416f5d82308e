"""--method=imitation: labels for the trainer's network from per-module searches.

For --flip-share of the budget left after the trace, each search module gets a greedy
search over grouped flips (mlgo_env.tuning.inlining_search: all call sites of one callee
flipped together, kept when the module shrinks). Every decision of each module's best
trajectory is a label: "flip here" where it differs from clang's default, weighing the
same (--label-weights=uniform) or what its callee's group was worth in bytes of the
module (--label-weights=bytes: a decision whose flip changed nothing teaches almost
nothing). The network of
mlgo_env.training.train_network imitates them; when its ES only replays, the searches go
on (:class:`GroupExplorer`: more groups of the search modules, then training modules the
trace did not sample) and the labels of modules whose best trajectory moved are replaced.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any, Sequence

from .. import episodes as ep
from ..tuning import inlining_search as gf
from .search_labels import imitation_labels
from .flip_search import FlipSet
from ..tuning.replay import ReplayCache


class GroupExplorer:
    """Continues the grouped searches on request (the trainer's explorer for imitation)."""

    def __init__(self, searches: list[gf.ModuleSearch], names: Sequence[str],
                 fresh: Sequence[str], shift: float | None = None,
                 weighted: bool = False) -> None:
        self.searches, self.names, self.shift = searches, list(names), shift
        self.weighted = weighted
        self.fresh = deque(fresh)

    def step(self, pool: ep.EpisodePool, batch: int) -> tuple[FlipSet | None, list]:
        """One greedy round on up to `batch` modules (starting unseen training modules
        when the searching ones run out); returns the labels of the modules whose best
        trajectory moved (None: nothing left) and the results compiled."""
        compiled: list[ep.EpisodeResult] = []
        while sum(1 for s in self.searches if s.queue) < batch and self.fresh:
            take = [self.fresh.popleft() for _ in range(min(len(self.fresh), batch))]
            started, played = gf.start(pool, take, self.names, self.shift)
            self.searches += started
            compiled += played
        compiled += gf.greedy_round(pool, self.searches, self.names, batch)
        if not compiled:
            return None, compiled
        changed = [s for s in self.searches if s.changed]
        for s in changed:
            s.changed = False
        return imitation_labels(changed, self.names, self.weighted), compiled


class ImitationMethod:
    """Mixed into mlgo_env.training.train.Trainer (uses its args, clock, log, history).
    The searches flip clang's default, or, for --method=residual, the constant shift
    `base_shift` (mlgo_env.training.train_residual)."""

    base_shift: float | None = None

    def collect_imitation(self, pool: ep.EpisodePool, cache: ReplayCache,
                          search: list[str]) -> FlipSet:
        a = self.args
        now = time.monotonic()
        stop = now + a.flip_share * max(self.deadline - now, 0.0)
        base = ("clang's default" if self.base_shift is None
                else f"constant shift {self.base_shift:+g}")
        self.log(f"greedy grouped-flip searches from {base} on {len(search)} search modules "
                 f"for {stop - now:.0f}s")
        searches, played = gf.start(pool, search, cache.names, self.base_shift)
        count, seen = len(played), now
        while time.monotonic() < stop:
            results = gf.greedy_round(pool, searches, cache.names)
            if not results:
                break
            count += len(results)
            if time.monotonic() - seen >= a.report_seconds:
                seen = time.monotonic()
                self._report_groups(searches, count, now)
        wall = time.monotonic() - now
        self.clock.played += count
        self.clock.times["compiling"] += wall
        self._report_groups(searches, count, now)
        for s in searches:
            s.changed = False
        self.group_searches = searches
        labels = imitation_labels(searches, cache.names, self.weighted_labels)
        d, b = gf.totals(searches)
        self.history.append({"phase": "groups", "episodes": count, "seconds": wall,
                             "default_bytes": d, "best_bytes": b,
                             "kept": sum(s.kept for s in searches)})
        return labels

    def _report_groups(self, searches: list[gf.ModuleSearch], count: int, since: float
                       ) -> None:
        d, b = gf.totals(searches)
        left = sum(len(s.queue) for s in searches)
        rate = count / max(time.monotonic() - since, 1e-9)
        self.log(f"  grouped flips: {count} episodes ({rate:.2f}/s), "
                 f"{sum(s.kept for s in searches)} groups kept, {left} queued; search modules' "
                 f"best {b / d - 1:+.2%} of their default bytes")

    def imitation_explorer(self, cache: ReplayCache, search: list[str],
                           fresh: list[str]) -> Any:
        searches = getattr(self, "group_searches", None)
        if searches is None:  # resumed: the searches start again from the defaults
            searches = []
            fresh = list(search) + list(fresh)
        return GroupExplorer(searches, cache.names, fresh, self.base_shift,
                             self.weighted_labels)

    @property
    def weighted_labels(self) -> bool:
        """--label-weights=bytes."""
        return self.args.label_weights == "bytes"
