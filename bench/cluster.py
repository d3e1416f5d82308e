#!/usr/bin/env python3
"""Evaluation through a Dask scheduler against the in-process run, side by side.

  inprocess  mlgo_env.cluster.InProcessRunner with 2 environments (what
             `python -m mlgo_env.evaluate --workers=2` does)
  dask       a `dask-scheduler` process and two `dask-worker --nthreads 1`
             processes on this machine; the same tasks through
             mlgo_env.cluster.dask_runner (what `--scheduler=tcp://...` does)

Both evaluate the same modules with the same policy (default: clang's own
decisions, a policy over `inlining_default`; or --policy) after one untimed
in-process pass has filled the baseline cache. The two sides take turns for
--rounds rounds (the order alternates); the script prints each side's wall
times, the ratio of the medians and of the best runs, checks the per-module
results are identical, and derives what a task costs on a cluster:

  overhead per task   (dask wall - inprocess wall) * 2 slots / tasks
  dask's own share    dask wall * 2 - the seconds tasks ran inside workers,
                      per task (waiting in queues, messages, deserialising)
  scheduler CPU       the scheduler process's CPU seconds per task (from /proc)
  bytes per task      the pickled task (function, policy, module) and result
  empty tasks         --empty tasks that do nothing, through the same runner:
                      the round trip a task costs when there is no work in it

and from those the point where one scheduler saturates (see docs/cluster.md).

Usage: bench/cluster.py --corpus DIR [--modules 300] [--rounds 2]
                                [--policy FILE] [--seed 0] [--cache-dir DIR]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from mlgo_env.cluster import InProcessRunner  # noqa: E402
from mlgo_env.cluster.dask_runner import connect, run_on_worker  # noqa: E402
from mlgo_env.cluster.tasks import evaluate_task  # noqa: E402
from mlgo_env.episodes import corpus_modules  # noqa: E402
from mlgo_env.policies.policy import load_policy, new_policy  # noqa: E402
from mlgo_env.training.training_setup import env_factory, scratch_dir  # noqa: E402


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def default_policy():
    """clang's own decision: the logit follows inlining_default."""
    return new_policy("inlining", ["inlining_default"], np.zeros(1), np.ones(1), 0,
                      np.random.default_rng(0))


def empty_task(env, item):
    return item


def start_cluster(scratch, env):
    """A dask-scheduler and two single-thread dask-workers; (address, processes). They
    stay in this process's session: with the kernel's autogroup scheduling a session of
    their own would give their compilers a bigger share of a busy machine's CPU than the
    in-process side's, and the comparison would flatter Dask."""
    sched_file = os.path.join(scratch, "scheduler.json")
    py = [sys.executable, "-m"]
    procs = [subprocess.Popen(py + ["distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                    "--port", "0", "--no-dashboard", "--scheduler-file",
                                    sched_file], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)]
    for _ in range(600):
        if os.path.exists(sched_file) and os.path.getsize(sched_file) > 0:
            break
        time.sleep(0.1)
    address = json.load(open(sched_file))["address"]
    for i in range(2):
        procs.append(subprocess.Popen(
            py + ["distributed.cli.dask_worker", address, "--host", "127.0.0.1",
                  "--nthreads", "1", "--no-dashboard", "--local-directory", scratch,
                  "--name", f"bench-{i}"], env=env, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL))
    return address, procs


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True)
    p.add_argument("--modules", type=int, default=300)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--policy")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cache-dir")
    p.add_argument("--empty", type=int, default=2000)
    a = p.parse_args()

    modules = corpus_modules(a.corpus)
    rng = np.random.default_rng(a.seed)
    modules = [modules[i] for i in sorted(rng.permutation(len(modules))[:a.modules])]
    policy = load_policy(a.policy) if a.policy else default_policy()
    scratch = tempfile.mkdtemp(prefix="mlgo-bench-cluster-")
    cache = a.cache_dir or os.path.join(scratch, "cache")
    make = env_factory("inlining", a.corpus, None, cache, scratch_dir(None, None))
    jobs = [(m, policy) for m in modules]
    env = dict(os.environ, PYTHONPATH=os.path.join(HERE, "..", "python"))

    print(f"{len(modules)} modules of {a.corpus}; warming the baseline cache ...", flush=True)
    t = time.perf_counter()
    with InProcessRunner(make, 2) as warm:
        reference = warm.map(evaluate_task, jobs, modules)
    print(f"  warm-up pass {time.perf_counter() - t:.1f} s", flush=True)

    address, procs = start_cluster(scratch, env)
    walls = {"inprocess": [], "dask": []}
    stats = {}
    try:
        t = time.perf_counter()
        runner = connect(address, make, a.corpus, log=None)
        connect_seconds = time.perf_counter() - t
        runner.client.wait_for_workers(2, timeout=120)
        for r in range(a.rounds):
            for side in (("inprocess", "dask") if r % 2 == 0 else ("dask", "inprocess")):
                if side == "inprocess":
                    with InProcessRunner(make, 2) as local:
                        t = time.perf_counter()
                        got = local.map(evaluate_task, jobs, modules)
                        walls[side].append(time.perf_counter() - t)
                        stats["inprocess_deciding"] = sum(x.policy_seconds for x in got)
                        stats[side] = local.stats
                else:
                    before = runner.stats.task_seconds
                    sched_cpu = cpu_seconds(procs[0].pid)
                    t = time.perf_counter()
                    got = runner.map(evaluate_task, jobs, modules)
                    walls[side].append(time.perf_counter() - t)
                    stats["sched_cpu"] = cpu_seconds(procs[0].pid) - sched_cpu
                    stats["dask_busy"] = runner.stats.task_seconds - before
                    stats["dask_deciding"] = sum(x.policy_seconds for x in got)
                bad = [m for m, x, y in zip(modules, got, reference)
                       if (x.default_score, x.policy_score) != (y.default_score, y.policy_score)]
                assert not bad, f"{side}: results differ from the warm-up pass on {bad[:5]}"
                print(f"  round {r + 1} {side:9s} {walls[side][-1]:7.2f} s", flush=True)
        # The scheduler's background work (heartbeats, monitoring) per second, idle.
        idle_cpu = cpu_seconds(procs[0].pid)
        time.sleep(10)
        idle_rate = (cpu_seconds(procs[0].pid) - idle_cpu) / 10
        sched_cpu = cpu_seconds(procs[0].pid)
        t = time.perf_counter()
        runner.map(empty_task, list(range(a.empty)), needs_env=False)
        empty_wall = time.perf_counter() - t
        empty_cpu = cpu_seconds(procs[0].pid) - sched_cpu
        import cloudpickle
        task_bytes = [len(cloudpickle.dumps((run_on_worker, runner.plugin_name, evaluate_task,
                                              job, True))) for job in jobs[:50]]
        result_bytes = [len(cloudpickle.dumps((x, 0.0, "tcp://127.0.0.1:40000")))
                        for x in reference[:50]]
        runner.close()
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            proc.wait(30)
        subprocess.run(["rm", "-rf", scratch])

    n = len(modules)
    med = {k: statistics.median(v) for k, v in walls.items()}
    best = {k: min(v) for k, v in walls.items()}
    episode = statistics.mean(x.seconds for x in reference)
    print(f"\nevaluation of {n} modules, 2 slots each side (connect {connect_seconds:.2f} s, "
          "not counted)")
    print(f"  inprocess  median {med['inprocess']:.2f} s, best {best['inprocess']:.2f} s")
    print(f"  dask       median {med['dask']:.2f} s, best {best['dask']:.2f} s")
    print(f"  ratio dask/inprocess: median {med['dask'] / med['inprocess']:.3f}x, "
          f"best {best['dask'] / best['inprocess']:.3f}x (target <= 1.15x)")
    overhead = (best["dask"] - best["inprocess"]) * 2 / n
    own = (walls["dask"][-1] * 2 - stats["dask_busy"]) / n
    cpu = max(stats["sched_cpu"] - idle_rate * walls["dask"][-1], 0.0) / n
    print(f"  per task: overhead {overhead * 1e3:+.1f} ms (wall difference x 2 slots / tasks); "
          f"dask's own {own * 1e3:.1f} ms (2 x wall - time inside tasks, last run); "
          f"scheduler CPU {cpu * 1e3:.2f} ms (beyond its idle work)")
    print(f"  bytes per task: {statistics.mean(task_bytes):.0f} out (pickled function, policy, "
          f"module), {statistics.mean(result_bytes):.0f} back (result)")
    steps = statistics.mean(x.steps for x in reference)
    print(f"  per episode: {steps:.0f} decisions; deciding in Python (last runs) "
          f"{stats['inprocess_deciding'] / n * 1e3:.0f} ms in process, "
          f"{stats['dask_deciding'] / n * 1e3:.0f} ms on the workers")
    print(f"  scheduler idle: {idle_rate * 1e3:.1f} ms CPU per second (subtracted above)")
    empty_cpu = max(empty_cpu - idle_rate * empty_wall, 0.0)
    print(f"  {a.empty} empty tasks: {empty_wall:.2f} s, {empty_wall * 2 / a.empty * 1e3:.2f} ms "
          f"per task per slot, scheduler CPU {empty_cpu / a.empty * 1e3:.2f} ms per task")
    per_task = max(cpu, empty_cpu / a.empty)
    if per_task > 0:
        print(f"  mean episode {episode:.3f} s: one scheduler (one core) saturates near "
              f"{1 / per_task:.0f} tasks/s = {episode / per_task:.0f} single-thread workers "
              f"busy on episodes this long")


if __name__ == "__main__":
    main()
