#!/usr/bin/env python3
"""How close regalloc episodes come to the plain compile when the agent answers
info.default_action (the host emulation of clang's default eviction advisor,
or clang's own default when the clang offers it), against the old fallback
"evict nothing" (the last index when the mask allows it, else the first
valid one). Both policies play every module of the corpus (default: the -O2
demo corpus) through `mlgo-env --problem=regalloc` in one run.

    python3 scripts/bench_regalloc_default.py --mlgo-env build/src/mlgo-env [--jobs 2]

Per policy it prints:
  - identical functions: functions whose policy score equals the plain
    compile's, over every function the compiles reported or that made a
    decision, and over the functions that made decisions only;
  - total ratio: sum of policy scores / sum of default scores over modules;
  - module-mean reward: the mean over modules of 1 - policy/default (one hot
    function cannot dominate it).
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlgo_client  # noqa: E402


def evict_nothing(observation, info):
    mask = observation["mask"]
    if mask[-1] == 1:
        return len(mask) - 1
    return next((i for i, m in enumerate(mask) if m == 1), len(mask) - 1)


def default_action(observation, info):
    return info["default_action"]


POLICIES = {"emulation": default_action, "evict-nothing": evict_nothing}


def modules(exe, corpus):
    cmd = [exe, "trace", "--problem=regalloc", "--dry-run"]
    if corpus:
        cmd.append("--corpus=" + corpus)
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.split()


def play(env, names, policy):
    """Plays `names` (len == env.n) to the end; returns per-module results."""
    results = []
    started = env.reset(modules=names)
    obs = [o for o, _ in started]
    infos = [i for _, i in started]
    decided = [set() for _ in names]
    finals = [None] * len(names)
    for i, (o, info) in enumerate(started):
        if "error" in info:
            raise RuntimeError(f"{names[i]}: {info['error']}")
        if o is None:
            finals[i] = info
    while env.live():
        actions = [0] * env.n
        for i in env.live():
            decided[i].add(infos[i]["context"])
            actions[i] = policy(obs[i], infos[i])
        for i, (o, _, terminated, truncated, info) in zip(range(env.n), env.step(actions)):
            if "error" in info:
                raise RuntimeError(f"{names[i]}: {info['error']}")
            if finals[i] is None and (terminated or truncated) and "policy_score" in info:
                finals[i] = info
            obs[i], infos[i] = o, info
    for name, final, functions in zip(names, finals, decided):
        results.append((name, final, functions))
    return results


def summarise(results):
    all_functions = identical_all = 0
    with_decisions = identical_decided = 0
    total_policy = total_default = 0.0
    rewards = []
    for name, final, decided in results:
        total_policy += final["policy_score"]
        total_default += final["default_score"]
        d, p = final["default_score"], final["policy_score"]
        rewards.append(0.0 if d == p else (1 - p / d if d else -1.0))
        scores = {c["name"]: (c["policy_score"], c.get("default_score") or 0.0)
                  for c in final.get("contexts", [])}
        for function in decided:
            scores.setdefault(function, (0.0, 0.0))
        for function, (p, d) in scores.items():
            same = p == d
            all_functions += 1
            identical_all += same
            if function in decided:
                with_decisions += 1
                identical_decided += same
    return {
        "functions": all_functions,
        "identical": identical_all,
        "with_decisions": with_decisions,
        "identical_with_decisions": identical_decided,
        "total_ratio": total_policy / total_default if total_default else float("nan"),
        "module_mean_reward": sum(rewards) / len(rewards),
        "modules": len(results),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mlgo-env", required=True)
    parser.add_argument("--corpus", default="")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--policies", default="emulation,evict-nothing")
    args = parser.parse_args()
    names = modules(args.mlgo_env, args.corpus)
    cmd = [args.mlgo_env, "--problem=regalloc", f"--jobs={args.jobs}"]
    if args.corpus:
        cmd.append("--corpus=" + args.corpus)
    client = mlgo_client.connect_stdio(cmd)
    source = client.describe().get("default_action_source")
    print(f"default_action_source: {source}; {len(names)} modules")
    summaries = {}
    for policy in args.policies.split(","):
        results = []
        for start in range(0, len(names), args.jobs):
            chunk = names[start:start + args.jobs]
            env = mlgo_client.VectorEnv(client, len(chunk))
            results += play(env, chunk, POLICIES[policy])
        s = summaries[policy] = summarise(results)
        print(f"{policy:>14}: identical functions {100 * s['identical'] / s['functions']:.1f}% "
              f"of {s['functions']} ({100 * s['identical_with_decisions'] / s['with_decisions']:.1f}%"
              f" of {s['with_decisions']} with decisions); total ratio {s['total_ratio']:.5f}; "
              f"module-mean reward {s['module_mean_reward']:+.5f} over {s['modules']} modules",
              flush=True)
    client.close()


if __name__ == "__main__":
    main()
