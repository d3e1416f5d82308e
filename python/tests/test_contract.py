"""The gymnasium contract: signatures, spaces, seeding, copies."""
import inspect

import numpy as np
import pytest

import mlgo_env
from mlgo_env import spaces
from mlgo_env.checker import check_env


@pytest.mark.parametrize("problem,backend", [("inlining", "inprocess"), ("inlining", "remote"),
                                             ("regalloc", "inprocess")])
def test_check_env(make_env, problem, backend):
    check_env(make_env(problem, backend))


def test_signatures():
    reset = inspect.signature(mlgo_env.Env.reset).parameters
    assert list(reset) == ["self", "seed", "options"]
    assert all(reset[p].kind is inspect.Parameter.KEYWORD_ONLY for p in ("seed", "options"))
    assert list(inspect.signature(mlgo_env.Env.step).parameters) == ["self", "action"]
    assert list(inspect.signature(mlgo_env.Env.close).parameters) == ["self"]


def test_spaces_follow_the_specs(make_env):
    env = make_env("regalloc", "inprocess")
    by_name = {s["name"]: s for s in env.description["observation_spec"]}
    assert set(env.observation_space.spaces) == set(by_name)
    for name, spec in by_name.items():
        box = env.observation_space[name]
        assert box.shape == tuple(spec["shape"])
        assert box.dtype == np.dtype(spaces.NUMPY_DTYPES[spec["type"]])
    assert env.action_space.n == int(np.prod(by_name["mask"]["shape"]))
    obs, _ = env.reset(options={"module": "arena_alloc.o"})
    assert env.observation_space.contains(obs)
    bad = dict(obs)
    bad["mask"] = obs["mask"].astype(np.float64)
    assert not env.observation_space.contains(bad)
    bad["mask"] = obs["mask"].ravel()
    assert not env.observation_space.contains(bad)
    del bad["mask"]
    assert not env.observation_space.contains(bad)
    valid = int(np.flatnonzero(obs["mask"].ravel() == 1)[0])
    assert env.action_space.contains(valid) and not env.action_space.contains(33)
    sampled = env.action_space.sample(mask=obs["mask"].ravel().astype(np.int8))
    assert obs["mask"].ravel()[sampled] == 1


@pytest.mark.parametrize("sampler", ["round-robin", "uniform"])
def test_reset_seeding_is_reproducible(make_env, sampler):
    env = make_env("inlining", "inprocess", sampler=sampler)
    first = [env.reset(seed=s) for s in (3, 3)]
    modules = []
    for seed in range(6):
        env.reset(seed=seed)
        modules.append(env.module)
    obs_a, info_a = env.reset(seed=3)
    module_a = env.module
    obs_b, info_b = env.reset(seed=3)
    assert env.module == module_a
    assert all(obs_a[k].tobytes() == obs_b[k].tobytes() for k in obs_a)
    assert info_a["context"] == info_b["context"]
    if sampler == "uniform":
        assert len(set(modules)) > 1, "different seeds should sample different modules"
    assert first[0][1]["module"] == first[1][1]["module"]


def test_observations_are_fresh_writable_copies(make_env):
    env = make_env("regalloc", "inprocess")
    obs, _ = env.reset(options={"module": "rb_tree.o"})
    kept = {k: v.copy() for k, v in obs.items()}
    for array in obs.values():
        assert array.flags.owndata and array.flags.writeable
        array[...] = 0
    valid = int(np.flatnonzero(kept["mask"].ravel() == 1)[0])
    nxt, *_ = env.step(valid)
    assert all(np.array_equal(kept[k], kept[k]) for k in kept)
    assert nxt is None or not any(nxt[k] is obs[k] for k in nxt)
    assert not all(np.all(nxt[k] == 0) for k in nxt)


def test_own_spaces_without_gymnasium():
    box = spaces.Box(0, 3, (2,), np.int64)
    assert box.contains(np.array([0, 3])) and not box.contains(np.array([0, 4]))
    assert not box.contains(np.array([0.5, 1]))
    discrete = spaces.Discrete(2)
    assert discrete.contains(1) and not discrete.contains(2) and not discrete.contains(True)
    discrete.seed(7)
    a = [discrete.sample() for _ in range(5)]
    discrete.seed(7)
    assert a == [discrete.sample() for _ in range(5)]
