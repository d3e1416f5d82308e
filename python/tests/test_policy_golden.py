"""The golden policy files of tests/data/policies/ (manifest.json), through the package.

The reader, writer and runner are the C++ ones (policy/policy_golden_test.cc holds them to
the manifest); this holds the package's wrappers over them to the same manifest: every valid
file loads and `Policy.act` takes the listed actions (logits to 1e-12) on the listed
observations given as numpy dicts, with host-emulation-v2 from info["default_action"];
every invalid one is refused with the listed message as a PolicyError, at load or, for files
no observation of a layout can feed, when it meets the observation. docs/policy-format.md
explains the fields and the refusals.
"""

import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from mlgo_env.policies.policy import PolicyError, load_policy, policy_from_json, save_policy

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(CHECKOUT, "tests", "data", "policies")
with open(os.path.join(GOLDEN, "manifest.json"), encoding="utf-8") as _f:
    MANIFEST = json.load(_f)
DTYPES = {"float": np.float32, "double": np.float64, "int64_t": np.int64, "int32_t": np.int32}


def observation(layout, entry):
    """The observation `entry` of the manifest as tensors of the layout's types and shapes."""
    return {s["name"]: np.asarray(entry["features"][s["name"]], dtype=DTYPES[s["type"]])
            .reshape(s["shape"]) for s in MANIFEST["layouts"][layout]}


@pytest.mark.parametrize("case", MANIFEST["valid"], ids=lambda c: c["file"])
def test_valid_policies_take_the_listed_actions(case):
    policy = load_policy(os.path.join(GOLDEN, case["file"]))
    assert policy.problem == case["layout"]
    entries = MANIFEST["observations"][case["layout"]]
    assert len(case["actions"]) == len(entries) == len(case["logits"])
    for entry, action, logits in zip(entries, case["actions"], case["logits"]):
        obs, info = observation(case["layout"], entry), entry.get("info")
        answer, computed = policy.act_with_logits(obs, info)
        assert answer == policy.act(obs, info) == action, entry
        np.testing.assert_allclose(computed, logits, rtol=1e-12, atol=1e-12)
        if policy.decision != "argmax-masked":  # the batch path: the same logit, to the bit
            row = policy.features_of(obs, info)[None, :]
            assert policy.logits(row).tolist() == computed.tolist()
            assert policy.decisions(row)[0] == action


@pytest.mark.parametrize("case", MANIFEST["valid"], ids=lambda c: c["file"])
def test_valid_policies_survive_a_round_trip(case, tmp_path):
    policy = load_policy(os.path.join(GOLDEN, case["file"]))
    save_policy(policy, tmp_path / "again.json")
    again = load_policy(tmp_path / "again.json")
    for a, b in zip([policy.mean, policy.std] + [x for l in policy.layers for x in (l.weights, l.bias)],
                    [again.mean, again.std] + [x for l in again.layers for x in (l.weights, l.bias)]):
        assert a.tobytes() == b.tobytes()  # to the bit
    assert (again.metadata, again.transforms, again.margin, again.mask) == \
        (policy.metadata, policy.transforms, policy.margin, policy.mask)
    entries = MANIFEST["observations"][case["layout"]]
    for entry, action in zip(entries, case["actions"]):
        assert again.act(observation(case["layout"], entry), entry.get("info")) == action


@pytest.mark.parametrize("case", MANIFEST["invalid"], ids=lambda c: c["file"])
def test_invalid_policies_are_refused_with_the_listed_message(case):
    path = os.path.join(GOLDEN, case["file"])
    if case["refused_at"] == "load":
        with pytest.raises(PolicyError) as refused:
            load_policy(path)
        assert str(refused.value).startswith(f"policy '{path}'")
    else:
        policy = load_policy(path)
        entry = MANIFEST["observations"][case["layout"]][0]
        with pytest.raises(PolicyError) as refused:
            policy.act(observation(case["layout"], entry), entry.get("info"))
    assert case["error"] in str(refused.value)


def test_every_golden_file_is_in_the_manifest():
    listed = {c["file"] for c in MANIFEST["valid"] + MANIFEST["invalid"]}
    on_disk = {f"{d}/{name}" for d in ("valid", "invalid")
               for name in os.listdir(os.path.join(GOLDEN, d))}
    assert listed == on_disk


def test_what_json_cannot_hold_is_not_written(tmp_path):
    policy = load_policy(os.path.join(GOLDEN, "valid", "v1-linear.json"))
    policy.layers[0].weights[1, 0] = float("nan")
    with pytest.raises(PolicyError, match="not written.*'weights' row 1 holds a value that is "
                                          "not finite"):
        save_policy(policy, tmp_path / "nan.json")
    policy = load_policy(os.path.join(GOLDEN, "valid", "v1-linear.json"))
    policy.metadata["score"] = float("inf")
    with pytest.raises(PolicyError, match="not written"):
        save_policy(policy, tmp_path / "inf.json")
    assert not os.listdir(tmp_path)


def test_in_memory_objects_get_the_same_refusals():
    """policy_from_json sees what json.load made: NaN there is refused as not finite, and a
    version of any JSON type is named (as JSON), not a crash."""
    with open(os.path.join(GOLDEN, "valid", "v1-linear.json"), encoding="utf-8") as f:
        obj = json.load(f)
    with pytest.raises(PolicyError, match="'mean' holds a value that is not finite"):
        policy_from_json({**obj, "mean": [float("nan"), 0, 0]})
    for version in ([1], {"v": 1}, None, 1.5):
        with pytest.raises(PolicyError, match=re.escape(f"version {json.dumps(version)} is not "
                                                        "supported")):
            policy_from_json({**obj, "version": version})
    assert policy_from_json({**obj, "version": 1.0}).features == obj["features"]


def test_files_over_the_size_limit_are_refused(tmp_path):
    path = tmp_path / "big.json"
    with open(path, "wb") as f:  # sparse: the size is refused before anything is read
        f.truncate((64 << 20) + 1)
    with pytest.raises(PolicyError, match=r"big.json' is larger than 64 MiB"):
        load_policy(path)


def test_files_that_cannot_be_read_are_named(tmp_path):
    """As the C++ reader: the system's reason, a directory is not read as empty text."""
    (tmp_path / "directory.json").mkdir()
    for name, reason in (("missing.json", "No such file or directory"),
                         ("directory.json", "Is a directory")):
        with pytest.raises(PolicyError) as refused:
            load_policy(tmp_path / name)
        assert str(refused.value) == f"cannot read policy '{tmp_path / name}': {reason}"


def test_an_agent_needs_no_core_and_the_policies_load_it_when_called(tmp_path):
    """docs/architecture.md: a remote agent's modules import no policy and no core; the
    policies load the core at their first call. Checked on a copy of the package that has
    no core beside it (ImportError saying how to build one)."""
    package = os.path.join(CHECKOUT, "python", "mlgo_env")
    shutil.copytree(package, tmp_path / "mlgo_env",
                    ignore=shutil.ignore_patterns("_core*", "__pycache__"))
    code = """if True:
        import sys
        import mlgo_env, mlgo_env.env, mlgo_env.vector, mlgo_env.remote
        import mlgo_env.episodes, mlgo_env.agents
        loaded = [m for m in sys.modules if m == "mlgo_env._core" or ".policies" in m]
        assert not loaded, loaded
        from mlgo_env.policies.policy import load_policy
        assert "mlgo_env._core" not in sys.modules
        try:
            load_policy(sys.argv[1])
        except ImportError as e:
            assert "mlgo_env_core" in str(e), e
        else:
            sys.exit("a policy was read without the core")
    """
    env = {k: v for k, v in os.environ.items() if k != "MLGO_ENV_CORE_DIR"}
    subprocess.run([sys.executable, "-c", code, os.path.join(GOLDEN, "valid", "v1-linear.json")],
                   check=True, cwd=tmp_path, env={**env, "PYTHONPATH": str(tmp_path)})
