"""The golden policy files of tests/data/policies/ (manifest.json), read by the Python reader.

policy/policy_golden_test.cc holds the C++ reader to the same manifest: every valid file
loads and takes the listed actions (logits to 1e-12) on the listed observations, every invalid
one is refused with the listed message, at load or, for files no observation of a layout
can feed, when it meets the observation (C++: Policy::bind). docs/policy-format.md explains
the fields and the refusals.
"""

import json
import os
import re

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


def logits_of(policy, obs, info):
    if policy.decision == "argmax-masked":
        rows, _ = policy.candidate_rows(obs, info)
    else:
        rows = policy.features_of(obs, info)[None, :]
    return policy.exact_logits(rows)


@pytest.mark.parametrize("case", MANIFEST["valid"], ids=lambda c: c["file"])
def test_valid_policies_take_the_listed_actions(case):
    policy = load_policy(os.path.join(GOLDEN, case["file"]))
    assert policy.problem == case["layout"]
    entries = MANIFEST["observations"][case["layout"]]
    assert len(case["actions"]) == len(entries) == len(case["logits"])
    for entry, action, logits in zip(entries, case["actions"], case["logits"]):
        obs, info = observation(case["layout"], entry), entry.get("info")
        assert policy.act(obs, info) == action, entry
        np.testing.assert_allclose(logits_of(policy, obs, info), logits, rtol=1e-12, atol=1e-12)
        if policy.decision != "argmax-masked":  # the batch path agrees away from 0
            assert policy.decisions(policy.features_of(obs, info)[None, :])[0] == action


@pytest.mark.parametrize("case", MANIFEST["valid"], ids=lambda c: c["file"])
def test_valid_policies_survive_a_round_trip(case, tmp_path):
    policy = load_policy(os.path.join(GOLDEN, case["file"]))
    save_policy(policy, tmp_path / "again.json")
    again = load_policy(tmp_path / "again.json")
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
    version of any JSON type is named, not a crash."""
    with open(os.path.join(GOLDEN, "valid", "v1-linear.json"), encoding="utf-8") as f:
        obj = json.load(f)
    with pytest.raises(PolicyError, match="'mean' holds a value that is not finite"):
        policy_from_json({**obj, "mean": [float("nan"), 0, 0]})
    for version in ([1], {"v": 1}, None, 1.5):
        with pytest.raises(PolicyError, match=re.escape(f"version {version!r} is not supported")):
            policy_from_json({**obj, "version": version})
    assert policy_from_json({**obj, "version": 1.0}).features == obj["features"]


def test_files_over_the_size_limit_are_refused(tmp_path, monkeypatch):
    from mlgo_env.policies import policy_file
    path = tmp_path / "big.json"
    with open(os.path.join(GOLDEN, "valid", "v1-linear.json"), encoding="utf-8") as f:
        path.write_text(f.read())
    monkeypatch.setattr(policy_file, "MAX_FILE_BYTES", 100)
    with pytest.raises(PolicyError, match=r"big.json' is larger than"):
        load_policy(path)


def test_files_that_cannot_be_read_are_named(tmp_path):
    """As the C++ reader: the system's reason, a directory is not read as empty text."""
    (tmp_path / "directory.json").mkdir()
    for name, reason in (("missing.json", "No such file or directory"),
                         ("directory.json", "Is a directory")):
        with pytest.raises(PolicyError) as refused:
            load_policy(tmp_path / name)
        assert str(refused.value) == f"cannot read policy '{tmp_path / name}': {reason}"
