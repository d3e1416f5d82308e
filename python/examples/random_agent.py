#!/usr/bin/env python3
"""A random agent on regalloc, in process: valid evictions sampled with the
action space's mask. Run from the checkout root:

    PYTHONPATH=python /usr/bin/python3 python/examples/random_agent.py
"""
import numpy as np

import mlgo_env

env = mlgo_env.make("regalloc", jobs=2)
rewards = []
for episode in range(3):
    # Seeding once makes the whole run reproducible; later resets sample on.
    obs, info = env.reset(seed=0 if episode == 0 else None)
    reward = 0.0
    while obs is not None:
        action = env.action_space.sample(mask=obs["mask"].ravel().astype(np.int8))
        obs, reward, terminated, truncated, info = env.step(action)
    rewards.append(reward)
    print(f"{env.module:24} reward {reward:+.4f} (policy {info['policy_score']:.1f}, "
          f"default {info['default_score']:.1f})")
print(f"mean reward per module {np.mean(rewards):+.4f}, total {np.sum(rewards):+.4f}")
env.close()
