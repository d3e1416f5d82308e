"""A second "node": a Dask worker in its own network namespace, joined to this one over
a veth pair, takes part in an evaluation through `--scheduler=tcp://...`; a worker that
cannot see the corpus (a private mount namespace hides it) is named up front. Needs root
(ip netns, unshare), as CI has."""

import json
import os
import random
import subprocess
import sys
import time

import pytest

from cluster_helpers import command_env, rows_of, run_module, stop


def ip(*args):
    subprocess.run(["ip", *args], check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.fixture
def second_node():
    """(namespace name, host address, namespace address) of a fresh netns + veth pair."""
    tag = f"{os.getpid() % 10000}{random.randrange(100)}"
    ns, host_if, ns_if = f"mlgo{tag}", f"mlgoh{tag}", f"mlgon{tag}"
    net = f"10.{random.randrange(100, 250)}.{random.randrange(1, 250)}"
    ip("netns", "add", ns)
    try:
        ip("link", "add", host_if, "type", "veth", "peer", "name", ns_if)
        ip("link", "set", ns_if, "netns", ns)
        ip("addr", "add", f"{net}.1/24", "dev", host_if)
        ip("link", "set", host_if, "up")
        ip("netns", "exec", ns, "ip", "addr", "add", f"{net}.2/24", "dev", ns_if)
        ip("netns", "exec", ns, "ip", "link", "set", ns_if, "up")
        ip("netns", "exec", ns, "ip", "link", "set", "lo", "up")
        yield ns, f"{net}.1", f"{net}.2"
    finally:
        subprocess.run(["ip", "link", "del", host_if], stderr=subprocess.DEVNULL)
        ip("netns", "del", ns)


def start(cmd, log):
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=command_env(),
                            start_new_session=True)


def dask(tool):
    return [sys.executable, "-m", f"distributed.cli.dask_{tool}"]


def read_address(scheduler_file, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            return json.loads(scheduler_file.read_text())["address"]
        except (OSError, ValueError, KeyError):
            time.sleep(0.1)
    raise AssertionError(f"no scheduler address in {scheduler_file} after {timeout} s")


def wait_for_workers(address, count, timeout=90):
    from distributed import Client
    with Client(address, timeout=30) as client:
        client.wait_for_workers(count, timeout=timeout)
        return sorted(client.scheduler_info()["workers"])


def test_worker_in_another_network_namespace_takes_part(second_node, demo, policy_file,
                                                        cache_dir, reference, tmp_path):
    ns, host_ip, ns_ip = second_node
    log = open(tmp_path / "dask.log", "w")
    started = []
    try:
        scheduler_file = tmp_path / "scheduler.json"
        started.append(start(dask("scheduler") + [
            "--host", host_ip, "--port", "0", "--no-dashboard",
            "--scheduler-file", str(scheduler_file)], log))
        address = read_address(scheduler_file)
        worker = ["--nthreads", "1", "--no-dashboard", "--local-directory", str(tmp_path)]
        started.append(start(dask("worker") + [address, "--host", host_ip] + worker, log))
        started.append(start(["ip", "netns", "exec", ns] + dask("worker") +
                             [address, "--host", ns_ip] + worker, log))
        workers = wait_for_workers(address, 2)
        assert any(w.startswith(f"tcp://{ns_ip}:") for w in workers), workers
        modules = sorted(reference[0])[:12]
        proc = run_module("mlgo_env.evaluate", "--problem=inlining", f"--policy={policy_file}",
                          f"--corpus={demo}", f"--scheduler={address}",
                          f"--cache-dir={cache_dir}", f"--modules={','.join(modules)}")
        rows, _ = rows_of(proc.stdout)
        assert rows == {m: reference[0][m] for m in modules}
        counts = dict(c.rsplit(" ", 1) for c in
                      proc.stderr.split("tasks per worker: ")[1].splitlines()[0].split(", "))
        assert any(w.startswith(f"tcp://{ns_ip}:") and int(n) > 0 for w, n in counts.items()), \
            proc.stderr

        # A third worker in the namespace that cannot see the corpus: named up front.
        hidden = ["ip", "netns", "exec", ns, "unshare", "--mount", "--propagation", "private",
                  "sh", "-c", 'mount -t tmpfs none "$0" && exec "$@"', demo]
        started.append(start(hidden + dask("worker") + [address, "--host", ns_ip,
                                                          "--name", "blind"] + worker, log))
        wait_for_workers(address, 3)
        proc = run_module("mlgo_env.evaluate", "--problem=inlining", f"--policy={policy_file}",
                          f"--corpus={demo}", f"--scheduler={address}", check=False)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "(name blind): cannot read" in proc.stderr, proc.stderr
        assert "must be readable at the same path on every worker" in proc.stderr
        assert proc.stderr.count("cannot read") == 1, proc.stderr
    finally:
        for p in reversed(started):
            stop(p)
        log.close()
