"""The register-priority search: per function, greedy departures from the `weight` fallback.

clang-22 asks each live range's priority on a channel of its own (the `regalloc-priority`
problem). Every question of a function is answered with the fallback's priority (the
`weight` feature x 1000, as the environment computes it) times a *multiplier*, 1 at first.
A trial keeps the function's incumbent multipliers before step j, answers step j with one of
MULTIPLIERS (much earlier or much later in the allocation queue) and the fallback after it;
one episode tries one step in every function of the module at once (a function's score
depends on its own answers only, as for evictions: mlgo_env.tuning.regalloc_search). A trial
that lowers its function's score becomes the incumbent, and that function's queue restarts
after j. Evictions stay clang's own advisor's during this search; the joint step
(mlgo_env.tuning.priorities) searches them afterwards under the priorities found.

The result per function is its multipliers by step ({step: multiplier}, 1 where absent): the
form of a table entry's `priorities` (docs/tuning-format.md) and of the environment's
fixed-priorities file (EnvironmentOptions::fixedPriorities).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

from .. import episodes as ep

#: what a trial multiplies the fallback's answer by (much earlier, much later in the queue)
MULTIPLIERS = (16.0, 1.0 / 16.0)
#: the largest float32 below 2^32 (the priority rule's bound)
_HIGHEST = 4294967040.0
#: a trial must lower its function's score by more than this (relative) to be kept
TOLERANCE = 1e-9


def fallback(obs: dict[str, Any]) -> float:
    """The `weight` fallback, as the environment computes it (regalloc_problems.cc):
    weight x 1000, clamped to [0, 2^24); 0 when not finite."""
    w = float(obs["weight"].reshape(-1)[0]) * 1000.0
    return min(max(w, 0.0), float(2 ** 24 - 1)) if math.isfinite(w) else 0.0


def answer(obs: dict[str, Any], multiplier: float) -> float:
    return min(fallback(obs) * multiplier, _HIGHEST)


@dataclass
class FunctionPriorities:
    """One function's search: its incumbent multipliers and the trials still to play."""
    name: str
    clang: float                    # its score under clang's own priorities
    best: float                     # its incumbent's score
    steps: int                      # priority questions the incumbent's episode asked
    incumbent: dict[int, float] = field(default_factory=dict)
    queue: list[tuple[int, float]] = field(default_factory=list)

    def requeue(self, after: int) -> None:
        """Every trial after step `after` that the incumbent does not already answer."""
        self.queue = [(j, m) for j in range(after + 1, self.steps) for m in MULTIPLIERS
                      if self.incumbent.get(j, 1.0) != m]
        self.queue.reverse()  # popped from the end: earliest step first


class PriorityPlayer:
    """One episode's answers: per function its incumbent before its trial's step, the trial,
    the fallback after it. Counts each function's questions. Plain data: it pickles."""

    def __init__(self, incumbents: dict[str, dict[int, float]],
                 trials: dict[str, tuple[int, float]]) -> None:
        self.incumbents, self.trials = incumbents, trials
        self.counts: dict[str, int] = {}

    def __call__(self, obs: Any, info: dict) -> float:
        name = info["context"]
        j = self.counts.get(name, 0)
        self.counts[name] = j + 1
        trial = self.trials.get(name)
        if trial is not None and j == trial[0]:
            return answer(obs, trial[1])
        if trial is not None and j > trial[0]:
            return answer(obs, 1.0)
        return answer(obs, self.incumbents.get(name, {}).get(j, 1.0))


def function_scores(result: ep.EpisodeResult) -> dict[str, tuple[float, float]]:
    """{function: (its score, clang's own)} of an episode's final step."""
    if result.contexts is None:
        raise RuntimeError(f"{result.module}: the episode reported no per-function scores")
    return {c["name"]: (float(c["policy_score"]), float(c.get("default_score") or 0.0))
            for c in result.contexts}


@dataclass
class PrioritySearchResult:
    module: str
    clang: float            # the module's score under clang's own priorities and evictions
    start: float            # under the fallback's priorities
    best: float
    episodes: int
    finished: bool          # every queue emptied before the deadline
    functions: list[FunctionPriorities]

    def multipliers(self) -> dict[str, dict[str, float]]:
        """{function: {"step": multiplier}}: the entry's and fixed-priorities file's form."""
        return {f.name: {str(j): m for j, m in sorted(f.incumbent.items())}
                for f in self.functions}


def search_priorities(env: Any, module: str, seconds: float, stop: Any = None
                      ) -> PrioritySearchResult:
    """Searches `module`'s priorities on `env` (a `regalloc-priority` environment with the
    `weight` fallback) for at most `seconds` after its first episode, or until `stop` (a
    threading.Event) is set. Blocks."""
    player = PriorityPlayer({}, {})
    first = ep.play_episode(env, module, player)
    funcs = {n: FunctionPriorities(n, clang, score, player.counts.get(n, 0))
             for n, (score, clang) in function_scores(first).items()}
    for f in funcs.values():
        f.requeue(-1)
    start = sum(f.best for f in funcs.values())
    deadline, episodes = time.monotonic() + seconds, 1
    while time.monotonic() < deadline and any(f.queue for f in funcs.values()) and \
            not (stop is not None and stop.is_set()):
        trials = {f.name: f.queue.pop() for f in funcs.values() if f.queue}
        player = PriorityPlayer({n: f.incumbent for n, f in funcs.items()}, trials)
        scores = function_scores(ep.play_episode(env, module, player))
        episodes += 1
        for name, (j, m) in trials.items():
            f = funcs[name]
            score = scores.get(name, (f.best, 0.0))[0]
            if score < f.best - TOLERANCE * max(1.0, abs(f.best)):
                f.best, f.steps = score, player.counts.get(name, 0)
                f.incumbent = {k: v for k, v in f.incumbent.items() if k < j}
                f.incumbent[j] = m
                f.requeue(j)
    return PrioritySearchResult(module, sum(f.clang for f in funcs.values()), start,
                                sum(f.best for f in funcs.values()), episodes,
                                not any(f.queue for f in funcs.values()), list(funcs.values()))
