"""Example policies for mlgo-env agents (standard library only).

- ``random_action``: a uniformly random *valid* action for any problem
  (inlining: 0/1; regalloc: an index whose mask is 1; regalloc-priority: a
  float in [0, 2^31)).
- ``default_action``: clang's own inlining decision, reported in ``info``.
"""

import random


def random_action(problem, observation, rng):
    if problem == "inlining":
        return rng.randint(0, 1)
    if problem == "regalloc":
        mask = observation["mask"]
        if hasattr(mask, "ravel"):
            mask = mask.ravel().tolist()
        valid = [i for i, allowed in enumerate(mask) if allowed == 1]
        return rng.choice(valid)
    if problem == "regalloc-priority":
        return rng.uniform(0.0, 2.0**31)
    raise ValueError(f"no random policy for problem {problem!r}")


def default_action(problem, info):
    if problem != "inlining" or "default_action" not in info:
        raise ValueError("clang reports its default decision only for inlining")
    return info["default_action"]


def play_episode(env, policy, rng=None, module=None, seed=None, max_steps=None):
    """Plays one episode of ``env`` (mlgo_client.Env) with ``policy`` ("random"
    or "default"). Returns the final info dict plus reward and steps."""
    rng = rng or random.Random(0)
    options = {}
    if module is not None:
        options["module"] = module
    if max_steps is not None:
        options["max_steps"] = max_steps
    observation, info = env.reset(seed=seed, options=options)
    steps = 0
    reward = info.get("reward", 0.0)
    while observation is not None:
        if policy == "default":
            action = default_action(env.problem, info)
        else:
            action = random_action(env.problem, observation, rng)
        observation, reward, terminated, truncated, info = env.step(action)
        steps += 1
        if terminated or truncated:
            break
    result = dict(info)
    result.update(reward=reward, steps=steps, module=env.module)
    return result
