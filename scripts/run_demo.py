#!/usr/bin/env python3
"""The main job on the bundled demo corpus: serves inlining and regalloc with
mlgo-env on Unix sockets, plays every module with the example agents, and
prints a per-module table of scores and rewards.

- inlining (-Oz demo corpus): the default-following agent (reward must be 0:
  answering clang's own decision reproduces a plain compile) and the random
  agent;
- regalloc (-O2 demo corpus): the random agent (random valid evictions).

The inlining server runs with the shipped IR2Vec vocabulary (--ir2vec-vocab=
default): every observation carries callee/caller embeddings and every reset
the module's embedding; the script reports the most similar pair of modules.

Scores: inlining = executable-section bytes; regalloc = 4*reloads + spills +
0.2*copies (frequency-weighted). reward = 1 - policy/default.
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agents  # noqa: E402
import mlgo_client  # noqa: E402


def start_server(mlgo_env, problem, socket_path, jobs, extra):
    command = [mlgo_env, "serve", f"--problem={problem}", f"--listen=unix:{socket_path}",
               f"--jobs={jobs}"] + extra
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    line = process.stderr.readline()
    if "listening on" not in line:
        rest = process.stderr.read()
        raise SystemExit(f"mlgo-env serve failed to start: {line}{rest}")
    # Keep draining stderr so the server never blocks on it.
    threading.Thread(target=lambda: [sys.stderr.write(l) for l in process.stderr],
                     daemon=True).start()
    return process


def play_all(client, modules, policy, parallel, seed, embeddings=None):
    """Plays every module once with `policy`, `parallel` episodes per batch.
    Module embeddings from reset's info go to `embeddings` when given."""
    vec = mlgo_client.VectorEnv(client, parallel)
    problem = vec.spec["problem"]
    rng = random.Random(seed)
    results = {}
    for start in range(0, len(modules), parallel):
        chunk = modules[start:start + parallel]
        vec.n = len(chunk)
        vec.episodes = [None] * vec.n
        first = vec.reset(modules=chunk)
        observations = [obs for obs, _ in first]
        infos = [info for _, info in first]
        steps = [0] * vec.n
        for i, (obs, info) in enumerate(first):
            if embeddings is not None and "module_embedding" in info:
                embeddings[chunk[i]] = info["module_embedding"]
            if obs is None:
                results[chunk[i]] = dict(info, reward=info.get("reward", 0.0), steps=0)
        while vec.live():
            actions = [None] * vec.n
            for i in vec.live():
                if policy == "default":
                    actions[i] = agents.default_action(problem, infos[i])
                else:
                    actions[i] = agents.random_action(problem, observations[i], rng)
            live = vec.live()
            out = vec.step(actions)
            for i in live:
                obs, reward, terminated, truncated, info = out[i]
                steps[i] += 1
                if "error" in info:
                    results[chunk[i]] = {"error": str(info["error"]), "steps": steps[i]}
                    continue
                observations[i], infos[i] = obs, info
                if terminated or truncated:
                    results[chunk[i]] = dict(info, reward=reward, steps=steps[i])
    return results


def fmt_score(result, key):
    if "error" in result:
        return "error"
    return f"{result.get(key, float('nan')):.1f}"


def fmt_reward(result):
    return "error" if "error" in result else f"{result['reward']:+.4f}"


def most_similar_pair(embeddings):
    """(cosine, a, b) of the two modules whose embeddings point most alike."""
    def cosine(x, y):
        nx, ny = math.sqrt(sum(v * v for v in x)), math.sqrt(sum(v * v for v in y))
        return sum(a * b for a, b in zip(x, y)) / (nx * ny) if nx and ny else 0.0
    names = sorted(embeddings)
    return max(((cosine(embeddings[a], embeddings[b]), a, b)
                for i, a in enumerate(names) for b in names[i + 1:]), default=None)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mlgo-env", default=os.path.join(here, "..", "build", "src", "mlgo-env"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--server-arg", action="append", default=[],
                        help="extra flag for mlgo-env serve (repeatable)")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="mlgo-run-")
    servers = {}
    started = time.time()
    try:
        for problem in ("inlining", "regalloc"):
            extra = (["--ir2vec-vocab=default"] if problem == "inlining" else []) + args.server_arg
            servers[problem] = start_server(args.mlgo_env, problem,
                                            os.path.join(workdir, problem + ".sock"), args.jobs,
                                            extra)
        inlining = mlgo_client.connect_unix(os.path.join(workdir, "inlining.sock"))
        regalloc = mlgo_client.connect_unix(os.path.join(workdir, "regalloc.sock"))
        description = inlining.describe()
        with open(os.path.join(description["corpus"]["root"], "corpus_description.json")) as f:
            modules = json.load(f)["modules"]
        print(f"mlgo-env on the demo corpus: {len(modules)} modules, clang "
              f"{description['clang']['version']}, {args.jobs} jobs", flush=True)

        embeddings = {}
        inl_default = play_all(inlining, modules, "default", args.jobs, args.seed, embeddings)
        inl_random = play_all(inlining, modules, "random", args.jobs, args.seed)
        ra_random = play_all(regalloc, modules, "random", args.jobs, args.seed)

        header = (f"{'module':26} | {'inl default B':>13} {'follow-default':>14} "
                  f"{'random B':>9} {'reward':>8} | {'ra default':>11} {'random':>11} "
                  f"{'reward':>8} {'steps':>6}")
        print(header)
        print("-" * len(header))
        failures = 0
        for m in modules:
            d, r, g = inl_default[m], inl_random[m], ra_random[m]
            failures += sum("error" in x for x in (d, r, g))
            print(f"{m:26} | {fmt_score(d, 'default_score'):>13} {fmt_reward(d):>14} "
                  f"{fmt_score(r, 'policy_score'):>9} {fmt_reward(r):>8} | "
                  f"{fmt_score(g, 'default_score'):>11} {fmt_score(g, 'policy_score'):>11} "
                  f"{fmt_reward(g):>8} {g.get('steps', 0):6d}")

        def mean(results):
            values = [x["reward"] for x in results.values() if "error" not in x]
            return sum(values) / len(values) if values else float("nan")

        print("-" * len(header))
        print(f"mean reward: inlining follow-default {mean(inl_default):+.4f}, inlining random "
              f"{mean(inl_random):+.4f}, regalloc random {mean(ra_random):+.4f}")
        nonzero = [m for m in modules if "error" not in inl_default[m]
                   and abs(inl_default[m]["reward"]) > 1e-12]
        features = [f for f in description["observation_spec"] if f["name"].endswith("_embedding")]
        pair = most_similar_pair(embeddings)
        print(f"IR2Vec ({description['ir2vec']['dimension']}-d vocabulary): "
              + ", ".join(f"{f['name']} {f['shape']}" for f in features)
              + f" in every inlining observation; {len(embeddings)} module embeddings"
              + (f", most similar: {pair[1]} ~ {pair[2]} (cosine {pair[0]:.3f})" if pair else ""))
        print(f"{len(modules) * 3} episodes in {time.time() - started:.1f} s; "
              f"{failures} failed; follow-default reward != 0 on {len(nonzero)} module(s)")
        inlining.close()
        regalloc.close()
        missing = len(features) != 2 or len(embeddings) != len(modules)
        return 1 if failures or nonzero or missing else 0
    finally:
        for process in servers.values():
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        for name in os.listdir(workdir):
            os.unlink(os.path.join(workdir, name))
        os.rmdir(workdir)


if __name__ == "__main__":
    sys.exit(main())
