"""Training methods: one interface (:class:`Method`), one class per method in its own
module of this package, and a registry keyed by (problem, name).

A method is what differs between ways of training a policy for a problem:

- ``fit``: where the search starts. Every method here starts from behavioural cloning of
  the problem's default on its trace, and writes that start beside the output.
- ``propose`` / ``tell``: the search. ``propose`` returns the search vectors to score
  next (an empty list: nothing more to try); ``tell`` takes their scores, in order, and
  returns True when the incumbent moved.
- ``policy``: the policy file a search vector stands for.
- ``state`` / ``load``: what a checkpoint keeps of the search.

The problem's trainer does the rest, the same for every method of that problem: the
corpus split, the default trace, scoring candidates on modules, checks, checkpoints, the
selection against the one-number baselines, and the files it writes
(mlgo_env.training.train for inlining, mlgo_env.training.regalloc_train for regalloc).

Adding a method touches one file: a module in this package whose subclass of
:class:`Method` is decorated with :func:`register`. Its options (``add_arguments``) appear
in ``python -m mlgo_env.train --problem=P --method=NAME --help``, and nowhere else.
"""

from __future__ import annotations

import abc
import argparse
import importlib
import pkgutil
from typing import Any, ClassVar, Sequence

import numpy as np

from ...policies.policy import Policy

_REGISTRY: dict[tuple[str, str], type["Method"]] = {}
_LOADED = False


class Method(abc.ABC):
    """One way to train a policy for one problem (see the module's doc)."""

    #: the problem it trains for ("inlining", "regalloc")
    problem: ClassVar[str]
    #: its --method name
    name: ClassVar[str]
    #: one line for --help
    summary: ClassVar[str]
    #: the problem's method when --method is not given
    default: ClassVar[bool] = False
    #: what it writes beside OUTPUT (suffixes), besides what its trainer writes
    writes: ClassVar[tuple[str, ...]] = ()
    #: defaults of the trainer's common options this method changes
    option_defaults: ClassVar[dict[str, Any]] = {}

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args

    @classmethod
    def add_arguments(cls, group: Any) -> None:
        """Adds the method's own options to `group` (an argparse argument group)."""

    @abc.abstractmethod
    def fit(self, trainer: Any, data: Any) -> np.ndarray:
        """The start: fits the method's first policy to the default's decisions in `data`
        (what the problem's trainer gives: inlining, the trace and the training modules;
        regalloc, the fit and check decisions), writes it beside the output, and returns
        its search vector (the first incumbent)."""

    @abc.abstractmethod
    def propose(self, rng: np.random.Generator) -> list[np.ndarray]:
        """The search vectors to score next, drawn from `rng` (empty: the search is over)."""

    @abc.abstractmethod
    def tell(self, candidates: Sequence[np.ndarray], scores: Sequence[float]) -> bool:
        """Takes the scores of `propose`'s candidates, in order; True when the incumbent
        moved."""

    @abc.abstractmethod
    def policy(self, u: np.ndarray, metadata: dict[str, Any] | None = None) -> Policy:
        """The policy file search vector `u` stands for."""

    @abc.abstractmethod
    def incumbent(self) -> tuple[np.ndarray, float]:
        """The search's current point and its score (NaN when the method keeps none)."""

    def start(self, score: float) -> None:
        """Takes the trainer's score of `fit`'s vector on the search modules."""

    def widen(self) -> None:
        """Called after a round whose candidates compiled nothing (all replays: no
        decision moved), before the next `propose`."""

    def step_size(self) -> float:
        """The typical perturbation now (for the progress line and the history)."""
        return float("nan")

    def state(self) -> dict[str, Any]:
        """What a checkpoint keeps of the search (JSON-able)."""
        return {}

    def load(self, state: dict[str, Any]) -> None:
        """Restores what `state` kept."""


def register(cls: type[Method]) -> type[Method]:
    """Class decorator: makes `cls` available as ``--problem=cls.problem
    --method=cls.name``."""
    key = (cls.problem, cls.name)
    if key in _REGISTRY and _REGISTRY[key] is not cls:
        raise ValueError(f"two training methods named {cls.name!r} for {cls.problem}")
    _REGISTRY[key] = cls
    return cls


def _load_all() -> None:
    """Imports every module of this package once (each registers its methods)."""
    global _LOADED
    if not _LOADED:
        for info in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{info.name}")
        _LOADED = True


def problems() -> list[str]:
    """The problems some method trains for."""
    _load_all()
    return sorted({p for p, _ in _REGISTRY})


def names(problem: str) -> list[str]:
    """The methods of `problem`, its default first."""
    _load_all()
    found = [cls for (p, _), cls in _REGISTRY.items() if p == problem]
    return [c.name for c in sorted(found, key=lambda c: (not c.default, c.name))]


def method_class(problem: str, name: str | None = None) -> type[Method]:
    """The method `name` of `problem` (None: its default). ValueError naming the
    choices when there is none."""
    _load_all()
    choices = names(problem)
    if not choices:
        raise ValueError(f"no training method for problem {problem!r} (problems: "
                         f"{', '.join(problems())})")
    if name is None:
        name = choices[0]
    if (problem, name) not in _REGISTRY:
        raise ValueError(f"no training method {name!r} for {problem} (methods: "
                         f"{', '.join(choices)})")
    return _REGISTRY[(problem, name)]
