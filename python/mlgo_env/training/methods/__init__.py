"""The training methods, one module each, and the lookups by (problem, name) (the interface
and its registry: mlgo_env.training.method; the registry style: mlgo_env.registry).

- ``margin_es``: inlining, ``es`` (the default);
- ``regalloc_es``: regalloc, ``es`` (the default).

Importing this package imports every method's module, listed here, so each has registered
its class by the time a lookup looks; nothing they import imports this package. Adding a
method: its module in this package (a :class:`~mlgo_env.training.method.Method` subclass
decorated with ``method.register``) and its line below. Its options (``add_arguments``)
appear in ``python -m mlgo_env.train --problem=P --method=NAME --help``, and nowhere else.
"""

from __future__ import annotations

from ..method import METHODS, Method
from . import margin_es, regalloc_es  # noqa: F401 - each registers its method

__all__ = ["Method", "problems", "names", "method_class"]


def problems() -> list[str]:
    """The problems some method trains for."""
    return sorted({cls.problem for cls in METHODS.classes()})


def names(problem: str) -> list[str]:
    """The methods of `problem`, its default first."""
    found = [cls for cls in METHODS.classes() if cls.problem == problem]
    return [c.name for c in sorted(found, key=lambda c: (not c.default, c.name))]


def method_class(problem: str, name: str | None = None) -> type[Method]:
    """The method `name` of `problem` (None: its default). ValueError naming the
    choices when there is none."""
    choices = names(problem)
    if not choices:
        raise ValueError(f"no training method for problem {problem!r} (problems: "
                         f"{', '.join(problems())})")
    cls = METHODS.find((problem, choices[0] if name is None else name))
    if cls is None:
        raise ValueError(f"no training method {name!r} for {problem} (methods: "
                         f"{', '.join(choices)})")
    return cls
