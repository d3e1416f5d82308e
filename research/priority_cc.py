"""A compiler wrapper for priority_build.py: the compiles of the modules a priority search
(priority_search.py) decided are served on clang's priority channel with the searched
answers (per function, its k-th question gets the `weight` fallback times the multiplier
of step k; 1 where none), clang's own eviction advisor deciding the rest; for a joint
search's file (joint_search.py) the eviction channel too, with the recorded evictions;
every other compile runs MLGO_PRIORITY_OTHERWISE (e.g. mlgo-env-launch with an eviction
table), or the compile as given.

    MLGO_PRIORITY_DECISIONS=D.json [MLGO_PRIORITY_OTHERWISE='CMD ...'] \
        priority_cc.py clang-22 ARGS...

(environment variables, so that a build's CC='...' needs no quoting inside it).

Each served compile appends one JSON line to D.json.log: the module, and per function
whose questions differ from the search's, [asked, recorded] (priority questions for a
priority file, eviction questions for a joint one). Exits with clang's status.
"""
from __future__ import annotations

import json
import os
import shlex
import sys
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import channel_pair  # noqa: E402
from priority_search import answer  # noqa: E402


def output_of(args: list[str]) -> str | None:
    for i, a in enumerate(args):
        if a == "-o" and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("-o") and len(a) > 2:
            return a[2:]
    return None


def matching(modules: list[dict[str, Any]], output: str | None) -> dict[str, Any] | None:
    if output is None:
        return None
    out = os.path.normpath(output)
    for m in modules:
        name = os.path.normpath(m["module"])
        if out == name or out.endswith("/" + name):
            return m
    return None


def serve(module: dict[str, Any], args: list[str], log: str) -> int:
    """Serves the priority channel (and, for a joint_search.py file, whose functions carry
    `evictions`, the eviction channel: the k-th eviction question of a function gets its
    k-th recorded action; past them, evict nothing where allowed, logged)."""
    functions = module["functions"]
    counts: dict[str, int] = {}
    evicted: dict[str, int] = {}

    def priority(features: dict[str, np.ndarray], context: str) -> bytes:
        j = counts.get(context, 0)
        counts[context] = j + 1
        mult = functions.get(context, {}).get("multipliers", {}).get(str(j), 1.0)
        return np.float32(answer(features, mult)).tobytes()

    past = channel_pair.evict_answer("self")

    def evict(features: dict[str, np.ndarray], context: str) -> bytes:
        j = evicted.get(context, 0)
        evicted[context] = j + 1
        recorded = functions.get(context, {}).get("evictions", [])
        return np.int64(recorded[j]).tobytes() if j < len(recorded) else past(features, context)

    joint = any("evictions" in f for f in functions.values())
    answers = {"priority": priority, **({"evict": evict} if joint else {})}
    run = channel_pair.serve_command(args, answers, timeout=600, nice=False)
    sys.stderr.write(run.stderr)
    if joint:
        differ = {n: [evicted.get(n, 0), len(f.get("evictions", []))]
                  for n, f in functions.items() if evicted.get(n, 0) != len(f.get("evictions", []))}
    else:
        differ = {n: [counts.get(n, 0), f.get("questions")] for n, f in functions.items()
                  if counts.get(n, 0) != f.get("questions")}
    with open(log, "a", encoding="utf-8") as f:
        f.write(json.dumps({"module": module["module"], "returncode": run.returncode,
                            "questions": sum(counts.values()) + sum(evicted.values()),
                            "differ": differ}) + "\n")
    return run.returncode


def main(args: list[str]) -> int:
    decisions = os.environ["MLGO_PRIORITY_DECISIONS"]
    otherwise = shlex.split(os.environ.get("MLGO_PRIORITY_OTHERWISE", ""))
    with open(decisions, encoding="utf-8") as f:
        modules = json.load(f)["modules"]
    module = matching(modules, output_of(args)) if "-c" in args else None
    if module is None:
        os.execvp((otherwise or args)[0], otherwise + args)
    return serve(module, args, decisions + ".log")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
