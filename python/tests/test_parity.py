"""In process and over a socket, the same module and actions give the same
observations, infos and rewards (real clang, demo corpus)."""
import random

import numpy as np
import pytest

from mlgo_env.agents import random_action

# Fields that measure time or cache state rather than the episode.
VOLATILE = {"compile_seconds", "compiler_cpu_seconds", "baseline_cached", "episode"}
CASES = [("inlining", ["sha256.o", "bignum.o"]), ("regalloc", ["arena_alloc.o", "rb_tree.o"])]


def trajectory(env, module, seed):
    rng = random.Random(seed)
    obs, info = env.reset(options={"module": module})
    steps = [(obs, {k: v for k, v in info.items() if k not in VOLATILE})]
    while obs is not None:
        obs, reward, terminated, truncated, info = env.step(random_action(env.problem, obs, rng))
        steps.append((obs, reward, terminated, truncated,
                      {k: v for k, v in info.items() if k not in VOLATILE}))
    return steps


def assert_same_observation(a, b):
    if a is None or b is None:
        assert a is None and b is None
        return
    assert list(a) == list(b)
    for name in a:
        assert a[name].dtype == b[name].dtype, name
        assert a[name].shape == b[name].shape, name
        assert a[name].tobytes() == b[name].tobytes(), name


@pytest.mark.parametrize("problem,modules", CASES)
def test_inprocess_and_remote_trajectories_are_identical(make_env, problem, modules):
    local, remote = make_env(problem, "inprocess"), make_env(problem, "remote")
    assert local.description["observation_spec"] == remote.description["observation_spec"]
    assert local.observation_space == remote.observation_space
    for seed, module in enumerate(modules):
        a, b = trajectory(local, module, seed), trajectory(remote, module, seed)
        assert len(a) == len(b) > 2
        for step_a, step_b in zip(a, b):
            assert_same_observation(step_a[0], step_b[0])
            assert step_a[1:] == step_b[1:]
        final = a[-1]
        assert final[2] is True and isinstance(final[1], float)
        assert final[1] == pytest.approx(1 - final[4]["policy_score"] / final[4]["default_score"])


def test_vector_env_matches_single_episodes(make_env, cache_dir, servers):
    import mlgo_env
    modules = ["arena_alloc.o", "rb_tree.o"]
    singles = {m: trajectory(make_env("regalloc", "inprocess"), m, i) for i, m in enumerate(modules)}
    for vec in (mlgo_env.make_vec("regalloc", 2, jobs=2, cache_dir=cache_dir),
                mlgo_env.make_vec("regalloc", 2, remote=servers("regalloc").address)):
        rngs = [random.Random(i) for i in range(2)]
        observations, infos = vec.reset(options={"modules": modules})
        seen = [[obs] for obs in observations]
        rewards = [None, None]
        while vec.live():
            actions = [random_action("regalloc", observations[i], rngs[i])
                       if observations[i] is not None else None for i in range(2)]
            live = vec.live()
            observations, step_rewards, terminated, truncated, infos = vec.step(actions)
            for i in live:
                assert "error" not in infos[i], infos[i]
                seen[i].append(observations[i])
                if terminated[i]:
                    rewards[i] = step_rewards[i]
        vec.close()
        for i, module in enumerate(modules):
            single = singles[module]
            assert len(seen[i]) == len(single)
            for obs, step in zip(seen[i], single):
                assert_same_observation(obs, step[0])
            assert rewards[i] == single[-1][1]


def test_both_paths_name_the_default_decision_source(make_env):
    for backend in ("inprocess", "remote"):
        env = make_env("regalloc", backend)
        assert env.description["default_action_source"] == "host-emulation-v2:default-eviction"


def test_optimised_ir_and_full_compiles_give_identical_trajectories(cache_dir):
    """Register allocation episodes compile each module's cached optimised IR
    unless full_compile: observations, infos and rewards are the same."""
    import mlgo_env
    fast = mlgo_env.make("regalloc", jobs=2, cache_dir=cache_dir)
    full = mlgo_env.make("regalloc", jobs=2, cache_dir=cache_dir, full_compile=True)
    try:
        for seed, module in enumerate(["arena_alloc.o", "rb_tree.o"]):
            a, b = trajectory(fast, module, seed), trajectory(full, module, seed)
            assert len(a) == len(b) > 2
            for step_a, step_b in zip(a, b):
                assert_same_observation(step_a[0], step_b[0])
                assert step_a[1:] == step_b[1:]
    finally:
        fast.close()
        full.close()


def test_both_paths_carry_every_info_field_alike(make_env):
    """The info's fields (include/mlgo/env/step_info.h) at every kind of step - a reset
    with the module embedding and a fork's prefix, a step, a truncated last step with the
    summary - are the same keys with the same values in process and served."""
    seen = []
    for backend in ("inprocess", "remote"):
        env = make_env("inlining", backend, ir2vec_vocab="default")
        obs, info = env.reset(options={"module": "sha256.o", "actions": [1], "max_steps": 2})
        infos = [info]
        while obs is not None:
            obs, _, terminated, truncated, info = env.step(info["default_action"])
            infos.append(info)
        assert truncated and not terminated and len(infos) == 3
        seen.append([{k: v for k, v in i.items() if k not in VOLATILE} for i in infos])
    local, remote = seen
    assert [list(i) for i in local] == [list(i) for i in remote]
    assert local == remote
    reset, step, last = local
    assert {"module_embedding", "context", "observation_id", "default_action"} <= set(reset)
    assert "module_embedding" not in step and "policy_score" not in step
    assert last["prefix_steps"] == 1 and last["agent_steps"] == 2 and "context" not in last
    assert {"default_score", "observations", "fallback_steps", "channel_opened",
            "contexts"} <= set(last)
