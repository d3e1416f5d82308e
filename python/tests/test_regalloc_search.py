"""The per-function search of eviction departures (mlgo_env.tuning.regalloc_search): its
own logic against a scripted environment, and its premise with the real clang-22 (an
incumbent's actions, replayed, give the same per-function scores)."""

import numpy as np
import pytest

from mlgo_env import episodes as ep
from mlgo_env.policies.policy import EMULATION_FEATURE
from mlgo_env.training import regalloc_cloning as rc
from mlgo_env.tuning import regalloc_search as rs
from mlgo_env.training.regalloc_cloning import regalloc_decisions
from mlgo_env.training.training_setup import env_factory

from test_regalloc_training import demo_o2

LEGAL = (0, 1, 32)


def scripted_observation():
    obs = {name: np.zeros((1, 33), np.float32) for name in rc.FEATURES}
    obs["progress"] = np.array([0.5], np.float32)
    mask = np.zeros((1, 33), np.int64)
    mask[0, list(LEGAL)] = 1
    obs["mask"] = mask
    obs["use_def_density"][0, [0, 1, 32]] = [0.1, 0.2, 0.3]
    obs["liverange_size"][:] = 1.0
    return obs


class ScriptedEnv:
    """Two functions of four steps each; the emulation evicts nothing (32). Function f costs
    10, 3 less when step 1 evicts column 0 and 1 less when step 2 evicts column 1; g always
    costs 5. Records every episode's actions."""

    STEPS = 4

    def __init__(self, truncate_episode=None):
        self.episodes = []
        self.truncate_episode = truncate_episode

    def reset(self, options=None):
        self.actions = []
        self.episodes.append(self.actions)
        return scripted_observation(), self._info()

    def _info(self):
        k = len(self.actions)
        return {"context": "f" if k < self.STEPS else "g", "default_action": 32}

    def step(self, action):
        assert action in LEGAL
        self.actions.append(action)
        if len(self.episodes) == self.truncate_episode and len(self.actions) == 3:
            return scripted_observation(), 0.0, False, True, {}
        if len(self.actions) < 2 * self.STEPS:
            return scripted_observation(), 0.0, False, False, self._info()
        f = self.actions[:self.STEPS]
        cost = 10.0 - 3.0 * (f[1] == 0) - 1.0 * (f[2] == 1)
        contexts = [{"name": "f", "policy_score": cost, "default_score": 9.0},
                    {"name": "g", "policy_score": 5.0, "default_score": 5.0}]
        return None, 0.0, True, False, {"contexts": contexts}


def test_the_search_keeps_departures_that_lower_their_function_and_plays_functions_at_once():
    env = ScriptedEnv()
    search = rs.ModuleSearch(env, "m", alternatives=2, features=rc.FEATURES)
    assert (search.emulation, search.default) == (15.0, 14.0)
    while not search.done():
        search.step(env)
    f, g = search.functions["f"], search.functions["g"]
    assert f.incumbent.actions == [32, 0, 1, 32] and f.best == 6.0 and f.kept == 2
    assert g.incumbent.actions == [32] * 4 and g.best == 5.0 and g.kept == 0
    # f tries (0, 0), (0, 1), keeps (1, 0); tries (2, 0), keeps (2, 1); tries step 3's two.
    assert (f.tried, g.tried) == (7, 8)
    # One episode tries a departure in both functions: the start + g's 8 trials.
    assert search.episodes == len(env.episodes) == 9
    # A trial replays the incumbent before its step and follows the emulation after it.
    assert env.episodes[4][:4] == [32, 0, 0, 32]
    assert search.best == 11.0
    assert f.gains == {1: 3.0, 2: 1.0} and g.gains == {}
    d, gains = regalloc_decisions([search])
    assert list(gains) == [0.0, 3.0 / 14.0, 1.0 / 14.0, 0.0] + [0.0] * 4
    assert len(d) == 8 and d.features[-1] == EMULATION_FEATURE
    assert list(d.actions) == [32, 0, 1, 32] + [32] * 4
    assert (d.rows[:, 32, -1] == 1).all() and d.rows[:, :32, -1].sum() == 0


def test_each_function_keeps_its_earlier_incumbents_and_a_resumed_tuner_continues_them():
    from mlgo_env.tuning.regalloc_tuner import RegallocTuner
    env = ScriptedEnv()
    t = RegallocTuner("m", list(rc.FEATURES), None)
    while not t.done():
        t.play(env)
    f, g = t.search.functions["f"], t.search.functions["g"]
    assert f.chain == [(10.0, [32] * 4), (7.0, [32, 0, 32, 32])] and g.chain == []
    state = t.state()
    assert state["scores"] == {"f": 6.0, "g": 5.0}
    assert state["chains"] == {"f": [[10.0, [32] * 4], [7.0, [32, 0, 32, 32]]]}
    # A resumed search starts from the incumbents and keeps the chain before its own.
    again = RegallocTuner("m", list(rc.FEATURES), state)
    again.play(env)
    assert again.search.functions["f"].chain == f.chain
    assert again.search.functions["f"].incumbent.actions == [32, 0, 1, 32]
    assert again.state()["chains"] == state["chains"]


def test_spread_keeps_the_ends_and_spaces_the_rest_evenly():
    assert rs.spread(list(range(5)), 8) == [0, 1, 2, 3, 4]
    assert rs.spread(list(range(10)), 4) == [0, 3, 6, 9]
    assert rs.spread(list(range(10)), 2) == [0, 9]
    assert rs.spread(list(range(10)), 1) == [0]


def test_an_episode_cut_short_raises_and_keeps_the_incumbents():
    env = ScriptedEnv(truncate_episode=2)
    search = rs.ModuleSearch(env, "m", alternatives=2)
    with pytest.raises(RuntimeError, match="m: the episode was cut short"):
        search.step(env)
    f = search.functions["f"]
    assert f.best == 10.0 and f.incumbent.actions == [32] * 4 and f.kept == 0
    search.abandon()
    assert search.done()


def test_columns_tried_are_legal_lightest_first_and_never_unspillable():
    obs = scripted_observation()
    assert rs.ranked_columns(obs, 32, 2) == [0, 1]
    assert rs.ranked_columns(obs, 0, 2) == [32, 1]
    obs["use_def_density"][0, 1] = np.nan              # an unspillable interference
    assert rs.ranked_columns(obs, 32, 2) == [0]
    assert rs.is_poisoned(obs)


def test_an_incumbent_replays_to_its_scores_with_the_real_clang(tmp_path):
    _, corpus = demo_o2()
    make = env_factory("regalloc", corpus, None, str(tmp_path / "cache"))
    env = make()
    try:
        names = ep.corpus_modules(corpus)
        search = next(s for s in (rs.ModuleSearch(env, n) for n in names)
                      if sum(len(f.queue) for f in s.functions.values()) >= 4)
        for _ in range(6):
            if not search.done():
                search.step(env)
        assert search.best <= search.emulation
        player = rs.EpisodePlayer({n: f.incumbent.actions for n, f in search.functions.items()},
                                  {}, 2, None)
        result = ep.play_episode(env, search.module, player)
        scores = {c["name"]: float(c["policy_score"]) for c in result.contexts}
        for name, f in search.functions.items():
            assert scores.get(name, 0.0) == f.best, name
            assert player.played.get(name, rs.Trajectory()).actions == f.incumbent.actions
    finally:
        env.close()
