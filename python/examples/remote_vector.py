#!/usr/bin/env python3
"""Batched episodes against a server: start one, then run this.

    build/src/mlgo-env serve --problem=inlining --listen=unix:/tmp/mlgo.sock &
    PYTHONPATH=python /usr/bin/python3 python/examples/remote_vector.py unix:/tmp/mlgo.sock

Each vec.step() is one JSON-RPC batch: one round trip for all slots.
"""
import sys

import mlgo_env

vec = mlgo_env.make_vec("inlining", num_envs=4, remote=sys.argv[1])
obs, infos = vec.reset()  # four sampled modules
rewards = {}
while vec.live():
    actions = [info.get("default_action", 0) for info in infos]
    live = vec.live()
    obs, step_rewards, terminated, truncated, step_infos = vec.step(actions)
    for i in live:
        infos[i] = step_infos[i]
        if terminated[i] or truncated[i]:
            rewards[vec.modules[i]] = step_rewards[i]
print(rewards)  # following clang's own decisions: all 0
vec.close()
