"""Locating the compiled core ``_core`` (built by the project's CMake), and the
``mlgo-env`` executable (:func:`find_mlgo_env`).

Search order: the installed package itself (``pip install ./python`` copies
the module next to this file); ``$MLGO_ENV_CORE_DIR``; then ``build/python``
of the checkout this package sits in (``<checkout>/python/mlgo_env`` ->
``<checkout>/build/python``). The in-process backend needs it; the remote
one does not.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import shutil
import sys
from types import ModuleType
from typing import List, Optional

_loaded: Optional[ModuleType] = None


def candidates() -> List[str]:
    """Directories searched for _core, in order."""
    here = os.path.dirname(os.path.abspath(__file__))
    dirs = [here]
    if os.environ.get("MLGO_ENV_CORE_DIR"):
        dirs.append(os.environ["MLGO_ENV_CORE_DIR"])
    dirs.append(os.path.join(os.path.dirname(os.path.dirname(here)), "build", "python"))
    return dirs


def load_core() -> ModuleType:
    """The _core module; ImportError listing where it looked when missing."""
    global _loaded
    if _loaded is not None:
        return _loaded
    for directory in candidates():
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(directory, "_core" + suffix)
            if not os.path.isfile(path):
                continue
            spec = importlib.util.spec_from_file_location("mlgo_env._core", path)
            if spec is None or spec.loader is None:
                continue
            module = importlib.util.module_from_spec(spec)
            sys.modules["mlgo_env._core"] = module
            spec.loader.exec_module(module)
            _loaded = module
            return module
    raise ImportError(
        "mlgo_env's compiled core (_core) was not found in " + ", ".join(candidates())
        + ". Build it (scripts/setup.sh or cmake --build build --target mlgo_env_core), set "
        "MLGO_ENV_CORE_DIR to its directory, or use make(..., remote=...) against a server.")


def find_program(name: str, explicit: Optional[str] = None) -> str:
    """One of the project's executables (mlgo-env, mlgo-env-launch): `explicit` (which must
    be executable), else the environment variable named after it ($MLGO_ENV,
    $MLGO_ENV_LAUNCH), the checkout's build tree, or PATH. FileNotFoundError saying how to
    name it when none is executable."""
    variable = name.upper().replace("-", "_")
    if explicit and not (os.path.isfile(explicit) and os.access(explicit, os.X_OK)):
        raise FileNotFoundError(f"{explicit} (given as {name}) is not an executable file")
    candidates = [explicit, os.environ.get(variable),
                  os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                               "build", "src", name),
                  shutil.which(name)]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    raise FileNotFoundError(f"cannot find the {name} executable: pass its path or set "
                            f"{variable} (it is built at build/src/{name})")


def find_mlgo_env(explicit: Optional[str] = None) -> str:
    """The mlgo-env executable (find_program)."""
    return find_program("mlgo-env", explicit)
