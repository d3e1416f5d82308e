"""The interface of a training method (:class:`Method`) and its registry, keyed by
(problem, name). The methods themselves, and the lookups, are mlgo_env.training.methods.

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

This module imports no method (the registry style: mlgo_env.registry).
"""

from __future__ import annotations

import abc
import argparse
from typing import Any, ClassVar, Sequence

import numpy as np

from ..policies.policy import Policy
from ..registry import Registry


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


#: the methods by (problem, name) (filled as mlgo_env.training.methods imports them)
METHODS: Registry[type[Method]] = Registry("training method", lambda cls: (cls.problem, cls.name))
#: class decorator: makes a class available as ``--problem=cls.problem --method=cls.name``
register = METHODS.register
