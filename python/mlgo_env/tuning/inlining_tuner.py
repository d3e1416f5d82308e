"""The inlining tuner: the best one-number start, callee groups, then single call sites.

Per module, in three phases, one episode each step:

1. starts: each of :data:`STARTS` is played once (clang's own decisions, and clang's margin
   moved by a constant: mlgo_env.tuning.baselines.shift_policy's decisions); the smallest
   object is the start;
2. groups: the callee-group search of mlgo_env.tuning.inlining_search from that start (every
   call site of one callee answered the other way), kept when the module shrinks, until no
   callee the best trajectory shows is left untried;
3. call sites: single decisions of the best trajectory answered the other way (by their
   ordinal in the trajectory), nearest clang's boundary first, kept when the module
   shrinks; after a kept one, the later decisions of the new trajectory queue again.

When the call sites are exhausted and the pass kept anything, another pass of groups and
call sites starts from the new best (a change refused before may pay now); the search ends
after a pass that kept nothing.

A module edited since it was tuned starts warm (:meth:`InliningTuner.warm`, given the old
search's state): the starts are the old callee groups on the old base, and clang's own;
from the old groups, only callees the old search never tried queue; before the call sites
one at a time, the sites the old search kept flipped (found again by their site keys,
mlgo_env.tuning.inlining_search.site_keys) are tried together, and sites it tried and
refused are not tried again in the first pass.

Clang's default is one of the starts, so the result is never larger than clang's own
object. Needs the IR2Vec callee embedding in the observation (it names the callee): the
environments are made with the shipped vocabulary (``ir2vec_vocab="default"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import episodes as ep
from . import inlining_search as search
from .tuner import ModuleTuner, register

#: the starts tried first: None = clang's own decisions, else a constant margin shift
STARTS: tuple[float | None, ...] = (None, -20.0, -10.0, 10.0, 20.0)
#: refused call sites whose margin is below this are not tried alone (cost units)
REFUSE_FLOOR = -200.0
#: the start of a warm search: the old search's callee groups on its base
WARM = "warm"


@register
class InliningTuner(ModuleTuner):
    problem = "inlining"
    ir2vec_vocab = "default"

    def __init__(self, module: str, features: list[str], state: dict[str, Any] | None) -> None:
        super().__init__(module, features, state)
        self.names = [n for n in features if n not in ("callee_embedding", "caller_embedding")]
        self.names = list(dict.fromkeys(self.names + ["inlining_default"]))
        self.starts: list[float | None] = list(STARTS)
        self.start_scores: dict[str, float] = {}
        self.search: search.ModuleSearch | None = None
        self.decisions = -1  # unknown until the first episode
        self.steps: frozenset[int] = frozenset()  # call sites flipped alone, by ordinal
        self.step_queue: list[int] | None = None  # built once the groups are exhausted
        self.step_tried: set[int] = set()
        self.pass_start_kept = 0  # the search's kept count when this pass began
        self.passes = 1
        self._resume = state
        self._best_start: tuple | None = None  # (start, player, result) of the best start
        self._pending: tuple = (None, None)  # what the proposal in flight is
        self._warm: dict[str, Any] | None = None  # the old search's state (warm start)
        self._old_tried_keys: set[str] = set()  # sites the old search refused alone
        self._batch: frozenset[int] | None = None  # the old kept sites, found again

    @classmethod
    def warm(cls, module: str, features: list[str], old: dict[str, Any] | None
             ) -> "InliningTuner":
        t = cls(module, features, None)
        if old:
            t._warm = old
            plain = not old.get("flipped") and old.get("shift") is None
            t.starts = [WARM] if plain else [WARM, None]  # WARM is clang's own when plain
            t._old_tried_keys = set(old.get("step_tried_keys", [])) - set(
                old.get("step_keys", []))
        return t

    def _start_player(self, start: float | str | None) -> search.GroupPlayer:
        if start == WARM:
            w = self._warm or {}
            return search.GroupPlayer(self.names, frozenset(w.get("flipped", [])),
                                      w.get("shift"))
        return search.GroupPlayer(self.names, frozenset(), start)

    def propose(self) -> ep.Decide:
        s = self.search
        if self._resume is not None:
            state = self._resume
            self._pending = ("restore", state)
            return search.GroupPlayer(self.names, frozenset(state.get("flipped", [])),
                                      state.get("shift"),
                                      frozenset(int(i) for i in state.get("steps", [])))
        if s is None:
            self._pending = ("start", self.starts[0])
            return self._start_player(self.starts[0])
        if s.queue:
            key, player = search.next_trial(s, self.names, self.steps)
            self._pending = ("group", key)
            return player
        if self._batch:
            batch, self._batch = self._batch, None
            self._pending = ("batch", batch)
            return search.GroupPlayer(self.names, s.flipped, s.shift, self.steps | batch)
        step = self.step_queue.pop(0)
        self.step_tried.add(step)
        self._pending = ("step", step)
        return search.GroupPlayer(self.names, s.flipped, s.shift, self.steps ^ {step})

    def settle(self, decider: ep.Decide, result: ep.EpisodeResult) -> None:
        kind, data = self._pending
        self._pending = (None, None)
        self.episodes += 1
        if kind == "restore":
            self._restored(decider, result, data)
        elif kind == "start":
            self._settle_start(decider, result)
        elif kind == "group":
            search.settle(self.search, data, decider, result)
            self.best_score = self.search.bytes
        elif kind == "batch":
            self._settle_step(-1, decider, result)
        else:
            self._settle_step(data, decider, result)
        self._advance()

    def _advance(self) -> None:
        """After an episode: the call sites once the groups are exhausted, another pass
        once both are and this pass kept anything (done() only reads what this leaves)."""
        s = self.search
        if s is None or s.queue:
            return
        if self._batch:
            return
        if self.step_queue is None:
            self.step_queue = self._candidates(after=-1)
        if not self.step_queue and s.kept > self.pass_start_kept:
            self._next_pass()
            self.step_queue = None if s.queue else self._candidates(after=-1)

    def _settle_start(self, player: search.GroupPlayer, result: ep.EpisodeResult) -> None:
        start = self.starts.pop(0)
        self.default_score = result.default_score
        self.start_scores[_name(start)] = result.policy_score
        if self.decisions < 0:
            self.decisions = len(player.actions)
        if self._best_start is None or result.policy_score < self.best_score:
            self.best_score = result.policy_score
            self._best_start = (start, player, result)
        if not self.starts or self.decisions == 0:
            self.starts = []
            start, player, result = self._best_start
            self.search = search.ModuleSearch(self.module, result.default_score,
                                              result.policy_score, result.reward,
                                              player.flipped, player, shift=player.shift)
            if start == WARM:
                self._warmed(player)
            self.search.enqueue(player)

    def _warmed(self, player: search.GroupPlayer) -> None:
        """The old search's start won: the callees it tried do not queue again, and the
        call sites it kept (by site key, in this trajectory) are tried together first."""
        w = self._warm or {}
        self.search.tried = set(w.get("tried", [])) | set(w.get("flipped", []))
        kept = set(w.get("step_keys", []))
        batch = frozenset(i for i, k in enumerate(search.site_keys(player)) if k in kept)
        self._batch = batch or None

    def _settle_step(self, step: int, player: search.GroupPlayer,
                     result: ep.EpisodeResult) -> None:
        s = self.search
        if result.reward > s.reward + 1e-12:
            s.best, s.reward, s.bytes = player, result.reward, result.policy_score
            s.kept += 1
            self.steps = player.steps
            self.best_score = s.bytes
            self.step_queue = self._candidates(after=step)

    def _candidates(self, after: int) -> list[int]:
        """Ordinals of the best trajectory worth flipping alone, after `after`, untried:
        inlined call sites and refused ones above REFUSE_FLOOR, nearest the boundary first."""
        best = self.search.best
        if not best.rows:
            return []
        rows = np.asarray(best.rows, dtype=np.float64)
        col = {n: i for i, n in enumerate(self.names)}
        margin = np.maximum(rows[:, col["threshold"]], 1.0) - rows[:, col["cost_estimate"]]
        inlined = np.asarray(best.actions) == 1
        ok = (inlined | (margin > REFUSE_FLOOR)) & (np.arange(len(rows)) > after)
        if self._old_tried_keys and self.passes == 1:  # refused before the edit
            keys = search.site_keys(best)
            ok &= np.array([k not in self._old_tried_keys for k in keys], dtype=bool)
        order = np.argsort(np.abs(margin), kind="stable")
        return [int(i) for i in order if ok[i] and int(i) not in self.step_tried]

    def _restored(self, player: search.GroupPlayer, result: ep.EpisodeResult,
                  state: dict[str, Any]) -> None:
        """The saved best replayed; the groups and call sites never tried queue again."""
        self._resume = None
        self.steps = player.steps
        self.starts = []
        self.decisions = len(player.actions)
        self.default_score, self.best_score = result.default_score, result.policy_score
        self.start_scores = dict(state.get("start_scores", {}))
        s = search.ModuleSearch(self.module, result.default_score, result.policy_score,
                                result.reward, player.flipped, player, shift=player.shift)
        s.tried = set(state.get("tried", []))
        s.kept = int(state.get("kept", 0))
        s.enqueue(player)
        saved = [k for k in state.get("queue", []) if k not in s.tried]
        s.queue = saved + [k for k in s.queue if k not in saved]
        self.step_tried = set(int(i) for i in state.get("step_tried", []))
        self.passes = int(state.get("passes", 1))
        self.pass_start_kept = int(state.get("pass_start_kept", 0))
        self.search = s

    def done(self) -> bool:
        if self._resume is not None or self.search is None:
            return False
        return not self.search.queue and self.step_queue is not None and not self.step_queue

    def _next_pass(self) -> None:
        """Every callee and call site of the best trajectory may be tried again."""
        s = self.search
        self.passes += 1
        self.pass_start_kept = s.kept
        s.tried = set()
        s.queue = list(dict.fromkeys(s.best.keys))
        self.step_tried = set()
        self.step_queue = None

    def has_decisions(self) -> bool:
        return self.decisions != 0

    def decider(self) -> ep.Decide:
        if self.search is None:  # the budget ended among the starts: the best one so far
            if self._best_start is None:
                raise RuntimeError(f"{self.module}: no episode was played")
            return self._start_player(self._best_start[0])
        return search.GroupPlayer(self.names, self.search.flipped, self.search.shift,
                                  self.steps)

    def state(self) -> dict[str, Any]:
        s = self.search
        best = s.best if s else (self._best_start[1] if self._best_start else None)
        keys = search.site_keys(best) if best is not None else []
        return {"shift": s.shift if s else (best.shift if best else None),
                "flipped": sorted(s.flipped if s else (best.flipped if best else [])),
                "tried": sorted(s.tried) if s else [],
                "queue": list(s.queue) if s else [],
                "kept": s.kept if s else 0,
                "steps": sorted(self.steps), "step_tried": sorted(self.step_tried),
                "passes": self.passes, "pass_start_kept": self.pass_start_kept,
                "start_scores": self.start_scores,
                # the call sites kept and tried alone, by site key (a warm start's)
                "step_keys": sorted({keys[i] for i in self.steps if i < len(keys)}),
                "step_tried_keys": sorted({keys[i] for i in self.step_tried if i < len(keys)})}


def _name(start: float | str | None) -> str:
    if start == WARM:
        return "before the edit"
    return "default" if start is None else f"shift {start:+g}"
