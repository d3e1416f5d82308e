#!/usr/bin/env python3
"""Plays episodes with uniformly random valid actions (any problem).

    scripts/random_agent.py --connect unix:/tmp/mlgo.sock --episodes 10
    scripts/random_agent.py --connect stdio -- build/src/mlgo-env --problem=regalloc
"""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agents  # noqa: E402
import mlgo_client  # noqa: E402


def main(policy="random", doc=__doc__):
    parser = argparse.ArgumentParser(description=doc,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connect", required=True, help="unix:PATH, HOST:PORT or stdio")
    parser.add_argument("--episodes", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--module", action="append", help="play these modules (repeatable)")
    parser.add_argument("--policy", choices=["random", "default"], default=policy)
    parser.add_argument("command", nargs="*", help="with --connect stdio: the mlgo-env command")
    args = parser.parse_args()
    client = mlgo_client.connect(args.command if args.connect == "stdio" else args.connect)
    env = mlgo_client.Env(client)
    rng = random.Random(args.seed)
    modules = args.module or [None] * args.episodes
    print(f"{'module':28} {'steps':>6} {'policy':>12} {'default':>12} {'reward':>9}")
    for i, module in enumerate(modules):
        result = agents.play_episode(env, args.policy, rng, module=module, seed=args.seed + i)
        print(f"{result['module']:28} {result['steps']:6d} {result.get('policy_score', 0):12.1f} "
              f"{result.get('default_score', 0):12.1f} {result['reward']:9.4f}")
    env.close()
    client.close()


if __name__ == "__main__":
    main()
