"""The regalloc tuner: per-function departures from the emulation of clang's eviction advisor.

The search is mlgo_env.tuning.regalloc_search's: one episode tries one departure in every
function of the module at once (a function's spill/reload cost depends only on its own
decisions), keeping per function the trials that lower its cost. When every queue is empty,
the functions whose incumbent changed are searched again from their first step (another
pass), until a pass changes none. Clang-22 does not send
its own eviction decision, so the search starts from the host's emulation of it; a module
whose best still costs at least clang's own gets no table entry, and a build compiles it
with clang's own decisions.

The state keeps, besides each function's incumbent, its score and its chain of earlier
incumbents (at most CHAIN_KEPT of them, evenly spaced from the start): the candidates
`python -m mlgo_env.tune pick` chooses between by what the project's workload executes
(mlgo_env.tuning.pick).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import episodes as ep
from .regalloc_search import ModuleSearch, spread
from .tuner import ModuleTuner, register

#: columns a trial tries per step (evict nothing first, then the lightest interference)
ALTERNATIVES = 2
#: earlier incumbents a function's state keeps (evenly spaced, the start always among them)
CHAIN_KEPT = 8


@register
class RegallocTuner(ModuleTuner):
    problem = "regalloc"

    def __init__(self, module: str, features: list[str], state: dict[str, Any] | None) -> None:
        super().__init__(module, features, state)
        self.search: ModuleSearch | None = None
        self._state = state or {}
        self._start = self._state.get("incumbents")

    def propose(self) -> ep.Decide:
        if self.search is None:
            self.search = ModuleSearch(None, self.module, ALTERNATIVES, start=self._start,
                                       chain=self._state.get("chains"))
        return self.search.propose()

    def settle(self, decider: ep.Decide, result: ep.EpisodeResult) -> None:
        assert self.search is not None
        first = not self.search.started
        self.search.settle(decider, result)
        self.episodes += 1
        if first:
            self.default_score = self.search.default
        self.best_score = self.search.best
        if self.search.done():  # another pass over the functions this one changed
            self.search.next_pass()

    def done(self) -> bool:
        """Nothing left to try: every queue empty after a pass that changed no function
        (settle starts the next pass over the functions a pass changed)."""
        return self.search is not None and self.search.done()

    def has_decisions(self) -> bool:
        return self.search is None or not self.search.started or any(
            f.incumbent.actions for f in self.search.functions.values())

    def functions(self) -> list[str]:
        return list(self.search.functions) if self.search is not None else []

    def abandon(self, why: str) -> None:
        super().abandon(why)
        if self.search is not None:
            self.search.abandon()

    def decider(self) -> ep.Decide:
        assert self.search is not None
        return Replay({n: list(f.incumbent.actions) for n, f in self.search.functions.items()})

    def state(self) -> dict[str, Any]:
        """{"incumbents": {function: actions}, "scores": {function: its incumbent's score},
        "chains": {function: [[score, actions], ...] earlier incumbents, oldest first}}."""
        if self.search is None:
            return {k: self._state.get(k) or {} for k in ("incumbents", "scores", "chains")}
        functions = self.search.functions.values()
        return {"incumbents": {f.name: list(map(int, f.incumbent.actions)) for f in functions},
                "scores": {f.name: f.best for f in functions},
                "chains": {f.name: [[s, list(map(int, a))]
                                    for s, a in spread(f.chain, CHAIN_KEPT)]
                           for f in functions if f.chain}}


class Replay:
    """Answers each function's incumbent actions (the emulation past them, or where the mask
    refuses one). Plain data: it pickles."""

    def __init__(self, incumbents: dict[str, list[int]]) -> None:
        self.incumbents = incumbents
        self.counts: dict[str, int] = {}

    def __call__(self, obs: Any, info: dict) -> int:
        name = info["context"]
        j = self.counts.get(name, 0)
        self.counts[name] = j + 1
        actions = self.incumbents.get(name, [])
        if j < len(actions) and np.asarray(obs["mask"]).reshape(-1)[actions[j]] == 1:
            return actions[j]
        return int(info["default_action"])
