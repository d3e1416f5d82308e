"""The version-3 regalloc form of the policy file and the exact runner (no clang).

The same cases as policy/policy_test.cc, so both runners are pinned to the same rules.
"""

import math

import numpy as np
import pytest

from mlgo_env.policies.policy import (Layer, Policy, PolicyError, load_policy, policy_from_json,
                                     policy_to_json, save_policy)


def eviction_policy():
    """logit = -weight + 10 * is_hint + progress, identity transforms."""
    return Policy("regalloc", ["weight", "is_hint", "progress"], np.zeros(3), np.ones(3),
                  [Layer(np.array([[-1.0], [10.0], [1.0]]), np.zeros(1), "linear")],
                  transforms=["identity"] * 3, decision="argmax-masked", mask="mask")


def observation(mask, weight, is_hint, progress=0.5):
    return {"mask": np.array([mask], dtype=np.int64),
            "weight": np.array([weight], dtype=np.float32),
            "is_hint": np.array([is_hint], dtype=np.int64),
            "progress": np.array([progress], dtype=np.float32)}


def test_eviction_takes_the_best_allowed_candidate():
    p = eviction_policy()
    assert p.act(observation([1, 1, 1, 1], [3, 1, 2, 5], [0, 0, 0, 0])) == 1
    assert p.act(observation([1, 0, 1, 1], [3, 1, 2, 5], [0, 0, 0, 0])) == 2
    assert p.act(observation([1, 0, 1, 1], [3, 1, 2, 5], [0, 0, 0, 1])) == 3
    assert p.act(observation([0, 1, 1, 0], [0, 2, 2, 0], [0, 0, 0, 0])) == 1  # ties: lower
    nan = float("nan")
    assert p.act(observation([0, 1, 1, 0], [0, nan, 1e30, 0], [0, 0, 0, 0])) == 2
    assert p.act(observation([0, 1, 1, 0], [0, nan, nan, 0], [0, 0, 0, 0])) == 1
    assert p.act(observation([0, 0, 0, 0], [0, 1, 2, 3], [0, 0, 0, 0])) == 3  # none: last


def test_eviction_refuses_missing_and_misshapen_features():
    p = eviction_policy()
    obs = observation([1, 1, 1, 1], [3, 1, 2, 5], [0, 0, 0, 0])
    del obs["mask"]
    with pytest.raises(PolicyError, match="no feature 'mask'"):
        p.act(obs)
    obs = observation([1, 1, 1, 1], [3, 1, 2, 5], [0, 0, 0, 0])
    obs["weight"] = np.zeros((1, 3), dtype=np.float32)
    with pytest.raises(PolicyError, match="feature 'weight' has 3 values; regalloc policies "
                                          "use features with one value per candidate \\(4\\)"):
        p.act(obs)
    with pytest.raises(PolicyError, match="answers a whole observation, not a row"):
        p.decisions(np.zeros((2, 3)))


def test_version_3_round_trip(tmp_path):
    p = eviction_policy()
    obj = policy_to_json(p)
    assert obj["version"] == 3 and obj["decision"] == "argmax-masked" and obj["mask"] == "mask"
    save_policy(p, tmp_path / "r.json")
    q = load_policy(tmp_path / "r.json")
    assert (q.problem, q.decision, q.mask) == ("regalloc", "argmax-masked", "mask")
    obs = observation([1, 1, 1, 1], [3, 1, 2, 5], [0, 0, 1, 0])
    assert q.act(obs) == p.act(obs) == 2


@pytest.mark.parametrize("mutate, message", [
    (lambda o: o.update(problem="regalloc-priority"), "problem 'regalloc-priority' has no policy"),
    (lambda o: o.update(decision="logit>0"), "problem 'regalloc' policies decide with "
                                             "'argmax-masked' \\(version 3\\), not 'logit>0'"),
    (lambda o: o.update(version=2), 'decision "argmax-masked" is not one of logit>0, '
                                    "flip-default-if-logit>0"),
    (lambda o: o.update(mask=""), "'mask' must name the mask feature"),
    (lambda o: o.update(margin={"plus": "weight", "minus": "is_hint", "floor": 1}),
     "'margin' is for inlining policies"),
    (lambda o: o.update(version=4), "version 4 is not supported \\(this reader knows 1, 2 and 3\\)"),
])
def test_corrupt_regalloc_policies_name_the_field(mutate, message):
    obj = policy_to_json(eviction_policy())
    mutate(obj)
    with pytest.raises(PolicyError, match=message):
        policy_from_json(obj, "policy 'p.json'")


def test_argmax_is_for_regalloc_only():
    obj = policy_to_json(eviction_policy())
    obj["problem"] = "inlining"
    with pytest.raises(PolicyError, match="decision 'argmax-masked' is for problem 'regalloc', "
                                          "not 'inlining'"):
        policy_from_json(obj)


def test_exact_logits_follow_the_documented_arithmetic():
    """Two layers (tanh, relu) worked by hand with the C library's functions, as in
    policy_test.cc's HiddenLayersFollowTheDocumentedArithmetic."""
    p = Policy("inlining", ["threshold", "callee_users"], np.array([1.0, 0.5]),
               np.array([2.0, 0.25]),
               [Layer(np.array([[0.5, -1.0], [0.25, 2.0]]), np.array([0.1, -0.2]), "tanh"),
                Layer(np.array([[1.5], [-0.75]]), np.array([0.05]), "relu")])
    x0, x1 = (-math.log1p(7.0) - 1) / 2, (math.log1p(3.0) - 0.5) / 0.25
    h0 = math.tanh(0.0 + x0 * 0.5 + x1 * 0.25 + 0.1)
    h1 = math.tanh(0.0 + x0 * -1 + x1 * 2 + -0.2)
    out = max(0.0 + h0 * 1.5 + h1 * -0.75 + 0.05, 0.0)
    assert p.exact_logits(np.array([[-7.0, 3.0]]))[0] == out
    assert p.act({"threshold": np.array([-7]), "callee_users": np.array([3])}) == int(out > 0)
    # A batch of rows gets, to the bit, the logits `act` computes from each observation.
    rows = np.round(np.random.default_rng(0).normal(0, 100, (200, 2)))
    one_by_one = [p.act_with_logits({"threshold": np.array([r[0]], dtype=np.int64),
                                     "callee_users": np.array([r[1]], dtype=np.int64)})[1][0]
                  for r in rows]
    assert p.logits(rows).tolist() == one_by_one
    assert p.decisions(rows).tolist() == [int(v > 0) for v in one_by_one]
