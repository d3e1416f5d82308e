"""Fixtures of the cluster tests: the -Oz demo corpus, a policy that deviates from the
default on some call sites, and its in-process evaluation (the reference every cluster
run must reproduce)."""

import os

import numpy as np
import pytest

from mlgo_env.policies.policy import new_policy, save_policy

from cluster_helpers import DEMO, rows_of, run_module


def pytest_configure(config):
    config.addinivalue_line("markers", "slurm: starts a real single-node Slurm (root)")


@pytest.fixture(scope="session")
def demo():
    if not os.path.isfile(os.path.join(DEMO, "corpus_description.json")):
        pytest.fail(f"the demo corpus is not built at {DEMO}")
    return DEMO


@pytest.fixture(scope="session")
def policy_file(tmp_path_factory):
    """A flip policy: clang's default, flipped where a random tanh unit of the call site's
    features says so (a few percent of the decisions)."""
    features = ["threshold", "cost_estimate", "callee_users", "inlining_default"]
    rng = np.random.default_rng(11)
    p = new_policy("inlining", features, np.zeros(4), np.ones(4), 4, rng)
    p.layers[0].weights[:3, 1:] = rng.normal(0, 2.0, (3, 3))
    p.layers[1].weights[:, 0] = [0.0, 1.0, 1.0, 1.0]
    p.layers[1].bias[:] = -2.2
    p.decision = "flip-default-if-logit>0"
    path = tmp_path_factory.mktemp("policy") / "flip.json"
    save_policy(p, path)
    return str(path)


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("cluster-baselines"))


@pytest.fixture(scope="session")
def reference(demo, policy_file, cache_dir):
    """The in-process evaluation (two environments): its rows and total line."""
    proc = run_module("mlgo_env.evaluate", "--problem=inlining", f"--policy={policy_file}",
                      f"--corpus={demo}", "--workers=2", f"--cache-dir={cache_dir}")
    rows, total = rows_of(proc.stdout)
    assert total.startswith("total: default ") and len(rows) >= 30
    # The policy really deviates: some module's bytes differ from the default's.
    assert any(r[0] != r[1] for r in rows.values()), proc.stdout
    return rows, total
