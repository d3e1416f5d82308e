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

from typing import Any, Dict, Optional, Sequence, Union

from .backend import Backend, InProcessBackend, RemoteBackend
from .env import Env, to_action
from .errors import (Busy, EpisodeFailed, InternalError, InvalidAction, InvalidParams,
                     InvalidRequest, LineTooLong, MethodNotFound, MlgoError, ParseError,
                     ServerGone, UnknownEpisode, error_for)
from .remote import Client, connect
from .vector import VectorEnv

__version__ = "0.1.0"

__all__ = [
    "make", "make_vec", "Env", "VectorEnv", "Client", "connect", "PROBLEMS", "MlgoError",
    "ParseError", "InvalidRequest", "MethodNotFound", "InvalidParams", "InternalError",
    "InvalidAction", "UnknownEpisode", "EpisodeFailed", "Busy", "LineTooLong", "ServerGone",
    "error_for", "to_action",
]

PROBLEMS = ("inlining", "regalloc", "regalloc-priority")


def _backend(problem: str, remote: Union[None, str, Sequence[str], Client],
             options: Dict[str, Any]) -> Backend:
    given = {k: v for k, v in options.items() if v is not None}
    if remote is None:
        given["problem"] = problem
        return InProcessBackend(given)
    if given:
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
         remote: Union[None, str, Sequence[str], Client] = None,
         jobs: Optional[int] = None, cache_dir: Optional[str] = None,
         disk_cache: Optional[bool] = None, ir2vec_vocab: Optional[str] = None,
         clang: Optional[str] = None, temp_dir: Optional[str] = None,
         compile_timeout: Optional[float] = None, max_observations: Optional[int] = None,
         max_episodes: Optional[int] = None, include_default_feature: Optional[bool] = None,
         sampler: Optional[str] = None, seed: Optional[int] = None,
         module_embeddings: Optional[bool] = None,
         delete_flags: Optional[Sequence[str]] = None,
         replace_flags: Optional[Sequence[str]] = None,
         add_flags: Optional[Sequence[str]] = None,
         full_compile: Optional[bool] = None) -> Env:
    """An ``Env`` for ``problem`` ("inlining", "regalloc", "regalloc-priority").

    In process (``remote=None``): ``corpus`` (directory; default the bundled
    demo corpus, -Oz for inlining, -O2 for regalloc), ``jobs`` (compilers at
    once; default cores), ``cache_dir`` / ``disk_cache`` (baseline scores),
    ``ir2vec_vocab`` (a vocabulary path or ``"default"``), ``clang``,
    ``temp_dir``, ``compile_timeout`` (seconds), ``max_observations``,
    ``max_episodes``, ``include_default_feature``, ``sampler`` ("uniform",
    "without-replacement", "round-robin") and ``seed``, ``delete_flags`` /
    ``replace_flags`` / ``add_flags`` - the same as mlgo-env's flags of the
    same names, and ``full_compile`` (mlgo-env's ``--full-compile``: register
    allocation episodes compile each module in full instead of from its
    cached optimised IR; same scores, about twice the time). Errors in them
    raise ``InvalidParams`` (or ``EpisodeFailed`` when clang cannot be
    probed) naming the problem.

    Remote: ``remote="unix:PATH"`` or ``"HOST:PORT"`` (``mlgo-env serve``), a
    list (an mlgo-env command spoken to over stdio), or a ``Client``. The
    server's problem must be ``problem``; the in-process options are then
    refused (they are the server's flags).
    """
    return Env(_backend(problem, remote, dict(
        corpus=corpus, jobs=jobs, cache_dir=cache_dir, disk_cache=disk_cache,
        ir2vec_vocab=ir2vec_vocab, clang=clang, temp_dir=temp_dir,
        compile_timeout=compile_timeout, max_observations=max_observations,
        max_episodes=max_episodes, include_default_feature=include_default_feature,
        sampler=sampler, seed=seed, module_embeddings=module_embeddings,
        delete_flags=delete_flags, replace_flags=replace_flags, add_flags=add_flags,
        full_compile=full_compile)))


_MAKE_OPTIONS = {
    "corpus", "jobs", "cache_dir", "disk_cache", "ir2vec_vocab", "clang", "temp_dir",
    "compile_timeout", "max_observations", "max_episodes", "include_default_feature", "sampler",
    "seed", "module_embeddings", "delete_flags", "replace_flags", "add_flags", "full_compile"}


def make_vec(problem: str = "inlining", num_envs: int = 2, corpus: Optional[str] = None, *,
             remote: Union[None, str, Sequence[str], Client] = None, **options: Any) -> VectorEnv:
    """A ``VectorEnv`` of ``num_envs`` slots; the other arguments as make()'s.
    In process, ``jobs`` defaults to ``num_envs``."""
    if remote is None:
        options.setdefault("jobs", num_envs)
    unknown = set(options) - _MAKE_OPTIONS
    if unknown:
        raise TypeError(f"make_vec() got unexpected options {sorted(unknown)}")
    return VectorEnv(_backend(problem, remote, dict(options, corpus=corpus)), num_envs)
