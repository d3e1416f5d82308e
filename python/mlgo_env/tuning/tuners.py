"""The tuners, one per problem, and the lookup by problem (the interface and its registry:
mlgo_env.tuning.tuner; the registry style: mlgo_env.registry).

Importing this module imports every tuner's module, listed here, so each has registered
its class by the time :func:`tuner_class` looks; nothing they import imports this module.
Adding a tuner: its module (a ModuleTuner subclass decorated with ``tuner.register``) and
its line below.
"""

from __future__ import annotations

from . import inlining_tuner, regalloc_tuner  # noqa: F401 - each registers its tuner
from .tuner import TUNERS, ModuleTuner


def tuner_class(problem: str) -> type[ModuleTuner]:
    """The tuner registered for `problem`; ValueError naming the known ones."""
    cls = TUNERS.find(problem)
    if cls is None:
        known = ", ".join(sorted(c.problem for c in TUNERS.classes()))
        raise ValueError(f"no tuner for problem '{problem}' (known: {known})")
    return cls
