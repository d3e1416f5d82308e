#!/usr/bin/python3
"""PGO and tuning together: a Debian source package built with a profile of its own
workload, tuned on top of it, and measured on an input the profile never saw.

    /usr/bin/python3 bench/tune_pgo.py --package xz-utils [--problem regalloc|inlining]
        [--minutes 20] [--workers 2] [--held-back DIR] [--work /tmp/mlgo-bench-pgo]
        [--pick [--candidates 3] [--pick-timeout 3600]] [--regalloc-score llvm|instructions|executed]
    /usr/bin/python3 bench/tune_pgo.py --package xz-utils --wall 10 [--cpu 1] [--work ...]
    /usr/bin/python3 bench/tune_pgo.py --package xz-utils --priorities 16 --from-table DIR
        [--priority-modules REGEX] [--work ...] [--workers 2]

Steps (each printed with its wall time), by the package's own build system (the recipes
in bench/recipes.py, which name the workload):

1. an instrumented build (`-O2 -fprofile-instr-generate`), and the workload on the training
   input (a tar of the package's source, as bench/tune.py) with `LLVM_PROFILE_FILE`;
2. `llvm-profdata merge` into WORK/pgo.profdata;
3. the corpus captured with the profile in CFLAGS (`-O2 -fprofile-instr-use=WORK/pgo.profdata`)
   and `python -m mlgo_env.tune` on it (regalloc by default; --regalloc-score is passed on:
   the score its search lowers, LLVM's weighting, the instructions estimate or the executed
   estimate);
   With --pick (regalloc), the table is copied as the search left it (WORK/tuning-static)
   and `python -m mlgo_env.tune pick` chooses its hot functions' decisions by the workload
   on the training input: its build is `make clean && make` in a configured PGO tree
   (WORK/pick-tree) with the launcher as CC, its workload the recipe's steps on the
   training input, each program as "$MLGO_RUN" PROGRAM;
4. three builds: plain -O2, PGO, and PGO through `mlgo-env-launch --tuning=DIR` (with
   --pick: the static table as `pgo+tuned`, the picked one as a fourth, `pgo+picked`);
5. the workload on the held-back input (a tar of --held-back, default the C++ standard
   library's headers: text the profile never saw; decompression reads what the plain build
   compressed): instructions under valgrind (callgrind's total, deterministic) on each
   build, PGO against plain and each tuned build against PGO, outputs compared; then linked sizes,
   the package's tests on each build and what the launcher's log says (bench/tune.py's
   report).

Wall times: `--wall PAIRS` (after a run, on a quiet machine) times each workload step on
the held-back input with the builds that run left, PGO against each tuned build, in PAIRS
alternating pairs pinned to one CPU (`--cpu`, default 1): medians, their ratio, the
pairs' range, and the load average before and after. `--builds` names the tuned builds
(directories of the run's work folder; default `pgo+tuned,pgo+picked`).

Priorities: `--priorities MINUTES` (regalloc) runs `python -m mlgo_env.tune priorities` on a
copy of the final table (WORK/tuning-priorities) and builds a further `pgo+priorities`
through the launcher with it (which answers clang's priority channel where an entry has
priorities), measured beside the others. With `--from-table DIR` (after a run) it starts
from DIR instead, builds `pgo+table` with DIR itself, and measures plain, PGO, `pgo+table`
and `pgo+priorities` on the held-back input, with the package's tests on the new builds.
The reserved packages are refused, as by bench/tune.py.
"""
from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tune as bench  # noqa: E402  (bench/tune.py: recipes, builds, capture, report)
sys.path.insert(0, os.path.join(bench.CHECKOUT, "python"))
from mlgo_env.tuning.identity import REGALLOC_SCORES  # noqa: E402

PROFDATA = "/usr/lib/llvm-22/bin/llvm-profdata"


def lib_env(recipe: dict, root: str) -> dict:
    """The environment a build's programs run in: its own libraries first. A build path
    with a colon is refused: LD_LIBRARY_PATH would split it, and the programs would load
    the system's copies of the libraries without a word."""
    if recipe.get("libs") and ":" in root:
        raise SystemExit(f"bench/tune_pgo: the build directory '{root}' has a colon, "
                         "which LD_LIBRARY_PATH cannot hold")
    return dict(os.environ, LD_LIBRARY_PATH=":".join(
        os.path.join(root, d) for d in recipe.get("libs", [])))


def tar_of(directory: str, out: str) -> str:
    """A tar of `directory` (sorted names, fixed owners and times: the same bytes each run)."""
    if not os.path.exists(out):
        subprocess.run(["tar", "cf", out, "--sort=name", "--owner=0", "--group=0",
                        "--numeric-owner", "--mtime=@0", "-C", directory, "."], check=True)
    return out


def inputs_for(recipe: dict, root: str, data: str) -> list[tuple[str, list[str]]]:
    """The workload's steps on `data` for the build at `root`; decompression reads
    `data` + the compressor's suffix, which must exist."""
    steps = []
    for name, template in recipe["workload"]:
        argv = [a.format(build=root, data=data) for a in template]
        steps.append((name, argv))
    return steps


def run_workload(recipe: dict, root: str, data: str, env: dict) -> None:
    """Every step of the workload on `data` with the build at `root`, in order; the
    compression's output is what the decompression reads (`data` + the compressor's
    suffix)."""
    for name, argv in inputs_for(recipe, root, data):
        if name == "compress":
            with open(data + bench.compressed_suffix(argv[0]), "wb") as f:
                subprocess.run(argv, env=env, stdout=f, check=True)
        else:
            subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=True)


def profile(recipe: dict, tree: str, work: str, logs: str, data: str) -> str:
    """Steps 1-2: the instrumented build, the workload on `data`, the merged profile."""
    root = os.path.join(work, "instrumented")
    bench.build(recipe, tree, root, "-O2 -fprofile-instr-generate", "clang-22",
                os.path.join(logs, "instrumented"))
    raw = os.path.join(work, "raw")
    shutil.rmtree(raw, ignore_errors=True)
    os.makedirs(raw)
    env = dict(lib_env(recipe, root), LLVM_PROFILE_FILE=os.path.join(raw, "%m-%p.profraw"))
    run_workload(recipe, root, data, env)
    out = os.path.join(work, "pgo.profdata")
    subprocess.run([PROFDATA, "merge", "-o", out] +
                   [os.path.join(raw, f) for f in sorted(os.listdir(raw))], check=True)
    return out


def held_back(recipe: dict, builds: dict[str, str], data: str) -> None:
    """Step 5: instructions of each workload step on the held-back input, per build."""
    run_workload(recipe, builds["plain"], data, lib_env(recipe, builds["plain"]))
    for index, (name, _) in enumerate(recipe["workload"]):
        counts, outputs = {}, {}
        for side, root in builds.items():
            argv = inputs_for(recipe, root, data)[index][1]
            env = lib_env(recipe, root)
            outputs[side] = subprocess.run(argv, env=env, stdout=subprocess.PIPE,
                                           check=True).stdout
            counts[side] = bench.instructions(argv, env)
        plain, pgo = counts["plain"], counts["pgo"]
        tuned = ", ".join(f"{side} {c:,} ({c / pgo - 1:+.2%} against PGO)"
                          for side, c in counts.items() if side.startswith("pgo+"))
        same = len(set(outputs.values())) == 1
        bench.say(f"held-back {name}: instructions plain {plain:,}, PGO {pgo:,} "
                  f"({pgo / plain - 1:+.2%} against plain), {tuned}; outputs "
                  f"{'identical' if same else 'DIFFERENT'}")


def wall(recipe: dict, builds: dict[str, str], data: str, rounds: int, cpu: int) -> None:
    """Wall time of each workload step on `data`, PGO against each tuned build: `rounds`
    pairs, alternating which runs first, every run pinned to `cpu` (taskset), output to
    /dev/null; medians, their ratio, and the ratio's range over the pairs. The load average
    is printed before and after: the figures mean something on a quiet machine only."""
    run_workload(recipe, builds["plain"], data, lib_env(recipe, builds["plain"]))
    bench.say(f"wall: load average before {os.getloadavg()[0]:.2f}, {rounds} pairs, cpu {cpu}")
    for index, (name, _) in enumerate(recipe["workload"]):
        for side in [s for s in builds if s.startswith("pgo+")]:
            pair = {k: (["taskset", "-c", str(cpu)] + inputs_for(recipe, builds[k], data)[index][1],
                        lib_env(recipe, builds[k])) for k in ("pgo", side)}
            walls: dict[str, list[float]] = {"pgo": [], side: []}
            for r in range(rounds):
                for k in (("pgo", side) if r % 2 == 0 else (side, "pgo")):
                    start = time.perf_counter()
                    subprocess.run(pair[k][0], env=pair[k][1], stdout=subprocess.DEVNULL,
                                   check=True)
                    walls[k].append(time.perf_counter() - start)
            ratios = sorted(t / p for p, t in zip(walls["pgo"], walls[side]))
            mp, mt = statistics.median(walls["pgo"]), statistics.median(walls[side])
            bench.say(f"wall {name}: PGO median {mp:.3f} s, {side} {mt:.3f} s "
                      f"({mt / mp:.3f}x; pairs {ratios[0]:.3f}x..{ratios[-1]:.3f}x)")
    bench.say(f"wall: load average after {os.getloadavg()[0]:.2f}")


def pick(a: argparse.Namespace, recipe: dict, tree: str, work: str, logs: str, flags: str,
         corpus: str, tuning: str, training: str) -> str:
    """Step 3b: the static table copied to WORK/tuning-static, then `tune pick` on
    `tuning` with the workload on the training input; returns the static copy."""
    static = os.path.join(work, "tuning-static")
    shutil.rmtree(static, ignore_errors=True)
    shutil.copytree(tuning, static)
    where = os.path.join(work, "pick-tree")
    t0 = time.perf_counter()
    bench.build(recipe, tree, where, flags, "clang-22", os.path.join(logs, "pick-tree"))
    bench.say(f"pick tree configured and built ({time.perf_counter() - t0:.0f} s)")
    libs = ":".join(os.path.join(where, d) for d in recipe.get("libs", []))
    steps = [f"export LD_LIBRARY_PATH={shlex.quote(libs)}"] if libs else []
    for name, argv in inputs_for(recipe, ".", training):
        line = '"$MLGO_RUN" ' + " ".join(shlex.quote(x) for x in argv)
        if name == "compress":
            line += " > " + shlex.quote(training + bench.compressed_suffix(argv[0]))
        steps.append(line + (" > /dev/null" if name != "compress" else ""))
    # a recipe without configure takes its flags on make's line, as bench.build gives them
    extra = "" if recipe["configure"] else " " + " ".join(
        shlex.quote(f"{var}={flags}") for var in ("CFLAGS", "MOREFLAGS"))
    build = (f'make clean > /dev/null && make -j{os.cpu_count() or 2} '
             f'CC="{bench.LAUNCH} --tuning=$MLGO_TUNING -- clang-22"{extra} > /dev/null')
    run_tune("pick", [f"--tuning={tuning}", f"--corpus={corpus}", f"--directory={where}",
                      f"--build={build}", f"--workload={' && '.join(steps)}",
                      f"--candidates={a.candidates}", f"--timeout={a.pick_timeout}",
                      f"--workers={a.workers}"])
    return static


def arguments() -> tuple[argparse.Namespace, dict]:
    """The command line, checked, and the package's recipe (argparse exits on an error)."""
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--package", required=True)
    p.add_argument("--problem", default="regalloc", choices=["inlining", "regalloc"])
    p.add_argument("--minutes", type=float, default=20.0)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--held-back", default="/usr/include/c++/12",
                   help="a directory whose tar is the input the profile never saw")
    p.add_argument("--work", default="/tmp/mlgo-bench-pgo")
    p.add_argument("--pick", action="store_true",
                   help="regalloc: choose the hot functions' decisions by the workload "
                   "(python -m mlgo_env.tune pick) and build both tables")
    p.add_argument("--candidates", type=int, default=3, help="--pick: candidates per function")
    p.add_argument("--pick-timeout", type=float, default=3600.0,
                   help="--pick: seconds each build and workload run may take")
    p.add_argument("--regalloc-score", default="llvm",
                   choices=list(REGALLOC_SCORES),
                   help="regalloc: the score tune's search lowers (docs/regalloc.md)")
    p.add_argument("--wall", type=int, metavar="PAIRS",
                   help="only the wall times of the builds an earlier run left in --work: "
                   "PGO against each tuned build on the held-back input, PAIRS alternating "
                   "pairs pinned to --cpu (run it on a quiet machine)")
    p.add_argument("--cpu", type=int, default=1, help="--wall: the CPU the runs are pinned to")
    p.add_argument("--priorities", type=float, metavar="MINUTES",
                   help="regalloc: then `tune priorities` for this many minutes (module doc)")
    p.add_argument("--from-table", help="--priorities: start from this table of an earlier run")
    p.add_argument("--priority-modules", metavar="REGEX",
                   help="--priorities: these modules instead of tune's choice (its --modules)")
    p.add_argument("--builds", default="pgo+tuned,pgo+picked",
                   help="--wall: the tuned builds timed against PGO, comma-separated "
                   "directories of WORK (those that exist)")
    a = p.parse_args()
    if a.regalloc_score != "llvm" and a.problem != "regalloc":
        p.error("--regalloc-score needs --problem regalloc")
    if a.pick and a.problem != "regalloc":
        p.error("--pick needs --problem regalloc")
    if {"plain", "pgo"} & set(a.builds.split(",")):
        p.error("--builds names tuned builds; plain and pgo are always there")
    if a.wall is not None and a.wall < 1:
        p.error(f"--wall takes a number of pairs, at least 1, not {a.wall}")
    if a.priorities is not None and (a.problem != "regalloc" or a.priorities <= 0):
        p.error("--priorities takes a positive number of minutes and --problem regalloc")
    if a.from_table is not None and a.priorities is None:
        p.error("--from-table goes with --priorities")
    if a.package in bench.RESERVED:
        p.error(f"{a.package} is reserved for evaluation")
    recipe = bench.RECIPES.get(a.package)
    if recipe is None or not recipe["workload"] or recipe.get("kind") == "cmake-thinlto":
        p.error(f"no make recipe with a workload for {a.package} (bench/recipes.py)")
    return a, recipe


def run_tune(step: str, args: list[str]) -> None:
    """`python -m mlgo_env.tune [STEP] ARGS` with the checkout's package: its output said,
    its wall time after it; SystemExit with its error output when it fails."""
    t0 = time.perf_counter()
    r = subprocess.run(["/usr/bin/python3", "-m", "mlgo_env.tune", *([step] if step else []),
                        *args],
                       env=dict(os.environ, PYTHONPATH=os.path.join(bench.CHECKOUT, "python")),
                       capture_output=True, text=True)
    bench.say(r.stdout.rstrip())
    if r.returncode != 0:
        raise SystemExit(f"bench/tune_pgo: tune{' ' + step if step else ''} failed: "
                         f"{r.stderr[-2000:]}")
    bench.say(f"{step or 'tune'}: {time.perf_counter() - t0:.0f} s wall")


def tune_step(a: argparse.Namespace, corpus: str, tuning: str) -> None:
    """Step 3: `python -m mlgo_env.tune` on the captured corpus (SystemExit if it fails)."""
    run_tune("", [f"--problem={a.problem}", f"--corpus={corpus}", f"--output={tuning}",
                  f"--minutes={a.minutes}", f"--workers={a.workers}", "--progress-every=120",
                  "--no-replay-file"] +
             ([f"--regalloc-score={a.regalloc_score}"] if a.problem == "regalloc" else []))


def build_all(recipe: dict, tree: str, work: str, logs: str, flags: str,
              tables: dict[str, str]) -> dict[str, str]:
    """Step 4: plain -O2, PGO, and PGO through the launcher with each of `tables`
    ({build name: tuning directory}, each table's launcher log started afresh)."""
    builds = {side: os.path.join(work, side) for side in ["plain", "pgo", *tables]}
    t0 = time.perf_counter()
    bench.build(recipe, tree, builds["plain"], "-O2", "clang-22", os.path.join(logs, "plain"))
    bench.build(recipe, tree, builds["pgo"], flags, "clang-22", os.path.join(logs, "pgo"))
    for side, table in tables.items():
        log = os.path.join(table, "launch.log")
        if os.path.exists(log):
            os.unlink(log)
        bench.build(recipe, tree, builds[side], flags,
                    f"{bench.LAUNCH} --tuning={table} -- clang-22", os.path.join(logs, side))
    bench.say(f"{len(builds)} builds ({time.perf_counter() - t0:.0f} s)")
    return builds


def priorities_step(a: argparse.Namespace, work: str, corpus: str, table: str) -> str:
    """`tune priorities` on a copy of `table` (WORK/tuning-priorities); returns the copy."""
    out = os.path.join(work, "tuning-priorities")
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(table, out)
    run_tune("priorities", [f"--tuning={out}", f"--corpus={corpus}",
                            f"--minutes={a.priorities}", f"--workers={a.workers}"] +
             ([f"--modules={a.priority_modules}"] if a.priority_modules else []))
    return out


def from_table(a: argparse.Namespace, recipe: dict, work: str, logs: str) -> int:
    """--priorities --from-table: the priorities step on an earlier run's table (module doc)."""
    tree = bench.fetch(a.package, a.work)
    flags = f"-O2 -fprofile-instr-use={os.path.join(work, 'pgo.profdata')}"
    table = os.path.abspath(a.from_table)
    prio = priorities_step(a, work, os.path.join(work, "corpus"), table)
    builds = {side: os.path.join(work, side) for side in ["plain", "pgo"]}
    if not all(os.path.isdir(root) for root in builds.values()):
        raise SystemExit(f"bench/tune_pgo: --from-table needs the builds of an earlier run in "
                         f"{work}")
    for side, t in (("pgo+table", table), ("pgo+priorities", prio)):
        builds[side] = os.path.join(work, side)
        log = os.path.join(t, "launch.log")
        if os.path.exists(log):
            os.unlink(log)
        bench.build(recipe, tree, builds[side], flags,
                    f"{bench.LAUNCH} --tuning={t} -- clang-22", os.path.join(logs, side))
    held_back(recipe, builds, tar_of(a.held_back, os.path.join(work, "held-back.tar")))
    for side in ("pgo+table", "pgo+priorities"):
        code = bench.run(recipe["check"], builds[side], log=os.path.join(logs, f"{side}.check"),
                         check=False)
        bench.say(f"tests ({' '.join(recipe['check'])}) on the {side} build: exit {code}")
    with open(os.path.join(prio, "launch.log"), encoding="utf-8") as f:
        lines = [line for line in f if '"priorities"' in line]
    bench.say(f"pgo+priorities: {len(lines)} compiles answered priorities from the table")
    return 0


def main() -> int:
    a, recipe = arguments()
    work = os.path.join(a.work, f"{a.package}-{a.problem}")
    logs = os.path.join(work, "logs")
    if a.wall is not None:
        builds = {side: os.path.join(work, side)
                  for side in ["plain", "pgo", *[b for b in a.builds.split(",") if b]]
                  if os.path.isdir(os.path.join(work, side))}
        if not {"plain", "pgo"} <= set(builds) or len(builds) < 3:
            raise SystemExit(f"bench/tune_pgo: --wall needs the builds of an earlier run in "
                             f"{work}")
        wall(recipe, builds, tar_of(a.held_back, os.path.join(work, "held-back.tar")),
             a.wall, a.cpu)
        return 0
    os.makedirs(logs, exist_ok=True)
    if a.from_table is not None:
        return from_table(a, recipe, work, logs)
    tree = bench.fetch(a.package, a.work)
    training = tar_of(tree, os.path.join(work, "training.tar"))
    t0 = time.perf_counter()
    pgo = profile(recipe, tree, work, logs, training)
    bench.say(f"profile {pgo}: {os.path.getsize(pgo):,} bytes "
              f"({time.perf_counter() - t0:.0f} s)")
    flags = f"-O2 -fprofile-instr-use={pgo}"
    corpus, tuning = os.path.join(work, "corpus"), os.path.join(work, "tuning")
    t0 = time.perf_counter()
    shutil.rmtree(corpus, ignore_errors=True)  # a new profile: a new capture
    bench.capture(recipe, tree, work, flags, corpus, logs)
    bench.say(f"captured {corpus} ({time.perf_counter() - t0:.0f} s)")
    tune_step(a, corpus, tuning)
    tables = {"pgo+tuned": tuning}
    if a.pick:
        tables = {"pgo+tuned": pick(a, recipe, tree, work, logs, flags, corpus, tuning,
                                    training), "pgo+picked": tuning}
    if a.priorities is not None:
        tables["pgo+priorities"] = priorities_step(a, work, corpus, tuning)
    builds = build_all(recipe, tree, work, logs, flags, tables)
    held_back(recipe, builds, tar_of(a.held_back, os.path.join(work, "held-back.tar")))
    bench.report(recipe, builds, tuning, logs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
