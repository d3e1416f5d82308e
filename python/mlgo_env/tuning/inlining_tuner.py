"""The inlining tuner: the best one-number start, then callee groups added greedily.

Per module: first each start of :data:`STARTS` is played once (clang's own decisions and
clang's margin moved by a constant, mlgo_env.tuning.baselines.shift_policy's decisions);
the smallest object is the start. Then the callee-group search of
mlgo_env.tuning.inlining_search runs from it: one episode per callee group (every call
site of one callee answered the other way), kept when the module shrinks, until no
callee the best trajectory shows is left untried. Clang's default is one of the starts,
so the result is never larger than clang's own object.

Needs the IR2Vec callee embedding in the observation (it names the callee): the
environments are made with the shipped vocabulary (``ir2vec_vocab="default"``).
"""

from __future__ import annotations

from typing import Any

from .. import episodes as ep
from . import inlining_search as search
from .tuner import ModuleTuner, register

#: the starts tried first: None = clang's own decisions, else a constant margin shift
STARTS: tuple[float | None, ...] = (None, -20.0, -10.0, 10.0, 20.0)


@register
class InliningTuner(ModuleTuner):
    problem = "inlining"
    env_options = {"ir2vec_vocab": "default"}

    def __init__(self, module: str, features: list[str], state: dict[str, Any] | None) -> None:
        super().__init__(module, features, state)
        self.names = [n for n in features if n not in ("callee_embedding", "caller_embedding")]
        self.names = list(dict.fromkeys(self.names + ["inlining_default"]))
        self.starts: list[float | None] = list(STARTS)
        self.start_scores: dict[str, float] = {}
        self.search: search.ModuleSearch | None = None
        self.decisions = -1  # unknown until the first episode
        self._resume = state
        self._best_start: tuple | None = None  # (shift, player, result) of the best start

    def play(self, env: Any) -> None:
        if self._resume is not None and self.search is None:
            return self._restore(env, self._resume)
        if self.search is None:
            return self._play_start(env)
        key, player = search.next_trial(self.search, self.names)
        result = ep.play_episode(env, self.module, player)
        self.episodes += 1
        search.settle(self.search, key, player, result)
        self.best_score = self.search.bytes

    def _play_start(self, env: Any) -> None:
        shift = self.starts[0]
        player = search.GroupPlayer(self.names, frozenset(), shift)
        result = ep.play_episode(env, self.module, player)
        self.starts.pop(0)
        self.episodes += 1
        self.default_score = result.default_score
        self.start_scores[_name(shift)] = result.policy_score
        if self.decisions < 0:
            self.decisions = len(player.actions)
        if self._best_start is None or result.policy_score < self.best_score:
            self.best_score = result.policy_score
            self._best_start = (shift, player, result)
        if not self.starts or self.decisions == 0:
            self.starts = []
            shift, player, result = self._best_start
            self.search = search.ModuleSearch(self.module, result.default_score,
                                              result.policy_score, result.reward,
                                              frozenset(), player, shift=shift)
            self.search.enqueue(player)

    def _restore(self, env: Any, state: dict[str, Any]) -> None:
        """Replays the saved best (its callees queue again only if never tried)."""
        self._resume = None
        shift = state.get("shift")
        player = search.GroupPlayer(self.names, frozenset(state.get("flipped", [])), shift)
        result = ep.play_episode(env, self.module, player)
        self.episodes += 1
        self.starts = []
        self.decisions = len(player.actions)
        self.default_score, self.best_score = result.default_score, result.policy_score
        self.start_scores = dict(state.get("start_scores", {}))
        s = search.ModuleSearch(self.module, result.default_score, result.policy_score,
                                result.reward, player.flipped, player, shift=shift)
        s.tried = set(state.get("tried", []))
        s.kept = int(state.get("kept", 0))
        s.enqueue(player)
        s.queue = [k for k in state.get("queue", []) if k not in s.tried] + \
            [k for k in s.queue if k not in state.get("queue", [])]
        self.search = s

    def done(self) -> bool:
        if self._resume is not None:
            return False  # the saved best is replayed first
        return self.search is not None and not self.search.queue

    def has_decisions(self) -> bool:
        return self.decisions != 0

    def decider(self) -> ep.Decide:
        assert self.search is not None
        return search.GroupPlayer(self.names, self.search.flipped, self.search.shift)

    def state(self) -> dict[str, Any]:
        s = self.search
        return {"shift": s.shift if s else None,
                "flipped": sorted(s.flipped) if s else [],
                "tried": sorted(s.tried) if s else [],
                "queue": list(s.queue) if s else [],
                "kept": s.kept if s else 0,
                "start_scores": self.start_scores}


def _name(shift: float | None) -> str:
    return "default" if shift is None else f"shift {shift:+g}"
