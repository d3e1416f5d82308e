"""Does searching register-allocation *priorities* per function lower what a workload
executes beyond searching evictions? The search half: per function, greedy departures from
the `weight` fallback (priority = weight x 1000), with clang's own eviction advisor.

Each priority question of a function gets a *multiplier* of the fallback's answer (1 at
first). A trial replays the incumbent's multipliers up to step j, answers step j with
the fallback times one of MULTIPLIERS, then the fallback alone; one episode tries one step in
every function of the module at once (a function's spill/reload cost depends on its own
decisions only, as for evictions: mlgo_env.tuning.regalloc_search). A trial that lowers the
function's score (the instructions score) becomes the incumbent and the queue restarts
after j. The result per module: clang's own score, the fallback's, the best, and per
function the multipliers by step ({step: multiplier}, others 1), for priority_build.py.

    PYTHONPATH=python /usr/bin/python3 research/priority_search.py --corpus CORPUS \\
        --module M [--module M2 ...] --seconds 240 --out decisions.json
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import mlgo_env
from mlgo_env import episodes as ep
from mlgo_env.tuning.identity import REGALLOC_SCORES

#: what a trial multiplies the fallback's answer by (earlier, later in the queue)
MULTIPLIERS = (16.0, 1.0 / 16.0)
#: the largest float32 below 2^32 (the priority rule's bound)
_BOUND = 4294967040.0
TOLERANCE = 1e-9


def fallback(obs: dict[str, Any]) -> float:
    """The `weight` fallback, as the environment computes it (regalloc_problems.cc):
    weight x 1000, clamped to [0, 2^24); not finite -> 0. (Until 2026-11-28 an infinite
    weight gave 2^24 - 1 here; the search and its builds agreed, the environment's fixed
    priorities did not.)"""
    w = float(obs["weight"].reshape(-1)[0]) * 1000.0
    return min(max(w, 0.0), float(2 ** 24 - 1)) if math.isfinite(w) else 0.0


def answer(obs: dict[str, Any], multiplier: float) -> float:
    return min(fallback(obs) * multiplier, _BOUND)


@dataclass
class Function:
    name: str
    clang: float
    best: float
    steps: int                      # questions the incumbent's episode asked
    incumbent: dict[int, float] = field(default_factory=dict)
    queue: list[tuple[int, float]] = field(default_factory=list)
    kept: int = 0

    def requeue(self, after: int) -> None:
        self.queue = [(j, m) for j in range(after + 1, self.steps) for m in MULTIPLIERS
                      if self.incumbent.get(j, 1.0) != m]
        self.queue.reverse()


class Player:
    """One episode's answers: per function its incumbent before its trial step, the trial,
    the fallback after it. Records each function's question count."""

    def __init__(self, incumbents: dict[str, dict[int, float]],
                 plan: dict[str, tuple[int, float]]) -> None:
        self.incumbents, self.plan = incumbents, plan
        self.counts: dict[str, int] = {}

    def __call__(self, obs: Any, info: dict) -> float:
        name = info["context"]
        j = self.counts.get(name, 0)
        self.counts[name] = j + 1
        trial = self.plan.get(name)
        if trial is not None and j == trial[0]:
            return answer(obs, trial[1])
        if trial is None or j < trial[0]:
            return answer(obs, self.incumbents.get(name, {}).get(j, 1.0))
        return answer(obs, 1.0)


def scores_of(result: ep.EpisodeResult) -> dict[str, tuple[float, float]]:
    if result.contexts is None:
        raise RuntimeError(f"{result.module}: no per-function scores")
    return {c["name"]: (float(c["policy_score"]), float(c.get("default_score") or 0.0))
            for c in result.contexts}


def search_module(env: Any, module: str, seconds: float) -> dict[str, Any]:
    """The module's search, for at most `seconds` after its first episode."""
    player = Player({}, {})
    first = ep.play_episode(env, module, player)
    funcs = {n: Function(n, d, s, player.counts.get(n, 0))
             for n, (s, d) in scores_of(first).items()}
    for f in funcs.values():
        f.requeue(-1)
    start_score = sum(f.best for f in funcs.values())
    deadline, episodes = time.monotonic() + seconds, 1
    while time.monotonic() < deadline and any(f.queue for f in funcs.values()):
        plan = {f.name: f.queue.pop() for f in funcs.values() if f.queue}
        player = Player({n: f.incumbent for n, f in funcs.items()}, plan)
        scores = scores_of(ep.play_episode(env, module, player))
        episodes += 1
        for name, (j, m) in plan.items():
            f = funcs[name]
            score = scores.get(name, (f.best, 0.0))[0]
            if score < f.best - TOLERANCE * max(1.0, abs(f.best)):
                f.best, f.kept, f.steps = score, f.kept + 1, player.counts.get(name, 0)
                f.incumbent = {k: v for k, v in f.incumbent.items() if k < j}
                f.incumbent[j] = m
                f.requeue(j)
    return {"module": module, "clang": sum(f.clang for f in funcs.values()),
            "start": start_score, "best": sum(f.best for f in funcs.values()),
            "episodes": episodes, "finished": not any(f.queue for f in funcs.values()),
            "functions": {f.name: {"best": f.best, "clang": f.clang, "questions": f.steps,
                                   "multipliers": {str(k): v for k, v in f.incumbent.items()}}
                          for f in funcs.values()}}


def confirm(env: Any, result: dict[str, Any]) -> float:
    """Plays a module's result once more (every incumbent, no trial), records each
    function's question count in it ("questions", what priority_cc.py checks a build
    against) and returns the episode's score (the search's best when clang is
    deterministic)."""
    incumbents = {n: {int(k): v for k, v in f["multipliers"].items()}
                  for n, f in result["functions"].items()}
    player = Player(incumbents, {})
    scores = scores_of(ep.play_episode(env, result["module"], player))
    for name, f in result["functions"].items():
        f["questions"] = player.counts.get(name, 0)
    return sum(s for s, _ in scores.values())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", required=True)
    p.add_argument("--module", action="append", required=True)
    p.add_argument("--seconds", type=float, default=240.0, help="per module")
    p.add_argument("--out", required=True)
    p.add_argument("--regalloc-score", default="instructions",
                   choices=list(REGALLOC_SCORES),
                   help="the score the search lowers (docs/regalloc.md)")
    p.add_argument("--confirm", action="store_true",
                   help="replay --out's results instead of searching (adds \"questions\")")
    a = p.parse_args(argv)
    env = mlgo_env.make("regalloc-priority", a.corpus, priority_fallback="weight",
                        regalloc_score=a.regalloc_score)
    results = []
    if a.confirm:
        with open(a.out, encoding="utf-8") as f:
            earlier = {r["module"]: r for r in json.load(f)["modules"]}
    try:
        for m in a.module:
            if a.confirm:
                r = earlier[m]
                print(f"{m}: replayed {confirm(env, r):.1f}, searched {r['best']:.1f}",
                      flush=True)
            else:
                r = search_module(env, m, a.seconds)
            results.append(r)
            if not a.confirm:
                print(f"{m}: clang {r['clang']:.1f}, fallback {r['start']:.1f}, best {r['best']:.1f}"
                  f" ({r['episodes']} episodes, finished {r['finished']})", flush=True)
            with open(a.out, "w", encoding="utf-8") as f:
                json.dump({"multipliers": MULTIPLIERS, "modules": results}, f, indent=1)
    finally:
        env.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
