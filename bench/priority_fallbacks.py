#!/usr/bin/env python3
"""Measures the regalloc-priority fallbacks (constant, li_size, weight x 1000,
stage, stage-then-size; see --priority-fallback) against clang's default
priority, on a corpus (default: the -O2 demo corpus), in one run: each is
traced with `mlgo-env trace --problem=regalloc-priority --policy=fallback`.

    python3 bench/priority_fallbacks.py --mlgo-env build/src/mlgo-env [--jobs 2]

Per fallback: total ratio (sum of policy scores / sum of default scores over
modules), module-mean reward (mean over modules of 1 - policy/default), and
how many modules it wins / loses / ties against the default.
"""
import argparse
import csv
import os
import subprocess
import tempfile

FALLBACKS = ["constant", "li_size", "weight", "stage", "stage-then-size"]


def measure(exe, fallback, corpus, jobs, workdir):
    out = os.path.join(workdir, fallback + ".log")
    cmd = [exe, "trace", "--problem=regalloc-priority", "--policy=fallback",
           f"--priority-fallback={fallback}", f"--jobs={jobs}", "--no-progress", "--output=" + out]
    if corpus:
        cmd.append("--corpus=" + corpus)
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    with open(out + ".csv") as f:
        modules = [r for r in csv.DictReader(f) if r["context"] == r["module"]]
    policy = sum(float(r["policy_score"]) for r in modules)
    default = sum(float(r["default_score"]) for r in modules)
    rewards = [float(r["reward"]) for r in modules]
    return {
        "total_ratio": policy / default,
        "module_mean_reward": sum(rewards) / len(rewards),
        "won": sum(r > 0 for r in rewards),
        "lost": sum(r < 0 for r in rewards),
        "tied": sum(r == 0 for r in rewards),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mlgo-env", required=True)
    parser.add_argument("--corpus", default="")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--fallbacks", default=",".join(FALLBACKS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mlgo-priority-bench-") as workdir:
        results = {}
        for fallback in args.fallbacks.split(","):
            r = results[fallback] = measure(args.mlgo_env, fallback, args.corpus, args.jobs,
                                            workdir)
            print(f"{fallback:>16}: total ratio {r['total_ratio']:.5f}; module-mean reward "
                  f"{r['module_mean_reward']:+.5f}; modules won {r['won']}, lost {r['lost']}, "
                  f"tied {r['tied']}", flush=True)
    best = max(results, key=lambda k: results[k]["module_mean_reward"])
    print(f"best by module-mean reward: {best}")


if __name__ == "__main__":
    main()
