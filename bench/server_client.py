#!/usr/bin/env python3
"""Steps/s from the Python package's remote transport against a running
mlgo-env server (used by bench_server_step, which serves a replayed stream so
clang's time is out), with JSON, base64 and binary observations."""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from mlgo_env import remote  # noqa: E402


def choose(problem, observation, info):
    if problem == "inlining":
        return info["default_action"]
    mask = observation["mask"].ravel().tolist()
    return 32 if mask[32] == 1 else mask.index(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--connect", required=True)
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--module", default="replay")
    args = parser.parse_args()
    client = remote.connect(args.connect)
    description = client.describe()
    problem = description["problem"]
    specs = remote.feature_specs(description)
    layout = remote.frame_layout(specs)
    for encoding in ("json", "base64", "binary"):
        steps, seconds = 0, 0.0
        for _ in range(args.episodes):
            result = client.call("reset", {"module": args.module, "encoding": encoding})
            episode, info = result["episode"], result["info"]
            observation = remote.decode_observation(result["observation"], specs, layout)
            start = time.perf_counter()
            while observation is not None:
                result = client.call("step", {"episode": episode,
                                              "action": choose(problem, observation, info)})
                observation = remote.decode_observation(result["observation"], specs, layout)
                info = result["info"]
                steps += 1
                if result["terminated"] or result["truncated"]:
                    break
            seconds += time.perf_counter() - start
        print(f"{problem}: Python client ({encoding} observations): {steps} steps, "
              f"{steps / seconds:.0f} steps/s, {seconds / steps * 1e6:.1f} us per step")
    client.close()


if __name__ == "__main__":
    main()
