"""``VectorEnv``: ``num_envs`` episodes stepped together, one call per batch.

In process, a batch's resets and steps run on C++ threads while Python waits
with the GIL released (Ctrl-C is still noticed within ~50 ms); over a socket
a batch is one JSON-RPC batch line, one round trip.

Episodes end at different times, so this is not gymnasium's autoresetting
vector env: a slot whose episode ended stays idle (``None`` observation,
``live()`` excludes it) until the next ``reset()``. Per-slot failures do not
raise: the slot's info gets ``"error"`` (an MlgoError); an InvalidAction
leaves that slot's episode where it was, any other error ends it.

    vec = mlgo_env.make_vec("regalloc", num_envs=4)
    obs, infos = vec.reset(seed=0)
    while vec.live():
        actions = [policy(o) if o is not None else None for o in obs]
        obs, rewards, terminated, truncated, infos = vec.step(actions)
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import spaces as _spaces
from .backend import Backend
from .env import prefix_actions, to_action
from .errors import InvalidAction, InvalidParams, MlgoError, UnknownEpisode


class VectorEnv:
    """``num_envs`` slots over one backend. Observations are copies (see Env)."""

    def __init__(self, backend: Backend, num_envs: int) -> None:
        if num_envs < 1:
            raise InvalidParams("num_envs must be at least 1")
        self._backend = backend
        self.num_envs = num_envs
        self.description = backend.description
        self.problem: str = self.description["problem"]
        specs = self.description["observation_spec"]
        self.single_observation_space = _spaces.observation_space(specs)
        self.single_action_space = _spaces.action_space(self.problem,
                                                        self.description["action_spec"], specs)
        self.episodes: List[Optional[int]] = [None] * num_envs
        self.modules: List[Optional[str]] = [None] * num_envs
        self._closed = False

    def reset(self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None
              ) -> Tuple[List[Optional[Dict[str, np.ndarray]]], List[Dict[str, Any]]]:
        """Starts one episode per slot (closing open ones). ``seed``: slot i
        reseeds the sampler with ``seed + i`` (with the default round-robin
        sampler the first module does not depend on the seed, so seeded slots
        may all start the same module; without a seed they sample on). ``options``: ``modules`` (one
        name per slot), ``max_steps``, ``actions`` (one fork prefix per slot, or None
        for a slot without one; see Env.reset). A failed reset leaves its slot idle
        with ``info["error"]``."""
        self._check_open()
        options = dict(options or {})
        unknown = set(options) - {"modules", "max_steps", "actions"}
        if unknown:
            raise InvalidParams(f"unknown reset option(s) {sorted(unknown)}")
        modules = options.get("modules")
        if modules is not None and len(modules) != self.num_envs:
            raise InvalidParams(f"options['modules'] names {len(modules)} modules for "
                                f"{self.num_envs} slots")
        prefixes = options.get("actions")
        if prefixes is not None and len(prefixes) != self.num_envs:
            raise InvalidParams(f"options['actions'] holds {len(prefixes)} prefixes for "
                                f"{self.num_envs} slots")
        prefixes = [None] * self.num_envs if prefixes is None else [
            prefix_actions(p) for p in prefixes]
        self._close_open()
        requests = [(modules[i] if modules is not None else None,
                     None if seed is None else seed + i, options.get("max_steps"), prefixes[i])
                    for i in range(self.num_envs)]
        observations: List[Optional[Dict[str, np.ndarray]]] = []
        infos: List[Dict[str, Any]] = []
        for i, result in enumerate(self._backend.reset(requests)):
            if isinstance(result, MlgoError):
                self.episodes[i] = self.modules[i] = None
                observations.append(None)
                infos.append({"error": result})
                continue
            episode, module, obs, reward, terminated, truncated, info = result
            info = dict(info, module=module, episode=episode)
            self.modules[i] = module
            if terminated or truncated:
                info.update(terminated=terminated, truncated=truncated, reward=reward)
                self.episodes[i] = None
                observations.append(None)
            else:
                self.episodes[i] = episode
                observations.append(obs)
            infos.append(info)
        return observations, infos

    def step(self, actions: Sequence[Any]):
        """Steps every live slot with its action (idle slots' actions are
        ignored). Returns ``(observations, rewards, terminated, truncated,
        infos)``: lists for observations and infos, numpy arrays for the rest;
        idle slots give ``None``, 0.0, False, False, ``{}``."""
        self._check_open()
        if len(actions) != self.num_envs:
            raise InvalidParams(f"{len(actions)} actions for {self.num_envs} slots")
        observations: List[Optional[Dict[str, np.ndarray]]] = [None] * self.num_envs
        rewards = np.zeros(self.num_envs)
        terminated = np.zeros(self.num_envs, dtype=bool)
        truncated = np.zeros(self.num_envs, dtype=bool)
        infos: List[Dict[str, Any]] = [{} for _ in range(self.num_envs)]
        live, values = [], []
        for i in self.live():
            try:
                values.append(to_action(actions[i]))
                live.append(i)
            except InvalidAction as error:
                infos[i] = {"error": error}
        results = self._backend.step([self.episodes[i] for i in live], values) if live else []
        for i, result in zip(live, results):
            if isinstance(result, MlgoError):
                if not isinstance(result, InvalidAction):
                    self.episodes[i] = None
                infos[i] = {"error": result}
                continue
            obs, reward, term, trunc, info = result
            observations[i], rewards[i], terminated[i], truncated[i], infos[i] = \
                obs, reward, term, trunc, info
            if term or trunc:
                self.episodes[i] = None
        return observations, rewards, terminated, truncated, infos

    def corpus_modules(self) -> List[str]:
        """The corpus modules, in corpus order."""
        return self._backend.modules()

    def live(self) -> List[int]:
        """Slots with an open episode."""
        return [i for i, e in enumerate(self.episodes) if e is not None]

    def close(self) -> None:
        """Ends open episodes and releases the backend. Idempotent."""
        if self._closed:
            return
        self._close_open()
        self._closed = True
        self._backend.close()

    def __enter__(self) -> "VectorEnv":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def _check_open(self) -> None:
        if self._closed:
            raise UnknownEpisode("this VectorEnv is closed")

    def _close_open(self) -> None:
        for i, episode in enumerate(self.episodes):
            if episode is not None:
                self.episodes[i] = None
                try:
                    self._backend.close_episode(episode)
                except MlgoError:
                    pass
