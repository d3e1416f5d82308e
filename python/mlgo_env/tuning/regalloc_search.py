"""Greedy search of eviction departures from the default's emulation, per function.

Register allocation runs function by function, and a function's static spill/reload cost
depends only on the decisions made for it. So one episode can test one departure in
*every* function of a module at once: each function's score (``info["contexts"]`` on the
final step) tells whether its own departure helped. The search keeps, per function, an
incumbent trajectory (the actions played, at first the emulation's,
``info["default_action"]``) and a queue of trials ``(step, column)`` in step order. A trial
replays the incumbent up to ``step`` (the compiler is deterministic, so the states are
the incumbent's), evicts ``column`` there, then follows the emulation. A trial that lowers
the function's score becomes the incumbent, and the queue is rebuilt from its later steps;
so an incumbent is always "the emulation with departures at increasing steps".

Which columns a step tries (at most ``alternatives`` of them): the legal ones (mask 1) other
than the incumbent's, never a NaN column (an unspillable interference); "evict nothing"
(the last column) first, then by an estimate of the interference's spill weight,
lightest first: the freq-weighted reads, writes and read-writes over the live-range size.
That estimate matters on poisoned steps, where ``use_def_density`` reads 0 everywhere
(docs/regalloc.md), and elsewhere ``use_def_density`` orders the rest.

Each function also keeps its *chain*: every incumbent it had before the current one, with
its score (the first is the start: the emulation's trajectory, or a resumed search's). The
chain is what a workload chooses from (mlgo_env.tuning.pick): the static score orders the
candidates, the instructions a linked program executes decide between them.

What it is: a per-module ceiling for policies that depart from the default's emulation
(decisions fitted to each function, not a policy), and a lower bound of the true ceiling
(greedy, one departure at a time, a capped set of columns).

Memory: per step of each function's incumbent, its trials (a few ints); with `features`,
also its candidate rows (33 x features float32: 2.6 KB for the cloning network's 20), so
a module's search holds about 2.7 KB per eviction decision it makes (while an episode
plays, its own trajectories too); each function's chain, its actions once per departure kept.

Not thread-safe: one thread at a time drives a `ModuleSearch`, through an environment no
other thread is using.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from ..policies.policy import EMULATION_FEATURE

#: relative improvement a trial must make to be kept (scores are sums of doubles)
TOLERANCE = 1e-9


def spread(items: Sequence[Any], n: int) -> list[Any]:
    """At most `n` of `items`, evenly spaced, the first and the last always among them
    (all of them when there are no more than `n`)."""
    if len(items) <= n:
        return list(items)
    if n <= 1:
        return list(items[:n])
    last = len(items) - 1
    return [items[round(i * last / (n - 1))] for i in range(n)]


def candidate_rows(tensors: Mapping[str, np.ndarray], features: Sequence[str]) -> np.ndarray:
    """One observation's candidates as rows of `features`, float32 [candidates, features]
    (the candidates are the mask's; a one-value feature, progress, broadcasts)."""
    rows = np.empty((tensors["mask"].size, len(features)), dtype=np.float32)
    for j, f in enumerate(features):
        rows[:, j] = tensors[f].reshape(-1)
    return rows


def ranked_columns(obs: dict[str, np.ndarray], played: int, alternatives: int) -> list[int]:
    """The columns a trial at this step tries, in order (see the module's docstring)."""
    mask = obs["mask"].reshape(-1)
    weight = obs["use_def_density"].reshape(-1).astype(np.float64)
    last = mask.size - 1
    legal = [int(c) for c in np.flatnonzero(mask == 1) if c != played and not np.isnan(weight[c])]
    if not legal:
        return []
    uses = sum(obs[f].reshape(-1).astype(np.float64) for f in (
        "weighed_reads_by_max", "weighed_writes_by_max", "weighed_read_writes_by_max"))
    size = np.maximum(obs["liverange_size"].reshape(-1).astype(np.float64), 1e-9)
    estimate = uses / size
    order = sorted((c for c in legal if c != last),
                   key=lambda c: (weight[c], estimate[c], c))
    return ([last] if last in legal else []) + order[:max(alternatives - (last in legal), 0)]


@dataclass
class Trajectory:
    """One function's decisions in one episode: the actions, the trials each step offers,
    and with `ModuleSearch(features=...)` each step's candidate rows, mask and the
    emulation's choice (what imitation learns from)."""
    actions: list[int] = field(default_factory=list)
    columns: list[list[int]] = field(default_factory=list)
    poisoned: list[bool] = field(default_factory=list)
    rows: list[np.ndarray] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    emulation: list[int] = field(default_factory=list)


def is_poisoned(obs: dict[str, np.ndarray]) -> bool:
    """The own range is spillable and a legal column reads NaN: the step shows no weights."""
    mask, weight = obs["mask"].reshape(-1), obs["use_def_density"].reshape(-1)
    return bool(mask[-1] == 1 and np.isnan(weight[:-1][mask[:-1] == 1]).any())


@dataclass
class FunctionSearch:
    name: str
    default: float
    best: float
    incumbent: Trajectory
    queue: list[tuple[int, int]]
    kept: int = 0
    tried: int = 0
    #: `kept` when the current pass over this function began
    pass_kept: int = 0
    #: step -> how much the incumbent's departure there lowered the function's score
    gains: dict[int, float] = field(default_factory=dict)
    #: the earlier incumbents, oldest first: (score, actions)
    chain: list[tuple[float, list[int]]] = field(default_factory=list)

    def requeue(self, after: int, poisoned_only: bool) -> None:
        """The trials of the incumbent's steps after `after`, in step order."""
        t = self.incumbent
        self.queue = [(j, c) for j in range(after + 1, len(t.actions))
                      if t.poisoned[j] or not poisoned_only for c in t.columns[j]]
        self.queue.reverse()  # popped from the end


class EpisodePlayer:
    """One episode of a module's search, as a decider: per function, the incumbent up to its
    planned step, the planned column there, the emulation after. It records what each
    function played (the actions of all; the rest of a trajectory only for the functions
    that had a trial, or all when none had: the first episode, since a function without
    one replays its incumbent). Plain data: it pickles, so it may play on a Dask worker."""

    def __init__(self, incumbents: dict[str, list[int]], plan: dict[str, tuple[int, int]],
                 alternatives: int, features: list[str] | None) -> None:
        self.incumbents, self.plan = incumbents, plan
        self.alternatives, self.features = alternatives, features
        self.played: dict[str, Trajectory] = {}

    def __call__(self, obs: Any, info: dict) -> int:
        name = info["context"]
        t = self.played.setdefault(name, Trajectory())
        j = len(t.actions)
        action = self._action(name, j, self.plan.get(name), obs, info)
        t.actions.append(action)
        if not self.plan or name in self.plan:  # only these can become incumbents
            self._record(t, obs, info, action)
        return action

    def _record(self, t: Trajectory, obs: dict[str, np.ndarray], info: dict[str, Any],
                action: int) -> None:
        """What a step adds to its trajectory besides the action."""
        t.columns.append(ranked_columns(obs, action, self.alternatives))
        t.poisoned.append(is_poisoned(obs))
        if self.features:
            t.rows.append(candidate_rows(obs, self.features))
            t.masks.append(obs["mask"].reshape(-1) == 1)
            t.emulation.append(int(info["default_action"]))

    def _action(self, name: str, j: int, trial: tuple[int, int] | None,
                obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        if trial is not None and j == trial[0]:
            return trial[1]
        incumbent = self.incumbents.get(name, [])
        if j < len(incumbent) and (trial is None or j < trial[0]):
            action = incumbent[j]
            if obs["mask"].reshape(-1)[action] == 1:
                return action
        return int(info["default_action"])


class ModuleSearch:
    """The search of one module. :meth:`propose` gives the next episode's decider (the
    emulation, or an earlier incumbent, first; then one trial in every function with one
    left), :meth:`settle` takes what it played and scored; one episode in flight at a time.
    ``ModuleSearch(env, ...)`` and :meth:`step` play them on `env` themselves."""

    def __init__(self, env: Any, module: str, alternatives: int = 2,
                 poisoned_only: bool = False, features: Sequence[str] | None = None,
                 start: dict[str, list[int]] | None = None,
                 chain: dict[str, list[tuple[float, list[int]]]] | None = None) -> None:
        """With `env`, plays the first episode (raising as `step` does); without, the first
        :meth:`propose` is that episode. `features`: record these per-candidate features of
        every step (float32 [33, len(features)] per step; one value broadcasts). `start`:
        per function, the actions of an earlier incumbent to play instead of the emulation
        (a resumed search; an action the mask refuses, and every step past the list,
        follows the emulation). `chain`: per function, the earlier incumbents of that
        search (:attr:`FunctionSearch.chain`), kept before this run's."""
        self.module, self.features = module, list(features) if features else None
        self.alternatives, self.poisoned_only = alternatives, poisoned_only
        self.episodes = 0
        self.functions: dict[str, FunctionSearch] = {}
        self.started = False
        self._start = {n: list(a) for n, a in (start or {}).items()}
        self._chain = {n: [(float(s), list(a)) for s, a in c] for n, c in (chain or {}).items()}
        self._plan: dict[str, tuple[int, int]] = {}
        self.emulation = self.default = 0.0
        if env is not None:
            self.step(env)

    @property
    def best(self) -> float:
        return sum(f.best for f in self.functions.values())

    def done(self) -> bool:
        return self.started and not any(f.queue for f in self.functions.values())

    def next_pass(self) -> bool:
        """Once every queue is empty: queues again, from their first step, the functions
        whose incumbent changed during the pass that ended (a function's cost depends only
        on its own decisions, so the others have nothing new to try). Whether any was."""
        again = False
        for f in self.functions.values():
            if f.kept > f.pass_kept:
                f.pass_kept = f.kept
                f.requeue(-1, self.poisoned_only)
                again = again or bool(f.queue)
        return again

    def abandon(self) -> None:
        """Drops every trial left (after an episode failed: the module is done)."""
        self.started = True
        for f in self.functions.values():
            f.queue = []

    def propose(self) -> EpisodePlayer:
        """The next episode: the first one, or a trial in every function with one left."""
        if not self.started:
            self._plan = {}
            return EpisodePlayer(self._start, {}, self.alternatives, self.features)
        self._plan = {f.name: f.queue.pop() for f in self.functions.values() if f.queue}
        incumbents = {n: f.incumbent.actions for n, f in self.functions.items()}
        return EpisodePlayer(incumbents, self._plan, self.alternatives, self.features)

    def settle(self, player: EpisodePlayer, result: Any) -> int:
        """Takes a proposed episode's result (mlgo_env.episodes.EpisodeResult); returns how
        many departures it kept. RuntimeError for an episode cut short or without
        per-function scores; the incumbents are unchanged then."""
        self.episodes += 1
        if result.truncated:
            raise RuntimeError(f"{self.module}: the episode was cut short (truncated) "
                               "before clang reported its functions' scores")
        if result.contexts is None:
            raise RuntimeError(f"{self.module}: the final step reported no per-function scores")
        scores = {c["name"]: (float(c["policy_score"]), float(c.get("default_score") or 0.0))
                  for c in result.contexts}
        for name in player.played:
            scores.setdefault(name, (0.0, 0.0))
        if not self.started:
            self._first(scores, player.played)
            return 0
        kept = 0
        for name, (step, _) in player.plan.items():
            f = self.functions[name]
            f.tried += 1
            score = scores.get(name, (0.0, f.default))[0]
            if score < f.best - TOLERANCE * max(1.0, abs(f.best)):
                f.gains = {j: g for j, g in f.gains.items() if j < step}
                f.gains[step] = f.best - score
                f.chain.append((f.best, list(f.incumbent.actions)))
                f.best, f.incumbent = score, player.played[name]
                f.kept += 1
                kept += 1
                f.requeue(step, self.poisoned_only)
        return kept

    def step(self, env: Any) -> int:
        """Plays :meth:`propose`'s episode on `env` and settles it. Raises what the
        environment raises for a failed episode (the trials played are lost)."""
        from ..episodes import play_episode
        player = self.propose()
        return self.settle(player, play_episode(env, self.module, player))

    def _first(self, scores: dict[str, tuple[float, float]],
               played: dict[str, Trajectory]) -> None:
        self.started = True
        self.emulation = sum(s for s, _ in scores.values())
        self.default = sum(d for _, d in scores.values())
        for name, (score, default) in scores.items():
            f = FunctionSearch(name, default, score, played.get(name, Trajectory()), [],
                               chain=self._chain.get(name, []))
            f.requeue(-1, self.poisoned_only)
            self.functions[name] = f
