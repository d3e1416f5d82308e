#!/usr/bin/env python3
"""How close regalloc episodes come to the plain compile when the agent answers
info.default_action (the host emulation of clang's default eviction advisor,
or clang's own default when the clang offers it), against the old fallback
"evict nothing" (the last index when the mask allows it, else the first
valid one). Both policies play every module of the corpus (default: the -O2
demo corpus) through `mlgo-env --problem=regalloc` in one run.

    python3 bench/regalloc_default.py --mlgo-env build/src/mlgo-env [--jobs 2]

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

from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import mlgo_env  # noqa: E402


def evict_nothing(observation, info):
    mask = [int(m) for m in observation["mask"].reshape(-1)]
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


def play(env, name, policy):
    """Plays module `name` to its end; returns (name, final info, functions decided)."""
    obs, info = env.reset(options={"module": name})
    decided = set()
    while obs is not None:
        decided.add(info["context"])
        obs, _, terminated, truncated, info = env.step(policy(obs, info))
        if terminated or truncated:
            break
    return name, info, decided


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
    options = {"corpus": args.corpus} if args.corpus else {}
    envs = [mlgo_env.make("regalloc", jobs=1, **options) for _ in range(args.jobs)]
    source = envs[0].description.get("default_action_source")
    print(f"default_action_source: {source}; {len(names)} modules")
    with ThreadPoolExecutor(args.jobs) as pool:
        for policy in args.policies.split(","):
            chunks = [names[i::args.jobs] for i in range(args.jobs)]
            parts = pool.map(lambda ec: [play(ec[0], n, POLICIES[policy]) for n in ec[1]],
                             zip(envs, chunks))
            s = summarise([r for part in parts for r in part])
            print(f"{policy:>14}: identical functions {100 * s['identical'] / s['functions']:.1f}% "
                  f"of {s['functions']} ({100 * s['identical_with_decisions'] / s['with_decisions']:.1f}%"
                  f" of {s['with_decisions']} with decisions); total ratio {s['total_ratio']:.5f}; "
                  f"module-mean reward {s['module_mean_reward']:+.5f} over {s['modules']} modules",
                  flush=True)
    for env in envs:
        env.close()


if __name__ == "__main__":
    main()
