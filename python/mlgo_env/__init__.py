"""mlgo_env: compiler optimisation problems (LLVM's MLGO interactive mode) as
gymnasium environments, in-process or over a socket.

    import mlgo_env
    env = mlgo_env.make("regalloc")                        # in this process
    env = mlgo_env.make("regalloc", remote="unix:/tmp/mlgo.sock")  # mlgo-env serve
    vec = mlgo_env.make_vec("inlining", num_envs=8)        # batched

Agent code does not care which: both give the same observations, rewards
and exceptions. See env.py (Env), vector.py (VectorEnv), errors.py (the
exception per error code) and spaces.py.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Union

from ._native import load_core
from .backend import Backend, InProcessBackend, RemoteBackend
from .env import Env, to_action
from .errors import (Busy, EpisodeFailed, InternalError, InvalidAction, InvalidParams,
                     InvalidRequest, LineTooLong, MethodNotFound, MlgoError, ParseError,
                     ServerGone, UnknownEpisode, error_for)
from .remote import Client, connect
from .vector import VectorEnv

__version__ = "0.1.0"

__all__ = [
    "make", "make_vec", "environment_options", "Env", "VectorEnv", "Client", "connect",
    "PROBLEMS", "MlgoError",
    "ParseError", "InvalidRequest", "MethodNotFound", "InvalidParams", "InternalError",
    "InvalidAction", "UnknownEpisode", "EpisodeFailed", "Busy", "LineTooLong", "ServerGone",
    "error_for", "to_action",
]

PROBLEMS = ("inlining", "regalloc", "regalloc-priority")


def environment_options() -> List[Dict[str, Any]]:
    """The environment's options, as the compiled core lists them (one table in C++,
    include/mlgo/env/environment_option_table.h, from which mlgo-env's flags come too):
    per option a dict of ``keyword`` (make()'s), ``flag`` (mlgo-env's, or None),
    ``kind``, ``default`` and ``help``. Raises ImportError without the core."""
    return load_core().environment_options()


def _check_keywords(caller: str, options: Dict[str, Any]) -> None:
    """TypeError naming the options that are no environment option (the core's table)."""
    known = {o["keyword"] for o in environment_options() if o["keyword"]}
    unknown = set(options) - known
    if unknown:
        raise TypeError(f"{caller}() got unexpected options {sorted(unknown)}")


def _backend(caller: str, problem: str, remote: Union[None, str, Sequence[str], Client],
             options: Dict[str, Any]) -> Backend:
    given = {k: v for k, v in options.items() if v is not None}
    if remote is None:
        _check_keywords(caller, options)
        given["problem"] = problem
        return InProcessBackend(given)
    if given:
        try:  # without the core, any option is refused below, known or not
            _check_keywords(caller, given)
        except ImportError:
            pass
        raise InvalidParams(f"{sorted(given)} configure an in-process environment; a server "
                            "takes them as its own flags (mlgo-env serve --help)")
    if isinstance(remote, Client):
        backend = RemoteBackend(remote, owns_client=False)
    else:
        backend = RemoteBackend(connect(remote))
    served = backend.description["problem"]
    if served != problem:
        backend.close()
        raise InvalidParams(f"the server at {remote!r} serves {served!r}, not {problem!r}")
    return backend


def make(problem: str = "inlining", corpus: Optional[str] = None, *,
         remote: Union[None, str, Sequence[str], Client] = None, **options: Any) -> Env:
    """An ``Env`` for ``problem`` ("inlining", "regalloc", "regalloc-priority").

    In process (``remote=None``): ``corpus`` (directory; default the bundled demo corpus,
    -Oz for inlining, -O2 for regalloc) and the environment options as keywords: mlgo-env's
    environment flags, spelled as Python names (``--cache-dir`` is ``cache_dir``,
    ``--no-disk-cache`` is ``disk_cache=False``, repeated ``--delete-flag`` is
    ``delete_flags=[...]``), and ``module_embeddings``. :func:`environment_options` lists
    them with their kinds, defaults and help (``jobs``, ``cache_dir``, ``disk_cache``,
    ``ir2vec_vocab``, ``clang``, ``temp_dir``, ``compile_timeout`` in seconds,
    ``max_observations``, ``max_episodes``, ``include_default_feature``, ``sampler``,
    ``seed``, ``priority_fallback``, ``full_compile``, ...); None means the default. An
    unknown keyword raises TypeError; a bad value ``InvalidParams`` naming it
    (``EpisodeFailed`` when clang cannot be probed).

    Remote: ``remote="unix:PATH"`` or ``"HOST:PORT"`` (``mlgo-env serve``), a
    list (an mlgo-env command spoken to over stdio), or a ``Client``. The
    server's problem must be ``problem``; the environment options are then
    refused (``InvalidParams``: they are the server's flags). The remote path needs
    no compiled core.
    """
    return Env(_backend("make", problem, remote, dict(options, corpus=corpus)))


def make_vec(problem: str = "inlining", num_envs: int = 2, corpus: Optional[str] = None, *,
             remote: Union[None, str, Sequence[str], Client] = None, **options: Any) -> VectorEnv:
    """A ``VectorEnv`` of ``num_envs`` slots; the other arguments as make()'s.
    In process, ``jobs`` defaults to ``num_envs``."""
    if remote is None:
        options.setdefault("jobs", num_envs)
    return VectorEnv(_backend("make_vec", problem, remote, dict(options, corpus=corpus)),
                     num_envs)
