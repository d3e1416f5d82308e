"""The main job on the bundled demo corpus: plays every module with the
example agents and prints a per-module table of scores and rewards.

    python -m mlgo_env.demo                 # environments in this process
    python -m mlgo_env.demo --serve         # the same through mlgo-env serve (Unix sockets)

- inlining (-Oz demo corpus): the default-following agent (reward must be 0:
  answering clang's own decision reproduces a plain compile) and the random
  agent;
- regalloc (-O2 demo corpus): the random agent (random valid evictions).

Inlining runs with the shipped IR2Vec vocabulary: every observation carries
callee/caller embeddings and every reset the module's embedding; the demo
reports the most similar pair of modules.

Scores: inlining = executable-section bytes; regalloc = 4*reloads + spills +
0.2*copies (frequency-weighted). reward = 1 - policy/default. Exits non-zero
if an episode failed, following the default gave a non-zero reward, or the
embeddings are missing.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Dict, Iterator, List, Optional

import mlgo_env
from mlgo_env.agents import choose


@contextlib.contextmanager
def served(mlgo_env_exe: str, problem: str, jobs: int, extra: List[str]) -> Iterator[str]:
    """Runs `mlgo-env serve` on a Unix socket; yields its address."""
    workdir = tempfile.mkdtemp(prefix="mlgo-demo-")
    address = "unix:" + os.path.join(workdir, problem + ".sock")
    process = subprocess.Popen([mlgo_env_exe, "serve", f"--problem={problem}",
                                f"--listen={address}", f"--jobs={jobs}"] + extra,
                               stderr=subprocess.PIPE, text=True)
    try:
        line = process.stderr.readline()
        if "listening on" not in line:
            raise SystemExit(f"mlgo-env serve failed to start: {line}{process.stderr.read()}")
        threading.Thread(target=lambda: [sys.stderr.write(l) for l in process.stderr],
                         daemon=True).start()
        yield address
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(workdir, ignore_errors=True)


def play_all(vec: mlgo_env.VectorEnv, modules: List[str], policy: str, seed: int,
             embeddings: Optional[Dict[str, Any]] = None) -> Dict[str, Dict[str, Any]]:
    """Plays every module once with `policy`, vec.num_envs episodes at a time."""
    rng = random.Random(seed)
    results: Dict[str, Dict[str, Any]] = {}
    n = vec.num_envs
    for start in range(0, len(modules), n):
        chunk = modules[start:start + n]
        names = chunk + [chunk[-1]] * (n - len(chunk))  # pad the last batch
        observations, infos = vec.reset(options={"modules": names})
        steps = [0] * n
        for i, info in enumerate(infos):
            if i >= len(chunk):
                continue
            if embeddings is not None and "module_embedding" in info:
                embeddings[chunk[i]] = info["module_embedding"]
            if "error" in info:
                results[chunk[i]] = {"error": str(info["error"]), "steps": 0}
            elif observations[i] is None:
                results[chunk[i]] = dict(info, steps=0)
        while vec.live():
            actions: List[Any] = [None] * n
            for i in vec.live():
                actions[i] = choose(policy, vec.problem, observations[i], infos[i], rng)
            live = vec.live()
            observations, rewards, terminated, truncated, step_infos = vec.step(actions)
            for i in live:
                steps[i] += 1
                info = step_infos[i]
                if "error" in info:
                    if i < len(chunk):
                        results[chunk[i]] = {"error": str(info["error"]), "steps": steps[i]}
                    continue
                infos[i] = info
                if (terminated[i] or truncated[i]) and i < len(chunk):
                    results[chunk[i]] = dict(info, reward=float(rewards[i]), steps=steps[i])
    return results


def most_similar_pair(embeddings: Dict[str, Any]):
    def cosine(x, y):
        nx, ny = math.sqrt(sum(v * v for v in x)), math.sqrt(sum(v * v for v in y))
        return sum(a * b for a, b in zip(x, y)) / (nx * ny) if nx and ny else 0.0
    names = sorted(embeddings)
    return max(((cosine(embeddings[a], embeddings[b]), a, b)
                for i, a in enumerate(names) for b in names[i + 1:]), default=None)


def _score(result: Dict[str, Any], key: str) -> str:
    return "error" if "error" in result else f"{result.get(key, float('nan')):.1f}"


def _reward(result: Dict[str, Any]) -> str:
    return "error" if "error" in result else f"{result['reward']:+.4f}"


def main(argv: Optional[List[str]] = None) -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--serve", action="store_true",
                        help="run the environments in mlgo-env serve (Unix sockets)")
    parser.add_argument("--mlgo-env", default=os.environ.get("MLGO_ENV") or os.path.join(
        here, "..", "..", "build", "src", "mlgo-env"), help="with --serve: the executable")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    started = time.time()
    with contextlib.ExitStack() as stack:
        def make_vec(problem: str, vocab: bool) -> mlgo_env.VectorEnv:
            if args.serve:
                extra = ["--ir2vec-vocab=default"] if vocab else []
                address = stack.enter_context(served(args.mlgo_env, problem, args.jobs, extra))
                vec = mlgo_env.make_vec(problem, args.jobs, remote=address)
            else:
                vec = mlgo_env.make_vec(problem, args.jobs, jobs=args.jobs,
                                        ir2vec_vocab="default" if vocab else None)
            stack.callback(vec.close)
            return vec

        inlining = make_vec("inlining", True)
        regalloc = make_vec("regalloc", False)
        description = inlining.description
        modules = inlining.corpus_modules()
        print(f"mlgo-env on the demo corpus: {len(modules)} modules, clang "
              f"{description['clang']['version']}, {args.jobs} jobs, "
              f"{'served over Unix sockets' if args.serve else 'in process'}", flush=True)

        embeddings: Dict[str, Any] = {}
        inl_default = play_all(inlining, modules, "default", args.seed, embeddings)
        inl_random = play_all(inlining, modules, "random", args.seed)
        ra_random = play_all(regalloc, modules, "random", args.seed)

    header = (f"{'module':26} | {'inl default B':>13} {'follow-default':>14} "
              f"{'random B':>9} {'reward':>8} | {'ra default':>11} {'random':>11} "
              f"{'reward':>8} {'steps':>6}")
    print(header)
    print("-" * len(header))
    failures = 0
    for m in modules:
        d, r, g = inl_default[m], inl_random[m], ra_random[m]
        failures += sum("error" in x for x in (d, r, g))
        print(f"{m:26} | {_score(d, 'default_score'):>13} {_reward(d):>14} "
              f"{_score(r, 'policy_score'):>9} {_reward(r):>8} | "
              f"{_score(g, 'default_score'):>11} {_score(g, 'policy_score'):>11} "
              f"{_reward(g):>8} {g.get('steps', 0):6d}")

    def mean(results: Dict[str, Dict[str, Any]]) -> float:
        values = [x["reward"] for x in results.values() if "error" not in x]
        return sum(values) / len(values) if values else float("nan")

    def total(results: Dict[str, Dict[str, Any]]) -> float:
        return sum(x["reward"] for x in results.values() if "error" not in x)

    print("-" * len(header))
    print(f"mean reward per module (total): inlining follow-default {mean(inl_default):+.4f} "
          f"({total(inl_default):+.4f}), inlining random {mean(inl_random):+.4f} "
          f"({total(inl_random):+.4f}), regalloc random {mean(ra_random):+.4f} "
          f"({total(ra_random):+.4f})")
    nonzero = [m for m in modules if "error" not in inl_default[m]
               and abs(inl_default[m]["reward"]) > 1e-12]
    features = [f for f in description["observation_spec"] if f["name"].endswith("_embedding")]
    pair = most_similar_pair(embeddings)
    print(f"IR2Vec ({description['ir2vec']['dimension']}-d vocabulary): "
          + ", ".join(f"{f['name']} {f['shape']}" for f in features)
          + f" in every inlining observation; {len(embeddings)} module embeddings"
          + (f", most similar: {pair[1]} ~ {pair[2]} (cosine {pair[0]:.3f})" if pair else ""))
    print(f"{len(modules) * 3} episodes in {time.time() - started:.1f} s; {failures} failed; "
          f"follow-default reward != 0 on {len(nonzero)} module(s)")
    missing = len(features) != 2 or len(embeddings) != len(modules)
    return 1 if failures or nonzero or missing else 0


if __name__ == "__main__":
    sys.exit(main())
