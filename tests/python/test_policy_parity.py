"""The policy runner decides alike on both of its paths (run by ctest, label clang).

There is one runner, C++ (include/mlgo/policy/policy_runner.h); it meets observations two
ways. `mlgo-env` binds it to clang's stream (the tensors as clang sends them, the host's
emulation of the default eviction computed from them); the Python package hands it an
observation as numpy arrays through the core, with ``inlining_default`` and
``host-emulation-v2`` from ``info["default_action"]``. Both paths see the observations of
traces that `mlgo-env trace` recorded from the real clang-22 on a few demo modules (inlining
at -Oz, eviction at -O2). For several policies of every form (version 1; version 2 with
transforms, a margin block, a flip classifier; version 3 regalloc networks with tanh and
relu layers, and one reading ``host-emulation-v2``) the test compares, observation by
observation:

- `mlgo-env policy decide --policy=P TRACE` with `Policy.act`, given the default's action
  as the environment's info would;
- the actions `mlgo-env trace --policy=P` recorded (inside the environment) with
  `Policy.act` on the observations recorded with them; and `replay --verify` accepts
  that trace (its header names the policy file).

Needs MLGO_ENV (the mlgo-env executable): ctest sets it; a missing one fails (real_tools.py).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))
import numpy as np  # noqa: E402

from mlgo_env.policies.policy import (EMULATION_FEATURE, Layer, Policy, new_policy,  # noqa: E402
                                     save_policy)
from mlgo_env.policies.residual_policy import ResidualSpace  # noqa: E402
from mlgo_env.trace_log import read_observations  # noqa: E402
from real_tools import needs, path_of  # noqa: E402

MLGO_ENV = path_of("MLGO_ENV")
INLINING_MODULES = r"(sha256|json_parser|lz77|expr_eval|order_book)\.o"
REGALLOC_MODULES = r"(sha256|huffman|matrix_lu)\.o"


def run(*args, **kwargs):
    return subprocess.run([MLGO_ENV, *args], capture_output=True, text=True, timeout=900,
                          **kwargs)


def standardisation(values):
    t = np.sign(values) * np.log1p(np.abs(values))
    return t.mean(axis=0), np.maximum(t.std(axis=0), 1e-3)


def random_layers(rng, inputs, hidden, activation):
    w1 = rng.normal(0, 1.0 / np.sqrt(inputs), (inputs, hidden))
    w2 = rng.normal(0, 1.0 / np.sqrt(hidden), (hidden, 1))
    return [Layer(w1, rng.normal(0, 0.3, hidden), activation),
            Layer(w2, rng.normal(0, 0.1, 1), "linear")]


def inlining_policies(observations):
    """Policies of every inlining form, standardised on the trace's own values."""
    names = [n for n, v in observations[0].items() if v.size == 1 and n != "inlining_decision"]
    rows = np.array([[float(obs[n].reshape(-1)[0]) for n in names] for obs in observations])
    mean, std = standardisation(rows)
    rng = np.random.default_rng(7)
    n = len(names)
    policies = {}
    # version 1: signed-log1p everywhere, one tanh layer
    p = new_policy("inlining", names, mean, std, 8, rng)
    p.layers = random_layers(rng, n, 8, "tanh")
    policies["v1-tanh"] = p
    # version 2: mixed transforms, relu
    transforms = ["identity" if i % 3 == 0 else "signed-log1p" for i in range(n)]
    t = np.where([tr == "identity" for tr in transforms], rows,
                 np.sign(rows) * np.log1p(np.abs(rows)))
    policies["v2-relu"] = Policy("inlining", names, t.mean(axis=0),
                                 np.maximum(t.std(axis=0), 1e-3),
                                 random_layers(rng, n, 6, "relu"), transforms=transforms)
    # version 2: a flip classifier
    policies["v2-flip"] = Policy("inlining", names, mean, std, random_layers(rng, n, 4, "tanh"),
                                 transforms=["signed-log1p"] * n,
                                 decision="flip-default-if-logit>0")
    policies["v2-flip"].layers[-1].bias[:] = -1.0
    # version 2: the anchored margin moved by 20 cost units, with shape weights
    shape = ["callee_users", "caller_users", "nested_inlines", "node_count"]
    raw = ["threshold", "cost_estimate", "inlining_default"]
    cols = [names.index(f) for f in shape]
    weights = np.concatenate([[1.0, 0.0, 0.0, 0.0], rng.normal(0, 8, len(shape))])[:, None]
    policies["v2-margin"] = Policy(
        "inlining", raw + shape, np.concatenate([np.zeros(3), mean[cols]]),
        np.concatenate([np.ones(3), std[cols]]), [Layer(weights, np.array([20.0]), "linear")],
        transforms=["identity"] * 3 + ["signed-log1p"] * len(shape),
        margin={"plus": "threshold", "floor": 1.0, "minus": "cost_estimate",
                "anchor": "inlining_default", "epsilon": 0.5})
    # version 2: a residual margin policy (relu pass-through of the margin, then a network)
    hidden = Layer(rng.normal(0, 1.0 / np.sqrt(n), (n, 5)), rng.normal(0, 0.3, 5), "relu")
    space = ResidualSpace("inlining", names, mean, std, hidden)
    policies["v2-residual"] = space.policy(np.concatenate([rng.normal(0, 15, 5), [-20.0]]))
    space.bound = 25.0  # three layers: g clipped to [-25, 25]
    policies["v2-residual-bounded"] = space.policy(np.concatenate([rng.normal(0, 30, 5),
                                                                   [-10.0]]))
    return policies


def regalloc_policies(observations):
    """Per-candidate networks over every eviction feature."""
    first = observations[0]
    mask_size = first["mask"].size
    names = [n for n, v in first.items() if n != "index_to_evict" and v.size in (1, mask_size)]
    columns = []
    for name in names:
        columns.append(np.concatenate([np.broadcast_to(obs[name].reshape(-1).astype(np.float64),
                                                       (mask_size,)) for obs in observations]))
    values = np.nan_to_num(np.stack(columns, axis=1), nan=0.0, posinf=0.0, neginf=0.0)
    transforms = ["identity" if n in ("mask", "is_free", "is_hint", "is_local") else
                  "signed-log1p" for n in names]
    t = np.where([tr == "identity" for tr in transforms], values,
                 np.sign(values) * np.log1p(np.abs(values)))
    mean, std = t.mean(axis=0), np.maximum(t.std(axis=0), 1e-3)
    rng = np.random.default_rng(11)
    n = len(names)
    # Anchored on the emulation: hidden unit 0 carries a bonus for its candidate, enough
    # to keep its choice often but not always.
    anchored = random_layers(rng, n + 1, 8, "tanh")
    anchored[0].weights[:, 0] = 0.0
    anchored[0].weights[n, 0] = 3.0
    anchored[0].bias[0] = 0.0
    anchored[1].weights[0, 0] = 0.5
    return {
        "v3-tanh": Policy("regalloc", names, mean, std, random_layers(rng, n, 8, "tanh"),
                          transforms=transforms, decision="argmax-masked", mask="mask"),
        "v3-relu-linear": Policy("regalloc", names, mean, std,
                                 random_layers(rng, n, 5, "relu") + [
                                     Layer(np.array([[1.5]]), np.array([0.0]), "linear")],
                                 transforms=transforms, decision="argmax-masked", mask="mask"),
        "v3-anchored": Policy("regalloc", names + [EMULATION_FEATURE], np.append(mean, 0.0),
                              np.append(std, 1.0), anchored,
                              transforms=transforms + ["identity"], decision="argmax-masked",
                              mask="mask"),
    }


@needs("MLGO_ENV")
class PolicyParity(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="mlgo-parity-")
        cls.common = [f"--cache-dir={os.path.join(cls.dir, 'cache')}", "--jobs=2",
                      "--sampling-rate=1", "--no-progress"]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def trace(self, name, problem, modules, policy_path=None):
        out = os.path.join(self.dir, name)
        args = ["trace", f"--problem={problem}", f"--module_filter={modules}",
                f"--output={out}", *self.common]
        if policy_path:
            args.append(f"--policy={policy_path}")
        done = run(*args)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        return out

    def cpp_decisions(self, policy_path, trace):
        done = run("policy", "decide", f"--policy={policy_path}", trace)
        self.assertEqual(done.returncode, 0, done.stderr)
        return [int(line.rsplit("\t", 1)[1]) for line in done.stdout.splitlines()]

    def check_problem(self, problem, modules, make_policies, action):
        base = self.trace(f"{problem}.log", problem, modules)
        observations = [obs for _, obs in read_observations(base)]
        self.assertGreater(len(observations), 200)
        policies = make_policies(observations)
        # The default trace's actions are the default's decisions (for regalloc the host's
        # emulation): what an environment's info["default_action"] holds.
        defaults = [int(obs[action].reshape(-1)[0]) for obs in observations]
        for name, policy in policies.items():
            with self.subTest(policy=name):
                path = os.path.join(self.dir, f"{problem}-{name}.json")
                save_policy(policy, path)
                python = [policy.act(obs, {"default_action": d})
                          for obs, d in zip(observations, defaults)]
                self.assertEqual(self.cpp_decisions(path, base), python)
                # Decisions that vary: a runner that answered a constant would not pass.
                self.assertGreater(len(set(python)), 1 if problem == "inlining" else 3)
                if EMULATION_FEATURE in policy.features:
                    # The feature matters: the policy keeps the emulation's choice often,
                    # not always.
                    kept = np.mean(np.asarray(python) == np.asarray(defaults))
                    self.assertTrue(0.3 < kept < 0.99, kept)
        # The C++ runner inside `trace --policy`, then replay --verify on its trace.
        name, policy = next(iter(policies.items()))
        path = os.path.join(self.dir, f"{problem}-{name}.json")
        traced = self.trace(f"{problem}-{name}.log", problem, modules, path)
        with open(traced, "rb") as f:
            header = json.loads(f.readline())
        self.assertEqual(header["policy"], "file:" + path)
        recorded = list(read_observations(traced))
        self.assertGreater(len(recorded), 50)
        for _, obs in recorded:
            self.assertEqual(int(obs[action].reshape(-1)[0]), policy.act(obs))
        verify = run("replay", traced, "--verify", *self.common[:2])
        self.assertEqual(verify.returncode, 0, verify.stdout + verify.stderr)
        self.assertIn("verified", verify.stdout)

    def test_inlining(self):
        self.check_problem("inlining", INLINING_MODULES, inlining_policies, "inlining_decision")

    def test_regalloc(self):
        self.check_problem("regalloc", REGALLOC_MODULES, regalloc_policies, "index_to_evict")


if __name__ == "__main__":
    unittest.main()
