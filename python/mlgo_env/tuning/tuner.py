"""One module's search, behind one small interface; one class per problem, registered by name.

A :class:`ModuleTuner` owns the search of one module. The tuning session
(mlgo_env.tuning.session) calls :meth:`~ModuleTuner.play` with an environment of its
problem whenever a worker is free and this module is the most promising one not in
flight; each call plays one episode and keeps what it learned. When the search ends (its
queue is empty, or the budget is spent), :meth:`~ModuleTuner.decider` answers the best
decisions found, and the session plays it once more to record the table's entry.

Variants: ``inlining`` (mlgo_env.tuning.inlining_tuner), ``regalloc``
(mlgo_env.tuning.regalloc_tuner). Adding one is one file that calls :func:`register`.

Not thread-safe: the session lets one thread at a time drive a tuner.
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar

from .. import episodes as ep

_TUNERS: dict[str, type["ModuleTuner"]] = {}


def register(cls: type["ModuleTuner"]) -> type["ModuleTuner"]:
    """Class decorator: makes `cls` the tuner of its `problem`."""
    _TUNERS[cls.problem] = cls
    return cls


def tuner_class(problem: str) -> type["ModuleTuner"]:
    """The tuner registered for `problem`; ValueError naming the known ones."""
    from . import inlining_tuner, regalloc_tuner  # noqa: F401 - they register themselves
    if problem not in _TUNERS:
        raise ValueError(f"no tuner for problem '{problem}' (known: {', '.join(sorted(_TUNERS))})")
    return _TUNERS[problem]


class ModuleTuner(abc.ABC):
    """The search of one module's decisions."""

    #: the environment's problem
    problem: ClassVar[str]
    #: keyword arguments its environments need beyond corpus/cache (e.g. IR2Vec)
    env_options: ClassVar[dict[str, Any]] = {}

    def __init__(self, module: str, features: list[str], state: dict[str, Any] | None) -> None:
        """`features`: the observation's feature names; `state`: what :meth:`state`
        returned in an earlier run (the search continues from it), or None."""
        self.module = module
        self.features = features
        self.episodes = 0
        #: clang's own score of the module (None until the first episode)
        self.default_score: float | None = None
        #: the best score found so far (lower is better; None until the first episode)
        self.best_score: float | None = None
        #: the last error that ended the search, if one did
        self.failure: str | None = None

    @abc.abstractmethod
    def play(self, env: Any) -> None:
        """Plays one episode of the search on `env` (reset to this module). Raises what
        the environment raises; the search is unchanged then."""

    @abc.abstractmethod
    def done(self) -> bool:
        """Nothing is left to try."""

    @abc.abstractmethod
    def decider(self) -> ep.Decide:
        """A fresh decider answering the best decisions found (for the record episode)."""

    @abc.abstractmethod
    def state(self) -> dict[str, Any]:
        """The search's state as JSON-able values, to continue from in a later run."""

    def beats_default(self) -> bool:
        """Whether the best decisions score below clang's own."""
        return (self.best_score is not None and self.default_score is not None
                and self.best_score < self.default_score)

    def has_decisions(self) -> bool:
        """Whether the module makes decisions at all (known after the first episode)."""
        return True

    def abandon(self, why: str) -> None:
        """Ends the search after a failure; the best so far stays."""
        self.failure = why

