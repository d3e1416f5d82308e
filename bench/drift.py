#!/usr/bin/python3
"""What a tuning keeps when the code moves on: release N tuned, release N+1 (and commits
between) built with N's tuning as it is, then N+1 retuned incrementally.

    /usr/bin/python3 bench/drift.py --package lz4 --old TREE_N --new TREE_N1
        [--commit TREE ...] [--minutes 12] [--workers 2] [--work /tmp/mlgo-bench-drift]
        [--steps old,new,retune,commits]

TREE_N, TREE_N1 and each --commit TREE are source trees of one package (e.g. `git archive`
of two release tags), built by the package's own build system as bench/tune.py's recipe for
`--package` says (a tree without `configure` gets one from `autoreconf -fi` first: Debian's
autoconf, automake, libtool, autopoint).
Steps, each printed with its figures and kept in WORK/results.json (`--steps` picks which
run; the others' figures are read from there):

- **old**: capture N (`mlgo-env corpus build`), tune it (`python -m mlgo_env.tune`, the first
  tune's wall time), build N plainly, through the launcher and with the replay file; linked
  executable bytes of each build, the package's own tests on each;
- **new**: N+1 plainly, through the launcher with N's table, and with N's replay file (its
  flags as they are): the share of N's linked gain each route keeps without retuning;
- **retune**: N's tuning directory copied, N+1 captured and tuned into the copy
  incrementally, with a third of the first tune's minutes (`--retune-minutes`): its wall
  time against the first tune's, N+1's gain by both routes with the retuned table against
  N's;
- **commits**: each --commit tree built plainly, through the launcher and with the replay
  file of N's tuning: the share kept along the way.

Shares are of the same route's gain on N (launcher on N+1 against launcher on N). The
inlining problem at -Oz only. Reserved packages are refused (bench/tune.py's list).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tune as bt  # noqa: E402  (bench/tune.py: recipes, builds, linked sizes)

OPT = "-Oz"


prepare = bt.prepare  # a tree from a repository may have no configure yet

def linked_total(root: str) -> int:
    return sum(bt.linked(root).values())


def check(recipe: dict, root: str, logs: str, name: str) -> int:
    return bt.run(recipe["check"], root, log=os.path.join(logs, f"{name}.check"), check=False)


def builds_of(recipe: dict, tree: str, where: str, tuning: str, logs: str,
              name: str) -> dict[str, dict]:
    """`tree` built three ways into where/{plain,tuned,replay}: each one's linked executable
    bytes and its tests' exit code."""
    out = {}
    log = os.path.join(tuning, "launch.log")
    if os.path.exists(log):
        os.unlink(log)
    roots = {side: os.path.join(where, side) for side in ("plain", "tuned", "replay")}
    bt.build(recipe, tree, roots["plain"], OPT, "clang-22", os.path.join(logs, f"{name}.plain"))
    bt.build(recipe, tree, roots["tuned"], OPT, f"{bt.LAUNCH} --tuning={tuning} -- clang-22",
             os.path.join(logs, f"{name}.tuned"))
    with open(os.path.join(tuning, "inline-replay.flags")) as f:
        flags = f.read().strip()
    bt.build(recipe, tree, roots["replay"], f"{OPT} {flags}", "clang-22",
             os.path.join(logs, f"{name}.replay"))
    for side, root in roots.items():
        out[side] = {"linked": linked_total(root), "check": check(recipe, root, logs,
                                                                 f"{name}.{side}")}
    out["launcher_log"] = outcomes(log)
    return out


def outcomes(log: str) -> dict[str, int]:
    """How many compiles the launcher's log says were tuned, kept, fell back, ..."""
    counts: dict[str, int] = {}
    if os.path.exists(log):
        with open(log) as f:
            for line in f:
                try:
                    o = json.loads(line).get("outcome", "?")
                except ValueError:
                    o = "unreadable"
                counts[o] = counts.get(o, 0) + 1
    return counts


def tune(corpus: str, tuning: str, minutes: float, workers: int) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(["/usr/bin/python3", "-m", "mlgo_env.tune", "--problem=inlining",
                        f"--corpus={corpus}", f"--output={tuning}", f"--minutes={minutes}",
                        f"--workers={workers}", "--progress-every=120"],
                       env=dict(os.environ, PYTHONPATH=os.path.join(bt.CHECKOUT, "python")),
                       capture_output=True, text=True)
    bt.say(r.stdout.rstrip())
    if r.returncode != 0:
        raise SystemExit(f"bench/drift: tune failed: {r.stderr[-2000:]}")
    return time.perf_counter() - t0


def gains(b: dict) -> dict[str, float]:
    plain = b["plain"]["linked"]
    return {side: b[side]["linked"] / plain - 1.0 for side in ("tuned", "replay")}


def say_builds(label: str, b: dict, base: dict[str, float] | None = None) -> None:
    g = gains(b)
    line = (f"{label}: plain {b['plain']['linked']:,} B; launcher {g['tuned']:+.2%}, "
            f"replay {g['replay']:+.2%}; tests exit "
            f"{'/'.join(str(b[s]['check']) for s in ('plain', 'tuned', 'replay'))}; "
            f"launcher log {b['launcher_log']}")
    if base:
        line += "; kept " + ", ".join(
            f"{side} {g[side] / base[side]:.0%}" if base[side] else f"{side} n/a"
            for side in ("tuned", "replay"))
    bt.say(line)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--package", required=True)
    p.add_argument("--old", required=True)
    p.add_argument("--new", required=True)
    p.add_argument("--commit", action="append", default=[])
    p.add_argument("--minutes", type=float, default=12.0)
    p.add_argument("--retune-minutes", type=float, default=None,
                   help="the retune's budget (default: a third of --minutes, the target)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--work", default="/tmp/mlgo-bench-drift")
    p.add_argument("--steps", default="old,new,retune,commits")
    a = p.parse_args()
    if a.package in bt.RESERVED:
        p.error(f"{a.package} is reserved for evaluation")
    if a.package not in bt.RECIPES or bt.RECIPES[a.package].get("kind"):
        p.error(f"no make recipe for {a.package} in bench/tune.py")
    recipe, steps = bt.RECIPES[a.package], set(a.steps.split(","))
    work = os.path.join(a.work, a.package)
    logs = os.path.join(work, "logs")
    os.makedirs(logs, exist_ok=True)
    saved = os.path.join(work, "results.json")
    res = json.load(open(saved)) if os.path.exists(saved) else {}

    def keep() -> None:
        with open(saved, "w") as f:
            json.dump(res, f, indent=1)

    old_tuning, new_tuning = os.path.join(work, "tuning-old"), os.path.join(work, "tuning-new")
    if "old" in steps:
        corpus = os.path.join(work, "corpus-old")
        if not os.path.exists(os.path.join(corpus, "corpus_description.json")):
            bt.capture(recipe, prepare(a.old), work, OPT, corpus, logs)
        res["first_tune_s"] = tune(corpus, old_tuning, a.minutes, a.workers)
        res["old"] = builds_of(recipe, a.old, os.path.join(work, "old"), old_tuning, logs, "old")
        keep()
    base = gains(res["old"])
    say_builds("release N, tuned", res["old"])
    bt.say(f"first tune: {res['first_tune_s']:.0f} s")
    if "new" in steps:
        res["new"] = builds_of(recipe, prepare(a.new), os.path.join(work, "new"), old_tuning,
                               logs, "new")
        keep()
    if "new" in res:
        say_builds("release N+1 with N's tuning", res["new"], base)
    if "retune" in steps:
        shutil.rmtree(new_tuning, ignore_errors=True)
        shutil.copytree(old_tuning, new_tuning)
        corpus = os.path.join(work, "corpus-new")
        shutil.rmtree(corpus, ignore_errors=True)
        bt.capture(recipe, prepare(a.new), os.path.join(work, "capture-new"), OPT, corpus, logs)
        minutes = a.retune_minutes if a.retune_minutes is not None else a.minutes / 3
        res["retune_s"] = tune(corpus, new_tuning, minutes, a.workers)
        res["retuned"] = builds_of(recipe, a.new, os.path.join(work, "retuned"), new_tuning,
                                   logs, "retuned")
        keep()
    if "retuned" in res:
        say_builds("release N+1 retuned", res["retuned"])
        bt.say(f"retune: {res['retune_s']:.0f} s, {res['retune_s'] / res['first_tune_s']:.2f}x "
               "the first tune")
    if "commits" in steps:
        res["commits"] = {}
        for i, tree in enumerate(a.commit):
            res["commits"][tree] = builds_of(recipe, prepare(tree),
                                             os.path.join(work, f"commit{i}"), old_tuning,
                                             logs, f"commit{i}")
            keep()
    for tree, b in res.get("commits", {}).items():
        say_builds(f"{os.path.basename(tree)} with N's tuning", b, base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
