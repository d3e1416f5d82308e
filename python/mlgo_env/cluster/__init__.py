"""Running episodes, evaluations and trace shards as tasks: here, or on a Dask cluster.

The layer under the trainer and the evaluator: they take a :class:`TaskRunner` and do
not care where tasks run. :func:`open_runner` makes one from ``--scheduler``:

- no flag: :class:`InProcessRunner`, `workers` environments in this process;
- ``local`` / ``local:N``: a Dask ``LocalCluster`` of N single-thread worker processes;
- ``tcp://HOST:PORT`` (any Dask address), or the path of a scheduler file (what
  ``dask-scheduler --scheduler-file`` writes; scripts/slurm/ does so): an existing
  cluster, whose workers read the corpus at the same path (a shared file system).

This package imports the env API (``mlgo_env``, its episodes) and policies, never the
training modules. Dask (Debian ``python3-distributed``) is imported only when a
scheduler is named.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable, Optional

from .._native import find_mlgo_env
from .progress import Progress
from .runner import Failure, InProcessRunner, RunnerStats, TaskFailed, TaskRunner

__all__ = ["Failure", "InProcessRunner", "Progress", "RunnerStats", "TaskFailed",
           "TaskRunner", "add_arguments", "find_mlgo_env", "open_runner"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds ``--scheduler`` to a command's parser."""
    parser.add_argument(
        "--scheduler", metavar="ADDRESS",
        help="run the tasks on a Dask cluster: local[:N] (a LocalCluster of N worker "
             "processes on this machine), a scheduler address (tcp://host:8786) or a "
             "scheduler file; the corpus must be at the same path on every worker. "
             "Default: in this process (--workers)")


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def open_runner(scheduler: Optional[str], make_env: Optional[Callable[[], Any]],
                workers: int, corpus: Optional[str] = None,
                log: Optional[Callable[[str], None]] = _stderr,
                timeout: float = 60.0) -> TaskRunner:
    """The runner for ``--scheduler`` (None: in process, `workers` environments made by
    `make_env` when first needed). With a scheduler, `corpus` is checked readable on
    every worker and what the cluster is (workers, hosts, dashboard) goes to `log`;
    reaching the scheduler and a first worker may take `timeout` seconds each.
    ValueError naming the problem (unreachable scheduler, no worker, a worker that
    cannot read the corpus, Dask not installed)."""
    if not scheduler:
        return InProcessRunner(make_env or _no_environment, workers)
    try:
        from .dask_runner import connect
    except ImportError as e:
        raise ValueError(f"--scheduler needs Dask's distributed package (Debian: "
                         f"python3-distributed): {e}") from None
    return connect(scheduler, make_env or _no_environment, corpus, timeout, log)


def _no_environment() -> Any:
    raise RuntimeError("this run's tasks need no environment")
