"""An environment check in the spirit of gymnasium's ``check_env``.

``check_env(env)`` runs ``gymnasium.utils.env_checker.check_env`` when
gymnasium is importable, and always runs the checks below, raising
``AssertionError`` naming the first broken rule:

- ``reset`` takes keyword-only ``seed`` and ``options``; ``step`` one action;
- reset returns ``(obs, info)``, ``observation_space.contains(obs)``;
- ``reset(seed=s)`` twice gives the same module and observation;
- step returns ``(obs, reward, terminated, truncated, info)`` with a float
  reward, bool flags, a dict info, and an observation in the space (or
  ``None`` once the episode ended);
- observations are copies: changing one does not change later ones.

It plays whole episodes with valid actions (agents.random_action), so it
costs a few compiles.
"""

from __future__ import annotations

import inspect
import random
from typing import Any

import numpy as np

from .agents import random_action
from .spaces import HAVE_GYMNASIUM


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    return set(a) == set(b) and all(a[k].tobytes() == b[k].tobytes() for k in a)


def check_env(env: Any, seed: int = 0, max_steps: int = 200) -> None:
    if HAVE_GYMNASIUM:  # pragma: no cover - depends on the machine
        from gymnasium.utils.env_checker import check_env as gym_check
        gym_check(env, skip_render_check=True)

    reset = inspect.signature(env.reset).parameters
    for name in ("seed", "options"):
        assert name in reset and reset[name].kind is inspect.Parameter.KEYWORD_ONLY, \
            f"reset() must take keyword-only {name!r}"
        assert reset[name].default is None, f"reset()'s {name!r} must default to None"
    step = [p for p in inspect.signature(env.step).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    assert len(step) == 1, "step() must take exactly one action"

    result = env.reset(seed=seed)
    assert isinstance(result, tuple) and len(result) == 2, "reset() must return (obs, info)"
    obs, info = result
    assert isinstance(info, dict), "reset()'s info must be a dict"
    assert env.observation_space.contains(obs), "reset()'s observation is not in the space"
    module = env.module
    again, _ = env.reset(seed=seed)
    assert env.module == module and _same(obs, again), "reset(seed=s) is not reproducible"

    rng = random.Random(seed)
    first = {k: v.copy() for k, v in again.items()}
    for array in again.values():
        array[...] = 0  # the agent may scribble on what it got
    obs = again
    for steps in range(max_steps):
        action = random_action(env.problem, first if steps == 0 else obs, rng)
        assert env.action_space.contains(action) or env.problem == "regalloc-priority", \
            f"valid action {action!r} is outside action_space"
        out = env.step(action)
        assert isinstance(out, tuple) and len(out) == 5, \
            "step() must return (obs, reward, terminated, truncated, info)"
        obs, reward, terminated, truncated, info = out
        assert isinstance(reward, (float, np.floating)), "reward must be a float"
        assert isinstance(terminated, (bool, np.bool_)) and isinstance(truncated, (bool, np.bool_))
        assert isinstance(info, dict), "step()'s info must be a dict"
        if terminated or truncated:
            assert obs is None, "the final observation must be None"
            break
        assert env.observation_space.contains(obs), "step()'s observation is not in the space"
    else:
        # Episodes can be long: end this one without judging it.
        env.reset(seed=seed)
