#!/usr/bin/env python3
"""Steps/s from the Python client against a running mlgo-env server (used by
bench_server_step, which serves a replayed stream so clang's time is out)."""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlgo_client  # noqa: E402


def choose(problem, observation, info):
    if problem == "inlining":
        return info["default_action"]
    mask = observation["mask"]
    mask = mask.ravel().tolist() if hasattr(mask, "ravel") else mask
    return 32 if mask[32] == 1 else mask.index(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--connect", required=True)
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--module", default="replay")
    args = parser.parse_args()
    client = mlgo_client.connect(args.connect)
    for encoding in ("json", "base64"):
        env = mlgo_client.Env(client, encoding=encoding)
        steps, seconds = 0, 0.0
        for _ in range(args.episodes):
            observation, info = env.reset(options={"module": args.module})
            start = time.perf_counter()
            while observation is not None:
                observation, _, terminated, truncated, info = env.step(
                    choose(env.problem, observation, info))
                steps += 1
                if terminated or truncated:
                    break
            seconds += time.perf_counter() - start
        print(f"{env.problem}: Python client ({encoding} observations): {steps} steps, "
              f"{steps / seconds:.0f} steps/s, {seconds / steps * 1e6:.1f} us per step")
    client.close()


if __name__ == "__main__":
    main()
