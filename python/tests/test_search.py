"""The inlining trainer's elitist ES (mlgo_env.training.search), no clang."""

import numpy as np

from mlgo_env.training.search import ElitistES


def test_elitist_es_climbs_a_quadratic():
    rng = np.random.default_rng(1)
    target = np.array([20.0, -5.0, 3.0])
    f = lambda u: -float(np.sum((u - target) ** 2))
    es = ElitistES(np.zeros(3), np.full(3, 4.0), pairs=3)
    es.score = f(es.u)
    for _ in range(60):
        cands = es.propose(rng)
        es.tell(cands, [f(c) for c in cands])
    assert f(es.u) > 0.05 * f(np.zeros(3))



def test_es_grows_its_steps_when_no_candidate_moves_a_decision():
    es = ElitistES(np.zeros(2), np.full(2, 1.0), pairs=2, score=0.0)
    cands = es.propose(np.random.default_rng(0))
    assert not es.tell(cands, [0.0] * len(cands))  # every candidate a replay of the incumbent
    np.testing.assert_allclose(es.sigma, 1.4)
    cands = es.propose(np.random.default_rng(1))
    assert not es.tell(cands, [-1.0] + [0.0] * (len(cands) - 1))  # a real failure
    np.testing.assert_allclose(es.sigma, 1.4 * 0.75)
