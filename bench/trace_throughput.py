#!/usr/bin/env python3
"""What tracing costs: `mlgo-env trace --jobs=J` against plain clang compiling
the same modules J at a time, measured side by side in one run.

For each problem, after one untimed trace that fills a private baseline cache
(its time is printed as "cold"), the script alternates ROUNDS times:
  plain  the modules' plain compiles (corpus recompile commands from
         `mlgo-env trace --print-commands`, i.e. corpus::recompileArgs, no MLGO
         flags), J at a time, largest module first as trace runs them;
  trace  `mlgo-env trace --jobs=J` over the same modules (warm cache).
It prints the median wall times, their ratio (target <= 1.08; also the ratio
of the best runs, which a busy machine disturbs least), and mlgo-env's
own CPU time (getrusage SELF, all threads, as the trace summary reports it)
as a share of clang's CPU time in the same run (RUSAGE_CHILDREN of mlgo-env;
target <= 1%), plus the share of plain clang's CPU and the host CPU per
observation.

Usage: bench/trace_throughput.py [--mlgo-env PATH] [--problem P|all] [--jobs 2]
                              [--rounds 3] [--sampling-rate 1] [--module_filter RE]
"""
import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_EXE = os.path.join(HERE, "..", "build", "src", "mlgo-env")
PROBLEMS = ("inlining", "regalloc", "regalloc-priority")


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def selection_args(args, problem):
    out = [f"--problem={problem}", f"--sampling-rate={args.sampling_rate}",
           f"--seed={args.seed}"]
    if args.module_filter:
        out.append(f"--module_filter={args.module_filter}")
    return out


def plain_commands(args, problem):
    text = subprocess.run([args.mlgo_env, "trace", "--print-commands"] +
                          selection_args(args, problem),
                          check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def run_plain(commands, jobs, scratch):
    """Runs the compiles `jobs` at a time, in order; returns (wall, cpu)."""
    pending = list(enumerate(commands))
    lock = threading.Lock()
    errors = []

    def worker():
        while True:
            with lock:
                if not pending:
                    return
                index, command = pending.pop(0)
            argv = [os.path.join(scratch, f"{index}.o") if a == "OBJECT" else a
                    for a in command["argv"]]
            result = subprocess.run(argv, stdin=subprocess.DEVNULL,
                                    capture_output=True)
            if result.returncode != 0:
                with lock:
                    errors.append(f"{command['module']}: {result.stderr[-400:]!r}")

    cpu0, start = children_cpu(), time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall, cpu = time.perf_counter() - start, children_cpu() - cpu0
    if errors:
        sys.exit("plain compile failed: " + "; ".join(errors[:3]))
    return wall, cpu


SUMMARY = re.compile(r"observations: (\d+) in .*?time: ([\d.]+) s wall; cpu: mlgo-env "
                     r"([\d.]+) s, clang ([\d.]+) s", re.S)


def run_trace(args, problem, cache, scratch):
    """Runs one trace; returns (wall, host cpu, clang cpu, observations)."""
    output = os.path.join(scratch, "trace.log")
    argv = [args.mlgo_env, "trace", f"--jobs={args.jobs}", f"--cache-dir={cache}",
            f"--output={output}", "--no-progress"] + selection_args(args, problem)
    start = time.perf_counter()
    result = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"trace failed ({result.returncode}): {result.stdout}{result.stderr}")
    match = SUMMARY.search(result.stdout)
    if not match:
        sys.exit(f"cannot parse the trace summary:\n{result.stdout}")
    observations, _, host, clang = match.groups()
    return wall, float(host), float(clang), int(observations)


def bench(args, problem):
    commands = plain_commands(args, problem)
    if not commands:
        sys.exit(f"{problem}: no module selected")
    scratch = tempfile.mkdtemp(prefix="mlgo-bench-trace-")
    try:
        cache = os.path.join(scratch, "cache")
        cold = run_trace(args, problem, cache, scratch)
        plain, traced = [], []
        for _ in range(args.rounds):
            plain.append(run_plain(commands, args.jobs, scratch))
            traced.append(run_trace(args, problem, cache, scratch))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    plain_best = min(w for w, _ in plain)
    trace_best = min(t[0] for t in traced)
    plain_wall = statistics.median(w for w, _ in plain)
    plain_cpu = statistics.median(c for _, c in plain)
    trace_wall = statistics.median(t[0] for t in traced)
    host = statistics.median(t[1] for t in traced)
    clang = statistics.median(t[2] for t in traced)
    observations = traced[0][3]
    ratio = trace_wall / plain_wall
    share = 100 * host / clang
    print(f"{problem}: {len(commands)} modules, {observations} observations, jobs={args.jobs}, "
          f"median of {args.rounds} rounds")
    print(f"  wall: plain clang {plain_wall:.2f} s, trace {trace_wall:.2f} s "
          f"(cold cache, with baseline compiles: {cold[0]:.2f} s)")
    print(f"  wall ratio trace/plain: {ratio:.3f} (target <= 1.08) "
          f"{'OK' if ratio <= 1.08 else 'ABOVE TARGET'}; best of each: "
          f"{plain_best:.2f} s vs {trace_best:.2f} s = {trace_best / plain_best:.3f}")
    print(f"  cpu: mlgo-env {host:.3f} s, clang in trace {clang:.2f} s, plain clang "
          f"{plain_cpu:.2f} s; clang's interactive-mode cost {100 * (clang / plain_cpu - 1):+.1f}%")
    print(f"  mlgo-env cpu share: {share:.2f}% of clang's in the same run "
          f"({100 * host / plain_cpu:.2f}% of plain clang's) (target <= 1%) "
          f"{'OK' if share <= 1 else 'ABOVE TARGET'}; "
          f"{1e6 * host / max(observations, 1):.1f} us per observation")
    return ratio <= 1.08 and share <= 1


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mlgo-env", default=os.environ.get("MLGO_ENV", DEFAULT_EXE))
    parser.add_argument("--problem", default="all", choices=PROBLEMS + ("all",))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sampling-rate", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--module_filter", default="")
    args = parser.parse_args()
    args.mlgo_env = os.path.abspath(args.mlgo_env)
    problems = PROBLEMS if args.problem == "all" else (args.problem,)
    met = [bench(args, p) for p in problems]
    return 0 if all(met) else 1


if __name__ == "__main__":
    sys.exit(main())
