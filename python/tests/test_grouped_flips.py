"""Grouped flips (mlgo_env.tuning.inlining_search) with the real clang-22 on the -Oz demo
corpus: the IR2Vec callee key groups call sites, a group flip answers the other way at
exactly that callee's call sites, and the greedy search only keeps what shrinks a
module, reproducibly."""

import pytest

from mlgo_env import episodes as ep
from mlgo_env.tuning import inlining_search as gf
from mlgo_env.training.training_setup import env_factory

from test_train import demo_corpus


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    _, corpus = demo_corpus()
    make = env_factory("inlining", corpus, None, str(tmp_path_factory.mktemp("gcache")),
                       None, "default")
    with ep.EpisodePool(make, 2) as p:
        names = [n for n in p.observation_features() if not n.endswith("_embedding")]
        yield p, corpus, list(dict.fromkeys(names + ["inlining_default"]))


def test_a_group_flips_every_call_site_of_its_callee(pool):
    p, corpus, names = pool
    searches, _ = gf.start(p, ep.corpus_modules(corpus), names)
    assert searches
    # Some callee is called from several decisions of one module: keys group call sites.
    repeated = [(s, k) for s in searches for k in set(s.best.keys)
                if s.best.keys.count(k) >= 2]
    assert repeated, "no callee with two call sites in the whole demo corpus"
    s, key = max(repeated, key=lambda sk: sk[0].best.keys.count(sk[1]))
    player = gf.GroupPlayer(names, frozenset([key]))
    (result,) = p.play([(s.module, player)])
    flipped = [a != d for a, d in zip(player.actions, player.defaults)]
    assert sum(flipped) >= 2
    assert all(f == (k == key) for f, k in zip(flipped, player.keys))
    # Flipping nothing is clang's default exactly.
    again = gf.GroupPlayer(names, frozenset())
    (plain,) = p.play([(s.module, again)])
    assert plain.reward == 0.0 and again.keys == s.best.keys


def test_greedy_rounds_only_keep_what_shrinks_and_replay_exactly(pool):
    p, corpus, names = pool
    modules = ep.corpus_modules(corpus)[:12]
    searches, _ = gf.start(p, modules, names)
    before = {s.module: s.bytes for s in searches}
    for _ in range(6):
        gf.greedy_round(p, searches, names)
    for s in searches:
        assert s.bytes <= before[s.module]
        assert (s.kept > 0) == (s.bytes < before[s.module])
    kept = [s for s in searches if s.kept]
    if kept:  # the best set, played again, gives the recorded bytes (clang is deterministic)
        players = [gf.GroupPlayer(names, s.flipped) for s in kept]
        results = p.play([(s.module, pl) for s, pl in zip(kept, players)])
        assert [r.policy_score for r in results] == [s.bytes for s in kept]
    # Every group tried was worth something: a gain when kept, a loss (or nothing) when not.
    for s in searches:
        assert all(g > 0 for g in s.gains.values()) and all(v >= 0 for v in s.losses.values())
        assert len(s.gains) == s.kept and len(s.gains) + len(s.losses) == len(s.tried)


def test_searches_from_a_constant_shift_flip_that_shift(pool):
    """With a base shift the empty group plays exactly the shift baseline, and a group
    flips the shift's decisions at its callee's call sites."""
    from mlgo_env.tuning.baselines import shift_policy
    p, corpus, names = pool
    modules = ep.corpus_modules(corpus)[:8]
    searches, played = gf.start(p, modules, names, shift=-20.0)
    assert searches and all(s.shift == -20.0 for s in searches)
    baseline = p.play([(m, ep.policy_decider(shift_policy("inlining", -20.0)))
                       for m in modules])
    assert [r.policy_score for r in played] == [r.policy_score for r in baseline]
    moved = [s for s in searches if s.best.actions != s.best.defaults]
    assert moved, "shift -20 decides as the default on every demo module"
    s = max(searches, key=lambda s: len(s.best.keys))
    key = s.best.keys[0]
    player = gf.GroupPlayer(names, frozenset([key]), -20.0)
    p.play([(s.module, player)])
    base = gf.GroupPlayer(names, frozenset(), -20.0)
    p.play([(s.module, base)])
    first = player.keys.index(key)
    assert player.actions[first] != base.actions[first]
    assert player.actions[:first] == base.actions[:first]
