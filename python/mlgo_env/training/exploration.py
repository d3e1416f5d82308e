"""What the trainer compiles when its search only replays.

A search round whose candidates all decide, on every search module, as some recorded
trajectory did costs no compile (mlgo_env.tuning.replay): it learns nothing new, and
a search that keeps proposing such candidates idles. :class:`Explorer` holds the
counterfactual episodes not played yet and plays a batch of them on request:

- single flips of the search modules' default trajectories that the first collection
  left out (mlgo_env.training.flip_search.candidate_steps, in random order);
- training modules the default trace did not sample: their default episode is played
  once (and kept in the replay cache), then their single flips join the queue.

Each batch returns the new labels as a FlipSet (the flip classifier is refitted on the
grown set). The queue is bounded by the modules' decisions; once it is empty, `step`
returns None and the trainer says so.
"""

from __future__ import annotations

from collections import deque
from typing import Sequence

import numpy as np

from .. import episodes as ep
from ..tuning.baselines import shift_policy
from .flip_search import FlipSet, candidate_steps, step_flipper
from ..tuning.replay import ReplayCache


class Explorer:
    """A queue of unplayed single flips and unseen training modules (see the module)."""

    def __init__(self, problem: str, cache: ReplayCache, search: Sequence[str],
                 fresh: Sequence[str], tried: FlipSet, rng: np.random.Generator) -> None:
        self.problem, self.cache, self.rng = problem, cache, rng
        self.names = list(cache.names)
        self.col = self.names.index("inlining_default")
        done = set(zip(tried.modules, tried.steps.tolist()))
        self.queue: deque[tuple[str, int, np.ndarray]] = deque()
        for m in search:
            self._enqueue(m, cache.trajectories[m][-1].rows, done)
        self.fresh = deque(fresh[i] for i in rng.permutation(len(fresh)))
        self.modules_added = 0

    def _enqueue(self, module: str, rows: np.ndarray, done: set) -> None:
        steps = [int(s) for s in candidate_steps(rows, self.names) if (module, int(s)) not in done]
        jobs = [(module, s, rows[s]) for s in steps]
        # Interleaved with what is queued, so one big module does not fill a batch.
        merged = list(self.queue) + jobs
        self.queue = deque(merged[i] for i in self.rng.permutation(len(merged)))

    def pending(self) -> int:
        return len(self.queue) + len(self.fresh)

    def step(self, pool: ep.EpisodePool, batch: int) -> tuple[FlipSet | None, list]:
        """Plays up to `batch` new episodes; returns the new single flips (None when
        nothing is left to explore) and every EpisodeResult compiled (defaults of new
        modules included)."""
        compiled: list[ep.EpisodeResult] = []
        while len(self.queue) < batch and self.fresh:
            take = [self.fresh.popleft() for _ in range(min(len(self.fresh), max(1, batch // 4)))]
            _, played = self.cache.evaluate(pool, [shift_policy(self.problem, 0.0)], take)
            compiled += played
            for m in take:
                kept = self.cache.trajectories.get(m)
                if kept and len(kept[-1].actions):
                    self.modules_added += 1
                    self._enqueue(m, kept[-1].rows, set())
        if not self.queue:
            return (None if not compiled else self._flipset([], [])), compiled
        jobs = [self.queue.popleft() for _ in range(min(batch, len(self.queue)))]
        results = pool.play([(m, step_flipper(s)) for m, s, _ in jobs])
        compiled += results
        return self._flipset(jobs, results), compiled

    def _flipset(self, jobs: list, results: list) -> FlipSet:
        rows = np.asarray([r for _, _, r in jobs], dtype=np.float64).reshape(-1, len(self.names))
        return FlipSet(self.names, [m for m, _, _ in jobs],
                       np.asarray([s for _, s, _ in jobs], dtype=np.int64), rows,
                       (rows[:, self.col] > 0.5).astype(np.int64),
                       np.asarray([r.reward for r in results], dtype=np.float64),
                       {m: len(self.cache.trajectories[m][-1].actions) for m, _, _ in jobs})
