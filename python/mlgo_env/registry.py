"""Variants behind one interface, registered by name: the one registry style of the package.

Used for the tuners (mlgo_env.tuning: one per problem) and the training methods
(mlgo_env.training: several per problem). Each kind is laid out the same way, and its
imports run one way only (interface <- variants <- their package):

- the interface's module (``tuning/tuner.py``, ``training/method.py``) defines the
  abstract class and its :class:`Registry`, and imports no variant;
- each variant is one module of a package of its own (``tuning/tuners/``,
  ``training/methods/``) whose class is decorated with the registry's
  :meth:`Registry.register`; adding a variant is adding that one file;
- the package's ``__init__`` imports every module in it (:func:`load_package`) and offers
  the lookup (``tuner_class``, ``method_class``): whoever looks a variant up imports the
  package, so every variant is registered by then.

Registration happens at import, under Python's import lock; lookups only read.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Callable, Generic, Hashable, Sequence, TypeVar

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


def load_package(name: str, path: Sequence[str]) -> None:
    """Imports every module of the package `name` (its ``__name__``) found on `path` (its
    ``__path__``): each registers its variants. Raises what an import raises."""
    for info in pkgutil.iter_modules(path):
        importlib.import_module(f"{name}.{info.name}")
