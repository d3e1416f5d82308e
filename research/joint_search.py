"""Priority and eviction decisions searched together: evictions searched per function
(the product's search, mlgo_env.tuning.regalloc_search) on the `regalloc` environment
with fixed priorities (EnvironmentOptions::fixedPriorities: the host answers clang's
priority channel from priority_search.py's file, the search answers the evictions).
A coordinate step: the priorities first (priority_search.py, under clang's eviction),
then the evictions under them. The result per module: clang's own score, the start
(the priorities with the emulation of clang's eviction advisor), the best, and per
function the eviction actions of its incumbent, every question's, for priority_build.py.

    PYTHONPATH=python /usr/bin/python3 research/joint_search.py --corpus CORPUS \\
        --priorities P.json --module M [--module M2 ...] --seconds 240 --out joint.json
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import mlgo_env
from mlgo_env.tuning.identity import REGALLOC_SCORES
from mlgo_env.tuning.regalloc_search import ModuleSearch

#: columns a trial tries per step, as the regalloc tuner's
ALTERNATIVES = 2


def search(env, module: str, seconds: float) -> dict:
    s = ModuleSearch(env, module, ALTERNATIVES)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not (s.done() and not s.next_pass()):
        s.step(env)
    functions = s.functions.values()
    return {"module": module, "clang": s.default, "start": s.emulation, "best": s.best,
            "episodes": s.episodes, "finished": s.done(),
            "functions": {f.name: {"best": f.best, "evictions": [int(a) for a in
                                                                 f.incumbent.actions]}
                          for f in functions}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", required=True)
    p.add_argument("--priorities", required=True, help="priority_search.py's --out")
    p.add_argument("--module", action="append", required=True)
    p.add_argument("--seconds", type=float, default=240.0, help="per module")
    p.add_argument("--out", required=True)
    p.add_argument("--regalloc-score", default="instructions",
                   choices=list(REGALLOC_SCORES),
                   help="the score the search lowers (docs/regalloc.md)")
    a = p.parse_args(argv)
    with open(a.priorities, encoding="utf-8") as f:
        priorities = {m["module"]: m for m in json.load(f)["modules"]}
    env = mlgo_env.make("regalloc", a.corpus, regalloc_score=a.regalloc_score,
                        fixed_priorities=a.priorities)
    results = []
    try:
        for m in a.module:
            r = search(env, m, a.seconds)
            for name, f in r["functions"].items():  # the build's answers, both channels
                f["multipliers"] = priorities[m]["functions"].get(name, {}).get(
                    "multipliers", {})
            results.append(r)
            print(f"{m}: clang {r['clang']:.1f}, start {r['start']:.1f}, best {r['best']:.1f}"
                  f" ({r['episodes']} episodes, finished {r['finished']})", flush=True)
            with open(a.out, "w", encoding="utf-8") as f:
                json.dump({"priorities": a.priorities, "modules": results}, f, indent=1)
    finally:
        env.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
