"""The two ways an Env reaches the environment, behind one interface.

``InProcessBackend`` calls the C++ environment in this process (the compiled
``_core``); ``RemoteBackend`` talks to ``mlgo-env serve`` (remote.py). Both
answer with the same Python values for the same module and actions:

- ``reset(requests)``: ``requests`` is ``[(module|None, seed|None,
  max_steps|None, actions|None), ...]`` (``actions``: a fork's prefix, a list
  of ints/floats; see Env.reset); per request ``(episode, module, obs, reward,
  terminated, truncated, info)`` or an ``MlgoError`` instance;
- ``step(episodes, actions)``: per episode ``(obs, reward, terminated,
  truncated, info)`` or an ``MlgoError`` instance;
- ``close_episode(episode)``, ``close()``, ``description`` (describe()'s dict),
  ``modules()``.

Observations are dicts of fresh numpy arrays (copies: they never change
after they are returned). A batch waits on all its compilers at once: in
process on C++ threads with the GIL released, remotely in one round trip.
"""

from __future__ import annotations

import json
import os
import weakref
import atexit
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import remote as _remote
from ._native import load_core
from .errors import MlgoError, error_for

ResetRequest = Tuple[Optional[str], Optional[int], Optional[int], Optional[List[Union[int, float]]]]

# Every live in-process environment, so that its compilers die with the
# interpreter even when the Env objects are still referenced at exit.
_LIVE_CORES: "weakref.WeakSet[Any]" = weakref.WeakSet()


@atexit.register
def _shutdown_all() -> None:  # pragma: no cover - runs at interpreter exit
    for core in list(_LIVE_CORES):
        try:
            core.shutdown()
        except Exception:
            pass


class Backend:
    description: Dict[str, Any]

    def reset(self, requests: Sequence[ResetRequest]) -> List[Any]:
        raise NotImplementedError

    def step(self, episodes: Sequence[int], actions: Sequence[Union[int, float]]) -> List[Any]:
        raise NotImplementedError

    def close_episode(self, episode: int) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def modules(self) -> List[str]:
        raise NotImplementedError


class InProcessBackend(Backend):
    """The C++ environment in this process (see _core's docs in module.cc)."""

    def __init__(self, options: Dict[str, Any]) -> None:
        self._core_module = load_core()
        try:
            self._core = self._core_module.Core(options)
        except self._core_module.Error as error:
            raise error_for(*error.args) from None
        _LIVE_CORES.add(self._core)
        self.description = self._core.describe()

    def _wrap(self, results: List[Any]) -> List[Any]:
        error_type = self._core_module.Error
        return [error_for(*r.args) if isinstance(r, error_type) else r for r in results]

    def reset(self, requests: Sequence[ResetRequest]) -> List[Any]:
        try:
            return self._wrap(self._core.reset(list(requests)))
        except self._core_module.Error as error:
            raise error_for(*error.args) from None

    def step(self, episodes: Sequence[int], actions: Sequence[Union[int, float]]) -> List[Any]:
        try:
            return self._wrap(self._core.step(list(episodes), list(actions)))
        except self._core_module.Error as error:
            raise error_for(*error.args) from None

    def close_episode(self, episode: int) -> None:
        try:
            self._core.close_episode(episode)
        except self._core_module.Error as error:
            raise error_for(*error.args) from None

    def compiler_pid(self, episode: int) -> Optional[int]:
        return self._core.compiler_pid(episode)

    def open_episodes(self) -> int:
        return self._core.open_episodes()

    def close(self) -> None:
        """Kills every compiler of this environment; idempotent."""
        if not self._core.closed:
            self._core.shutdown()

    def modules(self) -> List[str]:
        return list(self._core.modules())


_FLOAT_FIELDS = ("policy_score", "default_score", "compile_seconds", "compiler_cpu_seconds")


def _floats(info: Dict[str, Any]) -> Dict[str, Any]:
    """JSON writes 2524.0 as 2524: give scores the type the in-process backend
    gives them."""
    for key in _FLOAT_FIELDS:
        if key in info:
            info[key] = float(info[key])
    for context in info.get("contexts", ()):
        for key in ("policy_score", "default_score"):
            if key in context:
                context[key] = float(context[key])
    if "module_embedding" in info:
        info["module_embedding"] = [float(v) for v in info["module_embedding"]]
    return info


class RemoteBackend(Backend):
    """A server reached through a Client; binary observations (base64 from a
    server that does not offer them)."""

    def __init__(self, client: _remote.Client, owns_client: bool = True) -> None:
        self.client = client
        self._owns_client = owns_client
        self.description = client.describe()
        self._specs = _remote.feature_specs(self.description)
        self._layout = _remote.frame_layout(self._specs)
        offered = self.description.get("encodings", [])
        self._encoding = "binary" if "binary" in offered else "base64"

    def _reset_params(self, request: ResetRequest) -> Dict[str, Any]:
        module, seed, max_steps, actions = (tuple(request) + (None,))[:4]
        params: Dict[str, Any] = {"encoding": self._encoding}
        if module is not None:
            params["module"] = module
        if seed is not None:
            params["seed"] = seed
        options: Dict[str, Any] = {}
        if max_steps is not None:
            options["max_steps"] = max_steps
        if actions is not None:
            options["actions"] = list(actions)
        if options:
            params["options"] = options
        return params

    def reset(self, requests: Sequence[ResetRequest]) -> List[Any]:
        calls = [("reset", self._reset_params(r)) for r in requests]
        results = self.client.batch(calls) if len(calls) > 1 else [self._one(*calls[0])]
        out: List[Any] = []
        for result in results:
            if isinstance(result, MlgoError):
                out.append(result)
                continue
            out.append((result["episode"], result["module"],
                        self._observation(result),
                        float(result["reward"]), result["terminated"], result["truncated"],
                        _floats(result["info"])))
        return out

    def _observation(self, result: Dict[str, Any]) -> Any:
        return _remote.decode_observation(result["observation"], self._specs, self._layout)

    def _one(self, method: str, params: Dict[str, Any]) -> Any:
        try:
            return self.client.call(method, params)
        except MlgoError as error:
            if error.code is None:  # ServerGone: no per-call result to give
                raise
            return error

    def step(self, episodes: Sequence[int], actions: Sequence[Union[int, float]]) -> List[Any]:
        calls = [("step", {"episode": e, "action": a}) for e, a in zip(episodes, actions)]
        results = self.client.batch(calls) if len(calls) > 1 else [self._one(*calls[0])]
        out: List[Any] = []
        for result in results:
            if isinstance(result, MlgoError):
                out.append(result)
                continue
            out.append((self._observation(result),
                        float(result["reward"]), result["terminated"], result["truncated"],
                        _floats(result["info"])))
        return out

    def close_episode(self, episode: int) -> None:
        self.client.call("close", {"episode": episode})

    def close(self) -> None:
        if self._owns_client:
            self.client.close()

    def modules(self) -> List[str]:
        root = self.description["corpus"]["root"]
        path = os.path.join(root, "corpus_description.json")
        try:
            with open(path) as f:
                return list(json.load(f)["modules"])
        except OSError as error:
            raise OSError(f"the server's corpus {root} is not readable here: {error}") from None
