"""Playing whole episodes with a policy, many at once, for training and evaluation.

An :class:`EpisodePool` holds `workers` environments (in-process, or one connection each
to a server) and plays modules on them from as many threads; the environments release
the GIL while clang works, so the threads overlap compiles. Each result records the
scores the reward is computed from and where the time went.
"""

from __future__ import annotations

import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol, Sequence

import numpy as np

#: decides one step: (observation, info) -> action
Decide = Callable[[Any, dict], int]


class Actor(Protocol):
    """Anything that answers a step, such as a policy file's runner
    (mlgo_env.policies.policy.Policy); this module does not import the policies."""

    def act(self, observation: Mapping[str, Any], info: Mapping[str, Any] | None = None
            ) -> int: ...


@dataclass
class EpisodeResult:
    module: str
    reward: float
    policy_score: float
    default_score: float
    steps: int
    seconds: float          # wall time of the episode
    policy_seconds: float   # time spent deciding in Python
    compile_seconds: float  # clang's wall time for the episode's compile (from info)
    #: the final step's per-context scores (info["contexts"]; regalloc: per function)
    contexts: list | None = None
    #: the episode was cut short (max_steps) before clang finished
    truncated: bool = False


def corpus_modules(corpus: str) -> list[str]:
    """The module names listed in DIR/corpus_description.json."""
    path = os.path.join(corpus, "corpus_description.json")
    try:
        with open(path, encoding="utf-8") as f:
            modules = json.load(f)["modules"]
    except FileNotFoundError as e:
        raise ValueError(f"'{corpus}' is not a corpus: {path} does not exist") from e
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{path} is not a valid corpus description: {e}") from e
    if not modules:
        raise ValueError(f"corpus '{corpus}' has no modules")
    return [str(m) for m in modules]


def policy_decider(policy: Actor) -> Decide:
    return lambda obs, info: policy.act(obs, info)


def default_decider(obs: Any, info: dict) -> int:
    return int(info["default_action"])


def play_episode(env: Any, module: str, decide: Decide, max_steps: int = 1_000_000
                 ) -> EpisodeResult:
    """Plays `module` to its end on `env`, answering every step with `decide`."""
    start = time.perf_counter()
    obs, info = env.reset(options={"module": module})
    steps, deciding = 0, 0.0
    reward = float(info.get("reward", 0.0))
    terminated = obs is None or bool(info.get("terminated", False))
    truncated = False
    while not terminated:
        t = time.perf_counter()
        action = decide(obs, info)
        deciding += time.perf_counter() - t
        obs, reward, terminated, truncated, info = env.step(action)
        steps += 1
        terminated = terminated or truncated
        if steps > max_steps:
            raise RuntimeError(f"{module}: more than {max_steps} steps")
    return EpisodeResult(module, float(reward), float(info.get("policy_score", 0.0)),
                         float(info.get("default_score", 0.0)), steps,
                         time.perf_counter() - start, deciding,
                         float(info.get("compile_seconds", 0.0)), info.get("contexts"),
                         bool(truncated))


def scratch_dir(temp_dir: str | None, remote: str | None) -> str | None:
    """The compilers' scratch directory: `temp_dir`, else /dev/shm for in-process
    environments when it is writable (it saves time per episode), else None."""
    if temp_dir is None and not remote and os.access("/dev/shm", os.W_OK):
        return "/dev/shm"
    return temp_dir


def env_factory(problem: str, corpus: str, remote: str | None, cache_dir: str | None,
                temp_dir: str | None = None, ir2vec_vocab: str | None = None,
                regalloc_score: str | None = None, **options: Any) -> Callable[[], Any]:
    """A function making one environment (in-process, or connected to `remote`);
    `temp_dir` is the compilers' scratch directory (in-process only); `ir2vec_vocab`
    (a vocabulary path or "default") adds the IR2Vec embeddings to inlining observations
    (in-process only; a server has its own); `regalloc_score` ("llvm", "instructions", "executed";
    None: the environment's default) is the regalloc problems' score (in-process only);
    `options`: further mlgo_env.make options (in-process only; None ones are left out)."""
    import mlgo_env  # the package's entry point; imported late so policy tools need no core

    def make() -> Any:
        if remote:
            return mlgo_env.make(problem, remote=remote)
        kwargs: dict[str, Any] = {"corpus": corpus, "jobs": 1}
        if cache_dir:
            kwargs["cache_dir"] = cache_dir
        if temp_dir:
            kwargs["temp_dir"] = temp_dir
        if ir2vec_vocab:
            kwargs["ir2vec_vocab"] = ir2vec_vocab
        if regalloc_score:
            kwargs["regalloc_score"] = regalloc_score
        kwargs.update((k, v) for k, v in options.items() if v is not None)
        return mlgo_env.make(problem, **kwargs)
    return make


class EpisodePool:
    """`workers` environments played from as many threads. Not itself thread-safe: one
    caller at a time uses `play`. close() closes every environment."""

    def __init__(self, make_env: Callable[[], Any], workers: int) -> None:
        self._envs = [make_env() for _ in range(workers)]
        self._free = list(self._envs)
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=workers)
        self.episodes = 0

    def _run(self, module: str, decide: Decide) -> EpisodeResult:
        with self._lock:
            env = self._free.pop()
        try:
            return play_episode(env, module, decide)
        finally:
            with self._lock:
                self._free.append(env)

    def play(self, jobs: Sequence[tuple[str, Decide]]) -> list[EpisodeResult]:
        """Plays every (module, decide) pair; results in the order given."""
        futures = [self._executor.submit(self._run, m, d) for m, d in jobs]
        results = [f.result() for f in futures]
        self.episodes += len(results)
        return results

    def observation_features(self) -> list[str]:
        """The observation feature names of the pool's environments."""
        space = self._envs[0].observation_space
        return list(getattr(space, "spaces", space).keys())

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        for env in self._envs:
            env.close()

    def __enter__(self) -> "EpisodePool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def summarise(results: Sequence[EpisodeResult]) -> dict[str, float]:
    """Totals and the mean of per-module rewards (one hot module cannot dominate it)."""
    default = sum(r.default_score for r in results)
    policy = sum(r.policy_score for r in results)
    rewards = np.asarray([r.reward for r in results]) if results else np.zeros(1)
    return {
        "modules": float(len(results)),
        "default_total": default,
        "policy_total": policy,
        "total_change": (policy / default - 1.0) if default else 0.0,
        "reward_mean": float(rewards.mean()),
        "reward_p10": float(np.quantile(rewards, 0.1)),
        "reward_p50": float(np.quantile(rewards, 0.5)),
        "reward_p90": float(np.quantile(rewards, 0.9)),
    }
