"""What `python -m mlgo_env.tune pick` builds and how it chooses (the plan; no compiler,
no build: mlgo_env.tuning.pick runs it).

Register allocation changes no function's control flow, so the instructions a function
executes in a run of the workload depend on that function's own code alone, and its code on
its own eviction decisions alone (the per-function search rests on the same fact). So one
build can try a candidate in every function at once, and the workload's per-function counts
say, for each, which candidate executes least:

- A function's *candidates* (:func:`function_candidates`): its static best (the incumbent),
  then earlier incumbents of its search evenly spaced back to its start (the emulation of
  clang's own), at most `k`; index 0 is the static best.
- The *hot* functions (:func:`hot_functions`) are those that executed at least a share of
  the instructions counted in the tuned modules' functions; only they get workload-measured
  choices, the others keep their static best. A function is known by its name, as the
  workload's counts know it: a name several modules define (a library's PIC and static
  objects, two static functions alike) is one choice, made for all of them with the same
  index.
- Variant `v` gives every hot function its candidate `v` (the last one when it has fewer),
  the others their static best (:meth:`HotModule.composition`); variant ``clang`` gives the
  hot modules no entry (clang's own decisions).
- :func:`choose`: per hot function, the variant whose count is lowest (ties: the lower
  index, the better static score). A module keeps an entry only when its hot functions,
  so chosen, execute fewer instructions than under clang's own decisions
  (:func:`keeps_entry`).
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from .regalloc_search import spread


@dataclass
class Candidate:
    """One function's decisions: the actions of one of its search's incumbents, and its
    static score (None in states older than the scores)."""
    score: float | None
    actions: list[int]


def function_candidates(search: Mapping[str, Any], k: int) -> dict[str, list[Candidate]]:
    """Per function of a regalloc state's `search` (regalloc_tuner.RegallocTuner.state):
    at most `k` candidates, the static best first, then its earlier incumbents evenly spaced
    back to the start (the start always among them)."""
    scores = search.get("scores") or {}
    chains = search.get("chains") or {}
    out = {}
    for name, actions in (search.get("incumbents") or {}).items():
        best = Candidate(scores.get(name), list(actions))
        earlier = [Candidate(float(s), list(a)) for s, a in reversed(chains.get(name, []))]
        out[name] = spread([best] + earlier, max(k, 1))
    return out


def hot_functions(counts: Mapping[str, int], names: set[str], share: float) -> dict[str, int]:
    """{name: instructions} of the functions among `names` that executed at least `share`
    of the instructions `counts` has for all of `names` (none when they executed nothing)."""
    ours = {n: c for n, c in counts.items() if n in names and c > 0}
    total = sum(ours.values())
    return {n: c for n, c in ours.items() if total and c >= share * total}


@dataclass
class HotModule:
    """A tuned module defining at least one hot function."""
    module: str
    candidates: dict[str, list[Candidate]]
    hot: set[str]
    #: the table's entry's actions (None: the table has no entry for it)
    entry_actions: list[int] | None = None

    def composition(self, index: Mapping[str, int] | int) -> dict[str, list[int]]:
        """The actions of every function: each hot function its candidate `index` (one
        index for all, or per name; past its last candidate, the last), the others their
        static best."""
        out = {}
        for name, cands in self.candidates.items():
            j = 0
            if name in self.hot:
                j = index if isinstance(index, int) else index.get(name, 0)
            out[name] = list(cands[min(j, len(cands) - 1)].actions)
        return out

    def expected_score(self, index: Mapping[str, int] | int) -> float | None:
        """The static score :meth:`composition` should record (None when a candidate's
        score is unknown)."""
        total = 0.0
        for name, cands in self.candidates.items():
            j = 0
            if name in self.hot:
                j = index if isinstance(index, int) else index.get(name, 0)
            score = cands[min(j, len(cands) - 1)].score
            if score is None:
                return None
            total += score
        return total


def hot_modules(states: Mapping[str, Mapping[str, Any]], hot: set[str], k: int,
                entries: Mapping[str, Sequence[int]]) -> list[HotModule]:
    """The modules of `states` (module -> state) with a hot function among their searched
    functions, in name order; `entries`: the table's actions per module."""
    out = []
    for module in sorted(states):
        cands = function_candidates(states[module].get("search") or {}, k)
        mine = hot & set(cands)
        if mine:
            actions = entries.get(module)
            out.append(HotModule(module, cands, mine, None if actions is None else list(actions)))
    return out


@dataclass
class Choice:
    """Per hot function, the chosen variant index and its count; per module, whether it
    keeps an entry."""
    index: dict[str, int] = field(default_factory=dict)
    instructions: dict[str, int] = field(default_factory=dict)
    entry: dict[str, bool] = field(default_factory=dict)


def choose(modules: Sequence[HotModule], variants: Sequence[Mapping[str, int]],
           clang: Mapping[str, int]) -> Choice:
    """`variants[v]`: per function, the instructions it executed in variant v's build;
    `clang`: in the build without the hot modules' entries."""
    c = Choice()
    for name in sorted(set().union(*(m.hot for m in modules))):
        counts = [v.get(name, 0) for v in variants]
        best = min(range(len(counts)), key=lambda j: (counts[j], j))
        c.index[name], c.instructions[name] = best, counts[best]
    for m in modules:
        c.entry[m.module] = keeps_entry(m, c, clang)
    return c


def keeps_entry(m: HotModule, c: Choice, clang: Mapping[str, int]) -> bool:
    """Whether `m`'s hot functions, as chosen, execute fewer instructions than under clang's
    own decisions."""
    return sum(c.instructions[n] for n in m.hot) < sum(clang.get(n, 0) for n in m.hot)


def defined_by(modules: Sequence[HotModule]) -> dict[str, list[str]]:
    """Hot function name -> the modules defining it."""
    out: dict[str, list[str]] = collections.defaultdict(list)
    for m in modules:
        for name in sorted(m.hot):
            out[name].append(m.module)
    return dict(out)
