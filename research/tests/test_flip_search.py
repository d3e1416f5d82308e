"""research/flip_search.py (no clang): the single-flip search finds the one flip that
helps, and label sets round-trip and name their candidate decisions."""

import numpy as np

from mlgo_env import episodes as ep

from research_paths import RESEARCH  # noqa: F401 - puts research/ on the path
from flip_search import FlipSet, candidate_steps, search
from test_policy import FakeEnv, small_policy

NAMES = ("threshold", "cost_estimate", "callee_users", "inlining_default")


def test_flip_search_finds_the_one_improving_flip():
    p = small_policy(hidden=0)
    with ep.EpisodePool(FakeEnv, 2) as pool:
        flips = search(pool, p, ["good", "plain"], 3, np.random.default_rng(0))
    assert len(flips) == 6
    good = [f for f in flips if f.reward > 0]
    assert [(f.module, f.step, f.default) for f in good] == [("good", 1, 1)]
    np.testing.assert_array_equal(good[0].features, [10.0, 1.0, 1.0])


def test_flip_sets_round_trip_and_candidates(tmp_path):
    rows = np.array([[5, 500, 1, 0], [5, 100, 1, 0], [5, -9000, 1, 1]], float)
    np.testing.assert_array_equal(candidate_steps(rows, NAMES), [1, 2])
    s = FlipSet(list(NAMES), ["a", "b"], np.array([1, 2]), rows[1:], np.array([0, 1]),
                np.array([0.01, -0.02]), {"a": 3, "b": 3})
    path = str(tmp_path / "f.npz")
    s.save(path)
    t = FlipSet.load(path).extend(s)
    assert t.modules == ["a", "b", "a", "b"] and t.module_steps == {"a": 3, "b": 3}
    np.testing.assert_array_equal(t.rewards, [0.01, -0.02, 0.01, -0.02])
