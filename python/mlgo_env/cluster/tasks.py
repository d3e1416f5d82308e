"""The functions that run as tasks, on whichever runner: ``fn(env, item) -> value``.

They are plain module-level functions, so Dask ships them by name (the workers import
mlgo_env from the same shared path as the corpus); their items and values are small
picklable objects (module names, policies, deciders, results).
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Any, Optional, Sequence


def play_task(env: Any, job: tuple[str, Any]) -> tuple[Any, Any]:
    """Plays one ``(module, decide)`` episode on `env`; returns the
    :class:`~mlgo_env.episodes.EpisodeResult` and the decider as it ended (what it
    recorded travels back with it). Raises what the environment raises."""
    from ..episodes import play_episode
    module, decide = job
    return play_episode(env, module, decide), decide


def evaluate_task(env: Any, job: tuple[str, Any]) -> Any:
    """One module's evaluation: ``(module, policy)`` played with the policy's decisions;
    returns the EpisodeResult."""
    from ..episodes import play_episode
    module, policy = job
    return play_episode(env, module, policy.act)


def features_task(env: Any, _: Any) -> list[str]:
    """The observation feature names of the worker's environment."""
    space = env.observation_space
    return list(getattr(space, "spaces", space).keys())


def check_corpus(corpus: str) -> Optional[str]:
    """None when this process can read the corpus (its description and every module's
    files), else what it cannot read. Runs on each worker before a run starts."""
    path = os.path.join(corpus, "corpus_description.json")
    try:
        with open(path, encoding="utf-8") as f:
            description = json.load(f)
        modules = [str(m) for m in description["modules"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        return f"cannot read {path}: {e}"
    suffixes = [".bc"]
    if "global_command_override" not in description:
        suffixes.append(".cmd")
    if description.get("has_thinlto"):
        suffixes.append(".thinlto.bc")
    for module in modules:
        for suffix in suffixes:
            name = os.path.join(corpus, module + suffix)
            if not os.access(name, os.R_OK):
                return f"cannot read {name}"
    return None


@dataclass(frozen=True)
class ShardJob:
    """One `mlgo-env trace --shard=K/N` run."""

    mlgo_env: str
    index: int
    count: int
    arguments: tuple[str, ...]  # --problem, --corpus, --seed, --sampling-rate, ...


@dataclass
class ShardResult:
    index: int
    trace: bytes
    csv: bytes
    report: str       # the command's standard output (its summary, failed modules)
    returncode: int   # 0, or 3 when some modules failed (the trace is still whole)


def _die_with_parent() -> None:  # runs in the child between fork and exec
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: killed if the worker dies


def trace_shard_task(_: Any, job: ShardJob) -> ShardResult:
    """Runs shard `job.index` of `job.count` of a trace with one compiler into a scratch
    directory of this machine and returns its bytes (the trace and its CSV). The
    command dies with the worker (and its compilers with it). Raises RuntimeError with
    the command's output when it fails as a whole (exit codes other than 0 and 3)."""
    scratch = tempfile.mkdtemp(prefix="mlgo-shard-")
    try:
        out = os.path.join(scratch, "shard.log")
        cmd = [job.mlgo_env, "trace", *job.arguments, "--jobs=1", "--no-progress",
               f"--shard={job.index}/{job.count}", f"--output={out}",
               f"--temp-dir={scratch}"]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, text=True,
                              preexec_fn=_die_with_parent)
        if proc.returncode not in (0, 3):
            raise RuntimeError(f"mlgo-env trace --shard={job.index}/{job.count} failed "
                               f"({proc.returncode}): {proc.stdout[-2000:]}")
        with open(out, "rb") as f:
            trace = f.read()
        with open(out + ".csv", "rb") as f:
            csv = f.read()
        return ShardResult(job.index, trace, csv, proc.stdout, proc.returncode)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def selection_task(_: Any, job: tuple[str, Sequence[str]]) -> list[str]:
    """The modules `mlgo-env trace` would trace (its --dry-run), in trace order."""
    mlgo_env, arguments = job
    proc = subprocess.run([mlgo_env, "trace", *arguments, "--dry-run"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"mlgo-env trace --dry-run failed ({proc.returncode}): "
                           f"{proc.stderr.strip()[-2000:]}")
    return [line for line in proc.stdout.splitlines() if line]
