"""reset(options={"actions": prefix}) in process and over a socket (real clang, demo
corpus): a fork at decision k shows what stepping the prefix by hand shows, ends with the
same reward when the rest is the same, ends at reset when the prefix outlasts the
compile, and refuses a bad prefix action naming its index."""
import random

import pytest

import mlgo_env
from mlgo_env.agents import random_action

from test_parity import assert_same_observation

MODULE = "sha256.o"


def by_hand(env, module, seed):
    """(answers, observations, final reward, final info) of one random episode."""
    rng = random.Random(seed)
    obs, info = env.reset(options={"module": module})
    answers, seen = [], []
    while obs is not None:
        seen.append(obs)
        answers.append(random_action(env.problem, obs, rng))
        obs, reward, terminated, truncated, info = env.step(answers[-1])
    return answers, seen, reward, info


@pytest.mark.parametrize("backend", ["inprocess", "remote"])
def test_a_fork_at_k_matches_stepping_by_hand(make_env, backend):
    env = make_env("inlining", backend)
    answers, seen, reward, info = by_hand(env, MODULE, seed=1)
    assert len(answers) >= 4
    for k in (1, len(answers) // 2, len(answers) - 1):
        obs, start = env.reset(options={"module": MODULE, "actions": answers[:k]})
        assert obs is not None, k
        assert_same_observation(obs, seen[k])
        for action in answers[k:]:
            assert obs is not None
            obs, r, terminated, truncated, end = env.step(action)
        assert terminated and r == reward
        assert end["policy_score"] == info["policy_score"]
        assert end["prefix_steps"] == k and end["agent_steps"] == len(answers) - k
    # A prefix longer than the episode: it ends at reset with the same reward.
    obs, end = env.reset(options={"module": MODULE, "actions": answers + [0, 1]})
    assert obs is None and end["terminated"] and end["reward"] == reward
    assert end["prefix_steps"] == len(answers)


@pytest.mark.parametrize("backend", ["inprocess", "remote"])
def test_a_bad_prefix_action_names_its_index(make_env, backend):
    env = make_env("inlining", backend)
    with pytest.raises(mlgo_env.InvalidAction) as caught:
        env.reset(options={"module": MODULE, "actions": [0, 1, 7, 0]})
    assert "actions[2]" in caught.value.message
    with pytest.raises(mlgo_env.InvalidAction) as caught:
        env.reset(options={"module": MODULE, "actions": [0, "x"]})
    assert "actions[1]" in caught.value.message
    with pytest.raises(mlgo_env.InvalidParams):
        env.reset(options={"module": MODULE, "actions": 3})
    # The environment carries on.
    obs, _ = env.reset(options={"module": MODULE, "actions": [1]})
    assert obs is not None


def test_vector_forks_one_prefix_per_slot(cache_dir):
    local = mlgo_env.make("inlining", jobs=2, cache_dir=cache_dir)
    try:
        answers, seen, _, _ = by_hand(local, MODULE, seed=2)
    finally:
        local.close()
    vec = mlgo_env.make_vec("inlining", 2, jobs=2, cache_dir=cache_dir)
    try:
        observations, infos = vec.reset(options={"modules": [MODULE, MODULE],
                                                 "actions": [answers[:2], None]})
        assert_same_observation(observations[0], seen[2])
        assert_same_observation(observations[1], seen[0])
        with pytest.raises(mlgo_env.InvalidParams):
            vec.reset(options={"actions": [answers[:2]]})
    finally:
        vec.close()
