"""One module's search, behind one small interface; one class per problem, registered by name.

A :class:`ModuleTuner` owns the search of one module. Whenever a worker is free and this
module is the most promising one not in flight, the tuning session
(mlgo_env.tuning.session) asks :meth:`~ModuleTuner.propose` for the next episode's decider,
has it played (in this process or on a Dask worker: deciders are plain data and travel
back with what they recorded) and hands the result to :meth:`~ModuleTuner.settle`. When the
search ends (nothing left to try, or the budget is spent), :meth:`~ModuleTuner.decider`
answers the best decisions found, and the session plays it once more to record the table's
entry.

Variants, one per problem: ``inlining`` (mlgo_env.tuning.inlining_tuner), ``regalloc``
(mlgo_env.tuning.regalloc_tuner), each a class decorated with :func:`register`.
mlgo_env.tuning.tuners imports them all and finds one by problem (``tuner_class``); this
module imports none of them (the registry style: mlgo_env.registry).

Not thread-safe: the session lets one thread at a time drive a tuner.
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar

from .. import episodes as ep
from ..registry import Registry

#: the tuners by problem (filled as mlgo_env.tuning.tuners imports their modules)
TUNERS: Registry[type["ModuleTuner"]] = Registry("tuner", lambda cls: cls.problem)
#: class decorator: makes a class the tuner of its `problem`
register = TUNERS.register


class ModuleTuner(abc.ABC):
    """The search of one module's decisions."""

    #: the environment's problem
    problem: ClassVar[str]
    #: the IR2Vec vocabulary its environments need ("default": the shipped one), or None
    ir2vec_vocab: ClassVar[str | None] = None

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

    @classmethod
    def warm(cls, module: str, features: list[str], old: dict[str, Any] | None
             ) -> "ModuleTuner":
        """The search of a module edited since it was tuned, given its old search state
        (`old`, what :meth:`state` returned for the old code, or None). A problem whose
        search can reuse it overrides this; by default the search starts afresh."""
        return cls(module, features, None)

    @abc.abstractmethod
    def propose(self) -> ep.Decide:
        """The next episode's decider (at most one proposal in flight)."""

    @abc.abstractmethod
    def settle(self, decider: ep.Decide, result: ep.EpisodeResult) -> None:
        """Takes the proposed episode's decider, as it ended, and its result. Raises
        RuntimeError for a result the search cannot use (the search is unchanged)."""

    def play(self, env: Any) -> None:
        """Proposes, plays on `env` and settles one episode (raises what the environment
        raises)."""
        decider = self.propose()
        self.settle(decider, ep.play_episode(env, self.module, decider))

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

    def functions(self) -> list[str]:
        """The functions whose decisions the search tunes, as the episodes named them
        (known after the first episode); [] when the problem's decisions are not a
        function's own (the session then cannot weigh the module by a profile)."""
        return []

    def abandon(self, why: str) -> None:
        """Ends the search after a failure; the best so far stays."""
        self.failure = why

