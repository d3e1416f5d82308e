"""``Env``: one episode at a time, gymnasium's API exactly.

An episode is one compile of one corpus module with the agent answering each
of clang's decisions:

    env = mlgo_env.make("inlining")
    obs, info = env.reset(seed=0)                # or options={"module": "sha256.o"}
    while obs is not None:
        obs, reward, terminated, truncated, info = env.step(info["default_action"])
        if terminated or truncated:
            break
    env.close()

Observations are ``{feature: numpy.ndarray}`` with each spec's dtype and
shape. They are copies: each step returns fresh arrays that nothing in
mlgo_env touches again, valid (and writable) for as long as you keep them.
The terminal step's observation is ``None``.
"""

from __future__ import annotations

import numbers
from typing import Any, Dict, Optional, SupportsFloat, Tuple, Union

import numpy as np

from . import spaces as _spaces
from .backend import Backend
from .errors import InvalidAction, InvalidParams, MlgoError, UnknownEpisode

try:  # gymnasium is optional: subclass its Env when present
    import gymnasium as _gym
    _EnvBase: Any = _gym.Env
except ImportError:  # pragma: no cover - depends on the machine
    _gym = None
    _EnvBase = object

Observation = Optional[Dict[str, np.ndarray]]
Action = Union[int, float, np.integer, np.floating, np.ndarray]

_RESET_OPTIONS = {"module", "max_steps", "actions"}


def prefix_actions(actions: Any) -> Optional[list]:
    """A reset's ``actions`` option (a fork's prefix) as the environment takes it: a list of
    ints/floats, or None. ``InvalidParams`` when it is not a sequence; ``InvalidAction``
    naming the index of an entry that is not one action."""
    if actions is None:
        return None
    if isinstance(actions, (str, bytes)) or not isinstance(actions, (list, tuple, np.ndarray)):
        raise InvalidParams(f"option 'actions' must be a sequence of actions, not "
                            f"{type(actions).__name__}")
    out = []
    for i, action in enumerate(actions):
        try:
            out.append(to_action(action))
        except InvalidAction as e:
            raise InvalidAction(f"actions[{i}]: {e.message}") from None
    return out


def to_action(action: Any) -> Union[int, float]:
    """An action as the environment takes it: an int or a float. numpy
    scalars, one-element arrays and one-element sequences are unwrapped.
    ``InvalidAction`` for anything else (strings, None, several values)."""
    if isinstance(action, (bool, np.bool_)):
        return int(action)
    if isinstance(action, numbers.Integral):
        return int(action)
    if isinstance(action, numbers.Real):
        return float(action)
    if isinstance(action, np.ndarray) or isinstance(action, (list, tuple)):
        flat = np.asarray(action, dtype=object).ravel() if not isinstance(action, np.ndarray) \
            else action.ravel()
        if flat.size != 1:
            raise InvalidAction(f"action has {flat.size} values; this problem takes one")
        return to_action(flat[0].item() if isinstance(flat[0], np.generic) else flat[0])
    raise InvalidAction(f"action must be a number, not {type(action).__name__} ({action!r})")


class Env(_EnvBase):
    """One episode at a time over a backend (in-process or remote); create it
    with ``mlgo_env.make()``. Not thread-safe: use one Env per thread, or a
    VectorEnv for many episodes.

    Attributes: ``problem``, ``description`` (the environment's describe()),
    ``observation_space``, ``action_space``, ``module`` and ``episode`` of the
    current episode (``None`` when none is open).
    """

    metadata: Dict[str, Any] = {"render_modes": []}
    render_mode = None
    spec = None

    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        self.description = backend.description
        self.problem: str = self.description["problem"]
        specs = self.description["observation_spec"]
        self.observation_space = _spaces.observation_space(specs)
        self.action_space = _spaces.action_space(self.problem, self.description["action_spec"],
                                                 specs)
        self.episode: Optional[int] = None
        self.module: Optional[str] = None
        self._closed = False

    # --- gymnasium API --------------------------------------------------

    def reset(self, *, seed: Optional[int] = None,
              options: Optional[Dict[str, Any]] = None) -> Tuple[Observation, Dict[str, Any]]:
        """Starts an episode (closing an open one, killing its compiler).

        ``seed`` reseeds the module sampler (and the spaces' generator), so
        ``reset(seed=s)`` starts the same module every time. ``options``:
        ``module`` (a corpus module, e.g. ``"sha256.o"``; default sampled) and
        ``max_steps`` (truncate after that many agent steps; the fallback
        policy finishes the compile) and ``actions`` (a fork: the episode
        answers clang's first ``k = len(actions)`` decisions with them, each
        checked like a step's action, and returns decision k, the one an
        agent stepping them by hand would see next; if the compile ends
        first, the episode ends at reset with its reward and
        ``info["prefix_steps"]`` says how many were used). A bad prefix
        action raises ``InvalidAction`` naming its index; no episode remains.
        Forking costs the compile up to decision k (clang cannot resume a
        compile), but no round trip per prefix decision.

        Returns ``(obs, info)``; ``info`` has ``module``, ``episode``,
        ``context``, ``observation_id``, ``default_action`` (when the problem
        knows clang's own decision) and ``module_embedding`` (with an IR2Vec
        vocabulary). A module without decisions, requested by name, returns
        ``(None, info)`` with ``info["terminated"] = True`` and
        ``info["reward"]``; sampled ones are skipped.
        """
        self._check_open()
        if seed is not None and (not isinstance(seed, int) or seed < 0):
            raise InvalidParams(f"seed must be a non-negative int, not {seed!r}")
        if _gym is not None:  # pragma: no cover - depends on the machine
            super().reset(seed=seed)
        if seed is not None:
            self.action_space.seed(seed)
        options = dict(options or {})
        unknown = set(options) - _RESET_OPTIONS
        if unknown:
            raise InvalidParams(f"unknown reset option(s) {sorted(unknown)}; expected "
                                f"{sorted(_RESET_OPTIONS)}")
        prefix = prefix_actions(options.get("actions"))
        self._end_episode()
        result = self._backend.reset([(options.get("module"), seed, options.get("max_steps"),
                                       prefix)])[0]
        if isinstance(result, MlgoError):
            raise result
        episode, module, obs, reward, terminated, truncated, info = result
        self.module = module
        info = dict(info, module=module, episode=episode)
        if terminated or truncated:
            info.update(terminated=terminated, truncated=truncated, reward=reward)
            return None, info
        self.episode = episode
        return obs, info

    def step(self, action: Action) -> Tuple[Observation, SupportsFloat, bool, bool, Dict[str, Any]]:
        """Answers the pending decision. Returns ``(obs, reward, terminated,
        truncated, info)``; reward is 0 until the final step, then
        ``1 - policy/default`` of the problem's score (``info`` then has
        ``policy_score``, ``default_score`` and per-context scores).

        ``InvalidAction`` (wrong value or type) leaves the episode where it
        was: step again. Other errors end the episode.
        """
        self._check_open()
        if self.episode is None:
            raise UnknownEpisode("step() without an open episode: call reset() first")
        value = to_action(action)
        result = self._backend.step([self.episode], [value])[0]
        if isinstance(result, MlgoError):
            if not isinstance(result, InvalidAction):
                self.episode = None
            raise result
        obs, reward, terminated, truncated, info = result
        if terminated or truncated:
            self.episode = None
        return obs, reward, terminated, truncated, info

    def close(self) -> None:
        """Ends the open episode and releases the backend (an in-process
        environment kills its compilers; a remote one closes the
        connection). Idempotent."""
        if self._closed:
            return
        try:
            self._end_episode()
        except MlgoError:
            pass
        self._closed = True
        self._backend.close()

    def render(self) -> None:
        return None

    # --- extras -----------------------------------------------------------

    @property
    def unwrapped(self) -> "Env":
        return self

    @property
    def backend(self) -> Backend:
        return self._backend

    def corpus_modules(self) -> list:
        """The corpus modules, in corpus order."""
        return self._backend.modules()

    def __enter__(self) -> "Env":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        return f"<mlgo_env.Env problem={self.problem}>"

    def _check_open(self) -> None:
        if self._closed:
            raise UnknownEpisode("this Env is closed")

    def _end_episode(self) -> None:
        if self.episode is not None:
            episode, self.episode = self.episode, None
            try:
                self._backend.close_episode(episode)
            except UnknownEpisode:
                pass
