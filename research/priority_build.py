"""Does searching register-allocation priorities lower what a workload executes beyond
searching evictions? The build half: a package built with a profile (an earlier
bench/tune_pgo.py run's work directory), its hot modules compiled with the priorities
priority_search.py found (priority_cc.py as CC; clang's own eviction advisor in those
modules, the eviction table in the others), measured on the held-back input against the
run's PGO build and its eviction-tuned build (callgrind instructions), and the package's
tests run on the new build.

    PYTHONPATH=python /usr/bin/python3 research/priority_build.py --package xz-utils \\
        --work /work/pgo39/xz-utils --decisions D.json [--decisions E.json ...] \\
        [--against pgo+picked] [--table DIR]

Each --decisions file gives one build, named after the file (pgo+prio-D; no colon: LD_LIBRARY_PATH splits at it). --table: the
eviction table the other modules use (default WORK/PKG-regalloc/tuning); none = `-`.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(os.path.dirname(HERE), "bench")
sys.path.insert(0, BENCH)
import tune as bench  # noqa: E402
import tune_pgo  # noqa: E402

WRAPPER = os.path.join(HERE, "priority_cc.py")


def build_with(recipe: dict, tree: str, root: str, flags: str, decisions: str, table: str,
               log: str) -> None:
    os.environ["MLGO_PRIORITY_DECISIONS"] = os.path.abspath(decisions)
    os.environ["PYTHONPATH"] = os.path.join(os.path.dirname(HERE), "python")
    os.environ["MLGO_PRIORITY_OTHERWISE"] = (
        f"{bench.LAUNCH} --tuning={table} --no-log --" if table != "-" else "")
    if os.path.exists(decisions + ".log"):
        os.unlink(decisions + ".log")
    bench.build(recipe, tree, root, flags, f"/usr/bin/python3 {WRAPPER} clang-22", log)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--package", required=True)
    p.add_argument("--work", required=True, help="bench/tune_pgo.py's --work")
    p.add_argument("--decisions", action="append", required=True)
    p.add_argument("--against", action="append", default=None,
                   help="builds of the run to measure beside (default pgo+picked)")
    p.add_argument("--table", default=None)
    a = p.parse_args(argv)
    recipe = bench.RECIPES[a.package]
    work = os.path.join(a.work, f"{a.package}-regalloc")
    tree = bench.fetch(a.package, a.work)
    flags = f"-O2 -fprofile-instr-use={os.path.join(work, 'pgo.profdata')}"
    table = a.table or os.path.join(work, "tuning")
    builds = {side: os.path.join(work, side)
              for side in ["plain", "pgo", *(a.against or ["pgo+picked"])]}
    for d in a.decisions:
        name = "pgo+prio-" + os.path.splitext(os.path.basename(d))[0]
        builds[name] = os.path.join(work, name)
        build_with(recipe, tree, builds[name], flags, d, table,
                   os.path.join(work, "logs", name))
        served = []
        if os.path.exists(d + ".log"):  # none when no compile was the file's
            with open(d + ".log", encoding="utf-8") as f:
                served = f.read().splitlines()
        differ = sum(json.loads(s)["differ"] != {} for s in served)
        bench.say(f"{name}: {len(served)} compiles served; {differ} asked otherwise than "
                  "the search saw")
    tune_pgo.held_back(recipe, builds, tune_pgo.tar_of("/usr/include/c++/12",
                                                       os.path.join(work, "held-back.tar")))
    for name, root in builds.items():
        if name.startswith("pgo+prio-"):
            code = bench.run(recipe["check"], root, log=os.path.join(work, "logs",
                                                                     f"{name}.check"), check=False)
            bench.say(f"tests ({' '.join(recipe['check'])}) on the {name} build: exit {code}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
