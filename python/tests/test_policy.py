"""Unit tests of the policy format and the trace reader (no clang)."""

import json
import struct

import numpy as np
import pytest

from mlgo_env.policies.optimiser import standardisation
from mlgo_env.policies.policy import (PolicyError, check_compatible, load_policy, new_policy,
                             policy_from_json, policy_to_json, save_policy, transform)
from mlgo_env.trace_log import TraceError, read_trace
from mlgo_env.training.training_setup import split_modules


def small_policy(hidden=4, seed=0):
    rng = np.random.default_rng(seed)
    return new_policy("inlining", ["a", "b", "inlining_default"], np.zeros(3), np.ones(3),
                      hidden, rng)


def test_round_trip_keeps_decisions(tmp_path):
    p = small_policy()
    path = tmp_path / "p.json"
    save_policy(p, path)
    q = load_policy(path)
    rows = np.random.default_rng(1).normal(0, 10, (50, 3))
    np.testing.assert_allclose(p.logits(rows), q.logits(rows))
    assert q.features == ["a", "b", "inlining_default"] and q.problem == "inlining"


@pytest.mark.parametrize("mutate, message", [
    (lambda o: o.update(format="other"), "'format'"),
    (lambda o: o.update(version=7), "version 7"),
    (lambda o: o.update(problem=""), "'problem'"),
    (lambda o: o.update(features=["a", "a", "b"]), "twice"),
    (lambda o: o.update(mean=[0, 0]), "'mean' has 2 values"),
    (lambda o: o.update(std=[1, 0, 1]), "'std' must be positive"),
    (lambda o: o["layers"][0].update(activation="sigmoid"), 'activation "sigmoid"'),
    (lambda o: o["layers"][0]["weights"].pop(), "must have 3 rows"),
    (lambda o: o["layers"][1].update(bias=[float("nan")]), "not finite"),
    (lambda o: o["layers"][0]["weights"][0].__setitem__(0, "x"), "list of numbers"),
])
def test_corrupt_policies_name_the_problem(mutate, message):
    obj = policy_to_json(small_policy())
    mutate(obj)
    with pytest.raises(PolicyError, match=message):
        policy_from_json(obj)


def test_unreadable_files(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(PolicyError, match="not valid JSON"):
        load_policy(bad)
    with pytest.raises(PolicyError, match="cannot read policy"):
        load_policy(tmp_path / "missing.json")


def test_compatibility_names_the_mismatch():
    p = small_policy()
    with pytest.raises(PolicyError, match="for problem 'inlining', not 'regalloc'"):
        check_compatible(p, "regalloc", ["a", "b", "inlining_default"])
    with pytest.raises(PolicyError, match="feature\\(s\\) b"):
        check_compatible(p, "inlining", ["a", "inlining_default"])
    check_compatible(p, "inlining", ["b", "a", "inlining_default", "c"])


def test_act_takes_inlining_default_from_info():
    p = small_policy(hidden=0)
    p.layers[0].weights[:] = [[0.0], [0.0], [5.0]]
    p.layers[0].bias[:] = [-2.0]  # inline only when the default says so
    obs = {"a": np.array([3]), "b": np.array([1.5])}
    assert p.act(obs, {"default_action": 1}) == 1
    assert p.act(obs, {"default_action": 0}) == 0
    with pytest.raises(PolicyError, match="no feature 'inlining_default'"):
        p.act(obs, {})
    with pytest.raises(PolicyError, match="one-element"):
        p.act({"a": np.array([1, 2]), "b": np.array([1])}, {"default_action": 0})


def test_split_is_stable_and_disjoint():
    mods = [f"m{i}" for i in range(500)]
    t1, v1 = split_modules(mods, 0.2, seed=7)
    t2, v2 = split_modules(mods + ["extra"], 0.2, seed=7)
    assert set(t1).isdisjoint(v1) and len(t1) + len(v1) == 500
    assert set(v1) <= set(v2) and 60 < len(v1) < 140
    assert split_modules(mods, 0.2, seed=8)[1] != v1


def write_trace(path, truncate=0):
    header = {"features": [
        {"name": "cost", "port": 0, "shape": [1], "type": "int64_t"},
        {"name": "emb", "port": 1, "shape": [2], "type": "float"},
        {"name": "inlining_decision", "port": 2, "shape": [1], "type": "int64_t"}],
        "score": {"name": "reward", "port": 0, "shape": [1], "type": "float"}}
    out = json.dumps(header).encode() + b"\n"
    for ctx, values in (("m1", [(5, 1), (9, 0)]), ("m2", [(30, 0)])):
        out += json.dumps({"context": ctx}).encode() + b"\n"
        for i, (cost, action) in enumerate(values):
            out += json.dumps({"observation": i}).encode() + b"\n"
            out += struct.pack("<qffq", cost, 0.5, 1.5, action) + b"\n"
        out += json.dumps({"outcome": len(values) - 1}).encode() + b"\n"
        out += struct.pack("<f", 0.25) + b"\n"
    path.write_bytes(out[:len(out) - truncate] if truncate else out)


def test_trace_reader(tmp_path):
    write_trace(tmp_path / "t.log")
    t = read_trace(str(tmp_path / "t.log"))
    assert t.feature_names == ["cost"] and t.action_name == "inlining_decision"
    np.testing.assert_array_equal(t.rows[:, 0], [5, 9, 30])
    np.testing.assert_array_equal(t.actions, [1, 0, 0])
    assert t.contexts == ["m1", "m1", "m2"]
    write_trace(tmp_path / "cut.log", truncate=12)
    with pytest.raises(TraceError, match="offset"):
        read_trace(str(tmp_path / "cut.log"))


@pytest.mark.parametrize("hidden", [0, 8])
def test_new_policies_start_as_the_default(hidden):
    rng = np.random.default_rng(9)
    rows = np.column_stack([rng.integers(0, 300, 500), rng.normal(0, 50, 500),
                            rng.integers(0, 2, 500)]).astype(float)
    mean, std = standardisation(transform(rows))
    p = new_policy("inlining", ["a", "b", "inlining_default"], mean, std, hidden, rng)
    np.testing.assert_array_equal((p.logits(rows) > 0).astype(float), rows[:, 2])


def margin_rows(rng, n=3000):
    """Raw rows [threshold, cost_estimate, a, b] shaped like clang's."""
    threshold = np.full(n, 5.0)
    cost = rng.integers(-60, 80, n).astype(float)
    return np.column_stack([threshold, cost, rng.integers(1, 50, n), rng.integers(0, 9, n)])


def test_version_2_round_trip_and_version_1_still_reads(tmp_path):
    from mlgo_env.policies.margin_policy import make_space
    rng = np.random.default_rng(2)
    rows = margin_rows(rng)
    space = make_space("inlining", ["threshold", "cost_estimate", "a", "b"], rows, ["a", "b"],
                       anchored=False)
    p = space.policy(np.array([3.0, -2.0, 1.5]))
    obj = policy_to_json(p)
    assert obj["version"] == 2 and obj["transforms"] == ["identity"] * 2 + ["signed-log1p"] * 2
    assert obj["margin"]["plus"] == "threshold" and "anchor" not in obj["margin"]
    save_policy(p, tmp_path / "p.json")
    q = load_policy(tmp_path / "p.json")
    np.testing.assert_allclose(q.logits(rows), p.logits(rows))
    # logit = max(threshold, 1) - cost + shift + w.z, in cost units
    _, z = space.standardised(rows)
    margin = np.maximum(rows[:, 0], 1) - rows[:, 1]
    np.testing.assert_allclose(p.logits(rows), margin + 3.0 + z @ [-2.0, 1.5])
    old = policy_to_json(small_policy())
    assert old["version"] == 1 and old["transform"] == "signed-log1p"
    assert policy_from_json(old).transforms is None
    for mutate, message in [
            (lambda o: o.update(transforms=o["transforms"][:2]), "one transform per feature"),
            (lambda o: o.update(transforms=["cube"] + o["transforms"][1:]), 'unknown transform "cube"'),
            (lambda o: o["margin"].update(minus="nope"), '\'margin\' minus "nope"'),
            (lambda o: o["margin"].update(floor="x"), "'margin' floor"),
            (lambda o: o["layers"][0]["weights"].pop(), "must have 5 rows")]:
        bad = json.loads(json.dumps(obj))
        mutate(bad)
        with pytest.raises(PolicyError, match=message):
            policy_from_json(bad)


def test_anchored_margin_is_the_default_and_moves_in_cost_units():
    from mlgo_env.policies.margin_policy import make_space
    rng = np.random.default_rng(3)
    rows = margin_rows(rng)
    margin = np.maximum(rows[:, 0], 1) - rows[:, 1]
    default = ((margin > 0) ^ (rng.random(len(rows)) < 0.05)).astype(float)  # 5% exceptions
    names = ["threshold", "cost_estimate", "inlining_default", "a", "b"]
    rows = np.column_stack([rows[:, :2], default, rows[:, 2:]])
    space = make_space("inlining", names, rows, ["a", "b"])
    at = lambda shift: space.policy(np.array([shift, 0.0, 0.0])).logits(rows) > 0
    np.testing.assert_array_equal(at(0.0), default > 0)
    # +12: also every call site the default refused with a margin above -12
    np.testing.assert_array_equal(at(12.0), (default > 0) | (margin > -12))
    np.testing.assert_array_equal(at(-12.0), (default > 0) & (margin > 12))


def test_margin_cloning_finds_a_shifted_boundary():
    from mlgo_env.policies.margin_policy import fit_margin_cv, make_space, space_of
    rng = np.random.default_rng(6)
    rows = margin_rows(rng)
    space = make_space("inlining", ["threshold", "cost_estimate", "a", "b"], rows, ["a", "b"],
                       anchored=False)
    margin, z = space.standardised(rows)
    labels = (margin + 12.0 - 8.0 * z[:, 0] > 0).astype(float)
    groups = [f"m{i % 30}" for i in range(len(rows))]
    fit, _ = fit_margin_cv(space, rows, labels, groups)
    assert fit.agreement >= 0.98
    assert 6.0 < fit.u[0] < 18.0 and fit.u[1] < -4.0
    back_space, back_u = space_of(space.policy(fit.u))
    np.testing.assert_allclose(back_u, fit.u)
    assert back_space.shape == ["a", "b"] and not back_space.anchored
    with pytest.raises(PolicyError, match="not a margin policy"):
        space_of(small_policy())


class FakeEnv:
    """Three decisions per module; flipping decision 1 of module 'good' gains 10%."""

    def reset(self, options=None):
        self.module, self.step_at, self.actions = options["module"], 0, []
        return self.obs(), {"default_action": self.step_at % 2}

    def obs(self):
        return {"a": np.array([10 * self.step_at]), "b": np.array([1.0])}

    def step(self, action):
        self.actions.append(action)
        self.step_at += 1
        if self.step_at < 3:
            return self.obs(), 0.0, False, False, {"default_action": self.step_at % 2}
        gain = 0.1 if (self.module == "good" and self.actions == [0, 0, 0]) else 0.0
        return None, gain, True, False, {"policy_score": 100 * (1 - gain), "default_score": 100}

    def close(self):
        pass


class CountingEnv(FakeEnv):
    """FakeEnv counting its resets (one per episode clang would run)."""
    resets = 0

    def reset(self, options=None):
        CountingEnv.resets += 1
        return super().reset(options)


def test_replays_answer_repeated_trajectories_without_playing():
    from mlgo_env import episodes as ep
    from mlgo_env.tuning.replay import ReplayCache
    p = small_policy(hidden=0)
    p.layers[0].weights[:] = [[0.0], [0.0], [5.0]]
    p.layers[0].bias[:] = [-2.0]                     # the default
    never = p.with_flat(np.array([0.0, 0.0, 0.0, -1.0]))  # never inline
    cache = ReplayCache(["a", "b", "inlining_default"])
    CountingEnv.resets = 0
    with ep.EpisodePool(CountingEnv, 2) as pool:
        first, played = cache.evaluate(pool, [p, never], ["good", "plain"])
        assert len(played) == 4 and CountingEnv.resets == 4
        again, played = cache.evaluate(pool, [never, p], ["good", "plain"])
        assert played == [] and CountingEnv.resets == 4
    assert [r.reward for r in again[0]] == [r.reward for r in first[1]]
    assert first[1][0].reward == pytest.approx(0.1) and first[0][0].reward == 0.0
