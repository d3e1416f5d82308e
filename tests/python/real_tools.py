"""The real programs the clang suites of tests/python run, as CMake found them.

ctest hands each suite their paths in its environment (tests/CMakeLists.txt):

    MLGO_CLANG       clang-22          MLGO_ENV          the build's mlgo-env
    MLGO_CLANGXX     clang++-22        MLGO_ENV_LAUNCH   the build's mlgo-env-launch
    MLGO_LLD         ld.lld-22         MLGO_VALGRIND     valgrind (PATH when unset)

A suite names what it needs with `@needs(...)` on its test classes: a missing program fails
the class (its setUpClass raises AssertionError naming the program and how to get it), it is
never skipped, so "OK" from a suite means its tests ran. Run by hand without ctest, the
compilers are looked up in PATH by name; mlgo-env and mlgo-env-launch must be named.
"""
import os
import shutil
from typing import Callable, Dict, Tuple, Type, TypeVar

#: variable -> (program, where it comes from)
PROGRAMS: Dict[str, Tuple[str, str]] = {
    "MLGO_CLANG": ("clang-22", "the Debian package clang-22"),
    "MLGO_CLANGXX": ("clang++-22", "the Debian package clang-22"),
    "MLGO_LLD": ("ld.lld-22", "the Debian package lld-22"),
    "MLGO_ENV": ("mlgo-env", "the build's target mlgo-env"),
    "MLGO_ENV_LAUNCH": ("mlgo-env-launch", "the build's target mlgo-env-launch"),
    "MLGO_VALGRIND": ("valgrind", "the Debian package valgrind"),
}


def _executable(path: str) -> bool:
    return os.path.isabs(path) and os.path.isfile(path) and os.access(path, os.X_OK)


def path_of(variable: str) -> str:
    """The path of the program `variable` names, or "" when there is none (never raises
    for a missing program: suites read their paths at import; `require` says why)."""
    program, _ = PROGRAMS[variable]
    value = os.environ.get(variable)
    if value is None and not variable.startswith("MLGO_ENV"):
        value = shutil.which(program) or ""
    return value if value and _executable(value) else ""


def missing(variable: str) -> str:
    """Why the program `variable` names cannot be run, or "" when it can."""
    if path_of(variable):
        return ""
    program, source = PROGRAMS[variable]
    value = os.environ.get(variable)
    if value is None and variable.startswith("MLGO_ENV"):
        return f"{program}: {variable} is not set (ctest sets it to {source})"
    if value is None:
        return f"{program}: {variable} is not set (ctest sets it) and PATH has none ({source})"
    if value.endswith("-NOTFOUND") or not value:
        return (f"{program}: CMake found none ({variable}={value!r}); install {source} "
                f"and configure the build again")
    return f"{program}: {variable}={value!r} is not an executable file ({source})"


def require(*variables: str) -> None:
    """Raises AssertionError naming every program of `variables` that cannot be run."""
    reasons = [why for why in map(missing, variables) if why]
    if reasons:
        raise AssertionError("this suite needs the real programs, missing:\n  " +
                             "\n  ".join(reasons))


T = TypeVar("T", bound=Type)


def needs(*variables: str) -> Callable[[T], T]:
    """A class decorator for a unittest.TestCase: its setUpClass first `require`s
    `variables` (so a missing program fails every test of the class, never skips it)."""
    def wrap(cls: T) -> T:
        own = cls.__dict__.get("setUpClass")

        def set_up_class(klass) -> None:
            require(*variables)
            if own is not None:
                own.__func__(klass)
            else:
                super(cls, klass).setUpClass()
        cls.setUpClass = classmethod(set_up_class)
        return cls
    return wrap
