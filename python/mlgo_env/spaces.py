"""Observation and action spaces, derived from the problem's tensor specs.

With gymnasium importable these are ``gymnasium.spaces`` objects; otherwise
the small stand-ins below, which have the same constructor arguments and the
members agents use (``shape``, ``dtype``, ``n``, ``low``, ``high``,
``spaces``, ``contains()``, ``sample()``, ``seed()``).

- observation: ``Dict({feature: Box(shape=spec shape, dtype=spec type)})``;
  bounds are the dtype's range (the specs carry none). clang sends NaN in
  some float features (regalloc's ``use_def_density`` of absent
  candidates): an unbounded float Box contains NaN here, unlike plain
  gymnasium.
- action: inlining ``Discrete(2)``; regalloc ``Discrete(candidates)`` (the
  ``mask`` length; only indices whose ``obs["mask"]`` is 1 are valid:
  ``action_space.sample(mask=obs["mask"].ravel().astype(np.int8))``); regalloc-priority ``Box(0, 2**32)`` of the advice
  type (float32), scalar.
"""

from __future__ import annotations

import math
from typing import Any, Dict as TDict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

try:  # gymnasium is optional
    import gymnasium as _gym
    from gymnasium import spaces as _gym_spaces
except ImportError:  # pragma: no cover - depends on the machine
    _gym = None
    _gym_spaces = None

__all__ = ["Box", "Discrete", "Dict", "NUMPY_DTYPES", "observation_space", "action_space",
           "HAVE_GYMNASIUM"]

HAVE_GYMNASIUM = _gym is not None

#: numpy dtype of each LLVM tensor type (little-endian).
NUMPY_DTYPES: TDict[str, str] = {
    "float": "<f4", "double": "<f8", "int8_t": "i1", "uint8_t": "u1", "int16_t": "<i2",
    "uint16_t": "<u2", "int32_t": "<i4", "uint32_t": "<u4", "int64_t": "<i8", "uint64_t": "<u8",
}


class _Space:
    def __init__(self, shape: Optional[Tuple[int, ...]], dtype: Any, seed: Optional[int]) -> None:
        self.shape = shape
        self.dtype = None if dtype is None else np.dtype(dtype)
        self.np_random = np.random.default_rng(seed)

    def seed(self, seed: Optional[int] = None) -> List[Optional[int]]:
        self.np_random = np.random.default_rng(seed)
        return [seed]

    def __contains__(self, x: Any) -> bool:
        return self.contains(x)


class Discrete(_Space):
    """Integers ``start .. start+n-1``."""

    def __init__(self, n: int, seed: Optional[int] = None, start: int = 0) -> None:
        super().__init__((), np.int64, seed)
        self.n = int(n)
        self.start = int(start)

    def contains(self, x: Any) -> bool:
        if isinstance(x, (bool, np.bool_)):
            return False
        if isinstance(x, np.ndarray):
            if x.shape != () or not np.issubdtype(x.dtype, np.integer):
                return False
            x = int(x)
        if not isinstance(x, (int, np.integer)):
            return False
        return self.start <= int(x) < self.start + self.n

    def sample(self, mask: Optional[np.ndarray] = None) -> np.int64:
        if mask is not None:
            valid = np.flatnonzero(np.asarray(mask).ravel()[: self.n] == 1)
            if valid.size == 0:
                return np.int64(self.start)
            return np.int64(self.start + self.np_random.choice(valid))
        return np.int64(self.start + self.np_random.integers(self.n))

    def __repr__(self) -> str:
        return f"Discrete({self.n})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Discrete) and (self.n, self.start) == (other.n, other.start)


class Box(_Space):
    """Arrays of ``shape`` and ``dtype`` with ``low <= x <= high`` elementwise."""

    def __init__(self, low: Any, high: Any, shape: Optional[Sequence[int]] = None,
                 dtype: Any = np.float32, seed: Optional[int] = None) -> None:
        shape = tuple(shape) if shape is not None else np.shape(low)
        super().__init__(shape, dtype, seed)
        self.low = np.full(shape, low, dtype=self.dtype)
        self.high = np.full(shape, high, dtype=self.dtype)

    def contains(self, x: Any) -> bool:
        if not isinstance(x, np.ndarray):
            try:
                x = np.asarray(x, dtype=self.dtype)
            except (ValueError, TypeError):
                return False
        if x.shape != self.shape or not np.can_cast(x.dtype, self.dtype):
            return False
        inside = (x >= self.low) & (x <= self.high)
        if np.issubdtype(self.dtype, np.floating):
            inside |= np.isnan(x) & np.isneginf(self.low) & np.isposinf(self.high)
        return bool(np.all(inside))

    def sample(self) -> np.ndarray:
        if np.issubdtype(self.dtype, np.integer):
            info = np.iinfo(self.dtype)
            low = np.maximum(self.low, max(info.min, -2**62)).astype(np.int64)
            high = np.minimum(self.high, min(info.max, 2**62)).astype(np.int64)
            return self.np_random.integers(low, high, endpoint=True).astype(self.dtype)
        finite = np.finfo(np.float32).max / 4
        low = np.clip(self.low.astype(np.float64), -finite, finite)
        high = np.clip(self.high.astype(np.float64), -finite, finite)
        return self.np_random.uniform(low, high).astype(self.dtype)

    def __repr__(self) -> str:
        return f"Box({self.shape}, {self.dtype})"

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, Box) and self.shape == other.shape and self.dtype == other.dtype
                and np.array_equal(self.low, other.low) and np.array_equal(self.high, other.high))


class Dict(_Space):
    """A mapping of named spaces; contains() wants exactly those keys."""

    def __init__(self, spaces: Mapping[str, _Space], seed: Optional[int] = None) -> None:
        super().__init__(None, None, seed)
        self.spaces = dict(spaces)

    def seed(self, seed: Optional[int] = None) -> List[Optional[int]]:
        super().seed(seed)
        for i, space in enumerate(self.spaces.values()):
            space.seed(None if seed is None else seed + i)
        return [seed]

    def contains(self, x: Any) -> bool:
        if not isinstance(x, Mapping) or set(x) != set(self.spaces):
            return False
        return all(space.contains(x[name]) for name, space in self.spaces.items())

    def sample(self) -> TDict[str, Any]:
        return {name: space.sample() for name, space in self.spaces.items()}

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Dict) and self.spaces == other.spaces

    def __getitem__(self, key: str) -> _Space:
        return self.spaces[key]

    def keys(self):  # noqa: D401 - mapping-like
        return self.spaces.keys()

    def __repr__(self) -> str:
        return "Dict(" + ", ".join(f"{k}: {v!r}" for k, v in self.spaces.items()) + ")"


if _gym_spaces is not None:  # pragma: no cover - depends on the machine
    class _GymBox(_gym_spaces.Box):
        """gymnasium's Box, except that NaN is contained where the bounds are
        infinite (as in the stand-in Box)."""

        def contains(self, x: Any) -> bool:
            if isinstance(x, np.ndarray) and np.issubdtype(self.dtype, np.floating):
                x = np.where(np.isnan(x) & np.isneginf(self.low) & np.isposinf(self.high), 0, x
                             ).astype(x.dtype)
            return super().contains(x)


def _box(low: Any, high: Any, shape: Tuple[int, ...], dtype: str) -> Any:
    if _gym_spaces is not None:  # pragma: no cover - depends on the machine
        return _GymBox(low=low, high=high, shape=shape, dtype=np.dtype(dtype))
    return Box(low, high, shape, dtype)


def _bounds(dtype: str) -> Tuple[Any, Any]:
    d = np.dtype(dtype)
    if np.issubdtype(d, np.integer):
        info = np.iinfo(d)
        return info.min, info.max
    return -np.inf, np.inf


def observation_space(specs: Sequence[Mapping[str, Any]]) -> Any:
    """The Dict space of the observation specs (describe()'s ``observation_spec``)."""
    boxes = {}
    for spec in specs:
        dtype = NUMPY_DTYPES[spec["type"]]
        low, high = _bounds(dtype)
        boxes[spec["name"]] = _box(low, high, tuple(spec["shape"]), dtype)
    if _gym_spaces is not None:  # pragma: no cover - depends on the machine
        return _gym_spaces.Dict(boxes)
    return Dict(boxes)


def action_space(problem: str, action_spec: Mapping[str, Any],
                 specs: Sequence[Mapping[str, Any]]) -> Any:
    """The action space of ``problem`` (see the module docstring)."""
    discrete = Discrete if _gym_spaces is None else _gym_spaces.Discrete
    if problem == "inlining":
        return discrete(2)
    if problem == "regalloc":
        mask = next(s for s in specs if s["name"] == "mask")
        return discrete(int(math.prod(mask["shape"])))
    dtype = NUMPY_DTYPES[action_spec["type"]]
    high = float(np.nextafter(np.float32(2.0**32), np.float32(0))) if dtype == "<f4" else 2.0**32 - 1
    return _box(0.0, high, (), dtype)
