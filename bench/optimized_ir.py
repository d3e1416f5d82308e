#!/usr/bin/env python3
"""Register allocation episodes per second from cached optimised IR against
full compiles: the same modules, side by side in one run.

Every side is `mlgo-env trace` (one default-policy episode per module, J at a
time) with warm baseline caches, so what is timed is the episodes:
  full  `mlgo-env trace --full-compile`: each episode compiles the corpus
        bitcode in full (the IR pipeline, then codegen);
  fast  `mlgo-env trace`: each episode compiles the module's optimised IR
        from the cache with -disable-llvm-optzns.
First, untimed: `mlgo-env corpus optimize` fills the optimised-IR cache (its
time is printed: what a corpus's first use costs once) and one trace of each
side fills its baseline cache. Then the sides alternate ROUNDS times. The
script prints episodes per second (median and best), their ratio (target
>= 1.8), the cache's size against the corpus's bitcode, and checks that both
sides report the same default and policy score for every context (exit 1
otherwise, or when the target is missed).

Usage: bench/optimized_ir.py [--corpus DIR] [--problem regalloc|regalloc-priority]
                                     [--jobs 2] [--rounds 3] [--module_filter RE]
"""
import argparse
import csv
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_EXE = os.path.join(HERE, "..", "build", "src", "mlgo-env")
TARGET = 1.8
DONE = re.compile(r"modules: (\d+) selected, (\d+) done \((\d+) without decisions\), (\d+) failed")
CPU = re.compile(r"cpu: mlgo-env ([\d.]+) s, clang ([\d.]+) s")


def common(args, cache):
    out = [f"--problem={args.problem}", f"--jobs={args.jobs}", f"--cache-dir={cache}"]
    if args.corpus:
        out.append(f"--corpus={args.corpus}")
    return out


def run(argv):
    start = time.perf_counter()
    result = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"{' '.join(argv[:3])} failed ({result.returncode}):\n{result.stdout}"
                 f"{result.stderr}")
    return wall, result.stdout


def trace(args, cache, scratch, full):
    """One trace; returns (wall seconds, episodes, {(module, context): scores},
    clang's CPU seconds)."""
    output = os.path.join(scratch, "full.log" if full else "fast.log")
    argv = [args.mlgo_env, "trace", f"--output={output}", "--no-progress"] + common(args, cache)
    if args.module_filter:
        argv.append(f"--module_filter={args.module_filter}")
    if full:
        argv.append("--full-compile")
    wall, text = run(argv)
    match, cpu = DONE.search(text), CPU.search(text)
    if not match or not cpu:
        sys.exit(f"cannot parse the trace summary:\n{text}")
    selected, done, _, failed = (int(x) for x in match.groups())
    if failed:
        sys.exit(f"trace: {failed} of {selected} modules failed:\n{text}")
    with open(output + ".csv", newline="") as f:
        rows = list(csv.reader(f))
    scores = {(r[0], r[1]): tuple(r[2:4]) for r in rows[1:]}
    return wall, done, scores, float(cpu.group(2))


def size_of(path, suffix):
    total = 0
    for dirpath, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(dirpath, f)) for f in files
                     if f.endswith(suffix))
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mlgo-env", default=os.environ.get("MLGO_ENV", DEFAULT_EXE))
    parser.add_argument("--corpus", default="", help="default: the demo corpus (-O2)")
    parser.add_argument("--problem", default="regalloc",
                        choices=("regalloc", "regalloc-priority"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--module_filter", default="")
    args = parser.parse_args()
    args.mlgo_env = os.path.abspath(args.mlgo_env)
    scratch = tempfile.mkdtemp(prefix="mlgo-bench-optir-")
    try:
        cache = os.path.join(scratch, "cache")
        cold, text = run([args.mlgo_env, "corpus", "optimize", "--no-progress"] +
                         common(args, cache))
        print(text.strip())
        warm = {full: trace(args, cache, scratch, full) for full in (True, False)}
        if warm[True][2] != warm[False][2]:
            diff = [k for k in warm[True][2] if warm[True][2][k] != warm[False][2].get(k)]
            sys.exit(f"scores differ between the paths, e.g. {diff[:5]}")
        timed, cpu = {True: [], False: []}, {True: [], False: []}
        for _ in range(args.rounds):
            for full in (True, False):
                wall, episodes, scores, clang = trace(args, cache, scratch, full)
                if scores != warm[True][2]:
                    sys.exit(f"{'full' if full else 'fast'} trace scores changed between runs")
                timed[full].append(episodes / wall)
                cpu[full].append(clang / episodes)
        ir_bytes = size_of(os.path.join(cache, "optimized-ir"), ".bc")
        corpus_bytes = size_of(args.corpus or os.path.join(
            os.path.dirname(args.mlgo_env), "..", "corpus", "demo-O2"), ".bc")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    episodes = warm[True][1]
    full, fast = statistics.median(timed[True]), statistics.median(timed[False])
    ratio = fast / full
    print(f"{args.problem}: {episodes} episodes per run, jobs={args.jobs}, median of "
          f"{args.rounds} rounds, warm baselines; every context's default and policy scores "
          f"identical on both paths ({len(warm[True][2])} contexts)")
    print(f"  episodes/s: full compile {full:.2f}, optimised IR {fast:.2f}; ratio {ratio:.2f} "
          f"(target >= {TARGET}) {'OK' if ratio >= TARGET else 'BELOW TARGET'}; best of each: "
          f"{max(timed[True]):.2f} vs {max(timed[False]):.2f} = "
          f"{max(timed[False]) / max(timed[True]):.2f}")
    full_cpu, fast_cpu = statistics.median(cpu[True]), statistics.median(cpu[False])
    print(f"  clang cpu per episode: full compile {full_cpu:.3f} s, optimised IR {fast_cpu:.3f} s; "
          f"ratio {full_cpu / fast_cpu:.2f}")
    print(f"  optimised-IR cache: built in {cold:.2f} s (cold, once); {ir_bytes / 2**20:.1f} MiB "
          f"for {corpus_bytes / 2**20:.1f} MiB of corpus bitcode "
          f"({ir_bytes / max(corpus_bytes, 1):.2f}x)")
    return 0 if ratio >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
