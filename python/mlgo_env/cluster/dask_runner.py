"""Tasks on a Dask cluster: a worker plugin owns the environments, Dask schedules.

    runner = connect("local:2", make_env, corpus)        # a LocalCluster of 2 processes
    runner = connect("tcp://head:8786", make_env, corpus)  # an existing scheduler
    runner = connect("/shared/scheduler.json", ...)       # a scheduler file (Slurm)

:class:`EnvironmentPlugin` is registered on every worker (and on workers that join
later: the scheduler keeps it). It makes an in-process environment on a worker's first
task that needs one, one per task running at once (one with single-thread workers, the
recommended shape: a compile is a process of its own), and closes them when the worker
shuts down or the runner closes. The compilers are children of the worker process that
die with it (PR_SET_PDEATHSIG), so a killed worker leaves none behind.

Faults: a task whose worker dies is run again on another worker by the scheduler
(``distributed.scheduler.allowed-failures`` deaths at most, then it is a Failure); a task
that raises is retried once (``retries``), then yields a :class:`Failure` naming its item
and the last worker's message. Workers must see the corpus at the same path; connect()
checks that every worker can read it and names those that cannot.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from typing import Any, Callable, Iterator, Optional, Sequence

from .progress import Progress
from .runner import Failure, TaskFn, TaskRunner
from .tasks import check_corpus

try:
    from distributed import WorkerPlugin as _PluginBase
except ImportError:  # pragma: no cover - the plugin is only used with distributed
    _PluginBase = object


class TaskError(RuntimeError):
    """A task raised on a worker; the message names the worker and the original error
    (a plain string, so it pickles whatever the original exception was)."""


class EnvironmentPlugin(_PluginBase):  # type: ignore[misc,valid-type]
    """Per-worker environments, made lazily with `make_env` (shipped by cloudpickle)."""

    def __init__(self, make_env: Callable[[], Any]) -> None:
        self.make_env = make_env
        self._lock: Optional[threading.Lock] = None
        self._free: list[Any] = []
        self._busy = 0
        self._closed = False

    def setup(self, worker: Any) -> None:
        self._lock = threading.Lock()
        self._free, self._busy, self._closed = [], 0, False

    def acquire(self) -> Any:
        """A free environment of this worker, made on first need. Raises what make_env
        raises."""
        assert self._lock is not None, "the plugin was not set up"
        with self._lock:
            if self._closed:
                raise RuntimeError("the worker is shutting down")
            self._busy += 1
            if self._free:
                return self._free.pop()
        try:
            return self.make_env()
        except BaseException:
            with self._lock:
                self._busy -= 1
            raise

    def release(self, env: Any, healthy: bool) -> None:
        """Gives `env` back; closes it when it failed (it may be mid-episode) or the
        worker is shutting down."""
        assert self._lock is not None
        with self._lock:
            self._busy -= 1
            keep = healthy and not self._closed
            if keep:
                self._free.append(env)
        if not keep:
            env.close()

    def teardown(self, worker: Any) -> None:
        """Closes the free environments; the busy ones close when their task ends."""
        if self._lock is None:
            return
        with self._lock:
            self._closed = True
            envs, self._free = self._free, []
        for env in envs:
            env.close()


def run_on_worker(plugin_name: str, fn: TaskFn, item: Any, needs_env: bool
                  ) -> tuple[Any, float, str]:
    """The task Dask runs: ``fn(env, item)`` with one of this worker's environments;
    returns (value, seconds inside fn, worker address). Raises TaskError."""
    from distributed import get_worker
    worker = get_worker()
    start = time.perf_counter()
    env, healthy = None, False
    plugin = worker.plugins.get(plugin_name) if needs_env else None
    try:
        if needs_env:
            if plugin is None:
                raise RuntimeError("the mlgo-env worker plugin is not registered here")
            env = plugin.acquire()
        value = fn(env, item)
        healthy = True
    except Exception as e:  # noqa: BLE001 - every error becomes the task's failure
        raise TaskError(f"on worker {worker.address}: {type(e).__name__}: {e}") from None
    finally:
        if env is not None:
            plugin.release(env, healthy)
    return value, time.perf_counter() - start, worker.address


class DaskRunner(TaskRunner):
    """Tasks on the workers of `client`'s scheduler. `cluster` (a LocalCluster this
    runner started) is closed with it. Use :func:`connect` to make one."""

    local = False

    def __init__(self, client: Any, make_env: Callable[[], Any], cluster: Any = None,
                 retries: int = 1) -> None:
        super().__init__()
        self.client, self.cluster, self.retries = client, cluster, retries
        # Unique per runner: runs sharing a scheduler keep their own environments.
        self.plugin_name = f"mlgo-env-{uuid.uuid4().hex[:12]}"
        client.register_worker_plugin(EnvironmentPlugin(make_env), name=self.plugin_name)

    @property
    def slots(self) -> int:  # type: ignore[override]
        """Worker threads connected now."""
        return max(1, sum(self.client.nthreads().values()))

    def workers(self) -> dict[str, dict[str, Any]]:
        """The scheduler's view of its workers, by address."""
        return dict(self.client.scheduler_info()["workers"])

    def imap(self, fn: TaskFn, items: Sequence[Any], labels: Optional[Sequence[str]] = None,
             needs_env: bool = True, progress: Optional[Progress] = None
             ) -> Iterator[tuple[int, Any]]:
        from distributed import as_completed
        items = list(items)
        if not items:
            return
        names = list(labels) if labels is not None else [str(i) for i in items]
        batch = uuid.uuid4().hex[:8]
        keys = [f"{fn.__name__}-{batch}-{i}" for i in range(len(items))]
        n = len(items)
        futures = self.client.map(run_on_worker, [self.plugin_name] * n, [fn] * n, items,
                                  [needs_env] * n, key=keys, pure=False, retries=self.retries)
        index = {f.key: i for i, f in enumerate(futures)}
        pending = set(index)
        if progress is not None:
            progress.start(n)
        try:
            # Results are fetched from the workers concurrently, as tasks complete.
            for future, result in as_completed(futures, with_results=True, raise_errors=False):
                i = index[future.key]
                pending.discard(future.key)
                if future.status == "finished":
                    value, seconds, worker = result
                    self.stats.tasks += 1
                    self.stats.task_seconds += seconds
                    self.stats.per_worker[worker] += 1
                else:  # raised on a worker (and again on retry), lost workers, cancelled
                    error = result[1] if isinstance(result, tuple) else result
                    value = Failure(names[i], str(error) if isinstance(error, TaskError)
                                    else f"{type(error).__name__}: {error}")
                    self.stats.failures += 1
                future.release()
                if progress is not None:
                    progress.update(isinstance(value, Failure))
                yield i, value
        finally:
            left = [f for f in futures if f.key in pending]
            if left:
                self.client.cancel(left)
            if progress is not None:
                progress.finish()

    def dashboard(self) -> Optional[str]:
        """The dashboard's address, when the scheduler serves one (its HTTP service always
        runs; the dashboard pages need bokeh where the scheduler runs)."""
        try:
            if "dashboard" not in self.client.scheduler_info().get("services", {}):
                return None
            if not self.client.run_on_scheduler(_has_bokeh):
                return None
            return str(self.client.dashboard_link)
        except Exception:  # noqa: BLE001 - only informative
            return None

    def close(self) -> None:
        try:
            if self.client.status == "running":
                self.client.unregister_worker_plugin(self.plugin_name)
        except Exception:  # noqa: BLE001 - workers may be gone already
            pass
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def _has_bokeh() -> bool:
    import importlib.util
    return importlib.util.find_spec("bokeh") is not None


def _open_client(scheduler: str, timeout: float) -> tuple[Any, Any]:
    """(client, cluster or None) for `scheduler`: ``local[:N]``, a scheduler file, or an
    address."""
    from distributed import Client, LocalCluster
    if scheduler == "local" or scheduler.startswith("local:"):
        count = scheduler.partition(":")[2]
        try:
            n = int(count) if count else (os.cpu_count() or 2)
        except ValueError:
            raise ValueError(f"--scheduler={scheduler}: expected local or local:N") from None
        if n < 1:
            raise ValueError(f"--scheduler={scheduler}: N must be at least 1")
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                               dashboard_address=":0", silence_logs=logging.ERROR)
        return Client(cluster), cluster
    try:
        if os.path.isfile(scheduler):
            return Client(scheduler_file=scheduler, timeout=timeout), None
        return Client(scheduler, timeout=timeout), None
    except OSError as e:
        raise ValueError(f"cannot reach the Dask scheduler at '{scheduler}': {e}") from None


def connect(scheduler: str, make_env: Callable[[], Any], corpus: Optional[str] = None,
            timeout: float = 60.0, log: Callable[[str], None] | None = None) -> DaskRunner:
    """A runner on `scheduler` (``local[:N]``: a LocalCluster of N single-thread worker
    processes, default one per core; a scheduler file; or an address such as
    ``tcp://host:8786``). Waits up to `timeout` seconds for a first worker; when
    `corpus` is given, checks every connected worker can read it. ValueError naming
    the scheduler or the workers when not; nothing is left open then."""
    client, cluster = _open_client(scheduler, timeout)
    try:
        try:
            client.wait_for_workers(1, timeout=timeout)
        except TimeoutError:
            raise ValueError(f"no worker joined the scheduler at '{scheduler}' within "
                             f"{timeout:.0f} s") from None
        if corpus is not None:
            _check_workers_read(client, os.path.abspath(corpus))
        runner = DaskRunner(client, make_env, cluster)
    except BaseException:
        client.close()
        if cluster is not None:
            cluster.close()
        raise
    if log is not None:
        workers = runner.workers()
        hosts = {w.get("host", a) for a, w in workers.items()}
        log(f"dask: {len(workers)} worker(s), {runner.slots} thread(s) on {len(hosts)} "
            f"host(s), scheduler {client.scheduler.address}")
        link = runner.dashboard()
        log(f"dask: dashboard at {link}" if link else
            "dask: no dashboard (it needs bokeh where the scheduler runs)")
    return runner


def _check_workers_read(client: Any, corpus: str) -> None:
    answers = client.run(check_corpus, corpus)
    info = client.scheduler_info()["workers"]
    bad = []
    for address, problem in sorted(answers.items()):
        if problem is not None:
            name = info.get(address, {}).get("name", address)
            bad.append(f"worker {address} (name {name}): {problem}")
    if bad:
        raise ValueError(f"the corpus '{corpus}' must be readable at the same path on every "
                         "worker (a shared file system); " + "; ".join(bad))
