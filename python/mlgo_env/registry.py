"""Variants behind one interface, registered by name: the one registry style of the package.

Used for the tuners (mlgo_env.tuning: one per problem) and the training methods
(mlgo_env.training: several per problem). Each kind is laid out the same way, and its
imports run one way only (interface <- variants <- list):

- the interface's module (``tuning/tuner.py``, ``training/method.py``) defines the
  abstract class and its :class:`Registry`, and imports no variant;
- each variant is one module (``tuning/inlining_tuner.py``, ``training/methods/margin_es.py``,
  ...) whose class is decorated with the registry's :meth:`Registry.register`;
- one module imports every variant's module, by an explicit list, and offers the lookup
  (``tuning/tuners.py``: ``tuner_class``; ``training/methods/__init__.py``:
  ``method_class``): whoever looks a variant up imports it, so every variant is registered
  by then. Adding a variant is its module and its line in the list (python/tests/
  test_registry.py fails when a module is left out).

Registration happens at import, under Python's import lock; lookups only read.
"""

from __future__ import annotations

from typing import Callable, Generic, Hashable, TypeVar

C = TypeVar("C", bound=type)


class Registry(Generic[C]):
    """Classes of one interface by key (``key(cls)``: a name, or a (problem, name) pair)."""

    def __init__(self, what: str, key: Callable[[C], Hashable]) -> None:
        """`what` names a variant in errors ("tuner", "training method")."""
        self.what = what
        self._key = key
        self._classes: dict[Hashable, C] = {}

    def register(self, cls: C) -> C:
        """Class decorator: files `cls` under its key. ValueError when another class holds
        that key already."""
        key = self._key(cls)
        if self._classes.get(key, cls) is not cls:
            raise ValueError(f"two {self.what}s for {key!r}: {self._classes[key].__qualname__} "
                             f"and {cls.__qualname__}")
        self._classes[key] = cls
        return cls

    def find(self, key: Hashable) -> C | None:
        """The class filed under `key`, or None."""
        return self._classes.get(key)

    def classes(self) -> list[C]:
        """Every registered class, in registration order."""
        return list(self._classes.values())

