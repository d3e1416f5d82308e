"""mlgo_env.cluster on a Dask LocalCluster with the real clang-22 and the -Oz demo corpus:
the same evaluation as in process, a worker killed mid-run, a module that fails
everywhere, trace shards merged into the local trace, training reproducible and resumed
on a new cluster."""

import json
import os
import shutil
import signal
import threading

from mlgo_env.cluster import Failure
from mlgo_env.cluster.dask_runner import connect
from mlgo_env.cluster.tasks import evaluate_task
from mlgo_env.policies.policy import load_policy, policy_to_json
from mlgo_env.training.training_setup import env_factory

from cluster_helpers import MLGO_ENV, alive, children_named, rows_of, run_module


def test_local_cluster_evaluates_as_in_process(demo, policy_file, cache_dir, reference):
    proc = run_module("mlgo_env.evaluate", "--problem=inlining", f"--policy={policy_file}",
                      f"--corpus={demo}", "--scheduler=local:2", f"--cache-dir={cache_dir}")
    rows, total = rows_of(proc.stdout)
    assert (rows, total) == reference
    # Two worker processes, both used.
    counts = proc.stderr.split("tasks per worker: ")[1].splitlines()[0].split(", ")
    assert len(counts) == 2 and all(int(c.split()[1]) > 0 for c in counts), proc.stderr
    assert "dask: 2 worker(s), 2 thread(s) on 1 host(s)" in proc.stderr


def test_killed_worker_loses_nothing_and_leaves_no_clang(demo, policy_file, cache_dir,
                                                         reference):
    modules = sorted(reference[0])[:14]
    policy = load_policy(policy_file)
    runner = connect("local:2", env_factory("inlining", demo, None, cache_dir), demo)
    try:
        pids = runner.client.run(os.getpid)
        victim_address, victim = sorted(pids.items())[0]
        compilers = []

        def kill_when_compiling():
            # Kills the worker while it has a clang running (mid-episode).
            for _ in range(2000):
                compilers[:] = children_named(victim, "clang")
                if compilers:
                    os.kill(victim, signal.SIGKILL)
                    return
                threading.Event().wait(0.005)

        killer = threading.Thread(target=kill_when_compiling)
        killer.start()
        values = runner.map(evaluate_task, [(m, policy) for m in modules], modules)
        killer.join()
        assert compilers, "the worker never ran clang"
        assert not any(isinstance(v, Failure) for v in values), values
        got = {v.module: (f"{v.default_score:.0f}", f"{v.policy_score:.0f}",
                          f"{v.reward:+.5f}") for v in values}
        assert got == {m: reference[0][m] for m in modules}
        # The dead worker's compilers died with it.
        assert all(not alive(pid) for pid in compilers), compilers
        # Its tasks ran elsewhere: the nanny's new worker or the other one.
        assert victim_address not in runner.client.scheduler_info()["workers"] or \
            runner.client.run(os.getpid).get(victim_address) != victim
    finally:
        runner.close()


def test_module_failing_everywhere_is_reported_once(demo, policy_file, cache_dir, reference,
                                                    tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    description = json.loads(open(os.path.join(demo, "corpus_description.json")).read())
    keep = sorted(reference[0])[:4]
    broken = keep[0]
    for m in keep:
        for suffix in (".bc", ".cmd"):
            os.makedirs(os.path.dirname(str(corpus / (m + suffix))), exist_ok=True)
            shutil.copy(os.path.join(demo, m + suffix), corpus / (m + suffix))
    (corpus / (broken + ".bc")).write_bytes(b"BC\xc0\xde not bitcode")
    description["modules"] = keep
    (corpus / "corpus_description.json").write_text(json.dumps(description))
    proc = run_module("mlgo_env.evaluate", "--problem=inlining", f"--policy={policy_file}",
                      f"--corpus={corpus}", "--scheduler=local:2", check=False)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    failed = [line for line in proc.stdout.splitlines() if line.startswith("failed: ")]
    assert len(failed) == 1 and failed[0].startswith(f"failed: {broken}: "), proc.stdout
    rows, total = rows_of(proc.stdout)
    assert rows == {m: reference[0][m] for m in keep[1:]}
    assert total.startswith("total: default ")


def test_trace_shards_merge_into_the_local_trace(demo, cache_dir, tmp_path):
    common = ["--problem=inlining", f"--corpus={demo}", "--seed=4", "--sampling-rate=0.3",
              f"--cache-dir={cache_dir}", f"--mlgo-env={MLGO_ENV}"]
    local, sharded = tmp_path / "local.log", tmp_path / "sharded.log"
    run_module("mlgo_env.cluster.trace", *common, f"--output={local}", "--workers=2")
    proc = run_module("mlgo_env.cluster.trace", *common, f"--output={sharded}",
                      "--scheduler=local:2", "--shards=5")
    assert "in 5 shards" in proc.stdout
    assert sharded.read_bytes() == local.read_bytes()
    assert (tmp_path / "sharded.log.csv").read_bytes() == (tmp_path / "local.log.csv").read_bytes()
    assert local.stat().st_size > 1000


def test_training_is_reproducible_and_resumes_on_a_new_cluster(demo, cache_dir, tmp_path):
    common = ["--problem=inlining", f"--corpus={demo}", "--minutes=5", "--seed=2",
              "--search-modules=5", "--check-modules=2", "--method=es", "--pairs=2", "--trace-sampling-rate=0.4", f"--mlgo-env={MLGO_ENV}",
              f"--cache-dir={cache_dir}"]
    here = tmp_path / "here.json"
    run_module("mlgo_env.train", *common, f"--output={here}", "--workers=2", "--rounds=2")
    there = tmp_path / "there.json"
    first = run_module("mlgo_env.train", *common, f"--output={there}",
                       "--scheduler=local:2", "--rounds=1")
    assert "dask: 2 worker(s)" in first.stdout
    # A new cluster: the checkpoint carries the search on.
    resumed = run_module("mlgo_env.train", *common, f"--output={there}",
                         "--scheduler=local:2", "--rounds=2", "--resume")
    assert "resuming from" in resumed.stdout and "at round 1" in resumed.stdout
    a, b = load_policy(here), load_policy(there)
    assert policy_to_json(a)["layers"] == policy_to_json(b)["layers"]
    # The resumed run rebuilt its replay cache from the trace: its episode counts differ,
    # its choices do not.
    for key in ("chosen_round", "search_score", "check_score", "validation", "selection"):
        assert a.metadata[key] == b.metadata[key], key
