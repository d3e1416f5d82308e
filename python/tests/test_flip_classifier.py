"""Unit tests of flip-classifier policies (decision "flip-default-if-logit>0"), their
fitting, and the replay cache and flip sets they use (no clang)."""

import json

import numpy as np
import pytest

from mlgo_env import episodes as ep
from mlgo_env.policies import flip_classifier as fc
from mlgo_env.policies.policy import (Layer, Policy, PolicyError, load_policy, policy_from_json,
                                     policy_to_json, save_policy)
from mlgo_env.tuning.replay import ReplayCache

NAMES = ["threshold", "cost_estimate", "callee_users", "inlining_default"]


def flip_policy(bias=0.0):
    """Flips exactly where callee_users (signed-log1p, not standardised) is above 1."""
    w1 = np.zeros((4, 1))
    w1[2, 0] = 1.0
    return Policy("inlining", list(NAMES), np.zeros(4), np.ones(4),
                  [Layer(w1, np.array([-np.log1p(1.5)]), "tanh"),
                   Layer(np.array([[10.0]]), np.array([bias]), "linear")],
                  {}, ["signed-log1p"] * 4, None, fc.FLIP_DECISION)


def test_flip_decision_is_default_xor_logit(tmp_path):
    p = flip_policy()
    rows = np.array([[5, 10, 1, 0], [5, 10, 1, 1], [5, 10, 3, 0], [5, 10, 3, 1]], float)
    np.testing.assert_array_equal(p.decisions(rows), [0, 1, 1, 0])
    assert p.act({"threshold": [5], "cost_estimate": [10], "callee_users": [3]},
                 {"default_action": 1}) == 0
    path = tmp_path / "p.json"
    save_policy(p, path)
    obj = json.loads(path.read_text())
    assert obj["version"] == 2 and obj["decision"] == "flip-default-if-logit>0"
    np.testing.assert_array_equal(load_policy(path).decisions(rows), [0, 1, 1, 0])
    # A bias far below 0 is the default exactly.
    np.testing.assert_array_equal(flip_policy(-1e6).decisions(rows), rows[:, 3])


@pytest.mark.parametrize("mutate, message", [
    (lambda o: o.update(decision="logit<0"), 'decision "logit<0"'),
    (lambda o: o.update(features=["threshold", "cost_estimate", "callee_users", "other"]),
     "needs the feature 'inlining_default'"),
])
def test_bad_flip_policies_are_refused(mutate, message):
    obj = policy_to_json(flip_policy())
    mutate(obj)
    with pytest.raises(PolicyError, match=message):
        policy_from_json(obj)


def test_version_1_files_cannot_flip():
    p = flip_policy()
    obj = policy_to_json(p)
    obj["version"] = 1
    obj.pop("transforms")
    with pytest.raises(PolicyError, match="decision"):
        policy_from_json(obj)


def test_replay_cache_follows_flip_decisions():
    rows = np.array([[5, 10, 1, 1], [5, 10, 3, 1], [5, 10, 1, 0]], float)
    cache = ReplayCache(NAMES)
    result = ep.EpisodeResult("m", 0.01, 99.0, 100.0, 3, 0.0, 0.0, 0.0)
    cache.add("m", rows, np.array([1, 0, 0]), result)  # the trajectory flip_policy takes
    assert cache.lookup(flip_policy(), "m").policy_score == 99.0
    assert cache.lookup(flip_policy(-1e6), "m") is None  # the default differs at step 1


def test_fit_learns_a_separable_flip_rule_and_rates():
    rng = np.random.default_rng(0)
    n = 400
    rows = np.column_stack([rng.integers(-50, 6, n), rng.integers(-200, 400, n),
                            rng.integers(1, 20, n), rng.integers(0, 2, n)]).astype(float)
    labels = ((rows[:, 2] <= 2) & (rows[:, 3] == 0)).astype(float)  # inline sole users
    f = fc.fit("inlining", NAMES, rows, labels, hidden=4, l2=1e-4, epochs=600)
    p = f.space.policy(f.u)
    flips = p.decisions(rows) != rows[:, 3]
    assert (flips == (labels > 0)).mean() > 0.95
    for rate in (0.01, 0.1):
        u = f.u.copy()
        u[-1] = fc.bias_for_rate(f.space, f.u, rows, rate)
        share = np.mean(f.space.policy(u).decisions(rows) != rows[:, 3])
        assert abs(share - rate) <= 0.01
    space, u = fc.space_of(p)
    np.testing.assert_allclose(space.logits(u, rows), p.logits(rows))
    with pytest.raises(PolicyError, match="not a flip classifier"):
        fc.space_of(Policy("inlining", list(NAMES), np.zeros(4), np.ones(4),
                           [Layer(np.zeros((4, 1)), np.zeros(1), "linear")]))


def test_fit_without_flips_is_finite():
    f = fc.fit("inlining", NAMES, np.zeros((0, 4)), np.zeros(0), epochs=5)
    assert np.all(np.isfinite(f.u)) and np.all(np.isfinite(f.space.mean))
