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

The search itself became the product's (mlgo_env.tuning.priority_search, run by `python -m
mlgo_env.tune priorities`); this script keeps the experiment's command line and file form.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import mlgo_env
from mlgo_env import episodes as ep
from mlgo_env.tuning.identity import REGALLOC_SCORES
from mlgo_env.tuning.priority_search import (MULTIPLIERS, PriorityPlayer, answer,  # noqa: F401
                                             fallback, function_scores, search_priorities)


def search_module(env: Any, module: str, seconds: float) -> dict[str, Any]:
    """The module's search (the product's), for at most `seconds` after its first episode,
    in the experiment's file form."""
    r = search_priorities(env, module, seconds)
    return {"module": module, "clang": r.clang, "start": r.start, "best": r.best,
            "episodes": r.episodes, "finished": r.finished,
            "functions": {f.name: {"best": f.best, "clang": f.clang, "questions": f.steps,
                                   "multipliers": {str(k): v for k, v in
                                                   sorted(f.incumbent.items())}}
                          for f in r.functions}}


def confirm(env: Any, result: dict[str, Any]) -> float:
    """Plays a module's result once more (every incumbent, no trial), records each
    function's question count in it ("questions", what priority_cc.py checks a build
    against) and returns the episode's score (the search's best when clang is
    deterministic)."""
    incumbents = {n: {int(k): v for k, v in f["multipliers"].items()}
                  for n, f in result["functions"].items()}
    player = PriorityPlayer(incumbents, {})
    scores = function_scores(ep.play_episode(env, result["module"], player))
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
