"""The task-runner interface the trainer, the evaluator and the trace take, and its
in-process implementation (threads over environments of this process).

A task is a plain function ``fn(env, item) -> value`` applied to one item (a module to
play, a module to evaluate, a trace shard); the runner owns the environments and hands
one to each running task. :meth:`TaskRunner.imap` yields ``(index, value)`` as tasks
complete, where a task that raised gives a :class:`Failure` value instead: one bad module
never stops a run. The episode helpers (:meth:`TaskRunner.play`,
:meth:`TaskRunner.play_outcomes`) are built on it and are what the trainer calls.

Implementations: :class:`InProcessRunner` (below; today's path: ``slots`` environments in
this process, played from as many threads, clang releasing the GIL) and
:class:`mlgo_env.cluster.dask_runner.DaskRunner` (one environment per Dask worker thread,
tasks scheduled by Dask, a lost worker's tasks run again elsewhere).
"""

from __future__ import annotations

import abc
import threading
import time
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional, Sequence, TypeVar

from .progress import Progress

T = TypeVar("T")
#: a task: (environment or None, item) -> value
TaskFn = Callable[[Any, Any], Any]


@dataclass(frozen=True)
class Failure:
    """A task that produced no value: `label` names its item (a module, a shard),
    `message` says why (the exception, or the worker losses that ended it)."""

    label: str
    message: str

    def __str__(self) -> str:
        return f"{self.label}: {self.message}"


class TaskFailed(RuntimeError):
    """Raised by the helpers that need every task's value (:meth:`TaskRunner.play`);
    `failures` lists each failed task once."""

    def __init__(self, failures: Sequence[Failure]) -> None:
        self.failures = list(failures)
        names = ", ".join(f.label for f in self.failures[:10])
        more = f" and {len(self.failures) - 10} more" if len(self.failures) > 10 else ""
        super().__init__(f"{len(self.failures)} task(s) failed ({names}{more}): "
                         f"{self.failures[0].message}")


@dataclass
class RunnerStats:
    """What a runner has done: tasks finished, failed, the seconds they ran (inside the
    task, on whichever worker), and how many each worker ran."""

    tasks: int = 0
    failures: int = 0
    task_seconds: float = 0.0
    per_worker: Counter = field(default_factory=Counter)


class TaskRunner(abc.ABC):
    """Runs tasks over environments. One caller at a time (the runner is not
    thread-safe); close() releases every environment (and, for a cluster the runner
    started, the cluster)."""

    #: tasks that can run at once
    slots: int = 1
    #: True when tasks run in this process (the trace then runs as one local command)
    local: bool = True

    def __init__(self) -> None:
        self.stats = RunnerStats()
        self.episodes = 0

    @abc.abstractmethod
    def imap(self, fn: TaskFn, items: Sequence[Any], labels: Optional[Sequence[str]] = None,
             needs_env: bool = True, progress: Optional[Progress] = None
             ) -> Iterator[tuple[int, Any]]:
        """Runs ``fn(env, item)`` for every item (``env`` is None when not `needs_env`);
        yields ``(index, value)`` as each finishes, a :class:`Failure` (labelled by
        ``labels[index]``, default ``str(item)``) for a task that raised. Blocks while
        waiting for the next one to finish. Stopping the iteration early cancels what
        has not started."""

    @abc.abstractmethod
    def close(self) -> None:
        """Releases every environment; blocks until running tasks end."""

    # -- built on imap --------------------------------------------------------------------
    def map(self, fn: TaskFn, items: Sequence[Any], labels: Optional[Sequence[str]] = None,
            needs_env: bool = True, progress: Optional[Progress] = None) -> list[Any]:
        """imap's values in the order of `items` (Failures in place)."""
        out: list[Any] = [None] * len(items)
        for i, value in self.imap(fn, items, labels, needs_env, progress):
            out[i] = value
        return out

    def play_outcomes(self, jobs: Sequence[tuple[str, Any]],
                      progress: Optional[Progress] = None) -> list[Any]:
        """Plays every ``(module, decide)`` pair (mlgo_env.episodes.play_episode); an
        :class:`~mlgo_env.episodes.EpisodeResult` or a :class:`Failure` per job, in
        order. A decider that records what it saw (an object with attributes, e.g. the
        replay cache's recorder) holds, afterwards, the state it ended the episode with,
        wherever the episode ran."""
        from .tasks import play_task
        outcomes = self.map(play_task, list(jobs), [m for m, _ in jobs], True, progress)
        values = []
        for (_, decide), outcome in zip(jobs, outcomes):
            if isinstance(outcome, Failure):
                values.append(outcome)
                continue
            result, played = outcome
            _adopt(decide, played)
            values.append(result)
        self.episodes += sum(not isinstance(v, Failure) for v in values)
        return values

    def play(self, jobs: Sequence[tuple[str, Any]]) -> list[Any]:
        """play_outcomes' results, in order; :class:`TaskFailed` (naming every failed
        module once) if any episode failed. The trainer's entry point (the
        interface of :class:`mlgo_env.episodes.EpisodePool`)."""
        values = self.play_outcomes(jobs)
        failures = [v for v in values if isinstance(v, Failure)]
        if failures:
            raise TaskFailed(failures)
        return values

    def observation_features(self) -> list[str]:
        """The observation feature names of the runner's environments."""
        from .tasks import features_task
        (value,) = self.map(features_task, [None], ["observation features"])
        if isinstance(value, Failure):
            raise RuntimeError(f"cannot open an environment: {value.message}")
        return value

    def __enter__(self: T) -> T:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _adopt(original: Any, played: Any) -> None:
    """Gives `original` the attributes `played` ended its episode with (a copy that ran
    elsewhere); nothing when they are the same object or carry no attributes."""
    if played is original or not hasattr(original, "__dict__") or not hasattr(played, "__dict__"):
        return
    if type(played) is type(original):
        original.__dict__.update(played.__dict__)


class InProcessRunner(TaskRunner):
    """`slots` environments of this process (made by `make_env` on first use), tasks
    run from as many threads: the path of a single machine."""

    local = True

    def __init__(self, make_env: Callable[[], Any], slots: int) -> None:
        super().__init__()
        self.slots = max(1, int(slots))
        self._make_env = make_env
        self._envs: list[Any] = []
        self._free: list[Any] = []
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=self.slots,
                                            thread_name_prefix="mlgo-task")

    def _acquire(self) -> Any:
        with self._lock:
            if self._free:
                return self._free.pop()
        env = self._make_env()
        with self._lock:
            self._envs.append(env)
        return env

    def _release(self, env: Any, healthy: bool) -> None:
        with self._lock:
            if healthy:
                self._free.append(env)
                return
            self._envs.remove(env)
        env.close()

    def _call(self, fn: TaskFn, item: Any, needs_env: bool) -> tuple[Any, float]:
        start = time.perf_counter()
        if not needs_env:
            return fn(None, item), time.perf_counter() - start
        env = self._acquire()
        healthy = False
        try:
            value = fn(env, item)
            healthy = True
            return value, time.perf_counter() - start
        finally:
            # An environment whose task raised is replaced: it may be mid-episode.
            self._release(env, healthy)

    def imap(self, fn: TaskFn, items: Sequence[Any], labels: Optional[Sequence[str]] = None,
             needs_env: bool = True, progress: Optional[Progress] = None
             ) -> Iterator[tuple[int, Any]]:
        items = list(items)
        names = list(labels) if labels is not None else [str(i) for i in items]
        pending: dict[Future, int] = {}
        try:
            for i, item in enumerate(items):
                pending[self._executor.submit(self._call, fn, item, needs_env)] = i
            if progress is not None:
                progress.start(len(items))
            while pending:
                done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for future in done:
                    i = pending.pop(future)
                    error = future.exception()
                    if error is not None:
                        value: Any = Failure(names[i], f"{type(error).__name__}: {error}")
                        self.stats.failures += 1
                    else:
                        value, seconds = future.result()
                        self.stats.tasks += 1
                        self.stats.task_seconds += seconds
                        self.stats.per_worker["local"] += 1
                    if progress is not None:
                        progress.update(isinstance(value, Failure))
                    yield i, value
        finally:
            for future in pending:
                future.cancel()
            if progress is not None:
                progress.finish()

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        with self._lock:
            envs, self._envs, self._free = self._envs, [], []
        for env in envs:
            env.close()
