"""Example policies and an episode loop.

- ``random_action``: a uniformly random *valid* action for any problem
  (inlining: 0/1; regalloc: an index whose mask is 1; regalloc-priority: a
  float in [0, 2^31)).
- ``default_action``: clang's own inlining decision, reported in ``info``
  (following it reproduces a plain compile: reward 0).

Command line (in process, or against a server):

    python -m mlgo_env.agents --problem=regalloc --episodes 3
    python -m mlgo_env.agents --policy default --connect unix:/tmp/mlgo.sock
"""

from __future__ import annotations

import argparse
import random
from typing import Any, Dict, Optional

import numpy as np


def random_action(problem: str, observation: Dict[str, Any], rng: random.Random) -> Any:
    if problem == "inlining":
        return rng.randint(0, 1)
    if problem == "regalloc":
        valid = np.flatnonzero(np.asarray(observation["mask"]).ravel() == 1)
        return int(valid[rng.randrange(len(valid))])
    if problem == "regalloc-priority":
        return rng.uniform(0.0, 2.0**31)
    raise ValueError(f"no random policy for problem {problem!r}")


def default_action(problem: str, info: Dict[str, Any]) -> Any:
    if "default_action" not in info:
        raise ValueError(f"clang reports its default decision only for inlining, not {problem}")
    return info["default_action"]


def choose(policy: str, problem: str, observation: Dict[str, Any], info: Dict[str, Any],
           rng: random.Random) -> Any:
    """The action of ``policy`` ("random" or "default")."""
    if policy == "default":
        return default_action(problem, info)
    return random_action(problem, observation, rng)


def play_episode(env: Any, policy: str, rng: Optional[random.Random] = None,
                 module: Optional[str] = None, seed: Optional[int] = None,
                 max_steps: Optional[int] = None) -> Dict[str, Any]:
    """Plays one episode of ``env`` (an mlgo_env.Env) with ``policy``.
    Returns the final info plus ``reward``, ``steps`` and ``module``."""
    rng = rng or random.Random(0)
    options: Dict[str, Any] = {}
    if module is not None:
        options["module"] = module
    if max_steps is not None:
        options["max_steps"] = max_steps
    observation, info = env.reset(seed=seed, options=options)
    steps = 0
    reward = info.get("reward", 0.0)
    while observation is not None:
        action = choose(policy, env.problem, observation, info, rng)
        observation, reward, terminated, truncated, info = env.step(action)
        steps += 1
        if terminated or truncated:
            break
    result = dict(info)
    result.update(reward=reward, steps=steps, module=env.module)
    return result


def main(argv: Optional[list] = None) -> int:
    import mlgo_env

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problem", default="inlining")
    parser.add_argument("--connect", help="unix:PATH or HOST:PORT (default: in process)")
    parser.add_argument("--episodes", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--module", action="append", help="play these modules (repeatable)")
    parser.add_argument("--policy", choices=["random", "default"], default="random")
    args = parser.parse_args(argv)
    env = mlgo_env.make(args.problem, remote=args.connect)
    rng = random.Random(args.seed)
    modules = args.module or [None] * args.episodes
    rewards = []
    print(f"{'module':28} {'steps':>6} {'policy':>12} {'default':>12} {'reward':>9}")
    for i, module in enumerate(modules):
        result = play_episode(env, args.policy, rng, module=module, seed=args.seed + i)
        rewards.append(result["reward"])
        print(f"{result['module']:28} {result['steps']:6d} {result.get('policy_score', 0):12.1f} "
              f"{result.get('default_score', 0):12.1f} {result['reward']:9.4f}")
    print(f"mean reward over {len(rewards)} episodes: {sum(rewards) / len(rewards):+.4f} "
          f"(total {sum(rewards):+.4f})")
    env.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
